/**
 * The hub holds against an agent that names what it should not, through a real hub on real git: a
 * claim's unlisted `root` pointing at another repository, a card `base` naming another live card's
 * branch, a `complete` from another session of the holder's agent id, and a `complete` after the agent
 * deleted its worktree's `.git`. Each is refused with an error that says what to do, and nothing
 * changed: the other repository has no worktree, branch or config of Baton's, the other card's
 * worktree keeps its files, the holder's worktree is not committed, the user's checkout and main are
 * as the user left them.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { findGitRepo } from '../../core/client/gitRepo';
import { BatonError } from '../../core/errors';
import type { RpcClient } from '../../core/protocol/rpc';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { type HubProcess, client, hubEnv, startHub } from '../helpers/hub';
import { cleanupDataDir, ensureBuilt, runBaton } from '../helpers/mcp';
import { folderPicture, gitOut, makeRepo, type TestRepo, writeFiles } from '../helpers/workspaceRepo';

let dataDir: string;
let schema: string;
let hub: HubProcess;
let admin: RpcClient;
const clients: RpcClient[] = [];
const repos: TestRepo[] = [];
let app: { root: string; project: string };
let other: { root: string; project: string };

async function repo(name: string): Promise<{ root: string; project: string }> {
	const r = makeRepo({ '.gitignore': '.env\n', 'README.md': `# ${name}\n`, 'src/a.ts': 'export const a = 1;\n' });
	repos.push(r);
	gitOut(r.root, 'remote', 'add', 'origin', `https://github.com/acme/${name}.git`);
	const found = await findGitRepo(r.root);
	assert.ok(found !== undefined);
	return { root: r.root, project: found.project };
}

async function agent(id: string, session: string): Promise<RpcClient> {
	const c = await client(dataDir, { agent: { id }, session: `session-of-test-${session}` });
	clients.push(c);
	return c;
}

/** The promise's BatonError (the wire's code and message), failing when it resolved. */
async function refusal(p: Promise<unknown>): Promise<BatonError> {
	try {
		await p;
	} catch (e) {
		assert.ok(BatonError.is(e), String(e));
		return e;
	}
	assert.fail('expected a refusal');
}

/** The repository's state as git and its files say: refs, config, exclude, worktrees, every file. */
function repoState(root: string): string {
	return [
		gitOut(root, 'for-each-ref'),
		readFileSync(path.join(root, '.git', 'config'), 'utf8'),
		readFileSync(path.join(root, '.git', 'info', 'exclude'), 'utf8'),
		gitOut(root, 'worktree', 'list', '--porcelain'),
		gitOut(root, 'status', '--porcelain', '--ignored'),
		[...folderPicture(root, ['.git', '.baton']).entries()].sort().join('\n'),
	].join('\n--\n');
}

before(async () => {
	ensureBuilt();
	dataDir = path.join(mkdtempSync('/tmp/bt-wh-'), 'd');
	// The store is not what these cases prove; a PostgreSQL hub keeps PGlite's hundreds of MB out of
	// the process that spawns git for every claim (each child forks it: 7x the CPU).
	schema = uniqueSchema();
	hub = await startHub({ dataDir, env: hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema }) });
	admin = await client(dataDir, { agent: { id: 'vscode:alice' } });
	app = await repo('app');
	other = await repo('other');
	const on = await runBaton(['settings', '--worktrees', 'on'], {
		dataDir,
		cwd: app.root,
		env: { BATON_AGENT: 'cli:alice' },
	});
	assert.equal(on.code, 0, on.stderr);
});

after(async () => {
	for (const c of [...clients, admin]) {
		c.close();
	}
	await hub.stop();
	await cleanupDataDir(dataDir);
	await dropSchema(schema);
	rmSync(path.dirname(dataDir), { recursive: true, force: true });
	for (const r of repos) {
		r.cleanup();
	}
});

