/**
 * The hub's WIP keeper ("While working") on real git with constructed card workspaces and a
 * stand-in backlog: complete commits the agent's uncommitted work (tracked, deleted, untracked, not
 * ignored) with the card id and title and counts the branch; a refused commit refuses the completion;
 * the end of a claim noticed from its event snapshots the worktree under the ended claim's epoch, once,
 * and only on the workspace's own host; team mode pushes to a bare origin, and a failed push is
 * recorded and reported while the completion stands.
 */
import assert from 'node:assert/strict';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import type { Backlog } from '../../core/backlog';
import type { BacklogEvent, Card, CardWorkspace, EventType, Result } from '../../core/protocol';
import {
	commitWork,
	completeMessage,
	endedAttempt,
	isHere,
	snapshotWork,
	WipKeeper,
} from '../../mcp-server/hub/wipKeeper';
import { listWip } from '../../mcp-server/workspaces/wip';
import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { refused } from '../helpers/refused';
import { folderPicture, gitOut, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

const repos: TestRepo[] = [];
after(() => {
	for (const r of repos) {
		r.cleanup();
	}
});

const host = 'this-host';

async function workspace(cardId = 'W1'): Promise<{ repo: TestRepo; ws: CardWorkspace }> {
	const repo = makeRepo({
		'.gitignore': 'node_modules\n*.log\n',
		'README.md': '# demo\n',
		'src/edit.ts': 'export const edit = 1;\n',
		'src/gone.ts': 'export const gone = 1;\n',
	});
	repos.push(repo);
	const made = await ensureWorktree({ repo: repo.root, cardId });
	return { repo, ws: { root: repo.root, path: made.path, branch: made.branch, base: made.base, host } };
}

/** Changed, deleted, new (untracked) and ignored files. */
function edit(dir: string): void {
	writeFiles(dir, {
		'src/edit.ts': 'export const edit = 2;\nexport const more = 3;\n',
		'src/new/fresh.ts': 'export const fresh = true;\n',
		'node_modules/dep/index.js': 'ignored\n',
		'debug.log': 'ignored too\n',
	});
	rmSync(path.join(dir, 'src/gone.ts'));
}

function card(id: string, ws: CardWorkspace | undefined, patch: Partial<Card> = {}): Card {
	return {
		id,
		title: `Title of ${id}`,
		status: 'claimed',
		claimOwner: 'agent-a',
		claimEpoch: 3,
		...(ws === undefined ? {} : { workspace: ws }),
		...patch,
	} as Card;
}

let seq = 0;
function event(type: EventType, c: Card, data: Partial<BacklogEvent['data']> = {}): BacklogEvent {
	return {
		seq: ++seq,
		at: new Date().toISOString(),
		actor: 'hub',
		cardId: c.id,
		type,
		data: { card: c, ...data },
	};
}

/** The parts of the backlog the keeper calls, recording what it was asked. */
function standIn(settings: { push: boolean } = { push: false }, cards: Card[] = []) {
	const calls = { setWorkspace: [] as CardWorkspace[], comments: [] as string[] };
	const backlog = {
		list: () => Promise.resolve({ cards }),
		setWorkspace: (_ctx: unknown, _id: string, ws: CardWorkspace) => {
			calls.setWorkspace.push(ws);
			return Promise.resolve();
		},
		comment: (_ctx: unknown, p: { text: string }) => {
			calls.comments.push(p.text);
			return Promise.resolve();
		},
		projectSettings: () => Promise.resolve(settings),
		// The lease rule itself is the real backlog's (tested in gitSafety.test.ts): here every completion passes it.
		checkComplete: () => Promise.resolve(),
	} as unknown as Backlog;
	return { backlog, calls };
}

function completed(c: Card): Result<'card/complete'> {
	return { card: { ...c, status: 'done' }, unblocked: [] };
}

describe('commitWork and snapshotWork', () => {
	it('commits every uncommitted change but ignored files, with the card id and title, and counts the branch', async () => {
		const { ws } = await workspace('W1');
		edit(ws.path);
		const done = await commitWork(ws, { id: 'W1', title: 'Make it so' });
		assert.ok(done.commit !== null);
		assert.equal(gitOut(ws.path, 'log', '-1', '--format=%s'), 'W1: Make it so');
		assert.equal(gitOut(ws.path, 'rev-parse', 'HEAD'), done.commit);
		assert.equal(gitOut(ws.path, 'status', '--porcelain', '--untracked-files=all'), '');
		const committed = gitOut(ws.path, 'show', '--name-status', '--format=', 'HEAD').split('\n').sort();
		assert.deepEqual(committed, ['A\tsrc/new/fresh.ts', 'D\tsrc/gone.ts', 'M\tsrc/edit.ts']);
		assert.deepEqual(done.stats, { head: done.commit, filesChanged: 3, insertions: 3, deletions: 2 });
		// Nothing left: no second commit, the same counts.
		const again = await commitWork(ws, { id: 'W1', title: 'Make it so' });
		assert.equal(again.commit, null);
		assert.deepEqual(again.stats, done.stats);
	});

	it('counts the branch when the worktree folder is gone', async () => {
		const { ws } = await workspace('W2');
		writeFiles(ws.path, { 'x.txt': 'x\n' });
		gitOut(ws.path, 'add', '-A');
		gitOut(ws.path, 'commit', '-q', '-m', 'agent commit');
		const head = gitOut(ws.path, 'rev-parse', 'HEAD');
		gitOut(ws.root, 'worktree', 'remove', '--force', ws.path);
		const done = await commitWork(ws, { id: 'W2', title: 't' });
		assert.deepEqual(done, {
			commit: null,
			unseen: [],
			stats: { head, filesChanged: 1, insertions: 1, deletions: 0 },
		});
		// A base that is gone: the counts say why, the commit stands.
		const noBase = await commitWork({ ...ws, base: 'gone' }, { id: 'W2', title: 't' });
		assert.equal(noBase.stats, undefined);
		assert.match(noBase.statsError ?? '', /Branch "gone" does not exist/);
		assert.equal(await snapshotWork(ws, 'W2', 1), null);
	});

	it('snapshots the worktree byte for byte under the attempt, once, and nothing when it is clean', async () => {
		const { ws } = await workspace('W3');
		assert.equal(await snapshotWork(ws, 'W3', 2), null);
		edit(ws.path);
		const snap = await snapshotWork(ws, 'W3', 2);
		assert.ok(snap !== null);
		assert.equal(snap.ref, 'refs/baton/wip/W3/2');
		assert.deepEqual([...snap.files].sort(), ['src/edit.ts', 'src/gone.ts', 'src/new/fresh.ts']);
		assert.equal(gitOut(ws.path, 'show', `${snap.ref}:src/edit.ts`), 'export const edit = 2;\nexport const more = 3;');
		assert.equal((await snapshotWork(ws, 'W3', 2))?.commit, snap.commit);
		assert.deepEqual(
			(await listWip(ws.root, 'W3')).map(r => r.attempt),
			[2],
		);
	});
});

describe('endedAttempt and isHere', () => {
	it('names the epoch of the claim that ended, and nothing for a reviewer or other events', () => {
		const c = card('E1', undefined, { status: 'ready', claimEpoch: 5 });
		assert.equal(endedAttempt(event('released', c)), 5);
		assert.equal(endedAttempt(event('failed', c)), 5);
		assert.equal(endedAttempt(event('released', c, { previousEpoch: 4 })), 4); // a disconnect or forced release
		assert.equal(endedAttempt(event('reclaimed', c, { previousEpoch: 4 })), 4);
		assert.equal(endedAttempt(event('blocked', c, { previousEpoch: 4 })), 4);
		assert.equal(endedAttempt(event('blocked', c)), undefined); // a ready card parked: no claim ended
		assert.equal(endedAttempt(event('released', c, { previousEpoch: 4, review: true })), undefined);
		assert.equal(endedAttempt(event('heartbeat', c)), undefined);
		const held = card('E1', undefined, { claimEpoch: 6 });
		assert.equal(endedAttempt(event('deleted', c, { card: null, previous: held })), 6);
		assert.equal(endedAttempt(event('deleted', c, { card: null, previous: c })), undefined);
		assert.equal(endedAttempt(event('completed', c)), undefined);
	});

	it('runs git only for a workspace of this host', () => {
		const ws: CardWorkspace = { root: '/r', path: '/r/.baton/worktrees/X', branch: 'baton/X', base: 'main', host };
		assert.equal(isHere(ws, host), true);
		assert.equal(isHere({ ...ws, host: 'elsewhere' }, host), false);
		assert.equal(isHere(undefined, host), false);
	});
});

describe('WipKeeper', () => {
	it('snapshots a claim that ended by its event, under its epoch, once however many notice it', async () => {
		const { ws } = await workspace('K1');
		const { backlog } = standIn();
		const keeper = new WipKeeper({ backlog, host });
		keeper.noticeEvents([event('claimed', card('K1', ws, { claimEpoch: 7 }))]);
		edit(ws.path);
		const ended = card('K1', ws, { status: 'ready', claimOwner: null, claimEpoch: 8 });
		const reclaimed = event('reclaimed', ended, { previousEpoch: 7 });
		keeper.noticeEvents([reclaimed]);
		keeper.noticeEvents([reclaimed]); // the same event again (this hub's commit, then the pump)
		keeper.noticeEvents([event('released', ended, { previousEpoch: 7 })]); // another noticer
		await keeper.idle();
		const refs = await listWip(ws.root, 'K1');
		assert.deepEqual(
			refs.map(r => r.attempt),
			[7],
		);
		const snapshot = gitOut(ws.root, 'ls-tree', '-r', '--name-only', refs[0]?.commit ?? '');
		assert.ok(snapshot.includes('src/new/fresh.ts') && !snapshot.includes('src/gone.ts'));
		assert.ok(!snapshot.includes('debug.log') && !snapshot.includes('node_modules'));
	});

	it('leaves a workspace of another host alone', async () => {
		const { ws } = await workspace('K2');
		const { backlog } = standIn();
		const keeper = new WipKeeper({ backlog, host: 'other-host' });
		edit(ws.path);
		keeper.noticeEvents([event('released', card('K2', ws, { status: 'ready' }), { previousEpoch: 3 })]);
		await keeper.beforeEnd('K2', 'release');
		await keeper.idle();
		assert.deepEqual(await listWip(ws.root, 'K2'), []);
	});

	it('release and fail snapshot before the card changes', async () => {
		const { ws } = await workspace('K3');
		const { backlog } = standIn();
		const keeper = new WipKeeper({ backlog, host });
		keeper.noticeEvents([event('claimed', card('K3', ws, { claimEpoch: 2 }))]);
		edit(ws.path);
		const before = folderPicture(ws.path);
		await keeper.beforeEnd('K3', 'release');
		assert.deepEqual(
			(await listWip(ws.root, 'K3')).map(r => r.attempt),
			[2],
		);
		assert.deepEqual(folderPicture(ws.path), before);
	});

	it('complete commits, stores the counts in the workspace and returns them; only for the holder', async () => {
		const { ws } = await workspace('K4');
		const { backlog, calls } = standIn();
		const keeper = new WipKeeper({ backlog, host });
		const c = card('K4', ws);
		keeper.noticeEvents([event('claimed', c)]);
		edit(ws.path);
		// Someone who does not hold it: no commit, the backlog refuses the completion.
		await assert.rejects(
			keeper.complete({ actor: 'agent-b' }, { cardId: 'K4' }, () => Promise.reject(new Error('not the holder'))),
			/not the holder/,
		);
		assert.equal(gitOut(ws.path, 'rev-list', '--count', 'main..HEAD'), '0');
		let ran = false;
		const result = await keeper.complete({ actor: 'agent-a' }, { cardId: 'K4' }, () => {
			ran = true;
			assert.equal(gitOut(ws.path, 'status', '--porcelain'), '', 'committed before the card moves on');
			return Promise.resolve(completed(c));
		});
		assert.ok(ran);
		const head = gitOut(ws.path, 'rev-parse', 'HEAD');
		assert.equal(
			gitOut(ws.path, 'log', '-1', '--format=%s'),
			completeMessage({ id: 'K4', title: c.title }).split('\n')[0],
		);
		const stats = { head, filesChanged: 3, insertions: 3, deletions: 2 };
		assert.deepEqual(calls.setWorkspace, [{ ...ws, ...stats }]);
		assert.deepEqual(result.card.workspace, { ...ws, ...stats });
		assert.equal(result.push, undefined);
	});

	it('a commit refused by a hook refuses the completion and keeps the work', async () => {
		const { ws } = await workspace('K5');
		const hook = path.join(
			gitOut(ws.root, 'rev-parse', '--path-format=absolute', '--git-common-dir'),
			'hooks',
			'pre-commit',
		);
		writeFileSync(hook, '#!/bin/sh\necho "held by agent-z: src/**" >&2\nexit 1\n');
		chmodSync(hook, 0o755);
		const { backlog, calls } = standIn();
		const keeper = new WipKeeper({ backlog, host });
		keeper.noticeEvents([event('claimed', card('K5', ws))]);
		edit(ws.path);
		const before = folderPicture(ws.path);
		let ran = false;
		await refused(
			keeper.complete({ actor: 'agent-a' }, { cardId: 'K5' }, () => {
				ran = true;
				return Promise.resolve(completed(card('K5', ws)));
			}),
			'conflict',
			/held by agent-z/,
		);
		assert.equal(ran, false);
		assert.deepEqual(calls.setWorkspace, []);
		assert.deepEqual(folderPicture(ws.path), before);
	});

	it('team mode pushes the branch to origin; a failed push is recorded and reported, the completion stands', async () => {
		const { repo, ws } = await workspace('K6');
		const bare = path.join(repo.parent, 'origin.git');
		gitOut(repo.parent, 'init', '-q', '--bare', bare);
		gitOut(repo.root, 'remote', 'add', 'origin', bare);
		const { backlog, calls } = standIn({ push: true });
		const keeper = new WipKeeper({ backlog, host });
		keeper.noticeEvents([event('claimed', card('K6', ws, { project: 'p' }))]);
		edit(ws.path);
		const ok = await keeper.complete({ actor: 'agent-a' }, { cardId: 'K6' }, () =>
			Promise.resolve(completed(card('K6', ws))),
		);
		const head = gitOut(ws.path, 'rev-parse', 'HEAD');
		assert.deepEqual(ok.push, { ok: true, remote: 'origin', commit: head });
		assert.equal(gitOut(bare, 'rev-parse', 'refs/heads/baton/K6'), head);

		// The origin goes away: the push fails, the completion is returned with the failure and a note.
		const { ws: ws2 } = await workspace('K7');
		gitOut(ws2.root, 'remote', 'add', 'origin', path.join(repo.parent, 'gone.git'));
		keeper.noticeEvents([event('claimed', card('K7', { ...ws2 }, { project: 'p' }))]);
		writeFiles(ws2.path, { 'late.txt': 'late\n' });
		const failed = await keeper.complete({ actor: 'agent-a' }, { cardId: 'K7' }, () =>
			Promise.resolve(completed(card('K7', ws2))),
		);
		assert.equal(failed.card.status, 'done');
		assert.equal(failed.push?.ok, false);
		assert.match(failed.push.error ?? '', /Pushing baton\/K7 to origin .* failed/);
		assert.equal(calls.comments.length, 1);
		assert.match(
			calls.comments[0] ?? '',
			/completed, but pushing baton\/K7 to origin failed.*git push origin baton\/K7/s,
		);
	});

	it("a restarted hub learns the claimed cards' worktrees from the backlog, so a release still snapshots", async () => {
		const { ws } = await workspace('K8');
		const { backlog } = standIn({ push: false }, [
			card('K8', ws, { claimEpoch: 4 }),
			card('K9', { ...ws, host: 'elsewhere' }),
		]);
		const keeper = new WipKeeper({ backlog, host });
		await keeper.seed();
		assert.equal(keeper.size, 1);
		edit(ws.path);
		await keeper.beforeEnd('K8', 'fail');
		assert.deepEqual(
			(await listWip(ws.root, 'K8')).map(r => r.attempt),
			[4],
		);
	});

	it("a person's forced completion goes on when the commit is refused: the work is snapshotted and noted", async () => {
		const { ws } = await workspace('K10');
		const hook = path.join(
			gitOut(ws.root, 'rev-parse', '--path-format=absolute', '--git-common-dir'),
			'hooks',
			'pre-commit',
		);
		writeFileSync(hook, '#!/bin/sh\nexit 1\n');
		chmodSync(hook, 0o755);
		const { backlog, calls } = standIn();
		const keeper = new WipKeeper({ backlog, host });
		keeper.noticeEvents([event('claimed', card('K10', ws, { claimEpoch: 5 }))]);
		edit(ws.path);
		const result = await keeper.complete({ actor: 'person' }, { cardId: 'K10', force: true }, () =>
			Promise.resolve(completed(card('K10', ws))),
		);
		assert.equal(result.card.status, 'done');
		assert.deepEqual(
			(await listWip(ws.root, 'K10')).map(r => r.attempt),
			[5],
		);
		assert.match(calls.comments[0] ?? '', /could not commit the worktree at complete/);
	});
});
