/**
 * A conflict an agent fixes with file tools alone (a real `baton hub` on PostgreSQL, a real repository):
 * two cards change one line differently; the first lands, which marks the second (in review) as no
 * longer merging on the card and in `show`; the second's landing then comes back for the conflict. Its next claim merges the base into its branch in the worktree and stops at the conflict:
 * the claim names the file and the hand-over says what to do, the file holds git's markers. Completing
 * with a marker left is refused and commits nothing; once the file is edited (no git command), complete
 * commits the merge and the card lands with both sides on main.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { RpcClient } from '../../core/protocol/rpc';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { type HubProcess, client, hubEnv, removeDataDir, startHub, tempDataDir, waitFor } from '../helpers/hub';
import { ensureBuilt, runBaton } from '../helpers/mcp';
import { refused } from '../helpers/refused';
import { type TestRepo, gitOut, makeRepo, writeFiles } from '../helpers/workspaceRepo';

const project = 'github.com/acme/conflict';
let dataDir: string;
let schema: string;
let repo: TestRepo;
let hub: HubProcess;
let agent: RpcClient;
let person: RpcClient;

async function claimAndWrite(id: string, text: string): Promise<void> {
	const claimed = await agent.request('card/claim', { cardId: id, root: repo.root });
	assert.ok(claimed.lease && claimed.workspace);
	writeFiles(claimed.workspace.path, { 'greet.ts': text });
	await agent.request('card/complete', { cardId: id, epoch: claimed.lease.epoch });
}

before(async () => {
	ensureBuilt();
	dataDir = tempDataDir();
	schema = uniqueSchema();
	hub = await startHub({ dataDir, env: hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema }) });
	repo = makeRepo({ 'greet.ts': "export const greet = 'hello';\n", 'README.md': '# conflict\n' });
	gitOut(repo.root, 'remote', 'add', 'origin', `https://${project}.git`);
	const on = await runBaton(['settings', '--worktrees', 'on'], {
		dataDir,
		cwd: repo.root,
		env: { BATON_AGENT: 'cli:alice' },
	});
	assert.equal(on.code, 0, on.stderr);
	agent = await client(dataDir, { agent: { id: 'agent-c' } });
	person = await client(dataDir, { agent: { id: 'vscode:alice' }, requestTimeoutMs: 60_000 });
});

after(async () => {
	agent.close();
	person.close();
	await hub.stop();
	removeDataDir(dataDir);
	await dropSchema(schema);
	repo.cleanup();
});

describe('a landing that came back for a conflict', () => {
	it('gives the next claim the markers to resolve by editing, refuses complete while one remains, then lands', async () => {
		await agent.request('card/create', {
			cards: ['CA', 'CB'].map(id => ({ id, title: `Greet ${id}`, project, review: 'human' as const })),
		});
		await claimAndWrite('CA', "export const greet = 'hello from A';\n");
		await claimAndWrite('CB', "export const greet = 'hello from B';\n");
		await person.request('card/review', { cardId: 'CA', approve: true });
		// CA's landing marks CB, still in review, as no longer merging: on the card and in `show`.
		await waitFor(
			async () => (await agent.request('card/get', { cardId: 'CB' })).card.workspace?.conflicts !== undefined,
			15_000,
			'CB marked as no longer merging',
		);
		const marked = (await agent.request('card/get', { cardId: 'CB' })).card.workspace?.conflicts;
		assert.ok(marked);
		assert.deepEqual(marked.files, ['greet.ts']);
		assert.equal(marked.base, gitOut(repo.root, 'rev-parse', 'main'));
		const shown = await runBaton(['show', 'CB'], { dataDir, env: { BATON_AGENT: 'cli:alice' } });
		assert.match(shown.stdout, /conflicts +no longer merges into main .* in greet\.ts: approving would send it back/);
		await refused(person.request('card/review', { cardId: 'CB', approve: true }), 'conflict', /conflicts in greet\.ts/);
		assert.equal((await agent.request('card/get', { cardId: 'CB' })).card.status, 'ready');

		const again = await agent.request('card/claim', { cardId: 'CB', root: repo.root });
		assert.ok(again.lease && again.workspace);
		assert.deepEqual(again.workspace.conflicts, ['greet.ts']);
		assert.match(again.handoff ?? '', /^baton\/CB no longer merged into main, so Baton merged main into it/);
		assert.match(again.handoff ?? '', /resolve the conflict markers .* in greet\.ts by editing the files/);
		assert.equal((await agent.request('card/get', { cardId: 'CB' })).card.workspace?.conflicts, undefined);
		const file = path.join(again.workspace.path, 'greet.ts');
		const markers = readFileSync(file, 'utf8');
		assert.match(markers, /^<<<<<<< /m);
		assert.match(markers, /hello from A/);
		assert.match(markers, /hello from B/);

		const branchBefore = gitOut(repo.root, 'rev-parse', 'baton/CB');
		await refused(
			agent.request('card/complete', { cardId: 'CB', epoch: again.lease.epoch }),
			'conflict',
			/still has conflict markers in greet\.ts .*Nothing was committed/,
		);
		assert.equal(gitOut(repo.root, 'rev-parse', 'baton/CB'), branchBefore, 'nothing committed');
		assert.equal((await agent.request('card/get', { cardId: 'CB' })).card.status, 'claimed');

		// The agent edits the file, nothing else: no git add, no git commit.
		writeFileSync(file, "export const greet = 'hello from A and B';\n");
		await agent.request('card/complete', { cardId: 'CB', epoch: again.lease.epoch, result: 'merged both greetings' });
		const parents = gitOut(repo.root, 'rev-list', '--parents', '-n', '1', 'baton/CB').split(' ');
		assert.equal(parents.length, 3, 'complete committed the merge (two parents)');
		await person.request('card/review', { cardId: 'CB', approve: true });
		assert.equal((await agent.request('card/get', { cardId: 'CB' })).card.status, 'done');
		assert.equal(gitOut(repo.root, 'show', 'main:greet.ts'), "export const greet = 'hello from A and B';");
	});

	it('with --on-conflict send-back, a card in review whose branch stops merging goes back to Ready at once', async () => {
		const set = await runBaton(['settings', '--on-conflict', 'send-back'], {
			dataDir,
			cwd: repo.root,
			env: { BATON_AGENT: 'cli:alice' },
		});
		assert.equal(set.code, 0, set.stderr);
		assert.match(set.stdout, /on conflict +send-back: a card in review whose branch stops merging/);
		await agent.request('card/create', {
			cards: ['CC', 'CD'].map(id => ({ id, title: `Greet ${id}`, project, review: 'human' as const })),
		});
		await claimAndWrite('CC', "export const greet = 'hello from C';\n");
		await claimAndWrite('CD', "export const greet = 'hello from D';\n");
		await person.request('card/review', { cardId: 'CC', approve: true });
		await waitFor(
			async () => (await agent.request('card/get', { cardId: 'CD' })).card.status === 'ready',
			15_000,
			'CD sent back',
		);
		const cd = (await agent.request('card/get', { cardId: 'CD' })).card;
		assert.match(
			cd.handoff ?? '',
			/baton\/CD no longer merges into main after CC landed: it conflicts in greet\.ts\. Sent back at once/,
		);
		assert.equal(cd.attempts, 1, 'not a failed attempt: its next claim is its second');
		const { events } = await agent.request('events/list', { cardId: 'CD' });
		assert.equal(events.at(-1)?.type, 'land_conflicted');
	});
});
