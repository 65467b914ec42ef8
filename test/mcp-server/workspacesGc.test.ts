/**
 * Workspaces clean-up on real git: the plan (the dry run) lists exactly what gc then
 * deletes; unsnapshotted work and unlanded commits survive unless forced; live cards, branches Baton
 * did not make and worktrees that changed since the plan are left alone; old WIP refs go, except a live
 * card's newest.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import { gc, gcPlan, type GcItem } from '../../mcp-server/workspaces/gc';
import { snapshotWip } from '../../mcp-server/workspaces/wip';
import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { refused } from '../helpers/refused';
import { commitAllFiles, gitOut, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

const repos: TestRepo[] = [];
after(() => {
	for (const r of repos) {
		r.cleanup();
	}
});

const brief = (items: readonly GcItem[]) =>
	items.map(i => `${i.kind} ${i.target.replace(/^.*\/\.baton\/worktrees\//, 'wt:')}`).sort();

/**
 * Cards: L1 landed by a merge (clean worktree), D1 deleted with an unlanded commit, D2 deleted with
 * unsnapshotted edits, D3 deleted with snapshotted edits, LIVE live with two snapshots, GONE whose
 * folder was removed by hand; plus a `baton/foreign` branch Baton did not make.
 */
async function scene() {
	const r = makeRepo({ 'a.txt': 'a\n' });
	repos.push(r);
	const root = r.root;
	const ws = async (cardId: string) => (await ensureWorktree({ repo: root, cardId })).path;
	const l1 = await ws('L1');
	writeFiles(l1, { 'l1.txt': 'landed\n' });
	commitAllFiles(l1, 'L1 work');
	gitOut(root, 'merge', '-q', '--no-ff', '-m', 'merge L1', 'baton/L1');
	const d1 = await ws('D1');
	writeFiles(d1, { 'd1.txt': 'never landed\n' });
	commitAllFiles(d1, 'D1 work');
	const d2 = await ws('D2');
	writeFiles(d2, { 'd2.txt': 'precious, not snapshotted\n' });
	const d3 = await ws('D3');
	writeFiles(d3, { 'd3.txt': 'snapshotted\n' });
	const d3snap = await snapshotWip({ worktree: d3, cardId: 'D3', attempt: 1 });
	const live = await ws('LIVE');
	writeFiles(live, { 'live.txt': 'one\n' });
	await snapshotWip({ worktree: live, cardId: 'LIVE', attempt: 1 });
	writeFiles(live, { 'live.txt': 'two\n' });
	await snapshotWip({ worktree: live, cardId: 'LIVE', attempt: 2 });
	const gone = await ws('GONE');
	rmSync(gone, { recursive: true, force: true });
	gitOut(root, 'branch', 'baton/foreign');
	return { root, l1, d1, d2, d3, d3snap, live, gone };
}

const isCardLive = (cardId: string) => cardId === 'LIVE';

describe('gcPlan and gc', () => {
	it('deletes exactly what the dry run listed; unsnapshotted work and unlanded commits survive', async () => {
		const s = await scene();
		const plan = await gcPlan({ repo: s.root, isCardLive });
		assert.deepEqual(brief(plan.items), [
			'branch refs/heads/baton/D3',
			'branch refs/heads/baton/GONE',
			'branch refs/heads/baton/L1',
			'prune wt:GONE',
			'worktree wt:D1',
			'worktree wt:D3',
			'worktree wt:L1',
		]);
		assert.deepEqual(brief(plan.kept), ['branch refs/heads/baton/D1', 'branch refs/heads/baton/D2', 'worktree wt:D2']);
		assert.match(plan.kept.find(k => k.target === s.d2)?.reason ?? '', /not snapshotted/);
		assert.match(plan.items.find(k => k.target === s.d3)?.reason ?? '', /its changes are in refs\/baton\/wip\/D3\/1/);

		const result = await gc(plan);
		assert.deepEqual(result.deleted, plan.items);
		assert.deepEqual(result.skipped, []);
		for (const gone of [s.l1, s.d1, s.d3]) {
			assert.equal(existsSync(gone), false, gone);
		}
		assert.equal(readFileSync(path.join(s.d2, 'd2.txt'), 'utf8'), 'precious, not snapshotted\n');
		assert.equal(readFileSync(path.join(s.live, 'live.txt'), 'utf8'), 'two\n');
		assert.deepEqual(gitOut(s.root, 'for-each-ref', '--format=%(refname)', 'refs/heads/baton/').split('\n'), [
			'refs/heads/baton/D1',
			'refs/heads/baton/D2',
			'refs/heads/baton/LIVE',
			'refs/heads/baton/foreign',
		]);
		assert.equal(gitOut(s.root, 'show', 'baton/D1:d1.txt'), 'never landed');
		assert.equal(gitOut(s.root, 'rev-parse', 'refs/baton/wip/D3/1'), s.d3snap?.commit, 'young snapshots stay');
		assert.doesNotMatch(gitOut(s.root, 'worktree', 'list', '--porcelain'), /GONE/);
		assert.deepEqual((await gcPlan({ repo: s.root, isCardLive })).items, [], 'nothing left to do');
	});

	it("deletes WIP refs older than the limit but a live card's newest, and with force the unsnapshotted and unlanded too", async () => {
		const s = await scene();
		const later = Date.now() + 40 * 86_400_000;
		const plan = await gcPlan({ repo: s.root, isCardLive, now: later, wipMaxAgeDays: 30 });
		assert.deepEqual(brief(plan.items.filter(i => i.kind === 'wip')), [
			'wip refs/baton/wip/D3/1',
			'wip refs/baton/wip/LIVE/1',
		]);
		assert.deepEqual(brief(plan.kept.filter(i => i.kind === 'wip')), ['wip refs/baton/wip/LIVE/2']);
		const forced = await gcPlan({ repo: s.root, isCardLive, force: true });
		assert.deepEqual(brief(forced.kept), []);
		const result = await gc(forced);
		assert.deepEqual(result.deleted, forced.items);
		assert.equal(existsSync(s.d2), false);
		assert.deepEqual(gitOut(s.root, 'for-each-ref', '--format=%(refname)', 'refs/heads/baton/').split('\n'), [
			'refs/heads/baton/LIVE',
			'refs/heads/baton/foreign',
		]);
		await refused(gcPlan({ repo: s.root, isCardLive, wipMaxAgeDays: -1 }), 'invalid_input', /number of days/);
	});

	it('skips an item that changed after the plan, and the branch of a worktree it kept', async () => {
		const s = await scene();
		const plan = await gcPlan({ repo: s.root, isCardLive });
		writeFiles(s.l1, { 'late.txt': 'written after the dry run\n' });
		const result = await gc(plan);
		assert.deepEqual(
			result.skipped.map(i => [i.kind, i.why]),
			[
				['worktree', 'its files changed since the plan'],
				['branch', 'its worktree was kept'],
			],
		);
		assert.equal(readFileSync(path.join(s.l1, 'late.txt'), 'utf8'), 'written after the dry run\n');
		assert.equal(gitOut(s.root, 'rev-parse', '--verify', '-q', 'refs/heads/baton/L1') !== '', true);
	});
});
