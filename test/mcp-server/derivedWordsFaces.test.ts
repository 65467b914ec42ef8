/**
 * One vocabulary and one project rule through the faces where they were seen disagreeing:
 * the CLI (in process, runCliHere) in a folder that is no git repository, and a real `baton mcp`
 * driven by the MCP SDK client, against one real hub. Outside a repository list, stats and claim all
 * see only cards without a project and say how to reach the others (`--project '*'`); a waiting card is
 * `waiting` in list, show, show's dependency lines and the MCP results; list's WAITS names only the
 * dependencies not done; stats' claimable count is list's `ready` rows.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { gitRepo, plainFolder } from '../helpers/gitRepos';
import {
	type Agent,
	type CliResult,
	cleanupDataDir,
	ensureBuilt,
	runBaton,
	runCliHere,
	startAgent,
	tempDataDir,
} from '../helpers/mcp';

let dataDir: string;
let parent: string;
let webRepo: string;
let nowhere: string;
let agent: Agent | undefined;

/** The CLI in process in `cwd` (runCliHere), through the bundle when it reads stdin (`input`). */
function baton(args: string[], cwd: string, input?: string): Promise<CliResult> {
	const run = { dataDir, cwd, env: { BATON_AGENT: 'cli:alice' } };
	return input === undefined ? runCliHere(args, run) : runBaton(args, { ...run, input });
}

async function ok(args: string[], cwd: string, input?: string): Promise<string> {
	const r = await baton(args, cwd, input);
	assert.equal(r.code, 0, `baton ${args.join(' ')} exited ${r.code}: ${r.stdout} ${r.stderr}`);
	return r.stdout;
}

/** The table rows of `baton list` by id: [STATUS, WAITS]. */
function rows(table: string): Record<string, [string, string]> {
	const lines = table.split('\n');
	const header = lines[0] ?? '';
	const at = (name: string): number => header.indexOf(name);
	const out: Record<string, [string, string]> = {};
	for (const line of lines.slice(1)) {
		if (!/^[A-Z]+-\d/.test(line)) {
			continue;
		}
		const cell = (name: string, next: string): string => line.slice(at(name), at(next)).trim();
		out[line.split(/\s+/)[0] ?? ''] = [cell('STATUS', 'PRI'), cell('WAITS', 'TITLE')];
	}
	return out;
}

before(async () => {
	ensureBuilt();
	dataDir = tempDataDir();
	parent = mkdtempSync('/tmp/btp-');
	webRepo = gitRepo(parent, 'web', 'https://github.com/acme/web.git');
	nowhere = plainFolder(parent, 'plain');
	// Cards without a project (made outside any repository): DW-3 waits on DW-1 (done) and DW-2.
	await ok(
		['create', '--file', '-'],
		nowhere,
		JSON.stringify([
			{ id: 'DW-1', title: 'Done dependency', priority: 1 },
			{ id: 'DW-2', title: 'Open dependency', priority: 9 },
			{ id: 'DW-3', title: 'Waits on both', dependsOn: ['DW-1', 'DW-2'] },
			{ id: 'DW-4', title: 'Waits on the waiting one', dependsOn: ['DW-3'] },
		]),
	);
	await ok(['complete', 'DW-1', '--force'], nowhere);
	// Two cards of another project, made in its repository.
	await ok(['create', 'Web one', '--id', 'WEB-1'], webRepo);
	await ok(['create', 'Web two', '--id', 'WEB-2'], webRepo);
});

after(async () => {
	await agent?.close().catch(() => undefined);
	await cleanupDataDir(dataDir);
	rmSync(parent, { recursive: true, force: true });
});

