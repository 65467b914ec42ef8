/**
 * What a new user read in the CLI's output, through the CLI (the bundle once, the
 * rest in process: runCliHere): the hint of `hub status` with no hub, `comment`'s answer, `show`'s note
 * for an attempt judged "changes requested", counted nouns, and the Backlog.md import of a real
 * `backlog init --backlog-dir .backlog` project (test/fixtures/import/make.sh) with a checked
 * acceptance criterion and a draft. Refusals that need no hub run in-process.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { plural } from '../../core/plural';
import type { Card } from '../../core/protocol';
import { runCli } from '../../mcp-server/cli/run';
import { cleanupDataDir, ensureBuilt, runBaton, runCliHere, tempDataDir } from '../helpers/mcp';
import { captureOutput } from '../helpers/cliOutput';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'import');
let dataDir: string;
let work: string;

/** The CLI in process (runCliHere): the words are its own; the bundle end to end is cliRun.test.ts's. */
async function baton(args: string[], agent = 'toy-agent'): Promise<string> {
	const r = await runCliHere(args, { dataDir, env: { BATON_AGENT: agent } });
	assert.equal(r.code, 0, `baton ${args.join(' ')}: ${r.stdout}${r.stderr}`);
	return r.stdout;
}

before(() => {
	ensureBuilt();
	dataDir = tempDataDir();
	work = mkdtempSync('/tmp/bt-newuser-');
});

after(async () => {
	await cleanupDataDir(dataDir);
	rmSync(work, { recursive: true, force: true });
});

describe('CLI words a new user reads', () => {
	it('hub status with no hub points to `baton up`, not the foreground `baton hub`', async () => {
		const r = await runBaton(['hub', 'status'], { dataDir: join(work, 'no-hub-here') });
		assert.equal(r.code, 1);
		assert.match(r.stderr, /No Baton hub is running for \S+\. Start one with "baton up" \(the hub keeps running/);
		assert.doesNotMatch(r.stderr, /baton hub --data-dir/);
		const other = captureOutput();
		assert.equal(await runCli(['hub', 'status', '--data-dir', join(work, 'other dir')], other, {}), 1);
		assert.match(other.stderr, new RegExp(`Start one with "baton up --data-dir '${join(work, 'other dir')}'"`));
	});

	it('comment says what was posted, then the card as it stands', async () => {
		await baton(['create', 'Write the parser', '--id', 'WEB-4']);
		await baton(['claim', 'WEB-4']);
		const posted = await baton(['comment', 'WEB-4', 'Use the new grammar'], 'a-human');
		assert.equal(posted, 'Posted message 1 on WEB-4. WEB-4 is claimed by toy-agent, epoch 1: Write the parser\n');
	});

	it('show gives an attempt judged "changes requested" the reviewer’s note, not the last progress note', async () => {
		await baton(['create', 'Reviewed work', '--id', 'REV-1', '--review', 'human']);
		await baton(['claim', 'REV-1']);
		await baton(['heartbeat', 'REV-1', '--progress', '80', '--note', 'polishing the docs']);
		await baton(['complete', 'REV-1', '--result', 'done, see the branch']);
		await baton(['reject', 'REV-1', '--note', 'Add a test for empty input'], 'a-human');
		const shown = await baton(['show', 'REV-1']);
		const row = shown.split('\n').find(l => /^1 +toy-agent +changes requested/.test(l));
		assert.ok(row !== undefined, shown);
		// The USAGE column says `-` for an attempt that reported none.
		assert.match(row, /80% +- +Add a test for empty input$/);
	});

	it('counts nouns in the number they need', () => {
		assert.deepEqual(
			[plural(1, 'card'), plural(2, 'card'), plural(1, 'dependency'), plural(0, 'dependency'), plural(2, 'match')],
			['1 card', '2 cards', '1 dependency', '0 dependencies', '2 matches'],
		);
	});
});

describe('baton import --from backlog-md, as Backlog.md lays a project out', () => {
	it('finds the .backlog layout, keeps checked criteria, and names the drafts it skips', async () => {
		const project = join(work, 'hidden');
		cpSync(join(fixtures, 'backlog-md-hidden'), project, { recursive: true });
		const out = await baton(['import', '--from', 'backlog-md', project, '--no-project']);
		const lines = out.trimEnd().split('\n');
		assert.equal(
			lines[0],
			'Imported 2 cards from backlog-md (2 ready) with 1 dependency; 1 item skipped (below).',
			out,
		);
		assert.equal(
			lines[1],
			`Skipped: ${join(project, '.backlog', 'drafts', 'draft-1 - Try-a-shared-cache.md')} (draft-1): a draft: drafts are not imported (promote it in Backlog.md first: backlog draft promote ID)`,
		);
		const card = (JSON.parse(await baton(['show', 'TASK-1', '--json'])) as { card: Card }).card;
		assert.deepEqual(card.acceptance, ['[x] Hits skip the database', 'Entries expire']);
	});

	it('refuses a folder that is no Backlog.md project in one line, without the usage text', async () => {
		const empty = join(work, 'empty');
		mkdirSync(empty);
		const out = captureOutput();
		assert.equal(
			await runCli(['import', '--from', 'backlog-md', empty, '--data-dir', join(work, 'unused')], out, {}),
			1,
		);
		assert.equal(
			out.stderr,
			`baton import: ${empty} is not a Backlog.md project: no tasks/ folder in backlog/, .backlog/ or ${empty} itself.\n`,
		);
		const missing = captureOutput();
		const nowhere = join(work, '.backlog');
		assert.equal(
			await runCli(['import', '--from', 'backlog-md', nowhere, '--data-dir', join(work, 'unused')], missing, {}),
			1,
		);
		assert.equal(
			missing.stderr,
			`baton import: ${nowhere} does not exist: give the folder that holds backlog/ or .backlog/.\n`,
		);
	});
});
