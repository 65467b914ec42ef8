/**
 * The hub's workspace gc (mcp-server/hub/workspaceGc.ts) in process against a real backlog
 * (PostgreSQL) and real git repositories: a card is live while it exists and is not done; the dry run lists
 * exactly what gc then deletes; unsnapshotted work and unlanded commits survive unless forced; the
 * repositories are the one named, the project's on this host, or every project's on this host (a broken
 * one skipped); maintenance runs the safe part.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { WorkspaceGc } from '../../mcp-server/hub/workspaceGc';
import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { backlogForSuite } from '../helpers/backlog';
import { refused } from '../helpers/refused';
import { commitAllFiles, gitOut, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

const human: OpContext = { actor: 'vscode:alice' };
const host = hostname();

const repos: TestRepo[] = [];
after(() => {
	for (const r of repos) {
		r.cleanup();
	}
});

let counter = 0;

describe('workspace gc in the hub', () => {
	let b: Backlog;
	let gcs: WorkspaceGc;
	// The store is not what these cases prove (core proves it on both); PostgreSQL keeps PGlite's
	// hundreds of MB out of this process, which every git child gc spawns would fork (7x the CPU).
	backlogForSuite('postgres', {}, t => {
		b = t.backlog;
		gcs = new WorkspaceGc(b);
	});

	/**
	 * A repository of a project with worktrees for: DONE (a done card whose branch the user merged),
	 * DEL (a deleted card with an unsnapshotted edit), LIVE (a ready card), GHOST (no such card; an
	 * unlanded commit, clean worktree).
	 */
	async function scene() {
		const n = ++counter;
		const r = makeRepo({ 'a.txt': 'a\n' });
		repos.push(r);
		const project = `gc-${n}`;
		await b.updateProjectSettings(human, { project, worktrees: true, roots: { [host]: r.root } });
		const id = (name: string) => `${name}${n}`;
		await b.create(human, {
			cards: [
				{ id: id('DONE'), title: 'done', project },
				{ id: id('DEL'), title: 'deleted', project },
				{ id: id('LIVE'), title: 'live', project },
			],
		});
		const ws = async (cardId: string) => (await ensureWorktree({ repo: r.root, cardId })).path;
		const done = await ws(id('DONE'));
		writeFiles(done, { 'done.txt': 'done\n' });
		commitAllFiles(done, 'done work');
		gitOut(r.root, 'merge', '-q', '--no-ff', '-m', 'merge it', `baton/${id('DONE')}`);
		await b.claim(human, { cardId: id('DONE') });
		await b.complete(human, { cardId: id('DONE') });
		const del = await ws(id('DEL'));
		writeFiles(del, { 'precious.txt': 'not snapshotted\n' });
		await b.delete(human, { cardId: id('DEL') });
		const live = await ws(id('LIVE'));
		writeFiles(live, { 'live.txt': 'working\n' });
		const ghost = await ws(id('GHOST'));
		writeFiles(ghost, { 'ghost.txt': 'unlanded\n' });
		commitAllFiles(ghost, 'ghost work');
		return { root: r.root, project, id, done, del, live, ghost };
	}
	const targets = (items: readonly { kind: string; target: string }[]) => items.map(i => `${i.kind} ${i.target}`);

	it('the dry run lists exactly what gc deletes; unsnapshotted and unlanded work survive', async () => {
		const s = await scene();
		const plan = await gcs.run({ root: s.root, dryRun: true });
		assert.equal(plan.repos.length, 1);
		const [dry] = plan.repos;
		assert.ok(dry !== undefined);
		assert.deepEqual(dry.projects, [s.project]);
		assert.deepEqual(dry.deleted, []);
		assert.ok(existsSync(s.done), 'a dry run deletes nothing');
		assert.deepEqual(targets(dry.items).sort(), [
			`branch refs/heads/baton/${s.id('DONE')}`,
			`worktree ${s.done}`,
			`worktree ${s.ghost}`,
		]);
		assert.deepEqual(targets(dry.kept).sort(), [
			`branch refs/heads/baton/${s.id('DEL')}`,
			`branch refs/heads/baton/${s.id('GHOST')}`,
			`worktree ${s.del}`,
		]);
		const real = await gcs.run({ root: s.root });
		const [done] = real.repos;
		assert.ok(done !== undefined);
		assert.deepEqual(targets(done.deleted), targets(dry.items));
		assert.deepEqual(done.skipped, []);
		assert.ok(!existsSync(s.done));
		assert.ok(!existsSync(s.ghost));
		assert.equal(readFileSync(path.join(s.del, 'precious.txt'), 'utf8'), 'not snapshotted\n');
		assert.equal(readFileSync(path.join(s.live, 'live.txt'), 'utf8'), 'working\n');
		assert.notEqual(gitOut(s.root, 'branch', '--list', `baton/${s.id('GHOST')}`), '', 'unlanded commits stay');
		assert.notEqual(gitOut(s.root, 'branch', '--list', `baton/${s.id('LIVE')}`), '');
		// Forced, the dead cards' work goes too; the live card's never does.
		const forced = await gcs.run({ project: s.project, force: true });
		assert.deepEqual(targets(forced.repos[0]?.deleted ?? []).sort(), [
			`branch refs/heads/baton/${s.id('DEL')}`,
			`branch refs/heads/baton/${s.id('GHOST')}`,
			`worktree ${s.del}`,
		]);
		assert.ok(existsSync(s.live));
	});

	it('without a root or project: every project repository on this host, a broken one skipped', async () => {
		const s = await scene();
		await b.updateProjectSettings(human, { project: `gone-${counter}`, roots: { [host]: '/tmp/no-such-repo-here' } });
		await b.updateProjectSettings(human, { project: `elsewhere-${counter}`, roots: { otherhost: s.root } });
		const r = await gcs.run({ dryRun: true });
		const mine = r.repos.find(repo => repo.root === s.root);
		assert.ok(mine !== undefined);
		assert.deepEqual(mine.projects, [s.project]);
		assert.ok(!r.repos.some(repo => repo.root === '/tmp/no-such-repo-here'));
		// Named, the broken one is an error, not a skip.
		await refused(gcs.run({ project: `gone-${counter}` }), 'invalid_input');
		await refused(gcs.run({ project: 'never-set' }), 'not_found', /has no repository on this machine/);
	});

	it('maintenance deletes only what gc deletes without force', async () => {
		const s = await scene();
		await gcs.maintain();
		assert.ok(!existsSync(s.done));
		assert.ok(!existsSync(s.ghost));
		assert.ok(existsSync(s.del));
		assert.notEqual(gitOut(s.root, 'branch', '--list', `baton/${s.id('GHOST')}`), '');
		assert.notEqual(gitOut(s.root, 'branch', '--list', `baton/${s.id('DEL')}`), '');
	});
});
