/**
 * Landing on approval: the hub's landing.ts in process, against a real backlog (PostgreSQL) and
 * real git repositories. Squash, merge and rebase each land exactly the branch's changes and record
 * `workspace.landed`; `none` lands nothing and keeps worktree and branch; a conflict changes nothing
 * in the base or any checkout and sends the card back to ready with the hand-over; a dirty checkout
 * of the base is never overwritten (refused naming the files, the card stays in review); a refused
 * approval lands nothing; another host's workspace is refused. Also `stackedBase`.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { after, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import type { BacklogEvent, Card, LandMode } from '../../core/protocol';
import { Landing } from '../../mcp-server/hub/landing';
import { stackedBase, stackedBaseFor } from '../../mcp-server/hub/stackedBase';
import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { backlogForSuite } from '../helpers/backlog';
import { refused } from '../helpers/refused';
import { folderPicture, gitOut, gitSeries, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

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

/** Every ref, the status and every file of a checkout: equal before and after means nothing changed. */
function state(dir: string): string {
	return [
		...gitSeries([
			[dir, 'for-each-ref', '--format=%(refname) %(objectname)'],
			[dir, '--no-optional-locks', 'status', '--porcelain', '--untracked-files=all'],
		]),
		JSON.stringify([...folderPicture(dir)]),
	].join('\n');
}

