/**
 * Workspaces, review and landing on real git: commitAll, diffStat and diff of a card's
 * branch; squash, merge and rebase each land exactly the branch's changes; a conflict, a dirty user
 * checkout or a dirty card worktree changes nothing anywhere; a checkout on another branch is never
 * touched; pushBranch against a local bare repository as origin.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import { land, type LandMode } from '../../mcp-server/workspaces/land';
import { commitAll, diff, diffStat, pushBranch } from '../../mcp-server/workspaces/review';
import { ensureWorktree, type Workspace } from '../../mcp-server/workspaces/worktree';
import { refused } from '../helpers/refused';
import {
	commitAllFiles,
	folderPicture,
	gitOut,
	gitSeries,
	makeRepo,
	writeFiles,
	type TestRepo,
} from '../helpers/workspaceRepo';

const repos: TestRepo[] = [];
after(() => {
	for (const r of repos) {
		r.cleanup();
	}
});

interface Scene {
	root: string;
	parent: string;
	ws: Workspace;
	/** main before the landing. */
	oldBase: string;
	tip: string;
	/** Paths the card changed. */
	changed: string[];
}

/**
 * A card that changes a.txt, adds new.txt, deletes b.txt and edits src/x.ts in two commits by another
 * author, while main moves on with an unrelated README change.
 */
async function scene(cardId: string): Promise<Scene> {
	const r = makeRepo({
		'README.md': '# r\n',
		'a.txt': 'a1\na2\na3\n',
		'b.txt': 'b\n',
		'src/x.ts': 'export const x = 1;\n',
	});
	repos.push(r);
	const ws = await ensureWorktree({ repo: r.root, cardId });
	writeFiles(ws.path, { 'a.txt': 'a1\na2 changed\na3\n', 'new.txt': 'new\n' });
	assert.ok((await commitAll({ worktree: ws.path, message: `${cardId}: first half` })) !== null);
	writeFiles(ws.path, { 'src/x.ts': 'export const x = 2;\n' });
	writeFiles(r.root, { 'README.md': '# r\nmain moved on\n' });
	const [oldBase = '', tip = ''] = gitSeries([
		[ws.path, 'rm', '-q', 'b.txt'],
		[ws.path, 'add', 'src/x.ts'],
		[ws.path, 'commit', '-q', '--author=Agent Two <two@example.com>', '-m', `${cardId}: second half`],
		[r.root, 'add', '-A'],
		[r.root, 'commit', '-q', '-m', 'main moves on'],
		[r.root, 'rev-parse', 'HEAD'],
		[r.root, 'rev-parse', ws.branch],
	]).slice(-2);
	return { root: r.root, parent: r.parent, ws, oldBase, tip, changed: ['a.txt', 'b.txt', 'new.txt', 'src/x.ts'] };
}

function state(root: string): string {
	return [
		...gitSeries([
			[root, 'for-each-ref', '--format=%(refname) %(objectname)'],
			[root, '--no-optional-locks', 'status', '--porcelain', '--untracked-files=all'],
		]),
		JSON.stringify([...folderPicture(root)]),
	].join('\n');
}

describe('commitAll, diffStat, diff', () => {
	it('commits what the agent left, then describes the branch against its base as a pull request would', async () => {
		const s = await scene('R1');
		assert.equal(await commitAll({ worktree: s.ws.path, message: 'R1: nothing' }), null);
		writeFiles(s.ws.path, { 'img.bin': Buffer.from([0, 1, 2, 3, 0]), 'notes/todo.md': 'one\ntwo\n' });
		const commit = await commitAll({ worktree: s.ws.path, message: 'R1: Title of the card' });
		assert.equal(gitOut(s.root, 'log', '-1', '--format=%s', s.ws.branch), 'R1: Title of the card');
		assert.equal(gitOut(s.ws.path, 'status', '--porcelain'), '');
		const stat = await diffStat({ repo: s.root, branch: s.ws.branch, base: 'main' });
		assert.equal(stat.head, commit);
		assert.deepEqual(
			stat.files.map(f => [f.path, f.insertions, f.deletions]),
			[
				['a.txt', 1, 1],
				['b.txt', 0, 1],
				['img.bin', null, null],
				['new.txt', 1, 0],
				['notes/todo.md', 2, 0],
				['src/x.ts', 1, 1],
			],
		);
		assert.deepEqual([stat.filesChanged, stat.insertions, stat.deletions], [6, 5, 3]);
		const text = await diff({ repo: s.root, branch: s.ws.branch, base: 'main' });
		assert.match(text, /^-a2$\n^\+a2 changed$/m);
		assert.match(text, /^Binary files \/dev\/null and b\/img\.bin differ$/m);
		assert.doesNotMatch(text, /main moved on/, "main's own changes are not the card's");
		await refused(
			diffStat({ repo: s.root, branch: 'baton/none', base: 'main' }),
			'not_found',
			/"baton\/none" does not exist/,
		);
	});
});

