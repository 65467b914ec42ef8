/**
 * Approvals that must not land, against a real backlog (PostgreSQL), the hub's landing.ts in process and
 * real git repositories: the user's checkout of the base (the main checkout or a linked worktree) in
 * the middle of a rebase (both backends), a merge, a cherry-pick, a revert, a bisect or `git am` →
 * refused naming the state and the command that ends it, the base's ref, every ref, the checkout's
 * files and `git status` unchanged, the card still in review; ending the operation and approving again
 * lands. A branch with no change against its base (no commits, or only changes the base has already)
 * → refused as "nothing to land", nothing changed. A reference-transaction hook that refuses to move
 * the base → refused quoting the hook's words, the checkout rolled back; landing runs no pre-commit or
 * pre-merge-commit hook (it commits with plumbing).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import type { Card } from '../../core/protocol';
import { Landing } from '../../mcp-server/hub/landing';
import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { backlogForSuite } from '../helpers/backlog';
import { refused } from '../helpers/refused';
import {
	commitAllFiles,
	folderPicture,
	gitOut,
	gitSeries,
	repoFrom,
	writeFiles,
	type TestRepo,
} from '../helpers/workspaceRepo';

const human: OpContext = { actor: 'vscode:alice' };
const agent: OpContext = { actor: 'claude-1' };
const host = hostname();

const repos: TestRepo[] = [];
after(() => {
	for (const r of repos) {
		r.cleanup();
	}
});

/** `git -C dir …args` that may fail (a rebase that stops on a conflict exits non-zero); never opens an editor. */
function gitMayFail(dir: string, ...args: string[]): number {
	const r = spawnSync('git', ['-C', dir, ...args], {
		encoding: 'utf8',
		env: { ...process.env, GIT_EDITOR: 'true', GIT_SEQUENCE_EDITOR: 'true' },
	});
	return r.status ?? -1;
}

/** Every ref, the status and every file of a checkout: equal before and after means nothing changed. */
function state(dir: string): string {
	return [
		...gitSeries([
			[dir, 'for-each-ref', '--format=%(refname) %(objectname)'],
			[dir, 'rev-parse', 'HEAD'],
			[dir, '--no-optional-locks', 'status', '--porcelain', '--untracked-files=all'],
		]),
		JSON.stringify([...folderPicture(dir)]),
	].join('\n');
}

/**
 * The repository every case starts from, built once and copied: main at "initial" (README.md, a.txt),
 * a branch `other` that changes README.md, and main's next two commits (README.md again) on `next`, so
 * a card's branch can start at "initial" before main moves on.
 */
function baseRepo(): TestRepo {
	return repoFrom('landing refusals', root => {
		gitOut(root, 'init', '-q', '-b', 'main');
		writeFiles(root, { 'README.md': '# r\n', 'a.txt': 'a\n' });
		commitAllFiles(root, 'initial');
		gitOut(root, 'switch', '-q', '-c', 'other');
		writeFiles(root, { 'README.md': '# other\n' });
		commitAllFiles(root, 'other changes README');
		gitOut(root, 'switch', '-q', '-c', 'next', 'main');
		for (const text of ['# main 1\n', '# main 2\n']) {
			writeFiles(root, { 'README.md': text });
			commitAllFiles(root, `main: ${text.trim()}`);
		}
		gitOut(root, 'switch', '-q', 'main');
	});
}

function hook(root: string, name: string, script: string): void {
	const file = path.join(root, '.git', 'hooks', name);
	writeFileSync(file, `#!/bin/sh\n${script}\n`);
	chmodSync(file, 0o755);
}

interface Operation {
	name: string;
	/** Puts the user's checkout of main in the middle of the operation. */
	start(root: string): void;
	/** The refusal's words. */
	says: RegExp;
	/** Ends it (as the refusal tells the user to). */
	end: string[];
}