describe('landing on approval', () => {
	let b: Backlog;
	let landing: Landing;
	const committed: BacklogEvent[] = [];
	// The store is not what these cases prove (core proves it on both); PostgreSQL keeps PGlite's
	// hundreds of MB out of this process, which every git child landing spawns would fork (7x the CPU).
	backlogForSuite('postgres', {}, t => {
		b = t.backlog;
		landing = new Landing(b);
		b.onCommitted(events => committed.push(...events));
	});

	/**
	 * A repository, a project landing with `mode`, and a card in review whose worktree changed a.txt,
	 * added new.txt and deleted b.txt in one commit.
	 */
	async function inReview(mode: LandMode, options: { mainMoves?: Record<string, string> } = {}) {
		const r = makeRepo({ 'README.md': '# r\n', 'a.txt': 'a1\na2\na3\n', 'b.txt': 'b\n' });
		repos.push(r);
		const n = ++counter;
		const project = `proj-${n}`;
		await b.updateProjectSettings(human, { project, land: mode });
		const id = `L${n}`;
		await b.create(human, { cards: [{ id, title: `Change things ${n}`, review: 'human', project }] });
		const claimed = await b.claim(agent, { cardId: id });
		const ws = await ensureWorktree({ repo: r.root, cardId: id });
		writeFiles(ws.path, { 'a.txt': 'a1\na2 changed\na3\n', 'new.txt': 'new\n' });
		if (options.mainMoves !== undefined) {
			writeFiles(r.root, options.mainMoves);
		}
		const out = gitSeries([
			[ws.path, 'rm', '-q', 'b.txt'],
			[ws.path, 'add', '-A'],
			[ws.path, 'commit', '-q', '-m', `${id}: work`],
			[ws.path, 'rev-parse', 'HEAD'],
			...(options.mainMoves === undefined
				? []
				: [
						[r.root, 'add', '-A'],
						[r.root, 'commit', '-q', '-m', 'main moves on'],
					]),
			[r.root, 'rev-parse', 'main'],
		]);
		const [tip = '', oldBase = ''] = [out[3], out.at(-1)];
		await b.setWorkspace(agent, id, { root: r.root, path: ws.path, branch: ws.branch, base: 'main', host });
		await b.complete(agent, { cardId: id, epoch: claimed.lease?.epoch, result: 'done' });
		return { root: r.root, id, ws, tip, oldBase, worktreePicture: folderPicture(ws.path) };
	}
	const get = async (id: string): Promise<Card> => (await b.get(human, { cardId: id })).card;
	const approve = (id: string, ctx: OpContext = human, version?: number) =>
		landing.review(ctx, { cardId: id, approve: true, ...(version === undefined ? {} : { version }) }, 'human');

	for (const mode of ['squash', 'merge', 'rebase'] as const) {
		it(`${mode}: approve lands exactly the branch's changes, records landed, removes worktree and branch`, async () => {
			const s = await inReview(mode);
			const r = await approve(s.id);
			assert.equal(r.card.status, 'done');
			const head = gitOut(s.root, 'rev-parse', 'main');
			assert.notEqual(head, s.oldBase);
			// The base's tree is the branch's tree exactly (main had not moved), and the user's checkout has it.
			assert.equal(gitOut(s.root, 'rev-parse', 'main^{tree}'), gitOut(s.root, 'rev-parse', `${s.tip}^{tree}`));
			assert.deepEqual(folderPicture(s.root), s.worktreePicture);
			assert.equal(gitOut(s.root, 'status', '--porcelain'), '');
			const landed = r.card.workspace?.landed;
			assert.equal(landed?.mode, mode);
			assert.equal(landed.commit, head);
			assert.ok(!Number.isNaN(Date.parse(landed.at)));
			assert.deepEqual((await get(s.id)).workspace?.landed, landed);
			const parents = gitOut(s.root, 'rev-list', '--parents', '-1', head).split(' ').slice(1);
			assert.deepEqual(parents, mode === 'merge' ? [s.oldBase, s.tip] : [s.oldBase]);
			if (mode !== 'rebase') {
				assert.equal(gitOut(s.root, 'log', '-1', '--format=%s', head), `${s.id}: ${r.card.title}`);
			}
			assert.ok(!existsSync(s.ws.path), 'the worktree is removed');
			assert.equal(gitOut(s.root, 'branch', '--list', s.ws.branch), '', 'the branch is deleted');
			const event = committed.filter(e => e.cardId === s.id).at(-1);
			assert.equal(event?.type, 'approved');
			assert.deepEqual(event.data.card?.workspace?.landed, landed);
		});
	}

	it("lands onto a base that moved on: exactly the branch's files change, main's own change stays", async () => {
		const s = await inReview('squash', { mainMoves: { 'README.md': '# r\nmain moved\n' } });
		await approve(s.id);
		const changed = gitOut(s.root, 'diff', '--name-only', s.oldBase, 'main').split('\n');
		assert.deepEqual(changed, ['a.txt', 'b.txt', 'new.txt']);
		for (const file of ['a.txt', 'new.txt']) {
			assert.equal(gitOut(s.root, 'show', `main:${file}`), gitOut(s.root, 'show', `${s.tip}:${file}`));
		}
		assert.equal(gitOut(s.root, 'show', 'main:README.md'), '# r\nmain moved');
	});

	it('two approvals of one card at once land it once', async () => {
		const s = await inReview('squash');
		const results = await Promise.allSettled([approve(s.id), approve(s.id)]);
		assert.equal(results.filter(r => r.status === 'fulfilled').length, 1);
		const head = gitOut(s.root, 'rev-parse', 'main');
		assert.deepEqual(gitOut(s.root, 'rev-list', '--parents', '-1', head).split(' ').slice(1), [s.oldBase]);
		assert.equal((await get(s.id)).workspace?.landed?.commit, head);
	});

	it('none: approves without landing; worktree and branch stay for a pull request', async () => {
		const s = await inReview('none');
		const r = await approve(s.id);
		assert.equal(r.card.status, 'done');
		assert.equal(r.card.workspace?.landed, undefined);
		assert.equal(gitOut(s.root, 'rev-parse', 'main'), s.oldBase);
		assert.ok(existsSync(s.ws.path));
		assert.equal(gitOut(s.root, 'rev-parse', s.ws.branch), s.tip);
	});

	it("with land none, a dependent card's worktree starts from its approved dependency's branch", async () => {
		const s = await inReview('none');
		await approve(s.id);
		const dependent = `${s.id}-next`;
		const project = (await get(s.id)).project ?? undefined;
		await b.create(human, { cards: [{ id: dependent, title: 'Build on it', dependsOn: [s.id], project }] });
		const card = await get(dependent);
		const settings = await b.projectSettings(project ?? '');
		const base = await stackedBaseFor(b, card, settings, { host, root: s.root });
		assert.equal(base, s.ws.branch);
		const ws = await ensureWorktree({ repo: s.root, cardId: dependent, base });
		assert.deepEqual(folderPicture(ws.path), s.worktreePicture, "the dependency's unmerged work is there");
		assert.equal(gitOut(s.root, 'rev-parse', 'main'), s.oldBase, 'main still lacks it');
		// Any other land mode starts from the base as usual.
		assert.equal(await stackedBaseFor(b, card, { land: 'squash' }, { host, root: s.root }), undefined);
	});

	it('a conflict changes nothing anywhere: the card goes back to ready with the hand-over, the branch kept', async () => {
		const s = await inReview('squash', { mainMoves: { 'a.txt': 'a1\na2 on main\na3\n' } });
		const before = [state(s.root), state(s.ws.path)];
		const e = await refused(
			approve(s.id),
			'conflict',
			/was not approved: landing baton\/L\d+ on main conflicts in a\.txt/,
		);
		assert.deepEqual((e.data as { files: string[] }).files, ['a.txt']);
		assert.deepEqual([state(s.root), state(s.ws.path)], before);
		const card = await get(s.id);
		assert.equal(card.status, 'ready');
		assert.equal(card.handoff, `rebase \`${s.ws.branch}\` on \`main\`: conflicts in a.txt`);
		assert.equal(card.workspace?.landed, undefined);
		const event = committed.filter(ev => ev.cardId === s.id).at(-1);
		assert.equal(event?.type, 'land_conflicted');
		assert.deepEqual(event.data.files, ['a.txt']);
		// The next agent continues on the kept branch and reads the hand-over.
		const again = await b.claim({ actor: 'claude-2' }, { cardId: s.id });
		assert.equal(again.handoff, card.handoff);
	});

	it('a dirty checkout of the base is never overwritten: refused naming the files, the card stays in review', async () => {
		const s = await inReview('merge');
		writeFiles(s.root, { 'a.txt': 'my own edit\n', 'unrelated.txt': 'mine\n' });
		const before = [state(s.root), state(s.ws.path)];
		const cardBefore = await get(s.id);
		await refused(approve(s.id), 'conflict', /has main checked out with changes to files this landing changes: a\.txt/);
		assert.deepEqual([state(s.root), state(s.ws.path)], before);
		assert.deepEqual(await get(s.id), cardBefore);
		// An unrelated local edit does not block: once a.txt is committed elsewhere… here, reverted.
		gitOut(s.root, 'checkout', '--', 'a.txt');
		const r = await approve(s.id);
		assert.equal(r.card.status, 'done');
		assert.equal(gitOut(s.root, 'show', 'main:a.txt'), 'a1\na2 changed\na3');
		assert.equal(folderPicture(s.root).get('unrelated.txt'), `644:${Buffer.from('mine\n').toString('base64')}`);
	});

	it('an approval the rules refuse lands nothing', async () => {
		const s = await inReview('squash');
		const before = state(s.root);
		await refused(approve(s.id, agent), 'conflict', /You completed card/);
		const card = await get(s.id);
		await refused(approve(s.id, human, card.version - 1), 'conflict', /changed since you looked/);
		assert.equal(state(s.root), before);
		assert.equal((await get(s.id)).status, 'review');
	});

	it('refuses a workspace of another host, changing nothing', async () => {
		const s = await inReview('squash');
		const card = await get(s.id);
		const ws = card.workspace;
		assert.ok(ws !== undefined);
		await b.setWorkspace(agent, s.id, { ...ws, host: 'elsewhere' });
		const before = state(s.root);
		await refused(approve(s.id), 'invalid_transition', /are on elsewhere; .* Approve it from elsewhere/);
		assert.equal(state(s.root), before);
		assert.equal((await get(s.id)).status, 'review');
	});

	it('a card with landed recorded approves without landing again', async () => {
		const s = await inReview('squash');
		const ws = (await get(s.id)).workspace;
		assert.ok(ws !== undefined);
		await b.setWorkspace(agent, s.id, {
			...ws,
			landed: { mode: 'squash', commit: s.oldBase, at: new Date().toISOString() },
		});
		const r = await approve(s.id);
		assert.equal(r.card.status, 'done');
		assert.equal(gitOut(s.root, 'rev-parse', 'main'), s.oldBase);
	});
});