describe('commitAll and hooks', () => {
	it("runs the repository's pre-commit hook and turns its refusal into a clear error; noVerify skips it", async () => {
		const s = await scene('H1');
		const hook = path.join(s.root, '.git', 'hooks', 'pre-commit');
		writeFileSync(hook, '#!/bin/sh\necho "refused by policy: no TODO" >&2\nexit 1\n', { mode: 0o755 });
		writeFiles(s.ws.path, { 'todo.txt': 'TODO\n' });
		await refused(
			commitAll({ worktree: s.ws.path, message: 'H1: todo' }),
			'conflict',
			/was refused: refused by policy: no TODO/,
		);
		assert.equal(gitOut(s.root, 'rev-parse', s.ws.branch), s.tip);
		assert.ok((await commitAll({ worktree: s.ws.path, message: 'H1: todo', noVerify: true })) !== null);
		await refused(commitAll({ worktree: s.ws.path, message: '  ' }), 'invalid_input', /commit message is needed/);
	});
});

describe('land', () => {
	for (const mode of ['squash', 'merge', 'rebase'] as const) {
		it(`${mode}: lands exactly the branch's changes, updates the user's checkout on main, removes worktree and branch`, async () => {
			const s = await scene(`M-${mode}`);
			const result = await land({ repo: s.root, branch: s.ws.branch, base: 'main', mode, message: `${mode} M` });
			assert.ok(result.outcome === 'landed', JSON.stringify(result));
			const head = gitOut(s.root, 'rev-parse', 'main');
			assert.equal(result.newHead, head);
			assert.equal(result.oldHead, s.oldBase);
			assert.deepEqual([...result.files].sort(), s.changed);
			assert.deepEqual(gitOut(s.root, 'diff', '--name-only', s.oldBase, head).split('\n'), s.changed);
			for (const file of ['a.txt', 'new.txt', 'src/x.ts']) {
				assert.equal(gitOut(s.root, 'show', `${head}:${file}`), gitOut(s.root, 'show', `${s.tip}:${file}`));
			}
			assert.equal(gitOut(s.root, 'show', `${head}:README.md`), '# r\nmain moved on');
			const parents = gitOut(s.root, 'rev-list', '--parents', '-1', head).split(' ').slice(1);
			if (mode === 'squash') {
				assert.deepEqual(parents, [s.oldBase]);
				assert.equal(gitOut(s.root, 'log', '-1', '--format=%s', head), 'squash M');
			} else if (mode === 'merge') {
				assert.deepEqual(parents, [s.oldBase, s.tip]);
			} else {
				assert.deepEqual(gitOut(s.root, 'log', '--format=%an|%s', `${s.oldBase}..${head}`).split('\n'), [
					'Agent Two|M-rebase: second half',
					'Test Author|M-rebase: first half',
				]);
				assert.equal(gitOut(s.root, 'rev-parse', `${head}~2`), s.oldBase);
			}
			// The user's checkout on main now has the landed files, as `git merge` would leave it.
			assert.deepEqual(result.checkouts, [s.root]);
			assert.equal(gitOut(s.root, 'status', '--porcelain'), '');
			assert.equal(readFileSync(path.join(s.root, 'a.txt'), 'utf8'), 'a1\na2 changed\na3\n');
			assert.equal(existsSync(path.join(s.root, 'b.txt')), false);
			assert.equal(result.removedWorktree, s.ws.path);
			assert.equal(existsSync(s.ws.path), false);
			assert.equal(result.deletedBranch, true);
			assert.equal(gitOut(s.root, 'branch', '--list', s.ws.branch), '');
			assert.equal(gitOut(s.root, 'config', '--local', '--list').includes('batonCard'), false);
		});

		it(`${mode}: a conflict changes nothing in main, the user's checkout or the card's workspace`, async () => {
			const s = await scene(`C-${mode}`);
			writeFiles(s.root, { 'a.txt': 'a1\na2 changed on main\na3\n' });
			commitAllFiles(s.root, 'main edits a.txt too');
			const before = state(s.root);
			const cardBefore = JSON.stringify([...folderPicture(s.ws.path)]);
			const result = await land({ repo: s.root, branch: s.ws.branch, base: 'main', mode });
			assert.deepEqual(result, {
				outcome: 'conflict',
				conflict: true,
				files: ['a.txt'],
				message: `rebase \`${s.ws.branch}\` on \`main\`: conflicts in a.txt`,
			});
			assert.equal(state(s.root), before);
			assert.equal(JSON.stringify([...folderPicture(s.ws.path)]), cardBefore);
		});
	}

	it('a branch whose changes are already on the base, or that has no commits, is refused: nothing to land', async () => {
		const r = makeRepo({ 'a.txt': 'a\n' });
		repos.push(r);
		const cards = await Promise.all(['E1', 'E2'].map(cardId => ensureWorktree({ repo: r.root, cardId })));
		for (const ws of cards) {
			writeFiles(ws.path, { 'a.txt': 'same\n' });
			await commitAll({ worktree: ws.path, message: 'the same change' });
		}
		writeFiles(r.root, { 'a.txt': 'same\n' });
		const base = commitAllFiles(r.root, 'the same change on main');
		for (const [i, mode] of (['merge', 'squash'] as const).entries()) {
			const branch = cards[i]?.branch ?? '';
			const before = state(r.root);
			const e = await refused(
				land({ repo: r.root, branch, base: 'main', mode }),
				'invalid_transition',
				/has no change against main .*nothing to land/,
			);
			assert.deepEqual(e.data, { branch, base: 'main', nothingToLand: true });
			assert.equal(state(r.root), before, 'main, the branch and the checkout unchanged');
			assert.equal(gitOut(r.root, 'rev-parse', 'main'), base);
		}
		// No commits of its own at all (the branch is where main was when the worktree was made).
		const bare = await ensureWorktree({ repo: r.root, cardId: 'E3' });
		for (const mode of ['squash', 'merge', 'rebase'] as const) {
			await refused(
				land({ repo: r.root, branch: bare.branch, base: 'main', mode }),
				'invalid_transition',
				/nothing to land/,
			);
		}
		assert.equal(gitOut(r.root, 'rev-parse', 'main'), base);
		await refused(
			land({ repo: r.root, branch: 'main', base: 'main', mode: 'squash' }),
			'invalid_input',
			/cannot land on itself/,
		);
	});

	it('rebase onto an unmoved base fast-forwards to the branch itself', async () => {
		const r = makeRepo({ 'a.txt': 'a\n' });
		repos.push(r);
		const ws = await ensureWorktree({ repo: r.root, cardId: 'FF' });
		writeFiles(ws.path, { 'a.txt': 'b\n' });
		const tip = await commitAll({ worktree: ws.path, message: 'FF' });
		const result = await land({ repo: r.root, branch: ws.branch, base: 'main', mode: 'rebase' });
		assert.ok(result.outcome === 'landed');
		assert.equal(result.newHead, tip);
	});

	it('refuses when the user has modified or untracked copies of landed files on main, and keeps their work', async () => {
		const s = await scene('D1');
		writeFileSync(path.join(s.root, 'a.txt'), 'my own edit\n');
		const before = state(s.root);
		const e = await refused(
			land({ repo: s.root, branch: s.ws.branch, base: 'main', mode: 'squash' }),
			'conflict',
			/has main checked out with changes to files this landing changes: a\.txt.*nothing was landed/,
		);
		assert.deepEqual(e.data, { files: ['a.txt'] });
		assert.equal(state(s.root), before);
		writeFileSync(path.join(s.root, 'a.txt'), 'a1\na2\na3\n');
		writeFileSync(path.join(s.root, 'new.txt'), 'untracked in the way\n');
		await refused(land({ repo: s.root, branch: s.ws.branch, base: 'main', mode: 'merge' }), 'conflict', /new\.txt/);
		assert.equal(readFileSync(path.join(s.root, 'new.txt'), 'utf8'), 'untracked in the way\n');
		assert.equal(gitOut(s.root, 'rev-parse', 'main'), s.oldBase);
	});

	it("lands around the user's edits to other files, keeping them", async () => {
		const s = await scene('D2');
		writeFileSync(path.join(s.root, 'README.md'), 'local edit, not landed\n');
		writeFileSync(path.join(s.root, 'scratch.txt'), 'untracked\n');
		const result = await land({ repo: s.root, branch: s.ws.branch, base: 'main', mode: 'squash' });
		assert.equal(result.outcome, 'landed');
		assert.equal(readFileSync(path.join(s.root, 'README.md'), 'utf8'), 'local edit, not landed\n');
		assert.equal(readFileSync(path.join(s.root, 'new.txt'), 'utf8'), 'new\n');
		assert.equal(gitOut(s.root, 'diff', '--name-only'), 'README.md', 'still an unstaged edit');
		assert.equal(gitOut(s.root, 'diff', '--cached', '--name-only'), '');
		assert.equal(gitOut(s.root, 'ls-files', '--others', '--exclude-standard'), 'scratch.txt');
	});

	it('updates a linked worktree that has main checked out, and only that one', async () => {
		const s = await scene('K1');
		gitOut(s.root, 'checkout', '-q', '-b', 'elsewhere');
		const linked = path.join(s.parent, 'main-checkout');
		gitOut(s.root, 'worktree', 'add', '-q', linked, 'main');
		const result = await land({ repo: s.root, branch: s.ws.branch, base: 'main', mode: 'squash' });
		assert.ok(result.outcome === 'landed');
		assert.deepEqual(result.checkouts, [linked]);
		assert.equal(readFileSync(path.join(linked, 'new.txt'), 'utf8'), 'new\n');
		assert.equal(gitOut(linked, 'status', '--porcelain'), '');
		assert.equal(existsSync(path.join(s.root, 'new.txt')), false, 'the checkout on another branch has no new file');
	});

	it('leaves a checkout on another branch alone', async () => {
		const s = await scene('O1');
		gitOut(s.root, 'checkout', '-q', '-b', 'my-feature');
		writeFileSync(path.join(s.root, 'a.txt'), 'dirty on my branch\n');
		const before = JSON.stringify([...folderPicture(s.root)]);
		const result = await land({ repo: s.root, branch: s.ws.branch, base: 'main', mode: 'merge' });
		assert.ok(result.outcome === 'landed');
		assert.deepEqual(result.checkouts, []);
		assert.equal(JSON.stringify([...folderPicture(s.root)]), before);
		assert.equal(gitOut(s.root, 'symbolic-ref', '--short', 'HEAD'), 'my-feature');
		assert.equal(gitOut(s.root, 'show', 'main:a.txt'), 'a1\na2 changed\na3');
	});

	it('refuses while the card worktree has uncommitted changes; mode none lands nothing and keeps everything', async () => {
		const s = await scene('N1');
		writeFileSync(path.join(s.ws.path, 'late.txt'), 'not committed\n');
		const before = state(s.root);
		await refused(
			land({ repo: s.root, branch: s.ws.branch, base: 'main', mode: 'squash' }),
			'conflict',
			/uncommitted changes \(late\.txt\).*Commit them/,
		);
		assert.equal(state(s.root), before);
		const kept = await land({ repo: s.root, branch: s.ws.branch, base: 'main', mode: 'none' });
		assert.deepEqual(kept, { outcome: 'kept', conflict: false, mode: 'none', head: s.tip });
		assert.equal(state(s.root), before);
		assert.equal(existsSync(s.ws.path), true);
		await refused(
			land({ repo: s.root, branch: s.ws.branch, base: 'main', mode: 'octopus' as LandMode }),
			'invalid_input',
			/use squash, merge, rebase or none/,
		);
		await refused(
			land({ repo: s.root, branch: s.ws.branch, base: 'nope', mode: 'squash' }),
			'not_found',
			/"nope" does not exist/,
		);
	});
});

