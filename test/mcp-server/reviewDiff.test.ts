/**
 * The reviewer's diff of a card's branch (issue 33, mcp-server/workspaces/reviewDiff.ts) on real git:
 * each file's kind of change and line counts, renames, binary files and non-ASCII names, `paths`, and
 * the byte cap, which cuts only at file or hunk boundaries so the patch still parses.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import { parsePatch } from 'diff';
import { capPatch, reviewDiff } from '../../mcp-server/workspaces/reviewDiff';
import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { refused } from '../helpers/refused';
import { commitAllFiles, gitOut, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

const repos: TestRepo[] = [];
after(() => {
	for (const r of repos) {
		r.cleanup();
	}
});

const big = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} line ${i}`).join('\n') + '\n';

describe('reviewDiff', () => {
	it('lists each file with its change and counts, and gives the patch of the branch since it left base', async () => {
		const r = makeRepo({ 'README.md': '# r\n', 'old.txt': big(20, 'old'), 'gone.txt': 'bye\n', 'a.txt': 'a\n' });
		repos.push(r);
		const ws = await ensureWorktree({ repo: r.root, cardId: 'D1' });
		gitOut(ws.path, 'mv', 'old.txt', 'renamed.txt');
		gitOut(ws.path, 'rm', '-q', 'gone.txt');
		writeFiles(ws.path, {
			'a.txt': 'a\n<script>alert(1)</script>\n',
			'img.bin': Buffer.from([0, 1, 2, 0]),
			'docs/été.md': 'accents\n',
		});
		commitAllFiles(ws.path, 'D1: work');
		writeFiles(r.root, { 'README.md': '# r\nmain moved\n' });
		commitAllFiles(r.root, 'main moves on');

		const d = await reviewDiff({ repo: r.root, branch: ws.branch, base: 'main', maxBytes: 1 << 20 });
		assert.equal(d.head, gitOut(r.root, 'rev-parse', ws.branch));
		assert.equal(d.mergeBase, gitOut(r.root, 'merge-base', 'main', ws.branch));
		assert.deepEqual(
			d.files.map(f => [f.path, f.status, f.insertions, f.deletions, f.oldPath]),
			[
				['a.txt', 'modified', 1, 0, undefined],
				['docs/été.md', 'added', 1, 0, undefined],
				['gone.txt', 'deleted', 0, 1, undefined],
				['img.bin', 'added', null, null, undefined],
				['renamed.txt', 'renamed', 0, 0, 'old.txt'],
			],
		);
		assert.equal(d.truncated, false);
		assert.equal(d.patchBytes, Buffer.byteLength(d.patch));
		assert.match(d.patch, /^\+<script>alert\(1\)<\/script>$/m);
		assert.match(d.patch, /^diff --git a\/docs\/été\.md b\/docs\/été\.md$/m, 'names unquoted');
		assert.doesNotMatch(d.patch, /main moved/, "base's own changes are not the card's");
		assert.equal(parsePatch(d.patch).length, 5);

		const one = await reviewDiff({
			repo: r.root,
			branch: ws.branch,
			base: 'main',
			paths: ['a.txt'],
			maxBytes: 1 << 20,
		});
		assert.deepEqual(
			one.files.map(f => f.path),
			['a.txt'],
		);
		assert.equal(parsePatch(one.patch).length, 1);
		await refused(
			reviewDiff({ repo: r.root, branch: 'baton/none', base: 'main', maxBytes: 100 }),
			'not_found',
			/"baton\/none" does not exist/,
		);
	});

	it('cuts a patch over the cap after the last whole file, or the last whole hunk, and it still parses', async () => {
		const r = makeRepo({ 'a.txt': big(400, 'a'), 'b.txt': big(400, 'b'), 'c.txt': 'c\n' });
		repos.push(r);
		const ws = await ensureWorktree({ repo: r.root, cardId: 'D2' });
		// a.txt: two hunks far apart; b.txt: every line changed (one huge hunk); c.txt small.
		const a = big(400, 'a').split('\n');
		a[5] = 'changed near the top';
		a[350] = 'changed near the bottom';
		writeFiles(ws.path, { 'a.txt': a.join('\n'), 'b.txt': big(400, 'B'), 'c.txt': 'c changed\n' });
		commitAllFiles(ws.path, 'D2: work');
		const whole = await reviewDiff({ repo: r.root, branch: ws.branch, base: 'main', maxBytes: 1 << 20 });
		const aEnd = whole.patch.indexOf('diff --git a/b.txt');
		assert.ok(aEnd > 0);

		const cut = await reviewDiff({ repo: r.root, branch: ws.branch, base: 'main', maxBytes: aEnd + 100 });
		assert.equal(cut.truncated, true);
		assert.equal(cut.patchBytes, whole.patchBytes);
		assert.equal(cut.files.length, 3, 'the files list stays whole');
		assert.equal(cut.patch, whole.patch.slice(0, aEnd), 'cut after a.txt, the last file that fits');
		assert.deepEqual(
			parsePatch(cut.patch).map(p => p.newFileName),
			['b/a.txt'],
		);

		const firstHunkEnd = whole.patch.indexOf('\n@@ ', whole.patch.indexOf('\n@@ ') + 1) + 1;
		const hunk = capPatch(whole.patch, firstHunkEnd + 10);
		assert.equal(hunk.truncated, true);
		assert.equal(hunk.patch, whole.patch.slice(0, firstHunkEnd), 'only the first hunk of a.txt');
		assert.equal(parsePatch(hunk.patch)[0]?.hunks.length, 1);
		assert.deepEqual(capPatch(whole.patch, 0), { patch: '', truncated: true, patchBytes: whole.patchBytes });
		assert.deepEqual(capPatch(whole.patch, 10), { patch: '', truncated: true, patchBytes: whole.patchBytes });
	});

	it('counts the cap in UTF-8 bytes', () => {
		const patch = 'diff --git a/x b/x\n@@ -1 +1 @@\n-é\n+ü\ndiff --git a/y b/y\n@@ -1 +1 @@\n-a\n+b\n';
		const firstFile = patch.indexOf('diff --git a/y');
		const bytes = Buffer.byteLength(patch.slice(0, firstFile));
		assert.equal(capPatch(patch, bytes + 5).patch, patch.slice(0, firstFile));
		assert.equal(capPatch(patch, Buffer.byteLength(patch)).truncated, false);
	});
});
