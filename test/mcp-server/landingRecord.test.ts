/**
 * A hub killed between moving a base and writing the approval (a real `baton hub` on PostgreSQL, a real
 * repository whose reference-transaction hook kills the hub with -9 the moment main's new commit is
 * committed): main has the card's work and the card is still in review. The next hub finishes the
 * record at its start: the card is done as approved by the person, `landed` names main's commit, the
 * landing is not made twice, and the dead hub's place in the landing queue does not hold up the next
 * landing of that base.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { RpcClient } from '../../core/protocol/rpc';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { type HubProcess, client, hubEnv, removeDataDir, startHub, tempDataDir } from '../helpers/hub';
import { ensureBuilt, runBaton } from '../helpers/mcp';
import { type TestRepo, gitOut, makeRepo, writeFiles } from '../helpers/workspaceRepo';

const project = 'github.com/acme/record';
let dataDir: string;
let schema: string;
let repo: TestRepo;
let hub: HubProcess;

function start(): Promise<HubProcess> {
	return startHub({ dataDir, env: hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema }) });
}

async function completed(c: RpcClient, id: string): Promise<void> {
	const claimed = await c.request('card/claim', { cardId: id, root: repo.root });
	assert.ok(claimed.lease && claimed.workspace);
	writeFiles(claimed.workspace.path, { [`${id}.txt`]: `${id}\n` });
	await c.request('card/complete', { cardId: id, epoch: claimed.lease.epoch });
}

before(async () => {
	ensureBuilt();
	dataDir = tempDataDir();
	schema = uniqueSchema();
	hub = await start();
	repo = makeRepo({ 'README.md': '# record\n' });
	gitOut(repo.root, 'remote', 'add', 'origin', `https://${project}.git`);
	const on = await runBaton(['settings', '--worktrees', 'on'], {
		dataDir,
		cwd: repo.root,
		env: { BATON_AGENT: 'cli:alice' },
	});
	assert.equal(on.code, 0, on.stderr);
});

after(async () => {
	await hub.stop();
	removeDataDir(dataDir);
	await dropSchema(schema);
	repo.cleanup();
});

describe('a hub that dies between moving the base and recording the approval', () => {
	it('leaves the record to the next hub, which finishes it at its start without landing twice', async () => {
		const agent = await client(dataDir, { agent: { id: 'agent-r' } });
		await agent.request('card/create', {
			cards: ['R1', 'R2'].map(id => ({ id, title: `Record ${id}`, project, review: 'human' as const })),
		});
		await completed(agent, 'R1');
		await completed(agent, 'R2');
		agent.close();
		// The hook kills the hub (git's parent) once main's new commit is committed, the first time only.
		const mark = path.join(repo.parent, 'killed');
		const hook = path.join(repo.root, '.git', 'hooks', 'reference-transaction');
		writeFileSync(
			hook,
			[
				'#!/bin/sh',
				'[ "$1" = committed ] || exit 0',
				`if grep -q ' refs/heads/main$' && [ ! -e '${mark}' ]; then`,
				`  touch '${mark}'`,
				'  kill -9 "$(cut -d" " -f4 /proc/$PPID/stat)"',
				'fi',
				'',
			].join('\n'),
		);
		chmodSync(hook, 0o755);
		const before = gitOut(repo.root, 'rev-parse', 'main');
		const person = await client(dataDir, { agent: { id: 'vscode:alice' }, reconnect: false });
		await assert.rejects(person.request('card/review', { cardId: 'R1', approve: true }));
		person.close();
		await hub.exited;
		assert.ok(existsSync(mark), 'the hook killed the hub');
		const moved = gitOut(repo.root, 'rev-parse', 'main');
		assert.notEqual(moved, before, 'main moved to the landing');
		assert.equal(gitOut(repo.root, 'show', 'main:R1.txt'), 'R1');

		hub = await start();
		const alice = await client(dataDir, { agent: { id: 'vscode:alice' } });
		try {
			const { card } = await alice.request('card/get', { cardId: 'R1' });
			const { events } = await alice.request('events/list', { cardId: 'R1' });
			assert.equal(card.status, 'done');
			assert.equal(card.workspace?.landed?.commit, moved);
			assert.equal(card.workspace.landing, undefined);
			const approved = events.find(e => e.type === 'approved');
			assert.equal(approved?.actor, 'vscode:alice');
			assert.equal(gitOut(repo.root, 'rev-parse', 'main'), moved, 'nothing landed twice');
			// The dead hub's place in the line is gone: the next landing of main goes at once.
			const started = Date.now();
			await alice.request('card/review', { cardId: 'R2', approve: true });
			assert.ok(Date.now() - started < 15_000, `R2 landed in ${Date.now() - started} ms`);
			assert.equal((await alice.request('card/get', { cardId: 'R2' })).card.status, 'done');
			assert.equal(gitOut(repo.root, 'show', 'main:R2.txt'), 'R2');
			assert.deepEqual((await alice.request('landing/queue', {})).entries, []);
		} finally {
			alice.close();
		}
	});
});
