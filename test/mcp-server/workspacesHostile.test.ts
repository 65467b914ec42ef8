/**
 * The git layer holds against the agent it serves (real git, real files): each test first does what a
 * hostile agent can do in its own worktree (commit a `.baton` symlink, delete or redirect its `.git`,
 * edit a relative hooks folder, commit symlinks that lead out, add the user's ignored files, write into
 * an uninitialised submodule), then runs the step the hub takes for the card (land, commit, snapshot,
 * restore, include copy) and checks that nothing outside the worktree changed: the other worktrees keep
 * their uncommitted files, the main checkout and main are as the user left them, no file appeared or
 * disappeared outside the repository, and the refusal says what to do.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import { installCommitGuard } from '../../mcp-server/workspaces/commitGuard';
import { land } from '../../mcp-server/workspaces/land';
import { unseenSubmoduleFiles } from '../../mcp-server/workspaces/landGuards';
import { commitAll } from '../../mcp-server/workspaces/review';
import { applyWip, snapshotWip } from '../../mcp-server/workspaces/wip';
import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { refused } from '../helpers/refused';
import { commitAllFiles, folderPicture, gitOut, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

const repos: TestRepo[] = [];
function repo(files: Record<string, string> = {}): TestRepo {
	const r = makeRepo({
		'.gitignore': '.env\nnode_modules/\n',
		'README.md': '# demo\n',
		'src/a.ts': 'export const a = 1;\n',
		...files,
	});
	repos.push(r);
	return r;
}
after(() => {
	for (const r of repos) {
		r.cleanup();
	}
});

/** What the user has in the main checkout: main's commit, every file (ignored ones too), git status. */
function userState(root: string): string {
	const files = [...folderPicture(root, ['.git', '.baton']).entries()].sort().join('\n');
	return [gitOut(root, 'rev-parse', 'main'), gitOut(root, 'status', '--porcelain', '--ignored'), files].join('\n--\n');
}

/** A folder outside the repository, with one file in it, that nothing may touch. */
function outside(r: TestRepo): { dir: string; picture: () => string } {
	const dir = path.join(r.parent, 'outside');
	mkdirSync(dir, { recursive: true });
	writeFileSync(path.join(dir, 'victim.txt'), 'keep me\n');
	return { dir, picture: () => [...folderPicture(dir, []).entries()].sort().join('\n') };
}

describe('an agent that commits a .baton symlink on its branch', () => {
	it('cannot land it: the approval is refused, the other live worktrees keep their uncommitted work', async () => {
		const r = repo();
		const other = await ensureWorktree({ repo: r.root, cardId: 'OTHER' });
		writeFiles(other.path, { 'src/wip.ts': 'uncommitted work of another card\n' });
		const evil = await ensureWorktree({ repo: r.root, cardId: 'EVIL' });
		const away = outside(r);
		// The attack, as the agent types it in its worktree.
		symlinkSync(away.dir, path.join(evil.path, '.baton'));
		gitOut(evil.path, 'add', '-f', '.baton');
		gitOut(evil.path, 'commit', '-q', '-m', 'innocent');
		const before = userState(r.root);
		await refused(
			land({ repo: r.root, branch: evil.branch, base: 'main', mode: 'squash' }),
			'conflict',
			/commits \.baton, where Baton keeps the card worktrees/,
		);
		assert.equal(userState(r.root), before);
		assert.equal(readFileSync(path.join(other.path, 'src/wip.ts'), 'utf8'), 'uncommitted work of another card\n');
		assert.equal(
			gitOut(r.root, 'worktree', 'list', '--porcelain')
				.split('\n')
				.filter(l => l.startsWith('worktree ')).length,
			3,
		);
		assert.equal(away.picture(), 'victim.txt,644:a2VlcCBtZQo=');
	});

	it('a .baton symlink in the main checkout: no worktree is made through it (a symlink where a folder is expected)', async () => {
		const r = repo();
		const away = outside(r);
		symlinkSync(away.dir, path.join(r.root, '.baton'));
		await refused(
			ensureWorktree({ repo: r.root, cardId: 'NEXT' }),
			'invalid_input',
			/\.baton is a symlink where Baton keeps its own folder of card worktrees/,
		);
		assert.equal(away.picture(), 'victim.txt,644:a2VlcCBtZQo=');
		assert.equal(gitOut(r.root, 'branch', '--list', 'baton/*'), '');
	});
});