const operations: Operation[] = [
	{
		name: 'a rebase',
		start: root => assert.notEqual(gitMayFail(root, 'rebase', 'other'), 0),
		says: /in the middle of a rebase: finish it with `git rebase --continue` or `git rebase --abort`/,
		end: ['rebase', '--abort'],
	},
	{
		name: 'a rebase (apply backend)',
		start: root => assert.notEqual(gitMayFail(root, 'rebase', '--apply', 'other'), 0),
		says: /in the middle of a rebase: finish it with `git rebase --continue` or `git rebase --abort`/,
		end: ['rebase', '--abort'],
	},
	{
		name: 'a merge',
		start: root => assert.notEqual(gitMayFail(root, 'merge', 'other'), 0),
		says: /in the middle of a merge: finish it with `git merge --continue` \(after resolving\) or `git merge --abort`/,
		end: ['merge', '--abort'],
	},
	{
		name: 'a cherry-pick',
		start: root => assert.notEqual(gitMayFail(root, 'cherry-pick', 'other'), 0),
		says: /in the middle of a cherry-pick: finish it with `git cherry-pick --continue` or `git cherry-pick --abort`/,
		end: ['cherry-pick', '--abort'],
	},
	{
		name: 'a revert',
		start: root => assert.notEqual(gitMayFail(root, 'revert', 'HEAD~1'), 0),
		says: /in the middle of a revert: finish it with `git revert --continue` or `git revert --abort`/,
		end: ['revert', '--abort'],
	},
	{
		name: 'a bisect',
		start: root => {
			gitOut(root, 'bisect', 'start', 'main', 'main~2');
			assert.ok(existsSync(path.join(root, '.git', 'BISECT_LOG')));
		},
		says: /in the middle of a bisect: finish it with `git bisect reset`/,
		end: ['bisect', 'reset'],
	},
	{
		name: 'git am',
		start: root => {
			const patch = path.join(root, '..', 'other.patch');
			writeFileSync(patch, gitOut(root, 'format-patch', '-1', '--stdout', 'other') + '\n');
			assert.notEqual(gitMayFail(root, 'am', patch), 0);
		},
		says: /in the middle of a `git am`: finish it with `git am --continue` or `git am --abort`/,
		end: ['am', '--abort'],
	},
];

