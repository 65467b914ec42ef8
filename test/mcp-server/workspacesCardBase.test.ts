/**
 * A card's own base branch (`--base`) on real git repositories against one real hub: `baton
 * create --base` and `baton edit --base/--no-base` set it and `show` prints it; the card's worktree then
 * starts from that branch, not the project's, and wins over a `--land none` dependency's branch too; a
 * base that does not exist refuses the claim naming the card's base and how to change it, and hands
 * the card back.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { findGitRepo } from '../../core/client/gitRepo';
import type { RpcClient } from '../../core/protocol/rpc';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { type HubProcess, client, hubEnv, startHub } from '../helpers/hub';
import { type CliResult, cleanupDataDir, ensureBuilt, runCliHere } from '../helpers/mcp';
import { gitOut, gitSeries, makeRepo, type TestRepo, writeFiles } from '../helpers/workspaceRepo';

let dataDir: string;
let schema: string;
let hub: HubProcess;
let admin: RpcClient;
const repos: TestRepo[] = [];

/** A repository on main with a `release` branch that has a file main lacks; its project's id. */
async function repo(name: string): Promise<{ root: string; project: string }> {
	const r = makeRepo({ 'README.md': `# ${name}\n` });
	repos.push(r);
	writeFiles(r.root, { 'RELEASE.md': 'only on release\n' });
	gitSeries([
		[r.root, 'remote', 'add', 'origin', `https://github.com/acme/${name}.git`],
		[r.root, 'checkout', '-q', '-b', 'release'],
		[r.root, 'add', 'RELEASE.md'],
		[r.root, 'commit', '-q', '-m', 'release notes'],
		[r.root, 'checkout', '-q', 'main'],
	]);
	const found = await findGitRepo(r.root);
	assert.ok(found !== undefined);
	return { root: r.root, project: found.project };
}

/** The CLI in this process (its words and exit codes; the process face has its own smoke tests). */
function baton(args: string[], cwd: string): Promise<CliResult> {
	return runCliHere(args, { dataDir, cwd, env: { BATON_AGENT: 'cli:alice' } });
}

before(async () => {
	ensureBuilt();
	dataDir = path.join(mkdtempSync('/tmp/bt-wb-'), 'd');
	// The store is not what these cases prove; a PostgreSQL hub keeps PGlite's hundreds of MB out of
	// the process that spawns git for every claim (each child forks it: 7x the CPU).
	schema = uniqueSchema();
	hub = await startHub({ dataDir, env: hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema }) });
	admin = await client(dataDir, { agent: { id: 'vscode:alice' } });
});

after(async () => {
	admin.close();
	await hub.stop();
	await cleanupDataDir(dataDir);
	await dropSchema(schema);
	rmSync(path.dirname(dataDir), { recursive: true, force: true });
	for (const r of repos) {
		r.cleanup();
	}
});

describe("a card's own base branch", () => {
	it('create --base: the worktree starts from that branch; edit --no-base goes back to the project’s', async () => {
		const { root } = await repo('rel');
		assert.equal((await baton(['settings', '--worktrees', 'on'], root)).code, 0);
		const made = await baton(['create', 'Fix on release', '--id', 'REL-1', '--base', 'release'], root);
		assert.equal(made.code, 0, made.stderr);
		assert.match((await baton(['show', 'REL-1'], root)).stdout, /base +release \(this card's/);
		const r = await baton(['claim', 'REL-1'], root);
		assert.equal(r.code, 0, r.stderr);
		const wsPath = path.join(root, '.baton', 'worktrees', 'REL-1');
		assert.match(r.stdout, /branch baton\/REL-1 from release\)/);
		assert.equal(readFileSync(path.join(wsPath, 'RELEASE.md'), 'utf8'), 'only on release\n');
		assert.equal(gitOut(wsPath, 'merge-base', 'HEAD', 'release'), gitOut(root, 'rev-parse', 'release'));
		assert.equal((await admin.request('card/get', { cardId: 'REL-1' })).card.workspace?.base, 'release');
		// Its branch keeps the base it was made from: a change now is refused, naming the branch.
		const change = await baton(['edit', 'REL-1', '--no-base'], root);
		assert.equal(change.code, 1);
		assert.match(change.stderr, /already has its branch baton\/REL-1, made from release/);

		assert.equal((await baton(['create', 'Plain', '--id', 'REL-2', '--base', 'release'], root)).code, 0);
		const dropped = await baton(['edit', 'REL-2', '--no-base'], root);
		assert.equal(dropped.code, 0, dropped.stderr);
		assert.equal((await admin.request('card/get', { cardId: 'REL-2' })).card.base, null);
		const both = await baton(['edit', 'REL-2', '--base', 'x', '--no-base'], root);
		assert.equal(both.code, 2);
		const plain = await baton(['claim', 'REL-2'], root);
		assert.equal(plain.code, 0, plain.stderr);
		assert.match(plain.stdout, /branch baton\/REL-2 from main\)/);
		assert.equal(existsSync(path.join(root, '.baton', 'worktrees', 'REL-2', 'RELEASE.md')), false);
	});

	it('wins over a --land none dependency’s branch', async () => {
		const { root, project } = await repo('stack');
		await admin.request('project/settings/update', {
			project,
			worktrees: true,
			land: 'none',
			roots: { [hostname()]: root },
		});
		await admin.request('card/create', {
			cards: [
				{ id: 'ST-1', title: 'First', project },
				{ id: 'ST-2', title: 'Stacked', project, dependsOn: ['ST-1'] },
				{ id: 'ST-3', title: 'On release', project, dependsOn: ['ST-1'], base: 'release' },
			],
		});
		const agent = await client(dataDir, { agent: { id: 'agent-st' } });
		try {
			const first = await agent.request('card/claim', { cardId: 'ST-1', project, root });
			writeFiles(first.workspace?.path ?? '', { 'first.txt': 'first\n' });
			await agent.request('card/complete', { cardId: 'ST-1', result: 'done' });
			const stacked = await agent.request('card/claim', { cardId: 'ST-2', project, root });
			assert.equal(stacked.workspace?.base, 'baton/ST-1', 'without its own base, the dependency’s branch');
			const own = await agent.request('card/claim', { cardId: 'ST-3', project, root });
			assert.equal(own.workspace?.base, 'release');
			const ownPath = own.workspace.path;
			assert.ok(existsSync(path.join(ownPath, 'RELEASE.md')));
			assert.equal(existsSync(path.join(ownPath, 'first.txt')), false);
		} finally {
			agent.close();
		}
	});

	it('refuses a claim whose base does not exist, naming the card’s base, and hands the card back', async () => {
		const { root } = await repo('gone');
		assert.equal((await baton(['settings', '--worktrees', 'on'], root)).code, 0);
		assert.equal((await baton(['create', 'Lost', '--id', 'GONE-1', '--base', 'nope'], root)).code, 0);
		const r = await baton(['claim', 'GONE-1'], root);
		assert.equal(r.code, 1, r.stdout);
		assert.match(r.stderr, /Card GONE-1 names its own base branch \(--base\): Base branch "nope" does not exist/);
		assert.match(r.stderr, /baton edit GONE-1 --base BRANCH/);
		const got = await admin.request('card/get', { cardId: 'GONE-1' });
		assert.equal(got.card.status, 'ready');
		assert.equal(got.card.workspace, undefined);
		assert.deepEqual(
			got.history.map(e => e.type),
			['created', 'claimed', 'released'],
		);
		assert.equal(existsSync(path.join(root, '.baton', 'worktrees', 'GONE-1')), false);
	});
});