describe('an agent that deletes or redirects its worktree’s .git', () => {
	for (const [how, attack] of [
		['deletes it', (wt: string) => rmSync(path.join(wt, '.git'))],
		[
			'points it at the main checkout’s repository',
			(wt: string, root: string) => writeFileSync(path.join(wt, '.git'), `gitdir: ${path.join(root, '.git')}\n`),
		],
		[
			'replaces it with a folder',
			(wt: string) => {
				rmSync(path.join(wt, '.git'));
				mkdirSync(path.join(wt, '.git'));
			},
		],
	] as const) {
		it(`${how}: complete commits nothing anywhere, a snapshot is refused, the user's checkout is untouched`, async () => {
			const r = repo();
			// The user's own uncommitted edit and untracked private file in the main checkout.
			writeFiles(r.root, { 'src/a.ts': 'export const a = 2; // the user is editing\n', 'private.txt': 'mine\n' });
			const ws = await ensureWorktree({ repo: r.root, cardId: 'GONE' });
			writeFiles(ws.path, { 'src/agent.ts': 'agent work\n' });
			attack(ws.path, r.root);
			const before = userState(r.root);
			await refused(
				commitAll({ worktree: ws.path, message: 'GONE: t', root: r.root, branch: ws.branch }),
				'invalid_input',
				/is not Baton's worktree of this card: its \.git .*git worktree repair/,
			);
			await refused(
				snapshotWip({ worktree: ws.path, cardId: 'GONE', attempt: 1 }),
				'invalid_input',
				/not Baton's worktree/,
			);
			assert.equal(userState(r.root), before);
			assert.equal(gitOut(r.root, 'for-each-ref', 'refs/baton/'), '');
		});
	}

	it('the next claim of the card refuses the broken worktree; moved away, it gets a fresh one of its branch', async () => {
		const r = repo();
		const ws = await ensureWorktree({ repo: r.root, cardId: 'AGAIN' });
		writeFiles(ws.path, { 'kept.txt': 'committed by the agent\n' });
		commitAllFiles(ws.path, 'agent commit');
		rmSync(path.join(ws.path, '.git'));
		const before = userState(r.root);
		// git lists the folder as prunable (its .git is gone): its record goes, the folder is refused.
		await refused(
			ensureWorktree({ repo: r.root, cardId: 'AGAIN' }),
			'conflict',
			/AGAIN exists and is not Baton's worktree for card AGAIN\. Move it away/,
		);
		assert.equal(userState(r.root), before);
		renameSync(ws.path, path.join(r.parent, 'moved-away'));
		const fresh = await ensureWorktree({ repo: r.root, cardId: 'AGAIN' });
		assert.equal(fresh.path, ws.path);
		assert.equal(readFileSync(path.join(fresh.path, 'kept.txt'), 'utf8'), 'committed by the agent\n');
	});

	it("the next claim of a card whose .git points at the main checkout's repository is refused, nothing run there", async () => {
		const r = repo();
		const ws = await ensureWorktree({ repo: r.root, cardId: 'REDIR' });
		writeFileSync(path.join(ws.path, '.git'), `gitdir: ${path.join(r.root, '.git')}\n`);
		const before = userState(r.root);
		await refused(
			ensureWorktree({ repo: r.root, cardId: 'REDIR' }),
			'invalid_input',
			/REDIR is not Baton's worktree of this card: its \.git file points to .*not a worktree record/,
		);
		assert.equal(userState(r.root), before);
	});

	it("points it at another card's worktree record: refused, the other card's branch gets no commit", async () => {
		const r = repo();
		const a = await ensureWorktree({ repo: r.root, cardId: 'A' });
		const b = await ensureWorktree({ repo: r.root, cardId: 'B' });
		writeFiles(b.path, { 'x.txt': 'b\n' });
		writeFileSync(path.join(b.path, '.git'), readFileSync(path.join(a.path, '.git')));
		await refused(commitAll({ worktree: b.path, message: 'B: t' }), 'invalid_input', /the record of another worktree/);
		assert.equal(gitOut(r.root, 'rev-list', '--count', `main..${a.branch}`), '0');
	});
});

