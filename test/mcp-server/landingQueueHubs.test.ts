/**
 * The landing queue across hubs: two real hubs on one PostgreSQL schema, one real repository whose
 * check (`sh check.sh`) fails when two files meet (a rename and a new call to the old name, in
 * miniature). Eight cards pass their own check; a person approves all eight at once, half through
 * each hub. The landings take turns in the store's line: every commit main gains passes the check,
 * exactly one of the clashing pair lands and the other comes back with the check's words, the other
 * six land, none is lost, and the line is empty after. `baton queue` shows what came back and why.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { uniqueSchema } from '../helpers/backlog';
import { type SharedHubs, client, startSharedHubs, waitFor } from '../helpers/hub';
import { ensureBuilt, runBaton } from '../helpers/mcp';
import { type TestRepo, gitOut, makeRepo, writeFiles } from '../helpers/workspaceRepo';

const check = [
	'#!/bin/sh',
	'if [ -e A.txt ] && [ -e B.txt ]; then echo "A.txt and B.txt together: the new call meets the renamed name"; exit 1; fi',
	'',
].join('\n');

let shared: SharedHubs;
let repo: TestRepo;
let person: RpcClient[];
let agent: RpcClient;
const project = 'github.com/acme/queue';
const plain = ['Q1', 'Q2', 'Q3', 'Q4', 'Q5', 'Q6'];
const pair = ['PA', 'PB'];

function baton(args: string[]) {
	return runBaton(args, { dataDir: shared.dirs[0] ?? '', cwd: repo.root, env: { BATON_AGENT: 'cli:alice' } });
}

async function card(id: string): Promise<Card> {
	return (await agent.request('card/get', { cardId: id })).card;
}

/** Whether the check passes on commit `c` of main: not both files in its tree. */
function passes(c: string): boolean {
	const files = gitOut(repo.root, 'ls-tree', '--name-only', c).split('\n');
	return !(files.includes('A.txt') && files.includes('B.txt'));
}

before(async () => {
	ensureBuilt();
	shared = await startSharedHubs(2, uniqueSchema());
	repo = makeRepo({ 'README.md': '# queue\n', 'check.sh': check });
	gitOut(repo.root, 'remote', 'add', 'origin', `https://${project}.git`);
	for (const args of [
		['settings', '--worktrees', 'on'],
		['settings', '--check', 'sh check.sh'],
	]) {
		const r = await baton(args);
		assert.equal(r.code, 0, r.stderr);
	}
	agent = await client(shared.dirs[0] ?? '', { agent: { id: 'agent-q' } });
	person = await Promise.all(
		shared.dirs.map(dir => client(dir, { agent: { id: 'vscode:alice' }, requestTimeoutMs: 180_000 })),
	);
});

after(async () => {
	agent.close();
	for (const p of person) {
		p.close();
	}
	await shared.stop();
	repo.cleanup();
});

describe('two hubs approving cards of one base at once', () => {
	it('land one at a time: main only ever passes the check, one of the clashing pair comes back, none lost', async () => {
		const files: Record<string, string> = { PA: 'A.txt', PB: 'B.txt' };
		await agent.request('card/create', {
			cards: [...plain, ...pair].map(id => ({ id, title: `Work ${id}`, project, review: 'human' as const })),
		});
		for (const id of [...plain, ...pair]) {
			const claimed = await agent.request('card/claim', { cardId: id, root: repo.root });
			assert.ok(claimed.lease && claimed.workspace, `${id} claimed with a worktree`);
			writeFiles(claimed.workspace.path, { [files[id] ?? `src/${id}.txt`]: `${id}\n` });
			await agent.request('card/complete', { cardId: id, epoch: claimed.lease.epoch, result: `did ${id}` });
		}
		await waitFor(
			async () => (await Promise.all([...plain, ...pair].map(card))).every(c => c.checks?.state === 'passed'),
			60_000,
			"every card's own check passed",
		);
		const before = gitOut(repo.root, 'rev-parse', 'main');
		// All eight at once, alternating between the hubs; watching the line while they land.
		let mostLanding = 0;
		let watching = true;
		const watcher = (async () => {
			while (watching) {
				const q = await agent.request('landing/queue', {});
				mostLanding = Math.max(mostLanding, q.entries.filter(e => e.state === 'landing').length);
				await new Promise(r => setTimeout(r, 20));
			}
		})();
		const answers = await Promise.allSettled(
			[...plain, ...pair].map((id, i) => person[i % 2]!.request('card/review', { cardId: id, approve: true })),
		);
		watching = false;
		await watcher;
		const outcome = Object.fromEntries(
			[...plain, ...pair].map((id, i) => [id, answers[i]?.status === 'fulfilled' ? 'landed' : 'came back']),
		);
		for (const id of plain) {
			assert.equal(
				outcome[id],
				'landed',
				`${id}: ${String((answers[plain.indexOf(id)] as PromiseRejectedResult).reason)}`,
			);
			assert.equal((await card(id)).status, 'done');
		}
		const landedPair = pair.filter(id => outcome[id] === 'landed');
		assert.equal(landedPair.length, 1, `exactly one of the pair lands: ${JSON.stringify(outcome)}`);
		const back = await card(pair.find(id => outcome[id] !== 'landed') ?? '');
		assert.equal(back.status, 'ready');
		assert.match(back.handoff ?? '', /A\.txt and B\.txt together/);
		assert.equal(mostLanding <= 1, true, `at most one landing at a time (saw ${mostLanding})`);
		// main's new first-parent history: exactly the seven landings, each passing the check.
		const commits = gitOut(repo.root, 'rev-list', '--first-parent', `${before}..main`).split('\n');
		assert.equal(commits.length, 7, commits.join('\n'));
		assert.deepEqual(
			commits.filter(c => !passes(c)),
			[],
			'every commit main moved to passes the check',
		);
		const landedIds = commits.map(c => gitOut(repo.root, 'log', '-1', '--format=%s', c).split(':')[0]).sort();
		assert.deepEqual(landedIds, [...plain, ...landedPair].sort());
		for (const id of [...plain, ...landedPair]) {
			assert.equal(gitOut(repo.root, 'show', `main:${files[id] ?? `src/${id}.txt`}`), id, `${id}'s change is on main`);
		}
		// The line is empty; `baton queue` says what came back and why.
		const q = await baton(['queue', '--json']);
		assert.equal(q.code, 0, q.stderr);
		const shown = JSON.parse(q.stdout) as { entries: unknown[]; returned: { cardId: string; reason: string }[] };
		assert.deepEqual(shown.entries, []);
		assert.equal(shown.returned[0]?.cardId, back.id);
		assert.match(shown.returned[0].reason, /A\.txt and B\.txt together/);
		const text = await baton(['queue']);
		assert.match(text.stdout, /Nothing is waiting to land/);
		assert.match(text.stdout, new RegExp(`Came back from landing[^]*${back.id}[^]*A\\.txt and B\\.txt together`));
		assert.equal(path.isAbsolute(repo.root), true);
	});
});