describe('approvals that must not land', () => {
	let b: Backlog;
	let landing: Landing;
	// The store is not what these cases prove (core proves it on both); PostgreSQL keeps PGlite's
	// hundreds of MB out of this process, which every git child landing spawns would fork (7x the CPU).
	backlogForSuite('postgres', {}, t => {
		b = t.backlog;
		landing = new Landing(b);
	});

	let counter = 0;
	/**
	 * A repository and a card in review whose branch changes a.txt (or `files`), main moved on twice
	 * (README.md), and a branch `other` that changes README.md too, so a rebase or merge of it stops.
	 * The repository is a copy of one built once (baseRepo); only the card's commit is new.
	 */
	async function inReview(files: Record<string, string> | null = { 'a.txt': 'a changed\n' }) {
		const r = baseRepo();
		repos.push(r);
		const n = ++counter;
		const project = `refuse-${n}`;
		await b.updateProjectSettings(human, { project, land: 'squash' });
		const id = `R${n}`;
		await b.create(human, { cards: [{ id, title: `Refused ${n}`, review: 'human', project }] });
		const claimed = await b.claim(agent, { cardId: id });
		const ws = await ensureWorktree({ repo: r.root, cardId: id });
		if (files !== null) {
			writeFiles(ws.path, files);
		}
		await b.setWorkspace(agent, id, { root: r.root, path: ws.path, branch: ws.branch, base: 'main', host });
		await b.complete(agent, { cardId: id, epoch: claimed.lease?.epoch, result: 'done' });
		// main moves on to `next` (a fast-forward of the user's checkout); `next` goes, as if never made.
		gitSeries([
			...(files === null
				? []
				: [
						[ws.path, 'add', '-A'],
						[ws.path, 'commit', '-q', '-m', `${id}: work`],
					]),
			[r.root, 'merge', '-q', '--ff-only', 'next'],
			[r.root, 'branch', '-q', '-D', 'next'],
		]);
		return { root: r.root, id, ws };
	}
	const get = async (id: string): Promise<Card> => (await b.get(human, { cardId: id })).card;
	const approve = (id: string) => landing.review(human, { cardId: id, approve: true }, 'human');

	for (const op of operations) {
		it(`refuses while main's checkout is in the middle of ${op.name}; nothing changes; after it ends, approve lands`, async () => {
			const s = await inReview();
			const main = gitOut(s.root, 'rev-parse', 'refs/heads/main');
			op.start(s.root);
			const before = state(s.root);
			const e = await refused(approve(s.id), 'conflict', op.says);
			assert.match(e.message, new RegExp(`main's checkout ${s.root} `));
			assert.match(e.message, /then approve again/);
			assert.equal(state(s.root), before, 'refs, HEAD, status and files unchanged');
			assert.equal(gitOut(s.root, 'rev-parse', 'refs/heads/main'), main);
			assert.equal((await get(s.id)).status, 'review');
			assert.ok(existsSync(s.ws.path), "the card's worktree is kept");

			gitOut(s.root, ...op.end);
			const r = await approve(s.id);
			assert.equal(r.card.status, 'done');
			assert.equal(gitOut(s.root, 'show', 'main:a.txt'), 'a changed');
			assert.equal(gitOut(s.root, 'rev-parse', 'main~1'), main, 'landed on the main the user had');
		});
	}

	it("refuses while a linked worktree of the user's has main mid-merge (the main checkout on another branch)", async () => {
		const s = await inReview();
		gitOut(s.root, 'switch', '-q', 'other');
		const linked = path.join(s.root, '..', 'linked-main');
		gitOut(s.root, 'worktree', 'add', '-q', linked, 'main');
		assert.notEqual(gitMayFail(linked, 'merge', 'other'), 0);
		const main = gitOut(s.root, 'rev-parse', 'refs/heads/main');
		const before = [state(s.root), state(linked)];
		const e = await refused(approve(s.id), 'conflict', /in the middle of a merge/);
		assert.match(e.message, new RegExp(`main's checkout ${linked} `));
		assert.deepEqual([state(s.root), state(linked)], before);
		assert.equal(gitOut(s.root, 'rev-parse', 'refs/heads/main'), main);
		assert.equal((await get(s.id)).status, 'review');
	});

	it('a checkout mid-rebase of another branch does not stop a landing on main', async () => {
		const s = await inReview();
		gitOut(s.root, 'switch', '-q', 'other');
		assert.notEqual(gitMayFail(s.root, 'rebase', 'main'), 0);
		const r = await approve(s.id);
		assert.equal(r.card.status, 'done');
		assert.equal(gitOut(s.root, 'show', 'main:a.txt'), 'a changed');
		assert.ok(existsSync(path.join(s.root, '.git', 'rebase-merge', 'head-name')), "the user's rebase of other goes on");
		assert.equal(gitOut(s.root, 'rev-parse', '--abbrev-ref', 'HEAD'), 'HEAD');
	});

	it('refuses a branch with no commits of its own as "nothing to land"; the card stays in review', async () => {
		const s = await inReview(null);
		const before = state(s.root);
		const e = await refused(approve(s.id), 'invalid_transition', /nothing to land/);
		assert.match(e.message, new RegExp(`baton reject ${s.id} --note`));
		assert.match(e.message, new RegExp(`baton delete ${s.id}`));
		assert.equal(state(s.root), before);
		assert.equal((await get(s.id)).status, 'review');
		assert.equal((await get(s.id)).workspace?.landed, undefined);
	});

	it('refuses a branch whose only change is on main already as "nothing to land", for every land mode', async () => {
		const s = await inReview({ 'README.md': '# main 2\n' });
		for (const land of ['squash', 'merge', 'rebase'] as const) {
			const card = await get(s.id);
			await b.updateProjectSettings(human, { project: card.project ?? '', land });
			const before = state(s.root);
			await refused(approve(s.id), 'invalid_transition', /has no change against main, so there is nothing to land/);
			assert.equal(state(s.root), before, land);
			assert.equal((await get(s.id)).status, 'review');
		}
	});

	it("a refusing reference-transaction hook is quoted; main, the user's files and the card are unchanged", async () => {
		const s = await inReview();
		hook(
			s.root,
			'reference-transaction',
			'if [ "$1" = prepared ]; then echo "main is frozen for the release" >&2; exit 1; fi',
		);
		const before = state(s.root);
		const e = await refused(approve(s.id), 'conflict', /A git hook of .* refused to move main/);
		assert.match(e.message, /main is frozen for the release/);
		assert.doesNotMatch(e.message, /moved while|git 2\.38/);
		assert.equal(state(s.root), before, 'the checkout was rolled back');
		assert.equal((await get(s.id)).status, 'review');

		hook(s.root, 'reference-transaction', 'exit 0');
		assert.equal((await approve(s.id)).card.status, 'done');
	});

	it('landing runs no pre-commit or pre-merge-commit hook (it commits with plumbing)', async () => {
		const s = await inReview();
		for (const name of ['pre-commit', 'pre-merge-commit', 'commit-msg']) {
			hook(s.root, name, `echo ${name} ran >> "${path.join(s.root, '..', 'hooks.log')}"; exit 1`);
		}
		assert.equal((await approve(s.id)).card.status, 'done');
		assert.ok(!existsSync(path.join(s.root, '..', 'hooks.log')));
	});
});