describe('hooks the hub runs are the repository’s own', () => {
	it('a relative core.hooksPath (husky) runs the main checkout’s hook at complete, never the agent’s edited one', async () => {
		const r = repo({ '.husky/pre-commit': '#!/bin/sh\necho base-hook >> "$MARK_DIR/ran"\n' });
		gitOut(r.root, 'update-index', '--chmod=+x', '.husky/pre-commit');
		gitOut(r.root, 'commit', '-q', '-m', 'executable hook');
		gitOut(r.root, 'checkout', '--', '.husky/pre-commit');
		gitOut(r.root, 'config', 'core.hooksPath', '.husky');
		const marks = path.join(r.parent, 'marks');
		mkdirSync(marks);
		process.env.MARK_DIR = marks;
		try {
			const ws = await ensureWorktree({ repo: r.root, cardId: 'HOOK' });
			// The agent's edit: its hook would run anything as the hub.
			writeFileSync(path.join(ws.path, '.husky/pre-commit'), '#!/bin/sh\necho agent-code >> "$MARK_DIR/ran"\n');
			const commit = await commitAll({ worktree: ws.path, message: 'HOOK: t', root: r.root, branch: ws.branch });
			assert.ok(commit !== null);
			assert.equal(readFileSync(path.join(marks, 'ran'), 'utf8'), 'base-hook\n');
		} finally {
			delete process.env.MARK_DIR;
		}
	});
});

describe('symlinks the agent commits never carry the hub’s writes out of the worktree', () => {
	it('the include copy skips a path whose folder is a committed symlink', async () => {
		const r = repo({ '.gitignore': '.env\nnode_modules/\nconf/\n' });
		const away = outside(r);
		writeFiles(r.root, { '.baton/worktree-include': 'conf/secret.env\n', 'conf/secret.env': 'TOKEN=1\n' });
		// The agent's branch, continued by the next claim: `conf` is a symlink to a folder outside.
		const first = await ensureWorktree({ repo: r.root, cardId: 'INC' });
		rmSync(path.join(first.path, 'conf'), { recursive: true });
		symlinkSync(away.dir, path.join(first.path, 'conf'));
		gitOut(first.path, 'add', '-f', 'conf');
		gitOut(first.path, 'commit', '-q', '-m', 'link');
		gitOut(r.root, 'worktree', 'remove', '--force', first.path);
		const again = await ensureWorktree({ repo: r.root, cardId: 'INC' });
		assert.deepEqual(again.copied, []);
		assert.equal(away.picture(), 'victim.txt,644:a2VlcCBtZQo=');
	});

	it('restoring a snapshot does not delete through a symlink the branch committed', async () => {
		const r = repo({ 'd/victim.txt': 'tracked\n' });
		const away = outside(r);
		const ws = await ensureWorktree({ repo: r.root, cardId: 'RST' });
		// A snapshot that deletes d/victim.txt, then a branch commit that turns d into a symlink out.
		rmSync(path.join(ws.path, 'd/victim.txt'));
		assert.ok((await snapshotWip({ worktree: ws.path, cardId: 'RST', attempt: 1 })) !== null);
		gitOut(ws.path, 'checkout', '--', 'd/victim.txt');
		rmSync(path.join(ws.path, 'd'), { recursive: true });
		symlinkSync(away.dir, path.join(ws.path, 'd'));
		gitOut(ws.path, 'add', '-A');
		gitOut(ws.path, 'commit', '-q', '-m', 'd is a link');
		gitOut(r.root, 'worktree', 'remove', '--force', ws.path);
		const fresh = await ensureWorktree({ repo: r.root, cardId: 'RST' });
		assert.ok(existsSync(path.join(fresh.path, '.git')));
		await applyWip({ worktree: fresh.path, cardId: 'RST' });
		assert.equal(away.picture(), 'victim.txt,644:a2VlcCBtZQo=');
	});
});

