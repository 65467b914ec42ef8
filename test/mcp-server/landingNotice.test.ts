/**
 * The landing queue's notice through real hubs (`node dist/baton.js hub`) on a real repository whose
 * check sleeps on a tree that holds a commit main made after the card's own check, so a landing whose
 * base moved since (the check runs again on the merged tree) stays in the line a while. On PGlite a watching raw websocket client gets
 * `{notice: 'landing'}` with the card when its landing joins the line and an empty list when it leaves;
 * an MCP session connected all along gets none. On PostgreSQL a client of another hub on the same store
 * sees the same through that hub's 2 s poll.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import type { LandingEntry } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { uniqueSchema } from '../helpers/backlog';
import {
	type HubProcess,
	RawClient,
	client,
	removeDataDir,
	startHub,
	startSharedHubs,
	tempDataDir,
	waitFor,
} from '../helpers/hub';
import { ensureBuilt, runBaton } from '../helpers/mcp';
import { type TestRepo, commitAllFiles, gitOut, makeRepo, writeFiles } from '../helpers/workspaceRepo';

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
	for (const c of cleanups.reverse()) {
		await c();
	}
});

type LandingNotice = { notice: 'landing'; entries: LandingEntry[] };
const isLanding = (f: Record<string, unknown>): boolean => f.notice === 'landing';

/**
 * A repository of `project` with worktrees on, through the hub of `dataDir`, whose check sleeps `seconds`
 * on a tree with main's later commits (main-*.txt): a card's own check is quick, its landing's is not.
 */
async function slowRepo(dataDir: string, project: string, seconds: number): Promise<TestRepo> {
	const repo = makeRepo({ 'README.md': '# notice\n' });
	cleanups.push(() => repo.cleanup());
	gitOut(repo.root, 'remote', 'add', 'origin', `https://${project}.git`);
	for (const args of [
		['settings', '--worktrees', 'on'],
		['settings', '--check', `if ls main-*.txt >/dev/null 2>&1; then sleep ${seconds}; fi`],
	]) {
		const r = await runBaton(args, { dataDir, cwd: repo.root, env: { BATON_AGENT: 'cli:alice' } });
		assert.equal(r.code, 0, r.stderr);
	}
	return repo;
}

/**
 * `id` made, claimed, done and checked by `agent`, then main moved under it: its approval's check runs
 * again on the merged tree, so its landing takes a second or more.
 */
async function readyToLand(agent: RpcClient, repo: TestRepo, project: string, id: string): Promise<void> {
	await agent.request('card/create', { cards: [{ id, title: `Work ${id}`, project, review: 'human' }] });
	const claimed = await agent.request('card/claim', { cardId: id, root: repo.root });
	assert.ok(claimed.lease && claimed.workspace, `${id} claimed with a worktree`);
	writeFiles(claimed.workspace.path, { [`${id}.txt`]: `${id}\n` });
	await agent.request('card/complete', { cardId: id, epoch: claimed.lease.epoch, result: `did ${id}` });
	await waitFor(
		async () => (await agent.request('card/get', { cardId: id })).card.checks?.state === 'passed',
		30_000,
		`${id}'s check passed`,
	);
	writeFiles(repo.root, { [`main-${id}.txt`]: 'moved\n' });
	commitAllFiles(repo.root, `main moves under ${id}`);
}

async function watcherOf(hub: HubProcess, kind: 'extension' | 'mcp'): Promise<RawClient> {
	const raw = await RawClient.unix(hub.paths);
	cleanups.push(() => raw.close());
	const agent = kind === 'mcp' ? { agent: { id: 'quiet-mcp-agent' } } : {};
	assert.equal((await raw.hello({ token: hub.token, client: kind, ...agent })).hello, 'ok');
	return raw;
}

describe('the landing notice on one hub (PGlite)', () => {
	it('reaches a watching client on join and leave, never an MCP session', async () => {
		ensureBuilt();
		const dataDir = tempDataDir();
		const hub = await startHub({ dataDir });
		cleanups.push(async () => {
			await hub.stop();
			removeDataDir(dataDir);
		});
		const project = 'github.com/acme/notice';
		const repo = await slowRepo(dataDir, project, 1);
		const agent = await client(dataDir, { agent: { id: 'agent-n' } });
		const person = await client(dataDir, { agent: { id: 'vscode:alice' }, requestTimeoutMs: 60_000 });
		cleanups.push(
			() => agent.close(),
			() => person.close(),
		);
		await readyToLand(agent, repo, project, 'N1');
		const watcher = await watcherOf(hub, 'extension');
		const mcp = await watcherOf(hub, 'mcp');
		const started = Date.now();
		const approved = person.request('card/review', { cardId: 'N1', approve: true });
		const joined = (await watcher.next(
			f => isLanding(f) && (f as LandingNotice).entries.some(e => e.cardId === 'N1'),
			10_000,
		)) as LandingNotice;
		console.log(`landing notice with N1 ${Date.now() - started} ms after the approval was sent`);
		const entry = joined.entries.find(e => e.cardId === 'N1');
		assert.equal(entry?.project, project);
		assert.equal(entry.base, 'main');
		assert.equal(entry.actor, 'vscode:alice');
		assert.equal(entry.place, 1);
		await approved;
		await watcher.next(f => isLanding(f) && (f as LandingNotice).entries.length === 0, 10_000);
		console.log(`empty landing notice ${Date.now() - started} ms after the approval was sent`);
		assert.equal((await agent.request('card/get', { cardId: 'N1' })).card.status, 'done');
		assert.deepEqual(
			mcp.frames.filter(f => (f as { notice?: string }).notice === 'landing'),
			[],
		);
	});
});

describe('the landing notice on PostgreSQL', () => {
	it("reaches another hub's watching client through its poll", async () => {
		ensureBuilt();
		const shared = await startSharedHubs(2, uniqueSchema());
		cleanups.push(() => shared.stop());
		const [dirA = ''] = shared.dirs;
		const project = 'github.com/acme/notice-pg';
		const repo = await slowRepo(dirA, project, 3);
		const agent = await client(dirA, { agent: { id: 'agent-p' } });
		const person = await client(dirA, { agent: { id: 'vscode:alice' }, requestTimeoutMs: 60_000 });
		cleanups.push(
			() => agent.close(),
			() => person.close(),
		);
		await readyToLand(agent, repo, project, 'P1');
		const hubB = shared.hubs[1];
		assert.ok(hubB);
		const watcher = await watcherOf(hubB, 'extension');
		const started = Date.now();
		const approved = person.request('card/review', { cardId: 'P1', approve: true });
		await watcher.next(f => isLanding(f) && (f as LandingNotice).entries.some(e => e.cardId === 'P1'), 10_000);
		console.log(`hub B's landing notice with P1 ${Date.now() - started} ms after the approval was sent to hub A`);
		await approved;
		await watcher.next(f => isLanding(f) && (f as LandingNotice).entries.length === 0, 10_000);
		console.log(`hub B's empty landing notice ${Date.now() - started} ms after the approval was sent to hub A`);
	});
});
