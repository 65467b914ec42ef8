/**
 * Workspaces, git layer: inspecting a repository and making a card's worktree on real git
 * repositories — names, the info/exclude line, continuing a card's branch, the include files and the
 * setup command, twenty claims at once, and one clear refusal per bad input (nothing changed).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';

import { cardBranch, cardSlug, inspectRepo, worktreePath } from '../../mcp-server/workspaces/repo';
import { ensureWorktree, removeWorktree } from '../../mcp-server/workspaces/worktree';
import { refused } from '../helpers/refused';
import { commitAllFiles, gitOut, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

const repos: TestRepo[] = [];
const run = async (file: string, args: string[]) =>
	(await promisify(execFile)(file, args, { cwd: path.join(__dirname, '..', '..'), encoding: 'utf8' })).stdout;
function repo(files?: Record<string, string>): TestRepo {
	const r = makeRepo(files);
	repos.push(r);
	return r;
}
after(() => {
	for (const r of repos) {
		r.cleanup();
	}
});

/** Refs, config and worktree records: what a refusal must leave exactly as it was. */
function metadata(root: string): string {
	return [
		gitOut(root, 'for-each-ref', '--format=%(refname) %(objectname)'),
		gitOut(root, 'config', '--local', '--list'),
		existsSync(path.join(root, '.git/info/exclude')) ? readFileSync(path.join(root, '.git/info/exclude'), 'utf8') : '',
		gitOut(root, 'worktree', 'list', '--porcelain'),
	].join('\n');
}

describe('inspectRepo', () => {
	it('finds the main checkout, its default branch and the common git dir, also from a linked worktree', async () => {
		const { root } = repo();
		const info = await inspectRepo(path.join(root));
		assert.equal(info.root, root);
		assert.equal(info.commonDir, path.join(root, '.git'));
		assert.equal(info.defaultBranch, 'main');
		assert.equal(info.detached, false);
		const ws = await ensureWorktree({ repo: root, cardId: 'A1' });
		const fromInside = await inspectRepo(ws.path);
		assert.equal(fromInside.root, root);
		assert.equal(fromInside.commonDir, path.join(root, '.git'));
	});

	it("prefers origin/HEAD's branch as the default branch", async () => {
		const { root } = repo();
		gitOut(root, 'branch', 'trunk');
		gitOut(root, 'update-ref', 'refs/remotes/origin/trunk', 'HEAD');
		gitOut(root, 'symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/trunk');
		assert.equal((await inspectRepo(root)).defaultBranch, 'trunk');
	});

	it('refuses a folder outside any repository and a bare repository, saying what to do', async () => {
		const { parent, root } = repo();
		const plain = path.join(parent, 'plain');
		mkdirSync(plain);
		await refused(inspectRepo(plain), 'invalid_input', /is not a git repository.*git init/);
		await refused(inspectRepo(path.join(parent, 'missing')), 'invalid_input', /is not a git repository/);
		const bare = path.join(parent, 'bare.git');
		gitOut(parent, 'clone', '-q', '--bare', root, bare);
		await refused(inspectRepo(bare), 'invalid_input', /bare repository.*working tree/);
	});

	it('says git is missing when it is not on PATH', async () => {
		const { root } = repo();
		const saved = process.env.PATH;
		process.env.PATH = '/nonexistent';
		try {
			await refused(inspectRepo(root), 'unavailable', /git was not found on PATH/);
		} finally {
			process.env.PATH = saved;
		}
	});
});

describe('card names in git', () => {
	it('encodes what card ids allow but ref names do not, one to one', () => {
		assert.equal(cardSlug('A4'), 'A4');
		assert.equal(cardSlug('auth:01'), 'auth%3A01');
		assert.equal(cardSlug('a..b.'), 'a.%2Eb%2E');
		assert.equal(cardSlug('x.lock'), 'x%2Elock');
		assert.equal(cardBranch('auth:01'), 'baton/auth%3A01');
		for (const id of ['auth:01', 'a..b.', 'x.lock', 'A-1_b.c']) {
			gitOut('/tmp', 'check-ref-format', `refs/heads/${cardBranch(id)}`);
		}
		assert.throws(() => cardSlug('../etc'), /cannot name a branch/);
	});
});

