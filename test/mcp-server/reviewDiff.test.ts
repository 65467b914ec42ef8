/**
 * The reviewer's diff of a card's branch (mcp-server/workspaces/reviewDiff.ts) on real git:
 * each file's kind of change and line counts, renames, binary files and non-ASCII names, `paths`, and
 * the byte budgets (per file and in all), which cut only at file or hunk boundaries so the patch still
 * parses, and stop git at the total before it writes the rest.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import { parsePatch } from 'diff';
import { PatchCutter } from '../../mcp-server/workspaces/patchStream';
import { reviewDiff } from '../../mcp-server/workspaces/reviewDiff';
import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { refused } from '../helpers/refused';
import { commitAllFiles, gitOut, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

const repos: TestRepo[] = [];
after(() => {
	for (const r of repos) {
		r.cleanup();
	}
});

const roomy = { totalBytes: 1 << 20, fileBytes: 1 << 20 };
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

		const d = await reviewDiff({ repo: r.root, branch: ws.branch, base: 'main', budget: roomy });
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
			budget: roomy,
		});
		assert.deepEqual(
			one.files.map(f => f.path),
			['a.txt'],
		);
		assert.equal(parsePatch(one.patch).length, 1);
		await refused(
			reviewDiff({ repo: r.root, branch: 'baton/none', base: 'main', budget: { totalBytes: 100, fileBytes: 100 } }),
			'not_found',
			/"baton\/none" does not exist/,
		);
	});

	it('stops at the total budget after the last whole file, and keeps each file within its own budget', async () => {
		const r = makeRepo({ 'a.txt': big(400, 'a'), 'b.txt': big(400, 'b'), 'c.txt': 'c\n' });
		repos.push(r);
		const ws = await ensureWorktree({ repo: r.root, cardId: 'D2' });
		// a.txt: two hunks far apart; b.txt: every line changed (one huge hunk); c.txt small.
		const a = big(400, 'a').split('\n');
		a[5] = 'changed near the top';
		a[350] = 'changed near the bottom';
		writeFiles(ws.path, { 'a.txt': a.join('\n'), 'b.txt': big(400, 'B'), 'c.txt': 'c changed\n' });
		commitAllFiles(ws.path, 'D2: work');
		const whole = await reviewDiff({ repo: r.root, branch: ws.branch, base: 'main', budget: roomy });
		assert.equal(whole.complete, true);
		assert.equal(whole.files.filter(f => f.cut).length, 0);
		const aEnd = whole.patch.indexOf('diff --git a/b.txt');
		const cStart = whole.patch.indexOf('diff --git a/c.txt');
		assert.ok(aEnd > 0 && cStart > aEnd);

		const total = await reviewDiff({
			repo: r.root,
			branch: ws.branch,
			base: 'main',
			budget: { totalBytes: aEnd + 100, fileBytes: 1 << 20 },
		});
		assert.equal(total.truncated, true);
		assert.equal(total.complete, false, 'git was stopped at the budget');
		assert.equal(total.files.length, 3, 'the files list stays whole');
		assert.deepEqual(
			total.files.map(f => [f.path, f.cut === true]),
			[
				['a.txt', false],
				['b.txt', true],
				['c.txt', true],
			],
		);
		assert.equal(total.patch, whole.patch.slice(0, aEnd), 'cut after a.txt, the last file that fits');
		assert.deepEqual(
			parsePatch(total.patch).map(p => p.newFileName),
			['b/a.txt'],
		);

		// A file budget that holds a.txt's first hunk only: a.txt keeps it, b.txt (one hunk, too large)
		// is left out, and c.txt after them still shows whole.
		const firstHunkEnd = whole.patch.indexOf('\n@@ ', whole.patch.indexOf('\n@@ ') + 1) + 1;
		const perFile = await reviewDiff({
			repo: r.root,
			branch: ws.branch,
			base: 'main',
			budget: { totalBytes: 1 << 20, fileBytes: firstHunkEnd + 10 },
		});
		assert.equal(perFile.truncated, true);
		assert.equal(perFile.complete, true);
		assert.equal(perFile.patch, whole.patch.slice(0, firstHunkEnd) + whole.patch.slice(cStart));
		assert.deepEqual(
			perFile.files.map(f => [f.path, f.cut === true]),
			[
				['a.txt', true],
				['b.txt', true],
				['c.txt', false],
			],
		);
		assert.deepEqual(
			parsePatch(perFile.patch).map(p => [p.newFileName, p.hunks.length]),
			[
				['b/a.txt', 1],
				['b/c.txt', 1],
			],
		);
	});

	it('keeps to its budgets whatever the chunks: UTF-8 split across them, a line longer than a file budget', () => {
		const patch = 'diff --git a/x b/x\n@@ -1 +1 @@\n-é\n+ü\ndiff --git a/y b/y\n@@ -1 +1 @@\n-a\n+b\n';
		const bytes = Buffer.from(patch);
		const oneByOne = new PatchCutter({ totalBytes: 1000, fileBytes: 1000 }, () => assert.fail('not stopped'));
		for (let i = 0; i < bytes.length; i++) {
			oneByOne.push(bytes.subarray(i, i + 1));
		}
		oneByOne.finish();
		assert.equal(oneByOne.result().patch, patch);
		assert.equal(oneByOne.result().patchBytes, bytes.length);

		const firstFile = Buffer.byteLength(patch.slice(0, patch.indexOf('diff --git a/y')));
		let stopped = 0;
		const capped = new PatchCutter({ totalBytes: firstFile + 5, fileBytes: 1000 }, () => stopped++);
		capped.push(bytes);
		capped.finish();
		assert.equal(capped.result().patch, patch.slice(0, patch.indexOf('diff --git a/y')), 'counted in UTF-8 bytes');
		assert.equal(stopped, 1);
		assert.deepEqual(capped.result().cutSections, [1]);

		// A minified file: one line of 5 MB, fed in 64 KiB chunks, held no further than its budget.
		const long = new PatchCutter({ totalBytes: 4096, fileBytes: 1024 }, () => assert.fail('not stopped'));
		long.push(Buffer.from('diff --git a/min.js b/min.js\n@@ -0,0 +1 @@\n+'));
		const chunk = Buffer.alloc(64 * 1024, 'x');
		for (let i = 0; i < 80; i++) {
			long.push(chunk);
		}
		long.push(Buffer.from('\ndiff --git a/z b/z\n@@ -1 +1 @@\n-a\n+b\n'));
		long.finish();
		assert.equal(long.result().patch, 'diff --git a/z b/z\n@@ -1 +1 @@\n-a\n+b\n');
		assert.deepEqual(long.result().cutSections, [0]);
	});
});
