/**
 * The base only moves to a tree whose check passed: the project's check runs on the commit a landing
 * would move the base to (the branch merged onto the base as it is now), against a real backlog
 * (PGlite), the hub's landing.ts in process and real git repositories. A rename and a new call of the
 * old name each pass alone: the first lands, the second comes back to ready with the check's words as
 * its hand-over, main unchanged and its branch kept; every commit of main's first-parent history
 * passes the check. A base that moves while a landing's check runs is landed on again, on the new base.
 * Two approvals of one base at once land one after the other, both checked on what they land on.
 */
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import type { Card } from '../../core/protocol';
import { Landing } from '../../mcp-server/hub/landing';
import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { backlogForSuite } from '../helpers/backlog';
import { refused } from '../helpers/refused';
import { commitAllFiles, gitOut, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

const human: OpContext = { actor: 'vscode:alice' };
const agent: OpContext = { actor: 'claude-1' };
const host = hostname();

/**
 * The project's test: every `call NAME` line of a `.calls` file needs a `defs/NAME` file. It fails
 * naming the missing one, as a compiler would name an undefined function.
 */
const checkScript = `#!/bin/sh
status=0
for f in $(ls *.calls 2>/dev/null); do
	for name in $(sed -n 's/^call //p' "$f"); do
		if [ ! -e "defs/$name" ]; then echo "$f: $name is called but not defined"; status=1; fi
	done
done
exit $status
`;

const repos: TestRepo[] = [];
after(() => {
	for (const r of repos) {
		r.cleanup();
	}
});

/** Whether the check passes on `commit` of `root` (run the way a person would, in a scratch clone). */
function passes(root: string, commit: string): boolean {
	const files = gitOut(root, 'ls-tree', '-r', '--name-only', commit).split('\n');
	const defs = new Set(files.filter(f => f.startsWith('defs/')).map(f => f.slice(5)));
	return files
		.filter(f => f.endsWith('.calls'))
		.every(f =>
			gitOut(root, 'show', `${commit}:${f}`)
				.split('\n')
				.filter(l => l.startsWith('call '))
				.every(l => defs.has(l.slice(5))),
		);
}

describe('landing checks the merged tree before the base moves', () => {
	let b: Backlog;
	let landing: Landing;
	backlogForSuite('pglite', {}, t => {
		b = t.backlog;
		landing = new Landing(b);
	});

	let counter = 0;
	/** A repository whose main defines `old` and calls it, with the check set on its project. */
	async function project(check = 'sh check.sh'): Promise<{ repo: TestRepo; project: string }> {
		const repo = makeRepo({ 'check.sh': checkScript, 'defs/old': 'old\n', 'a.calls': 'call old\n' });
		repos.push(repo);
		const name = `merged-${++counter}`;
		await b.updateProjectSettings(human, { project: name, land: 'squash', check });
		return { repo, project: name };
	}

	/** A card of `project` in review whose branch (from main as it is now) writes `files` and deletes `gone`. */
	async function inReview(
		p: { repo: TestRepo; project: string },
		id: string,
		files: Record<string, string>,
		gone: string[] = [],
	): Promise<{ branch: string }> {
		await b.create(human, { cards: [{ id, title: `Card ${id}`, review: 'human', project: p.project }] });
		const claimed = await b.claim(agent, { cardId: id });
		const ws = await ensureWorktree({ repo: p.repo.root, cardId: id });
		writeFiles(ws.path, files);
		for (const f of gone) {
			gitOut(ws.path, 'rm', '-q', f);
		}
		commitAllFiles(ws.path, `${id}: work`);
		await b.setWorkspace(agent, id, { root: p.repo.root, path: ws.path, branch: ws.branch, base: 'main', host });
		await b.complete(agent, { cardId: id, epoch: claimed.lease?.epoch, result: 'done' });
		return { branch: ws.branch };
	}
	const get = async (id: string): Promise<Card> => (await b.get(human, { cardId: id })).card;
	const approve = (id: string) => landing.review(human, { cardId: id, approve: true }, 'human');
	const firstParents = (root: string): string[] => gitOut(root, 'rev-list', '--first-parent', 'main').split('\n');

	it('a rename and a new call of the old name: the first lands, the second comes back with the check’s words', async () => {
		const p = await project();
		const root = p.repo.root;
		// Each passes alone, on main as it is.
		await inReview(p, 'RN-1', { 'defs/new': 'new\n', 'a.calls': 'call new\n' }, ['defs/old']);
		const caller = await inReview(p, 'RN-2', { 'b.calls': 'call old\n' });
		await approve('RN-1');
		assert.equal((await get('RN-1')).status, 'done');
		const afterRename = gitOut(root, 'rev-parse', 'main');

		const e = await refused(approve('RN-2'), 'conflict');
		assert.match(e.message, /The check `sh check\.sh` exited 1 on main with baton\/RN-2 merged, so main did not move/);
		assert.match(e.message, /b\.calls: old is called but not defined/);
		const back = await get('RN-2');
		assert.equal(back.status, 'ready', 'back to an agent, never landed');
		assert.match(back.handoff ?? '', /b\.calls: old is called but not defined/);
		assert.equal(gitOut(root, 'rev-parse', 'main'), afterRename, 'main did not move');
		assert.equal(gitOut(root, 'rev-parse', '--verify', '--quiet', caller.branch) !== '', true, 'its branch is kept');
		for (const commit of firstParents(root)) {
			assert.ok(passes(root, commit), `main's ${commit.slice(0, 8)} passes the check`);
		}
		assert.equal(gitOut(root, 'worktree', 'list').includes('baton-land-check-'), false, 'no check worktree is left');
	});

	it('a base that moves while the check runs is landed on again, on the new base', async () => {
		// The first run of the check commits to main (as another lander would, meanwhile); later runs pass.
		const p = await project();
		const root = p.repo.root;
		const marker = path.join(p.repo.parent, 'moved-once');
		const moveOnce = `if [ ! -e ${marker} ]; then touch ${marker}; git -C ${root} commit -q --allow-empty -m 'someone else landed'; fi; sh check.sh`;
		await b.updateProjectSettings(human, { project: p.project, check: moveOnce });
		await inReview(p, 'MV-1', { 'c.calls': 'call old\n' });
		await approve('MV-1');
		const card = await get('MV-1');
		assert.equal(card.status, 'done');
		const [landed, someone] = firstParents(root);
		assert.equal(card.workspace?.landed?.commit, landed);
		assert.equal(gitOut(root, 'log', '-1', '--format=%s', someone!), 'someone else landed');
		assert.equal(gitOut(root, 'rev-parse', `${landed!}^`), someone, 'landed on the base as it had become');
	});

	it('a branch whose check passed, on a base that has not moved, lands without running the check again', async () => {
		// This check would fail anywhere: landing without running it proves the passed tree was trusted.
		const p = await project('exit 1');
		await b.create(human, { cards: [{ id: 'PS-1', title: 'Passed once', review: 'human', project: p.project }] });
		const claimed = await b.claim(agent, { cardId: 'PS-1' });
		const ws = await ensureWorktree({ repo: p.repo.root, cardId: 'PS-1' });
		writeFiles(ws.path, { 'f.calls': 'call old\n' });
		commitAllFiles(ws.path, 'PS-1: work');
		await b.setWorkspace(agent, 'PS-1', { root: p.repo.root, path: ws.path, branch: ws.branch, base: 'main', host });
		await b.complete(agent, { cardId: 'PS-1', epoch: claimed.lease?.epoch, result: 'done' }, 'exit 1');
		const running = await get('PS-1');
		assert.equal(running.checks?.state, 'running');
		await b.checks.finish({ actor: 'baton' }, 'PS-1', running.checks.startedAt, {
			state: 'passed',
			exitCode: 0,
			tail: '',
			durationMs: 5,
			timeoutSeconds: 600,
		});
		await approve('PS-1');
		assert.equal((await get('PS-1')).status, 'done');
		// A card whose own check never ran is checked at landing (and fails here).
		await inReview(p, 'PS-2', { 'g.calls': 'call old\n' });
		const e = await refused(approve('PS-2'), 'conflict');
		assert.match(e.message, /The check `exit 1` exited 1 on main/);
	});

	it('two approvals of one base at once land one after the other, each checked on what it lands on', async () => {
		const p = await project();
		const root = p.repo.root;
		await inReview(p, 'TW-1', { 'd.calls': 'call old\n' });
		await inReview(p, 'TW-2', { 'e.calls': 'call old\n' });
		const before = gitOut(root, 'rev-parse', 'main');
		await Promise.all([approve('TW-1'), approve('TW-2')]);
		assert.deepEqual([(await get('TW-1')).status, (await get('TW-2')).status], ['done', 'done']);
		const history = firstParents(root);
		assert.equal(history[2], before, 'two landings on top of main, none lost');
		assert.deepEqual(
			gitOut(root, 'ls-tree', '--name-only', 'main')
				.split('\n')
				.filter(f => f.endsWith('.calls'))
				.sort(),
			['a.calls', 'd.calls', 'e.calls'],
		);
	});
});