describe('stackedBase', () => {
	const where = { host: 'h1', root: '/r' };
	const ws = (branch: string, extra: object = {}) => ({
		root: '/r',
		path: `/r/.baton/worktrees/${branch}`,
		branch,
		base: 'main',
		host: 'h1',
		...extra,
	});
	it("with land none: the first dependency's unlanded branch on this host and repository", () => {
		const deps = [
			{ id: 'A', workspace: ws('baton/A', { landed: { mode: 'squash' as const, commit: 'c', at: 't' } }) },
			{ id: 'B' },
			{ id: 'C', workspace: ws('baton/C', { host: 'h2' }) },
			{ id: 'D', workspace: ws('baton/D') },
			{ id: 'E', workspace: ws('baton/E') },
		];
		assert.equal(stackedBase({ dependsOn: ['A', 'B', 'C', 'D', 'E'] }, deps, { land: 'none' }, where), 'baton/D');
		assert.equal(stackedBase({ dependsOn: ['E', 'D'] }, deps, { land: 'none' }, where), 'baton/E');
		assert.equal(stackedBase({ dependsOn: ['A', 'B', 'C'] }, deps, { land: 'none' }, where), undefined);
		assert.equal(stackedBase({ dependsOn: ['D'] }, deps, { land: 'none' }, { host: 'h1', root: '/other' }), undefined);
	});
	it('with any other land mode: none (the dependency landed on the base)', () => {
		const deps = [{ id: 'D', workspace: ws('baton/D') }];
		for (const land of ['squash', 'merge', 'rebase'] as const) {
			assert.equal(stackedBase({ dependsOn: ['D'] }, deps, { land }, where), undefined);
		}
	});
});
