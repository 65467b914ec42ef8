/**
 * Done means landed, main stays green, with six agents at once: a real `baton run` (six seats, script
 * agents through --command, review none) on a real repository whose test (`sh test.sh`, the project's
 * check) fails when a name is called but not defined. Three cards add independent calls; one breaks the
 * test on its own; a pair each pass alone but not together (a rename, and a new call to the old name).
 * Every commit main's first-parent history gains passes the test; the breaking card never lands and its
 * hand-over quotes the test; exactly one of the pair lands and the other comes back with the test's
 * words; every done card's change is on main and its branch is gone.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { startBatonRun } from '../helpers/batonRun';
import { type HubProcess, client, hubEnv, removeDataDir, startHub, tempDataDir, waitFor } from '../helpers/hub';
import { batonJs, childEnv, ensureBuilt, runBaton } from '../helpers/mcp';
import { type TestRepo, gitOut, makeRepo } from '../helpers/workspaceRepo';

const agentScript = path.join(import.meta.dirname, '..', 'fixtures', 'landingAgent.sh');
const project = 'github.com/acme/six';
const plain = ['ADD1', 'ADD2', 'ADD3'];
const pair = ['RENAME', 'NEWCALL'];
const all = [...plain, 'BREAK', ...pair];

let dataDir: string;
let schema: string;
let hub: HubProcess;
let repo: TestRepo;
let api: RpcClient;
let bin: string;

/** Whether `sh test.sh` passes on commit `c` (checked out in a scratch folder). */
function testPasses(c: string): boolean {
	const dir = path.join(mkdtempSync('/tmp/bt-six-check-'), 'tree');
	gitOut(repo.root, 'worktree', 'add', '--detach', '--quiet', dir, c);
	try {
		execFileSync('sh', ['test.sh'], { cwd: dir, stdio: 'ignore' });
		return true;
	} catch {
		return false;
	} finally {
		gitOut(repo.root, 'worktree', 'remove', '--force', dir);
		rmSync(path.dirname(dir), { recursive: true, force: true });
	}
}

before(async () => {
	ensureBuilt();
	dataDir = tempDataDir();
	schema = uniqueSchema();
	hub = await startHub({ dataDir, env: hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema }) });
	repo = makeRepo({
		'lib.sh': 'greet() { echo hello; }\n',
		'main.sh': 'set -e\n. ./lib.sh\nfor f in calls/*.sh; do . "./$f"; done\ngreet\n',
		'calls/base.sh': 'echo base\n',
		'test.sh':
			'out=$(sh main.sh 2>&1) || { echo "test.sh: main.sh failed: a name is called but not defined:"; echo "$out" | tail -2; exit 1; }\n',
	});
	gitOut(repo.root, 'remote', 'add', 'origin', `https://${project}.git`);
	for (const args of [
		['settings', '--worktrees', 'on'],
		['settings', '--check', 'sh test.sh'],
		['settings', '--review', 'none'],
	]) {
		const r = await runBaton(args, { dataDir, cwd: repo.root, env: { BATON_AGENT: 'cli:alice' } });
		assert.equal(r.code, 0, r.stderr);
	}
	api = await client(dataDir, { agent: { id: 'vscode:alice' } });
	bin = path.join(dataDir, '..', 'bin');
	mkdirSync(bin, { recursive: true });
	writeFileSync(path.join(bin, 'baton'), `#!/bin/sh\nexec "${process.execPath}" "${batonJs}" "$@"\n`);
	chmodSync(path.join(bin, 'baton'), 0o755);
});

after(async () => {
	api.close();
	await hub.stop();
	removeDataDir(dataDir);
	await dropSchema(schema);
	repo.cleanup();
});

describe('six agents landing on one base under baton run', () => {
	it('keep main green: the breaking card and one of the clashing pair never land, every done card is on main', async () => {
		const before = gitOut(repo.root, 'rev-parse', 'main');
		await api.request('card/create', {
			cards: all.map(id => ({ id, title: `Change ${id}`, project, maxAttempts: 1 })),
		});
		const env = childEnv(dataDir, {});
		const run = startBatonRun({
			dataDir,
			cwd: repo.root,
			args: [
				'--seats',
				'6',
				'--no-sandbox',
				'--kind',
				'bash',
				'--project',
				project,
				'--command',
				`/bin/bash ${agentScript}`,
			],
			rawEnv: { ...env, PATH: `${bin}:${env.PATH ?? ''}` },
		});
		let cards: Card[] = [];
		try {
			await waitFor(
				async () => {
					cards = await Promise.all(all.map(async id => (await api.request('card/get', { cardId: id })).card));
					return cards.every(c => c.status === 'done' || c.status === 'blocked');
				},
				120_000,
				'every card done or blocked',
			);
		} finally {
			run.proc.kill('SIGINT');
			await run.exited;
		}
		const status = Object.fromEntries(cards.map(c => [c.id, c.status]));
		for (const id of plain) {
			assert.equal(status[id], 'done', JSON.stringify(status));
		}
		const breaking = cards.find(c => c.id === 'BREAK');
		assert.ok(breaking);
		assert.equal(breaking.status, 'blocked');
		assert.match(breaking.handoff ?? '', /a name is called but not defined/);
		const landedPair = pair.filter(id => status[id] === 'done');
		assert.equal(landedPair.length, 1, `exactly one of the pair lands: ${JSON.stringify(status)}`);
		const back = cards.find(c => pair.includes(c.id) && c.status !== 'done');
		assert.match(back?.handoff ?? '', /a name is called but not defined/);
		// main's first-parent history: exactly the landings, each passing the test.
		const commits = gitOut(repo.root, 'rev-list', '--first-parent', `${before}..main`).split('\n');
		const landed = commits.map(c => gitOut(repo.root, 'log', '-1', '--format=%s', c).split(':')[0]).sort();
		assert.deepEqual(landed, [...plain, ...landedPair].sort());
		assert.deepEqual(
			commits.filter(c => !testPasses(c)),
			[],
			'every commit main moved to passes the test',
		);
		for (const c of cards.filter(k => k.status === 'done')) {
			assert.ok(c.workspace?.landed?.commit, `${c.id} says where it landed`);
			assert.ok(commits.includes(c.workspace.landed.commit), `${c.id}'s landing is on main`);
		}
		const branches = gitOut(repo.root, 'branch', '--list', 'baton/*', '--format=%(refname:short)').split('\n');
		for (const id of [...plain, ...landedPair]) {
			assert.equal(branches.includes(`baton/${id}`), false, `no branch left for done ${id}`);
		}
	});
});
