/**
 * The claim guards' words through the CLI against one real hub (runCliHere, a folder that is no git
 * repository): an epic with an open child, a paused card, a card waiting on a dependency; `baton list`
 * prints each word, `baton list --status W` takes every word it prints and returns exactly the rows with
 * it, `baton stats` adds up to list, and an unknown word is refused with the words listed, changing
 * nothing. The contract itself is proven in core (test/core/claimGuards.test.ts); this is the face's smoke.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { plainFolder } from '../helpers/gitRepos';
import { type CliResult, cleanupDataDir, ensureBuilt, runBaton, runCliHere, tempDataDir } from '../helpers/mcp';

let dataDir: string;
let parent: string;
let nowhere: string;

function baton(args: string[], input?: string): Promise<CliResult> {
	const run = { dataDir, cwd: nowhere, env: { BATON_AGENT: 'cli:alice' } };
	return input === undefined ? runCliHere(args, run) : runBaton(args, { ...run, input });
}

async function ok(args: string[], input?: string): Promise<string> {
	const r = await baton(args, input);
	assert.equal(r.code, 0, `baton ${args.join(' ')} exited ${r.code}: ${r.stdout} ${r.stderr}`);
	return r.stdout;
}

/** `baton list`'s rows: id → STATUS. */
function words(table: string): Record<string, string> {
	const lines = table.split('\n');
	const header = lines[0] ?? '';
	const out: Record<string, string> = {};
	for (const line of lines.slice(1)) {
		if (/^[A-Z]+-\d/.test(line)) {
			out[line.split(/\s+/)[0] ?? ''] = line.slice(header.indexOf('STATUS'), header.indexOf('PRI')).trim();
		}
	}
	return out;
}

before(async () => {
	ensureBuilt();
	dataDir = tempDataDir();
	parent = mkdtempSync('/tmp/btw-');
	nowhere = plainFolder(parent, 'plain');
	await ok(
		['create', '--file', '-'],
		JSON.stringify([
			{ id: 'CW-1', title: 'An epic', priority: 5 },
			{ id: 'CW-2', title: 'Its open child', parent: 'CW-1', priority: 5 },
			{ id: 'CW-3', title: 'Paused by a human', priority: 5 },
			{ id: 'CW-4', title: 'Waits on the child', dependsOn: ['CW-2'] },
		]),
	);
	await ok(['pause', '--card', 'CW-3', '--reason', 'not yet']);
});

after(async () => {
	await cleanupDataDir(dataDir);
	rmSync(parent, { recursive: true, force: true });
});

describe('claim words in the CLI', () => {
	it('list says each word, list --status takes each, and stats adds up to list', async () => {
		const listed: Record<string, string> = words(await ok(['list']));
		assert.deepEqual(listed, { 'CW-1': 'waiting', 'CW-2': 'ready', 'CW-3': 'paused', 'CW-4': 'waiting' });
		for (const word of ['ready', 'waiting', 'paused', 'deferred']) {
			const out = await ok(['list', '--status', word]);
			const want: string[] = Object.entries(listed)
				.filter(([, w]) => w === word)
				.map(([id]) => id);
			assert.deepEqual(Object.keys(words(out)).sort(), want, `list --status ${word}`);
		}
		const stats = await ok(['stats']);
		assert.match(stats, /^ready\s+1 claimable now \(of 4: 2 waiting, 0 deferred, 1 paused\)$/m);
	});

	it('an unknown word is refused with the words it takes', async () => {
		const r = await baton(['list', '--status', 'idle']);
		assert.notEqual(r.code, 0);
		const text = `${r.stdout}${r.stderr}`;
		for (const w of ['ready', 'waiting', 'deferred', 'paused', 'claimed', 'review', 'blocked', 'done']) {
			assert.match(text, new RegExp(w), `the error names ${w}: ${text}`);
		}
	});
});
