/**
 * Workspaces, WIP snapshots on real git: a snapshot holds every tracked and untracked (not
 * ignored) edit byte for byte without touching the worktree's index, HEAD or files; an agent killed
 * with SIGKILL in the middle of its edits loses nothing, and the next worktree of the card gets them.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import { applyWip, listWip, snapshotWip } from '../../mcp-server/workspaces/wip';
import { ensureWorktree, removeWorktree } from '../../mcp-server/workspaces/worktree';
import { refused } from '../helpers/refused';
import { commitAllFiles, folderPicture, gitOut, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

const repos: TestRepo[] = [];
function repo(): TestRepo {
	const r = makeRepo({
		'.gitignore': 'node_modules/\n*.log\n',
		'README.md': '# demo\n',
		'src/keep.ts': 'export const keep = 1;\n',
		'src/edit.ts': 'export const edit = 1;\n',
		'src/gone.ts': 'export const gone = 1;\n',
		'bin/run.sh': '#!/bin/sh\necho run\n',
	});
	repos.push(r);
	return r;
}
after(() => {
	for (const r of repos) {
		r.cleanup();
	}
});

/** What the snapshot must not disturb: HEAD, the branch, the index file's bytes, git status. */
function untouched(worktree: string): string {
	const index = gitOut(worktree, 'rev-parse', '--path-format=absolute', '--git-path', 'index');
	return [
		gitOut(worktree, 'rev-parse', 'HEAD'),
		gitOut(worktree, 'symbolic-ref', 'HEAD'),
		readFileSync(index).toString('base64'),
		gitOut(worktree, '--no-optional-locks', 'status', '--porcelain=v2', '--untracked-files=all'),
	].join('\n');
}

/** A spread of edits: changed, deleted, new in new folders, odd names, binary, executable, symlink, ignored. */
function makeEdits(dir: string): void {
	writeFiles(dir, {
		'src/edit.ts': 'export const edit = 2; // changed\n',
		'src/new/deep/file.ts': 'export const fresh = true;\n',
		'docs/with space é.md': 'unicode name\n',
		'-leading-dash.txt': 'dash\n',
		'assets/blob.bin': Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 37) % 256)),
		'node_modules/dep/index.js': 'ignored\n',
		'debug.log': 'ignored too\n',
	});
	rmSync(path.join(dir, 'src/gone.ts'));
	chmodSync(path.join(dir, 'bin/run.sh'), 0o755);
	symlinkSync('src/keep.ts', path.join(dir, 'link-to-keep'));
	// Staged, then changed again: the snapshot holds the file on disk, not the staged version.
	writeFileSync(path.join(dir, 'README.md'), '# staged\n');
	gitOut(dir, 'add', 'README.md');
	writeFileSync(path.join(dir, 'README.md'), '# on disk\n');
}

const ignoredAndGit = ['.git', '.baton', 'node_modules', 'debug.log'];

describe('snapshotWip', () => {
	it('commits every tracked and untracked edit to refs/baton/wip/<ID>/<attempt> without touching index, HEAD or files', async () => {
		const { root } = repo();
		const ws = await ensureWorktree({ repo: root, cardId: 'W1' });
		assert.equal(await snapshotWip({ worktree: ws.path, cardId: 'W1', attempt: 1 }), null, 'clean: no snapshot');
		makeEdits(ws.path);
		const before = untouched(ws.path);
		const onDisk = folderPicture(ws.path, ignoredAndGit);
		const snap = await snapshotWip({ worktree: ws.path, cardId: 'W1', attempt: 1 });
		assert.ok(snap !== null);
		assert.equal(snap.ref, 'refs/baton/wip/W1/1');
		assert.equal(snap.parent, ws.head);
		assert.equal(gitOut(root, 'rev-parse', `${snap.ref}^`), ws.head);
		assert.deepEqual(
			[...snap.files].sort(),
			[
				'-leading-dash.txt',
				'README.md',
				'assets/blob.bin',
				'bin/run.sh',
				'docs/with space é.md',
				'link-to-keep',
				'src/edit.ts',
				'src/gone.ts',
				'src/new/deep/file.ts',
			].sort(),
		);
		assert.equal(untouched(ws.path), before);
		assert.deepEqual(folderPicture(ws.path, ignoredAndGit), onDisk);
		assert.equal(gitOut(root, 'rev-parse', 'refs/heads/baton/W1'), ws.head, 'the branch did not move');
		const tree = gitOut(root, 'ls-tree', '-r', '--name-only', snap.ref).split('\n');
		assert.equal(
			tree.includes('debug.log') || tree.some(f => f.startsWith('node_modules/')),
			false,
			'ignored files stay out',
		);
		assert.equal(gitOut(root, 'ls-tree', snap.ref, 'bin/run.sh').split(' ')[0], '100755');
		assert.equal(gitOut(root, 'ls-tree', snap.ref, 'link-to-keep').split(' ')[0], '120000');
		// Noticed twice (release, then the lease expiry): the same snapshot, no second commit.
		const again = await snapshotWip({ worktree: ws.path, cardId: 'W1', attempt: 1 });
		assert.equal(again?.commit, snap.commit);
	});

	it('works while the agent holds the worktree index lock', async () => {
		const { root } = repo();
		const ws = await ensureWorktree({ repo: root, cardId: 'W2' });
		writeFiles(ws.path, { 'src/edit.ts': 'locked\n' });
		const lock = `${gitOut(ws.path, 'rev-parse', '--path-format=absolute', '--git-path', 'index')}.lock`;
		writeFileSync(lock, '');
		try {
			const snap = await snapshotWip({ worktree: ws.path, cardId: 'W2', attempt: 3 });
			assert.deepEqual(snap?.files, ['src/edit.ts']);
		} finally {
			rmSync(lock);
		}
	});

	it('refuses an attempt that is not a whole number, and a folder that is no worktree', async () => {
		const { root } = repo();
		const ws = await ensureWorktree({ repo: root, cardId: 'W3' });
		await refused(snapshotWip({ worktree: ws.path, cardId: 'W3', attempt: -1 }), 'invalid_input', /whole number/);
		await refused(
			snapshotWip({ worktree: '/tmp', cardId: 'W3', attempt: 1 }),
			'invalid_input',
			/not Baton's worktree of this card: its \.git file is gone/,
		);
	});
});