describe('what a claim names is checked against the repository', () => {
	it('a root outside the project (the unlisted parameter) is refused; that repository is untouched', async () => {
		await admin.request('card/create', { cards: [{ id: 'R1', title: 'Root elsewhere', project: app.project }] });
		const before = repoState(other.root);
		const mallory = await agent('agent-mallory', 'm1');
		const e = await refusal(mallory.request('card/claim', { cardId: 'R1', project: app.project, root: other.root }));
		assert.equal(e.code, 'invalid_input');
		assert.match(e.message, /is not a checkout of project github\.com\/acme\/app .*nothing was changed/);
		assert.equal(repoState(other.root), before);
		assert.equal(existsSync(path.join(other.root, '.baton')), false);
		const { card } = await admin.request('card/get', { cardId: 'R1' });
		assert.equal(card.status, 'ready');
		assert.equal(card.workspace, undefined);
	});

	it("a base naming another live card's branch is refused; that card's worktree keeps its files", async () => {
		await admin.request('card/create', { cards: [{ id: 'H1', title: 'Host card', project: app.project }] });
		const holder = await agent('agent-holder', 'h1');
		const claimed = await holder.request('card/claim', { cardId: 'H1', project: app.project, root: app.root });
		const wt = claimed.workspace?.path ?? '';
		writeFiles(wt, { 'host.txt': 'uncommitted work\n' });
		const picture = folderPicture(wt);
		const mallory = await agent('agent-mallory2', 'm2');
		await mallory.request('card/create', {
			cards: [{ id: 'G1', title: 'Guest', project: app.project, base: 'baton/H1' }],
		});
		const e = await refusal(mallory.request('card/claim', { cardId: 'G1', project: app.project, root: app.root }));
		assert.equal(e.code, 'invalid_input');
		assert.match(e.message, /is the branch of card H1, which is still being worked on.*baton edit G1 --base/);
		assert.deepEqual(folderPicture(wt), picture);
		assert.equal(gitOut(app.root, 'branch', '--list', 'baton/G1'), '');
	});
});

describe('complete commits only when the completion is allowed and the worktree is the worktree', () => {
	it("a complete from another session of the holder's agent id is refused and commits nothing", async () => {
		await admin.request('card/create', { cards: [{ id: 'C1', title: 'Held', project: app.project }] });
		const first = await agent('agent-alpha', 'a1');
		const claimed = await first.request('card/claim', { cardId: 'C1', project: app.project, root: app.root });
		const wt = claimed.workspace?.path ?? '';
		writeFiles(wt, { 'work.txt': 'not done yet\n' });
		const head = gitOut(wt, 'rev-parse', 'HEAD');
		const second = await agent('agent-alpha', 'a2');
		const e = await refusal(second.request('card/complete', { cardId: 'C1', result: 'not mine' }));
		assert.equal(e.code, 'lease_lost');
		assert.equal(gitOut(wt, 'rev-parse', 'HEAD'), head);
		assert.equal(gitOut(wt, 'status', '--porcelain'), '?? work.txt');
		assert.equal((await admin.request('card/get', { cardId: 'C1' })).card.status, 'claimed');
	});

	it("after the agent deletes its worktree's .git: refused, the user's main checkout is not committed", async () => {
		await admin.request('card/create', { cards: [{ id: 'D1', title: 'No .git', project: app.project }] });
		const holder = await agent('agent-delta', 'd1');
		const claimed = await holder.request('card/claim', { cardId: 'D1', project: app.project, root: app.root });
		const wt = claimed.workspace?.path ?? '';
		writeFiles(app.root, { 'src/a.ts': 'export const a = 2; // the user is editing\n', '.env': 'SECRET=1\n' });
		writeFiles(app.root, { 'private.txt': 'mine\n' });
		writeFiles(wt, { 'agent.txt': 'agent work\n' });
		rmSync(path.join(wt, '.git'));
		const before = repoState(app.root);
		const e = await refusal(holder.request('card/complete', { cardId: 'D1', result: 'done' }));
		assert.equal(e.code, 'invalid_input');
		assert.match(e.message, /is not Baton's worktree of this card: its \.git file is gone.*git worktree repair/);
		assert.equal(repoState(app.root), before);
		assert.equal((await admin.request('card/get', { cardId: 'D1' })).card.status, 'claimed');
		// On release the snapshot is refused too: nothing of the user's checkout reaches a WIP ref.
		await holder.request('card/release', { cardId: 'D1', reason: 'give up' });
		assert.equal(gitOut(app.root, 'for-each-ref', 'refs/baton/'), '');
		rmSync(path.join(app.root, 'private.txt'));
		gitOut(app.root, 'checkout', '--', 'src/a.ts');
	});
});