describe('the commit guard’s refresh', () => {
	it('removes a symlink planted at its hooks folder, never the folder it points to', async () => {
		const r = repo();
		const away = outside(r);
		mkdirSync(path.join(away.dir, 'hooks'));
		writeFileSync(path.join(away.dir, 'hooks', 'pre-commit'), 'not yours\n');
		const ws = await ensureWorktree({ repo: r.root, cardId: 'GRD' });
		await installCommitGuard(ws.path, { cardId: 'GRD', command: ['/bin/true'] });
		const gitDir = gitOut(ws.path, 'rev-parse', '--absolute-git-dir');
		rmSync(path.join(gitDir, 'baton'), { recursive: true });
		symlinkSync(away.dir, path.join(gitDir, 'baton'));
		const before = away.picture();
		const guard = await installCommitGuard(ws.path, { cardId: 'GRD', command: ['/bin/true'] });
		assert.equal(away.picture(), before);
		assert.ok(existsSync(path.join(guard.hooksPath, 'pre-commit')));
	});
});

describe('landing leaves the user’s ignored files alone', () => {
	for (const [what, add] of [
		[
			'an ignored .env',
			(wt: string) => {
				writeFiles(wt, { '.env': 'AGENT=1\n' });
				gitOut(wt, 'add', '-f', '.env');
			},
		],
		[
			'node_modules/ (a file in its place)',
			(wt: string) => {
				writeFiles(wt, { node_modules: 'not a folder\n' });
				gitOut(wt, 'add', '-f', 'node_modules');
			},
		],
	] as const) {
		it(`a branch that adds ${what} is refused, nothing landed`, async () => {
			const r = repo();
			writeFiles(r.root, { '.env': 'SECRET=user\n', 'node_modules/dep/index.js': 'dep\n' });
			const ws = await ensureWorktree({ repo: r.root, cardId: 'IGN' });
			add(ws.path);
			gitOut(ws.path, 'commit', '-q', '-m', 'adds it');
			const before = userState(r.root);
			await refused(
				land({ repo: r.root, branch: ws.branch, base: 'main', mode: 'squash' }),
				'conflict',
				/untracked or ignored files or folders where baton\/IGN adds/,
			);
			assert.equal(userState(r.root), before);
			assert.equal(readFileSync(path.join(r.root, '.env'), 'utf8'), 'SECRET=user\n');
			assert.ok(existsSync(path.join(r.root, 'node_modules/dep/index.js')));
		});
	}

	it("refuses to land into a base that is another card's branch checked out in its worktree", async () => {
		const r = repo();
		const other = await ensureWorktree({ repo: r.root, cardId: 'HOST' });
		writeFiles(other.path, { 'host.txt': 'uncommitted\n' });
		const ws = await ensureWorktree({ repo: r.root, cardId: 'GUEST', base: other.branch });
		writeFiles(ws.path, { 'guest.txt': 'g\n' });
		commitAllFiles(ws.path, 'guest');
		const picture = folderPicture(other.path);
		await refused(
			land({ repo: r.root, branch: ws.branch, base: other.branch, mode: 'squash' }),
			'invalid_input',
			/a card's worktree: landing baton\/GUEST there would write into another card's work/,
		);
		assert.deepEqual(folderPicture(other.path), picture);
	});
});

describe('files in an uninitialised submodule folder', () => {
	it('are reported at complete and kept at landing, not dropped', async () => {
		const r = repo();
		const sub = gitOut(r.root, 'rev-parse', 'HEAD');
		gitOut(r.root, 'update-index', '--add', '--cacheinfo', `160000,${sub},vendor/lib`);
		writeFiles(r.root, { '.gitmodules': '[submodule "lib"]\n\tpath = vendor/lib\n\turl = ./nowhere\n' });
		gitOut(r.root, 'add', '.gitmodules');
		gitOut(r.root, 'commit', '-q', '-m', 'submodule');
		const ws = await ensureWorktree({ repo: r.root, cardId: 'SUB' });
		writeFiles(ws.path, { 'vendor/lib/patched.c': 'int x;\n', 'src/b.ts': 'export const b = 1;\n' });
		assert.ok((await commitAll({ worktree: ws.path, message: 'SUB: t' })) !== null);
		assert.deepEqual(await unseenSubmoduleFiles(ws.path), ['vendor/lib/patched.c']);
		const landed = await land({ repo: r.root, branch: ws.branch, base: 'main', mode: 'squash' });
		assert.ok(landed.outcome === 'landed', landed.outcome);
		assert.deepEqual(landed.unseen, ['vendor/lib/patched.c']);
		assert.match(landed.cleanupError ?? '', /submodule folders that git does not look into/);
		assert.equal(readFileSync(path.join(ws.path, 'vendor/lib/patched.c'), 'utf8'), 'int x;\n');
	});
});