describe('ensureWorktree', () => {
	it('makes <repo>/.baton/worktrees/<ID> on baton/<ID> from the base, marked as Baton', async () => {
		const { root } = repo({ 'README.md': 'hello\n', 'src/a.ts': 'export const a = 1;\n' });
		const ws = await ensureWorktree({ repo: root, cardId: 'A1' });
		assert.equal(ws.path, path.join(root, '.baton', 'worktrees', 'A1'));
		assert.equal(ws.branch, 'baton/A1');
		assert.equal(ws.base, 'main');
		assert.equal(ws.created, true);
		assert.equal(ws.continued, false);
		assert.equal(ws.head, gitOut(root, 'rev-parse', 'main'));
		assert.equal(readFileSync(path.join(ws.path, 'src/a.ts'), 'utf8'), 'export const a = 1;\n');
		assert.equal(gitOut(ws.path, 'status', '--porcelain'), '');
		assert.equal(gitOut(root, 'config', '--get', 'branch.baton/A1.batonCard'), 'A1');
		// Out of git's view through info/exclude, not through a committed file.
		assert.equal(gitOut(root, 'status', '--porcelain'), '');
		assert.match(readFileSync(path.join(root, '.git/info/exclude'), 'utf8'), /^\/\.baton\/$/m);
		assert.equal(existsSync(path.join(root, '.gitignore')), false);
		const again = await ensureWorktree({ repo: root, cardId: 'A1' });
		assert.equal(again.created, false);
		assert.equal(again.path, ws.path);
		assert.equal(readFileSync(path.join(root, '.git/info/exclude'), 'utf8').match(/^\/\.baton\/$/gm)?.length, 1);
	});

	it('starts from a named base, and continues an existing branch of the card with its commits', async () => {
		const { root } = repo();
		gitOut(root, 'branch', 'release');
		writeFiles(root, { 'main-only.txt': 'x\n' });
		commitAllFiles(root, 'main moves on');
		const ws = await ensureWorktree({ repo: root, cardId: 'B2', base: 'release' });
		assert.equal(ws.base, 'release');
		assert.equal(existsSync(path.join(ws.path, 'main-only.txt')), false);
		writeFiles(ws.path, { 'work.txt': 'done half\n' });
		const head = commitAllFiles(ws.path, 'half');
		await removeWorktree({ repo: root, cardId: 'B2' });
		assert.equal(existsSync(ws.path), false);
		const next = await ensureWorktree({ repo: root, cardId: 'B2' });
		assert.equal(next.created, true);
		assert.equal(next.continued, true);
		assert.equal(next.head, head);
		assert.equal(next.base, 'release', 'the recorded base, not the default branch');
		assert.equal(readFileSync(path.join(next.path, 'work.txt'), 'utf8'), 'done half\n');
	});

	it('finishes a worktree whose checkout never happened (a claim that died half-way)', async () => {
		const { root } = repo({ 'src/a.ts': 'export const a = 1;\n' });
		const ws = await ensureWorktree({ repo: root, cardId: 'H1' });
		rmSync(gitOut(ws.path, 'rev-parse', '--path-format=absolute', '--git-path', 'index'));
		rmSync(path.join(ws.path, 'src'), { recursive: true });
		const again = await ensureWorktree({ repo: root, cardId: 'H1' });
		assert.equal(again.created, true);
		assert.equal(readFileSync(path.join(ws.path, 'src/a.ts'), 'utf8'), 'export const a = 1;\n');
		assert.equal(gitOut(ws.path, 'status', '--porcelain'), '');
	});

	it('copies the files .baton/worktree-include names and runs the setup command, reporting its outcome', async () => {
		const { root } = repo({ '.gitignore': '.env\nsecrets/\nbuild/\n', 'README.md': 'x\n' });
		writeFiles(root, { '.env': 'TOKEN=1\n', 'secrets/key.pem': 'KEY\n', 'build/out.js': 'big\n' });
		writeFiles(root, { '.baton/worktree-include': '.env\nsecrets/\n' });
		const ws = await ensureWorktree({
			repo: root,
			cardId: 'C3',
			setupCommand: 'echo setting up; test -f .env && echo env-present; exit 3',
		});
		assert.deepEqual(ws.copied, ['.env', 'secrets/key.pem']);
		assert.equal(readFileSync(path.join(ws.path, '.env'), 'utf8'), 'TOKEN=1\n');
		assert.equal(existsSync(path.join(ws.path, 'build/out.js')), false);
		assert.equal(ws.setup?.exitCode, 3);
		assert.equal(ws.setup.timedOut, false);
		assert.deepEqual(ws.setup.tail, ['setting up', 'env-present']);
		assert.equal(gitOut(ws.path, 'status', '--porcelain'), '', 'copied files are ignored ones');
	});

	it('stops a setup command at its time limit', async () => {
		const { root } = repo();
		const ws = await ensureWorktree({
			repo: root,
			cardId: 'D4',
			setupCommand: 'echo start; sleep 30',
			setupTimeoutMs: 300,
		});
		assert.equal(ws.setup?.timedOut, true);
		assert.equal(ws.setup.exitCode, null);
		assert.deepEqual(ws.setup.tail, ['start']);
	});

	it('gives 20 cards claimed at once 20 distinct worktrees and branches without a lock error', async () => {
		const files: Record<string, string> = {};
		for (let i = 0; i < 200; i++) {
			files[`src/m${i % 10}/f${i}.ts`] = `export const v${i} = ${i};\n`;
		}
		const { root } = repo(files);
		const ids = Array.from({ length: 20 }, (_, i) => `card-${i}`);
		const results = await Promise.allSettled(ids.map(cardId => ensureWorktree({ repo: root, cardId })));
		const failures = results.filter(r => r.status === 'rejected').map(r => String(r.reason));
		assert.deepEqual(failures, []);
		const list = gitOut(root, 'worktree', 'list', '--porcelain');
		for (const id of ids) {
			assert.match(list, new RegExp(`branch refs/heads/baton/${id}$`, 'm'));
			assert.equal(statSync(path.join(worktreePath(root, id), 'src/m3/f3.ts')).isFile(), true);
			assert.equal(gitOut(worktreePath(root, id), 'status', '--porcelain'), '');
		}
		assert.equal(gitOut(root, 'for-each-ref', 'refs/heads/baton/').split('\n').length, 20);
	});

	it("gives 4 processes claiming 5 cards each 20 worktrees: other processes' git locks are waited out", async () => {
		const { root } = repo({ 'a.txt': 'a\n' });
		const child = path.join(__dirname, '..', 'helpers', 'ensureWorktreeChild.ts');
		const runs = Array.from({ length: 4 }, (_, p) =>
			run(process.execPath, ['--import', 'tsx', child, root, ...Array.from({ length: 5 }, (_, i) => `p${p}-c${i}`)]),
		);
		const outputs = await Promise.all(runs);
		assert.deepEqual(
			outputs.map(o => JSON.parse(o) as unknown),
			[[], [], [], []],
		);
		assert.equal(gitOut(root, 'worktree', 'list').split('\n').length, 21);
		assert.equal(gitOut(root, 'config', '--get-regexp', 'batonCard').split('\n').length, 20);
	});

	it('refuses each bad input with one clear error and changes nothing', async () => {
		const { parent, root } = repo();
		const before = metadata(root);
		await refused(
			ensureWorktree({ repo: root, cardId: 'E1', base: 'nope' }),
			'not_found',
			/Base branch "nope" does not exist/,
		);
		await refused(ensureWorktree({ repo: root, cardId: '../x' }), 'invalid_input', /cannot name a branch/);
		gitOut(root, 'branch', 'baton/E2');
		const withForeign = metadata(root);
		await refused(
			ensureWorktree({ repo: root, cardId: 'E2' }),
			'conflict',
			/baton\/E2 exists but was not made by Baton/,
		);
		assert.equal(metadata(root), withForeign);
		gitOut(root, 'branch', '-D', 'baton/E2');
		mkdirSync(path.join(root, '.baton/worktrees/E3'), { recursive: true });
		writeFileSync(path.join(root, '.baton/worktrees/E3/mine.txt'), 'user file\n');
		await refused(ensureWorktree({ repo: root, cardId: 'E3' }), 'conflict', /exists and is not Baton's worktree/);
		assert.equal(readFileSync(path.join(root, '.baton/worktrees/E3/mine.txt'), 'utf8'), 'user file\n');
		assert.equal(metadata(root), before);
		// A detached HEAD is fine while a default branch exists; without one there is no base.
		const lone = path.join(parent, 'lone');
		mkdirSync(lone);
		gitOut(lone, 'init', '-q', '-b', 'topic');
		writeFiles(lone, { 'a.txt': 'a\n' });
		commitAllFiles(lone, 'one');
		gitOut(lone, 'checkout', '-q', '--detach');
		gitOut(lone, 'branch', '-D', 'topic');
		await refused(ensureWorktree({ repo: lone, cardId: 'E4' }), 'invalid_input', /detached HEAD and no default branch/);
		const empty = path.join(parent, 'empty');
		mkdirSync(empty);
		gitOut(empty, 'init', '-q', '-b', 'main');
		await refused(ensureWorktree({ repo: empty, cardId: 'E5' }), 'invalid_input', /no commits yet/);
	});

	it('refuses a worktree path registered for another branch, and a card branch checked out elsewhere', async () => {
		const { parent, root } = repo();
		gitOut(root, 'branch', 'other');
		gitOut(root, 'worktree', 'add', '-q', path.join(root, '.baton/worktrees/F1'), 'other');
		await refused(ensureWorktree({ repo: root, cardId: 'F1' }), 'conflict', /is a git worktree of refs\/heads\/other/);
		await ensureWorktree({ repo: root, cardId: 'F2' });
		await removeWorktree({ repo: root, cardId: 'F2' });
		gitOut(root, 'worktree', 'add', '-q', path.join(parent, 'elsewhere'), 'baton/F2');
		await refused(ensureWorktree({ repo: root, cardId: 'F2' }), 'conflict', /is checked out at .*elsewhere/);
	});
});