/** The "agent": edits the worktree like makeEdits, prints ready, then keeps writing until it is killed. */
const agentScript = `
const fs = require('node:fs');
const path = require('node:path');
const dir = process.argv[1];
for (let i = 0; i < 150; i++) {
	fs.mkdirSync(path.join(dir, 'gen', String(i % 7)), { recursive: true });
	fs.writeFileSync(path.join(dir, 'gen', String(i % 7), 'f' + i + '.txt'), 'line ' + i + '\\n'.repeat(i % 5 + 1));
}
fs.writeFileSync(path.join(dir, 'src/edit.ts'), Buffer.from([0, 1, 2, 255, 254, 10]));
fs.rmSync(path.join(dir, 'src/gone.ts'));
fs.writeFileSync(path.join(dir, 'bin/run.sh'), '#!/bin/sh\\necho changed\\n', { mode: 0o755 });
fs.chmodSync(path.join(dir, 'bin/run.sh'), 0o755);
process.stdout.write('ready\\n');
setInterval(() => {}, 1000);
`;

describe('a killed agent loses nothing', () => {
	it('SIGKILL mid-work: the snapshot holds 100 % of the edits and the next worktree gets them byte for byte', async () => {
		const { root } = repo();
		const ws = await ensureWorktree({ repo: root, cardId: 'K1' });
		writeFiles(ws.path, { 'src/keep.ts': 'committed by the agent\n' });
		const agentCommit = commitAllFiles(ws.path, 'agent commit');
		const agent = spawn(process.execPath, ['-e', agentScript, ws.path], { stdio: ['ignore', 'pipe', 'inherit'] });
		await new Promise<void>((resolve, reject) => {
			agent.stdout.on('data', (chunk: Buffer) => {
				if (chunk.toString().includes('ready')) {
					resolve();
				}
			});
			agent.on('exit', () => reject(new Error('the agent exited before it was ready')));
		});
		agent.kill('SIGKILL');
		await new Promise(resolve => agent.once('exit', resolve));
		const leftBehind = folderPicture(ws.path, ignoredAndGit);
		assert.ok(leftBehind.size > 150);

		const snap = await snapshotWip({ worktree: ws.path, cardId: 'K1', attempt: 1 });
		assert.ok(snap !== null);
		assert.equal(snap.parent, agentCommit);
		await removeWorktree({ repo: root, cardId: 'K1', force: true });

		const next = await ensureWorktree({ repo: root, cardId: 'K1', restoreWip: true });
		assert.equal(next.continued, true);
		assert.equal(next.head, agentCommit, "the agent's commit is on the branch");
		const applied = next.restored;
		assert.equal(applied?.ref, 'refs/baton/wip/K1/1');
		assert.equal(applied.files.length, snap.files.length);
		const restored = folderPicture(next.path, ignoredAndGit);
		const missing = [...leftBehind].filter(([file, content]) => restored.get(file) !== content).map(([f]) => f);
		const extra = [...restored.keys()].filter(f => !leftBehind.has(f));
		assert.deepEqual({ missing, extra }, { missing: [], extra: [] });
		// As the agent left them: modified and untracked files, nothing staged.
		assert.equal(gitOut(next.path, 'diff', '--cached', '--name-only'), '');
		assert.match(gitOut(next.path, 'status', '--porcelain'), /^ D src\/gone\.ts$/m);
		assert.match(gitOut(next.path, 'status', '--porcelain'), /^\?\? gen\/$/m);
	});
});

describe('applyWip', () => {
	it('restores the newest attempt, returns null without a snapshot, and refuses a worktree with changes', async () => {
		const { root } = repo();
		const ws = await ensureWorktree({ repo: root, cardId: 'P1' });
		assert.equal(await applyWip({ worktree: ws.path, cardId: 'P1' }), null);
		writeFiles(ws.path, { 'a.txt': 'first\n' });
		await snapshotWip({ worktree: ws.path, cardId: 'P1', attempt: 1 });
		writeFiles(ws.path, { 'a.txt': 'second\n' });
		await snapshotWip({ worktree: ws.path, cardId: 'P1', attempt: 2 });
		assert.deepEqual(
			(await listWip(root, 'P1')).map(w => w.attempt),
			[1, 2],
		);
		await refused(applyWip({ worktree: ws.path, cardId: 'P1' }), 'conflict', /has changes of its own/);
		await removeWorktree({ repo: root, cardId: 'P1', force: true });
		const next = await ensureWorktree({ repo: root, cardId: 'P1' });
		const applied = await applyWip({ worktree: next.path, cardId: 'P1' });
		assert.equal(applied?.attempt, 2);
		assert.equal(readFileSync(path.join(next.path, 'a.txt'), 'utf8'), 'second\n');
	});
});
