/**
 * Done means landed: the hub's complete path in process (wipKeeper.ts commits, landing.ts lands, the
 * claim path makes the worktree) against a real backlog (PGlite) and real git repositories. A card of
 * review none lands on its base at complete and is done only once landed (the `completed` event
 * carries the landing); a conflict or an empty branch ("nothing to land") sends it back to ready with
 * the hand-over, the branch kept and main unchanged, and so does a checkout of main mid-rebase (its
 * rebase untouched); a reopened card lands its second round (not the
 * first's commit again); a card of review human waits in review and its approval lands it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import type { BacklogEvent, Card, ReviewMode } from '../../core/protocol';
import { ClaimWorkspaces } from '../../mcp-server/hub/claimWorkspace';
import { Landing } from '../../mcp-server/hub/landing';
import { WipKeeper } from '../../mcp-server/hub/wipKeeper';
import { backlogForSuite } from '../helpers/backlog';
import { refused } from '../helpers/refused';
import { commitAllFiles, gitOut, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

const human: OpContext = { actor: 'vscode:alice' };
const agent: OpContext = { actor: 'claude-1' };
const host = hostname();

const repos: TestRepo[] = [];
after(() => {
	for (const r of repos) {
		r.cleanup();
	}
});

let counter = 0;

describe('done means landed', () => {
	let b: Backlog;
	let landing: Landing;
	let wip: WipKeeper;
	let claims: ClaimWorkspaces;
	const committed: BacklogEvent[] = [];
	backlogForSuite('pglite', {}, t => {
		b = t.backlog;
		landing = new Landing(b);
		wip = new WipKeeper({ backlog: b });
		claims = new ClaimWorkspaces(b);
		b.onCommitted(events => {
			committed.push(...events);
			wip.noticeEvents(events);
		});
	});
	after(() => wip.idle());

	/** A repository with workspaces on for a new project, and a card of `review` in it, claimed. */
	async function claimedCard(review: ReviewMode) {
		const r = makeRepo({ 'README.md': '# r\n', 'a.txt': 'a1\na2\na3\n' });
		repos.push(r);
		const n = ++counter;
		const project = `done-${n}`;
		await b.updateProjectSettings(human, { project, worktrees: true, roots: { [host]: r.root } });
		const id = `D${n}`;
		await b.create(human, { cards: [{ id, title: `Change things ${n}`, review, project }] });
		const { card, path, epoch } = await claim(id);
		return { root: r.root, id, card, path, epoch };
	}

	async function claim(id: string): Promise<{ card: Card; path: string; epoch: number }> {
		const result = await claims.afterClaim(agent, {}, await b.claim(agent, { cardId: id }));
		assert.ok(result.card !== null && result.workspace !== undefined && result.lease !== null);
		return { card: result.card, path: result.workspace.path, epoch: result.lease.epoch };
	}

	/** The hub's `card/complete` handler's path for the holder. */
	function complete(id: string, epoch: number) {
		const p = { cardId: id, epoch, result: 'done' };
		const run = () => b.complete(agent, p);
		return wip.complete(agent, p, run, () => landing.complete(agent, p, run));
	}
	const get = async (id: string): Promise<Card> => (await b.get(human, { cardId: id })).card;
	const eventsOf = (id: string) => committed.filter(e => e.cardId === id);

	it('review none: complete lands the work on main, and the card is done only once landed', async () => {
		const s = await claimedCard('none');
		const oldMain = gitOut(s.root, 'rev-parse', 'main');
		writeFiles(s.path, { 'a.txt': 'a1\na2 changed\na3\n', 'new.txt': 'new\n' });
		const r = await complete(s.id, s.epoch);
		assert.equal(r.card.status, 'done');
		const head = gitOut(s.root, 'rev-parse', 'main');
		assert.notEqual(head, oldMain);
		assert.deepEqual(gitOut(s.root, 'rev-list', '--parents', '-1', head).split(' ').slice(1), [oldMain]);
		assert.equal(gitOut(s.root, 'show', 'main:new.txt'), 'new');
		assert.equal(gitOut(s.root, 'status', '--porcelain'), '', "the user's checkout has it, clean");
		assert.equal(r.card.workspace?.landed?.commit, head);
		assert.deepEqual((await get(s.id)).workspace?.landed, r.card.workspace.landed);
		assert.ok(!existsSync(s.path), 'the worktree is removed');
		assert.equal(gitOut(s.root, 'branch', '--list', `baton/${s.id}`), '', 'the branch is deleted');
		// No event shows the card done before its landing was recorded: the completion carries it.
		const done = eventsOf(s.id).filter(e => e.data.card?.status === 'done');
		assert.deepEqual(
			done.map(e => e.type),
			['completed'],
		);
		assert.equal(done[0]?.data.card?.workspace?.landed?.commit, head);
	});

	it('a conflict sends the card back to ready naming the files; the branch is kept and main unchanged', async () => {
		const s = await claimedCard('none');
		writeFiles(s.root, { 'a.txt': 'a1\nmain moved\na3\n' });
		const moved = commitAllFiles(s.root, 'main moves on');
		writeFiles(s.path, { 'a.txt': 'a1\nthe card changed\na3\n' });
		const e = await refused(
			complete(s.id, s.epoch),
			'conflict',
			/was completed but not landed: landing baton\/D\d+ on main conflicts in a\.txt/,
		);
		assert.equal(gitOut(s.root, 'rev-parse', 'main'), moved, 'main is unchanged');
		const card = await get(s.id);
		assert.equal(card.status, 'ready');
		assert.equal(card.handoff, `rebase \`baton/${s.id}\` on \`main\`: conflicts in a.txt`);
		assert.equal(card.workspace?.landed, undefined);
		assert.notEqual(gitOut(s.root, 'branch', '--list', `baton/${s.id}`), '', 'the branch is kept');
		assert.ok(existsSync(s.path), 'the worktree is kept');
		assert.equal((e.data as { card?: Card }).card?.status, 'ready');
		const event = eventsOf(s.id).at(-1);
		assert.equal(event?.type, 'land_conflicted');
		assert.deepEqual(event.data.files, ['a.txt']);
	});

	it('an empty branch is refused as "nothing to land": back to ready with that hand-over, main unchanged', async () => {
		const s = await claimedCard('none');
		const oldMain = gitOut(s.root, 'rev-parse', 'main');
		const e = await refused(complete(s.id, s.epoch), 'invalid_transition', /nothing to land/);
		assert.equal((e.data as { nothingToLand?: boolean }).nothingToLand, true);
		assert.equal(gitOut(s.root, 'rev-parse', 'main'), oldMain);
		const card = await get(s.id);
		assert.equal(card.status, 'ready');
		assert.match(card.handoff ?? '', /Completing did not land baton\/D\d+ on main: .*nothing to land/);
	});

	it("the user's checkout of main mid-rebase: back to ready naming the state and the command; main and the rebase untouched", async () => {
		const s = await claimedCard('none');
		gitOut(s.root, 'branch', 'other');
		gitOut(s.root, 'switch', '-q', 'other');
		writeFiles(s.root, { 'README.md': '# other\n' });
		commitAllFiles(s.root, 'other changes README');
		gitOut(s.root, 'switch', '-q', 'main');
		writeFiles(s.root, { 'README.md': '# main\n' });
		commitAllFiles(s.root, 'main changes README');
		const rebase = spawnSync('git', ['-C', s.root, 'rebase', 'other'], {
			env: { ...process.env, GIT_EDITOR: 'true' },
		});
		assert.notEqual(rebase.status, 0, 'the rebase stops on its conflict');
		const mainBefore = gitOut(s.root, 'rev-parse', 'refs/heads/main');
		writeFiles(s.path, { 'new.txt': 'new\n' });
		await refused(
			complete(s.id, s.epoch),
			'conflict',
			/in the middle of a rebase: finish it with `git rebase --continue` or `git rebase --abort`/,
		);
		assert.equal(gitOut(s.root, 'rev-parse', 'refs/heads/main'), mainBefore);
		assert.ok(existsSync(path.join(s.root, '.git', 'rebase-merge')), "the user's rebase goes on");
		const card = await get(s.id);
		assert.equal(card.status, 'ready');
		assert.match(card.handoff ?? '', /^Completing did not land baton\/D\d+ on main: .*in the middle of a rebase/);
		assert.notEqual(gitOut(s.root, 'branch', '--list', `baton/${s.id}`), '', 'the branch is kept');
	});

	it("a reopened card lands its second round's work, not the first's commit", async () => {
		const s = await claimedCard('none');
		writeFiles(s.path, { 'round.txt': 'one\n' });
		const first = await complete(s.id, s.epoch);
		const firstCommit = first.card.workspace?.landed?.commit;
		assert.equal(firstCommit, gitOut(s.root, 'rev-parse', 'main'));
		await b.reopen(human, { cardId: s.id, reason: 'one more thing' });
		const again = await claim(s.id);
		assert.equal(again.card.workspace?.landed, undefined, 'the new round has not landed');
		writeFiles(again.path, { 'round.txt': 'two\n' });
		const second = await complete(s.id, again.epoch);
		const secondCommit = second.card.workspace?.landed?.commit;
		assert.equal(second.card.status, 'done');
		assert.equal(secondCommit, gitOut(s.root, 'rev-parse', 'main'));
		assert.notEqual(secondCommit, firstCommit);
		assert.deepEqual(gitOut(s.root, 'rev-list', '--parents', '-1', secondCommit).split(' ').slice(1), [firstCommit]);
		assert.equal(gitOut(s.root, 'show', 'main:round.txt'), 'two');
	});

	it('review human: complete waits in review with nothing landed; the approval lands it', async () => {
		const s = await claimedCard('human');
		const oldMain = gitOut(s.root, 'rev-parse', 'main');
		writeFiles(s.path, { 'new.txt': 'new\n' });
		const r = await complete(s.id, s.epoch);
		assert.equal(r.card.status, 'review');
		assert.equal(gitOut(s.root, 'rev-parse', 'main'), oldMain);
		assert.notEqual(gitOut(s.root, 'branch', '--list', `baton/${s.id}`), '');
		const approved = await landing.review(human, { cardId: s.id, approve: true }, 'human');
		assert.equal(approved.card.status, 'done');
		assert.equal(approved.card.workspace?.landed?.commit, gitOut(s.root, 'rev-parse', 'main'));
	});
});