describe('pushBranch', () => {
	it("pushes the card's branch to origin (a local bare repository), again after a rewrite", async () => {
		const s = await scene('U1');
		await refused(pushBranch({ repo: s.root, branch: s.ws.branch }), 'invalid_input', /no remote "origin"/);
		const origin = path.join(s.parent, 'origin.git');
		gitOut(s.parent, 'init', '-q', '--bare', origin);
		gitOut(s.root, 'remote', 'add', 'origin', origin);
		assert.equal(await pushBranch({ repo: s.root, branch: s.ws.branch }), s.tip);
		assert.equal(gitOut(origin, 'rev-parse', `refs/heads/${s.ws.branch}`), s.tip);
		gitOut(s.ws.path, 'commit', '-q', '--amend', '-m', 'rewritten');
		const rewritten = gitOut(s.ws.path, 'rev-parse', 'HEAD');
		assert.equal(await pushBranch({ repo: s.root, branch: s.ws.branch }), rewritten);
		assert.equal(gitOut(origin, 'rev-parse', `refs/heads/${s.ws.branch}`), rewritten);
		gitOut(s.root, 'remote', 'set-url', 'origin', path.join(s.parent, 'missing.git'));
		await refused(
			pushBranch({ repo: s.root, branch: s.ws.branch }),
			'unavailable',
			/Pushing baton\/U1 to origin .* failed/,
		);
	});
});