describe('derived words outside a repository', () => {
	it('list shows only cards without a project, says waiting, and WAITS names no done dependency', async () => {
		const out = await ok(['list'], nowhere);
		assert.deepEqual(rows(out), {
			'DW-1': ['done', '-'],
			'DW-2': ['ready', '-'],
			'DW-3': ['waiting', 'DW-2'],
			'DW-4': ['waiting', 'DW-3'],
		});
		assert.match(out, /2 cards of other projects are not listed \(2 claimable\): --project '\*' for every project/);
		assert.deepEqual(Object.keys(rows(await ok(['list', '--project', '*'], nowhere))).sort(), [
			'DW-1',
			'DW-2',
			'DW-3',
			'DW-4',
			'WEB-1',
			'WEB-2',
		]);
	});

	it('show says waiting with what it waits on, and its dependency lines say waiting too', async () => {
		const three = await ok(['show', 'DW-3'], nowhere);
		assert.match(three, /^status\s+waiting on DW-2$/m);
		assert.match(three, /Depends on:\n {2}DW-1 {2}done {2}Done dependency\n {2}DW-2 {2}ready {2}Open dependency/);
		assert.match(three, /Dependents:\n {2}DW-4 {2}waiting {2}Waits on the waiting one/);
		assert.match(await ok(['show', 'DW-4'], nowhere), /Depends on:\n {2}DW-3 {2}waiting {2}Waits on both/);
	});

	it('stats counts what list shows, and names the other projects', async () => {
		const out = await ok(['stats'], nowhere);
		assert.match(out, /^Counting cards without a project\.$/m);
		assert.match(out, /^ready\s+1 claimable now \(of 3: 2 waiting, 0 deferred, 0 paused\)$/m);
		assert.match(out, /2 cards of other projects are not counted \(2 claimable\): --project '\*'/);
		assert.match(await ok(['stats', '--project', '*'], nowhere), /^ready\s+3 claimable now \(of 5: 2 waiting/m);
	});

	it('claim takes the card without a project, then names the other projects and the flags', async () => {
		assert.match(await ok(['claim'], nowhere), /^Claimed DW-2 /);
		const nothing = await ok(['claim'], nowhere);
		assert.match(
			nothing,
			/^Nothing claimable: 2 ready cards wait on dependencies, 1 is claimed; 2 claimable cards are in other projects \(github\.com\/acme\/web 2\): baton claim --project '\*' or --project github\.com\/acme\/web\.$/m,
		);
		assert.doesNotMatch(nothing, /nothing left to do/);
	});

	it('MCP results say waiting for the card and its dependency, and list names what it waits on', async () => {
		agent = await startAgent(dataDir, { cwd: nowhere, args: [], env: { BATON_AGENT: 'mcp-words' } });
		const shown = await agent.json<{ card: { status: string; state?: string }; dependencies: unknown[] }>('show', {
			cardId: 'DW-4',
		});
		assert.equal(shown.card.status, 'ready');
		assert.equal(shown.card.state, 'waiting');
		assert.deepEqual(shown.dependencies, [{ id: 'DW-3', title: 'Waits on both', status: 'ready', state: 'waiting' }]);
		const listed = await agent.json<{ cards: { id: string; state?: string }[]; waitsOn?: Record<string, string[]> }>(
			'list',
			{ status: 'ready' },
		);
		assert.deepEqual(
			listed.cards.map(c => [c.id, c.state ?? '-']),
			[
				['DW-3', 'waiting'],
				['DW-4', 'waiting'],
			],
			'only cards without a project, as its claim sees them',
		);
		assert.deepEqual(listed.waitsOn, { 'DW-3': ['DW-2'], 'DW-4': ['DW-3'] });
		// The word the card carries is a filter too, as in `baton list --status waiting`.
		const waiting = await agent.json<{ cards: { id: string }[] }>('list', { status: 'waiting' });
		assert.deepEqual(
			waiting.cards.map(c => c.id),
			['DW-3', 'DW-4'],
		);
		const stats = await agent.json<{ counts: { ready: number }; waiting: number }>('stats', {});
		assert.deepEqual([stats.counts.ready, stats.waiting], [2, 2]);
		const claim = await agent.json<{ card: unknown; reason?: string }>('claim', {});
		assert.equal(claim.card, null);
		assert.match(claim.reason ?? '', /claim with project '\*' or project github\.com\/acme\/web\.$/);
	});
});
