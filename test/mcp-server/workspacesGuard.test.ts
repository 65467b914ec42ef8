/**
 * The commit guard of a card's worktree, on real repositories against a real hub: a commit
 * in card B's worktree that changes a file held by card A's live claim is refused naming the file, A's
 * glob and A's holder (`git commit` of the index and `git commit -a`'s temporary index alike); a
 * commit of other files goes through; claims of another project do not count; the main checkout and a
 * user's own worktree commit exactly as before; the repository's own hooks (.git/hooks, or a relative
 * core.hooksPath) still run in the worktree and their failure still blocks; with the hub stopped the
 * guard says so and lets the commit through.
 */
import assert from 'node:assert/strict';
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { committedPaths } from '../../mcp-server/cli/commitGuard';
import { installCommitGuard } from '../../mcp-server/workspaces/commitGuard';
import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { client } from '../helpers/hub';
import { batonJs, childEnv, cleanupDataDir, ensureBuilt, runBaton, runCliHere, tempDataDir } from '../helpers/mcp';
import { commitAllFiles, gitOut, makeRepo, type TestRepo, writeFiles } from '../helpers/workspaceRepo';

let dataDir: string;
let repo: TestRepo;
let wtB: string;

/** The CLI in this process (the guard itself runs the bundle, as git runs it; the CLI process face has its smoke tests). */
async function baton(args: string[], agent = 'cli:alice'): Promise<string> {
	const r = await runCliHere([...args, '--json'], { dataDir, env: { BATON_AGENT: agent } });
	assert.equal(r.code, 0, `baton ${args.join(' ')}: ${r.stdout} ${r.stderr}`);
	return r.stdout;
}

/** `git commit` in `dir` as a user would run it (hooks included), with this test's hub. */
function commit(dir: string, ...args: string[]): SpawnSyncReturns<string> {
	return spawnSync('git', ['-C', dir, 'commit', '-q', ...args], { env: childEnv(dataDir), encoding: 'utf8' });
}

function stage(dir: string, files: Record<string, string>): void {
	writeFiles(dir, files);
	gitOut(dir, 'add', '--', ...Object.keys(files));
}

before(async () => {
	ensureBuilt();
	dataDir = tempDataDir();
	repo = makeRepo({
		'README.md': '# demo\n',
		'src/auth/login.ts': 'export const login = 1;\n',
		'src/ui/app.ts': 'export const app = 1;\n',
	});
	await baton(['create', 'Auth work', '--id', 'A', '--project', 'p1', '--scope', 'src/auth/**,lock:db']);
	await baton(['create', 'Docs work', '--id', 'B', '--project', 'p1', '--scope', 'docs/**']);
	await baton(['create', 'Other project', '--id', 'C', '--project', 'p2', '--scope', 'src/ui/**']);
	await baton(['claim', 'A', '--project', 'p1'], 'agent-a');
	await baton(['claim', 'B', '--project', 'p1'], 'agent-b');
	await baton(['claim', 'C', '--project', 'p2'], 'agent-c');
	const ws = await ensureWorktree({ repo: repo.root, cardId: 'B' });
	wtB = ws.path;
	const guard = await installCommitGuard(wtB, { cardId: 'B', command: [process.execPath, batonJs], dataDir });
	assert.equal(guard.chainsTo, path.join(repo.root, '.git', 'hooks'));
});

after(async () => {
	await cleanupDataDir(dataDir);
	repo.cleanup();
});

describe('commit guard', () => {
	it('refuses a commit that changes a file another claim holds, naming the file, the glob and the holder', () => {
		stage(wtB, { 'src/auth/login.ts': 'export const login = 2;\n', 'docs/auth.md': 'how\n' });
		const r = commit(wtB, '-m', 'touches auth');
		assert.equal(r.status, 1, r.stderr);
		assert.match(r.stderr, /commit refused: it changes 1 file held by another claim of project p1/);
		assert.match(r.stderr, /src\/auth\/login\.ts: src\/auth\/\*\* held by A \(agent-a\)/);
		assert.equal(gitOut(wtB, 'rev-list', '--count', 'HEAD'), '1', 'nothing was committed');
		gitOut(wtB, 'restore', '--staged', 'src/auth/login.ts');
	});

	it('lets a commit of files nobody else holds through (another project holding them does not count)', () => {
		stage(wtB, { 'src/ui/app.ts': 'export const app = 2;\n' });
		const r = commit(wtB, '-m', 'docs and ui');
		assert.equal(r.status, 0, r.stderr);
		assert.equal(r.stderr, '');
		assert.deepEqual(gitOut(wtB, 'show', '--name-only', '--format=', 'HEAD').split('\n').sort(), [
			'docs/auth.md',
			'src/ui/app.ts',
		]);
	});

	it("checks `git commit -a`'s temporary index, not only the worktree's", () => {
		writeFiles(wtB, { 'src/auth/login.ts': 'export const login = 3;\n' });
		const r = commit(wtB, '-a', '-m', 'all');
		assert.equal(r.status, 1, r.stderr);
		assert.match(r.stderr, /src\/auth\/login\.ts: src\/auth\/\*\* held by A/);
		gitOut(wtB, 'checkout', '--', 'src/auth/login.ts');
	});

	it('changes nothing for the main checkout and a worktree of the user', () => {
		assert.equal(spawnSync('git', ['-C', repo.root, 'config', '--get', 'core.hooksPath']).status, 1);
		stage(repo.root, { 'src/auth/login.ts': 'export const login = 4;\n' });
		const r = commit(repo.root, '-m', 'the user changes auth');
		assert.equal(r.status, 0, r.stderr);
		assert.equal(r.stderr, '');
		const mine = path.join(repo.parent, 'mine');
		gitOut(repo.root, 'worktree', 'add', '-q', '-b', 'mine', mine);
		assert.equal(spawnSync('git', ['-C', mine, 'config', '--get', 'core.hooksPath']).status, 1);
		stage(mine, { 'src/auth/login.ts': 'export const login = 5;\n' });
		assert.equal(commit(mine, '-m', 'mine').status, 0);
	});

	it("runs the repository's own hooks in the worktree; their failure still blocks", async () => {
		const hooks = path.join(repo.root, '.git', 'hooks');
		const marker = path.join(repo.parent, 'ran');
		writeFiles(hooks, {
			'pre-commit': `#!/bin/sh\necho "pre-commit $PWD" >> ${marker}\n[ ! -e "${marker}.fail" ]\n`,
			'commit-msg': `#!/bin/sh\necho "commit-msg $(head -n1 "$1")" >> ${marker}\n`,
		});
		chmodSync(path.join(hooks, 'pre-commit'), 0o755);
		chmodSync(path.join(hooks, 'commit-msg'), 0o755);
		await installCommitGuard(wtB, { cardId: 'B', command: [process.execPath, batonJs], dataDir });
		stage(wtB, { 'docs/a.md': 'a\n' });
		assert.equal(commit(wtB, '-m', 'with hooks').status, 0);
		assert.equal(readFileSync(marker, 'utf8'), `pre-commit ${wtB}\ncommit-msg with hooks\n`);
		writeFiles(repo.parent, { 'ran.fail': '' });
		stage(wtB, { 'docs/b.md': 'b\n' });
		const r = commit(wtB, '-m', 'blocked by the user hook');
		assert.equal(r.status, 1);
		assert.equal(gitOut(wtB, 'log', '-1', '--format=%s'), 'with hooks');
		// Refused by the guard: the user's hook does not run at all.
		stage(wtB, { 'src/auth/login.ts': 'export const login = 6;\n' });
		writeFiles(repo.parent, { ran: '' });
		assert.equal(commit(wtB, '-m', 'auth').status, 1);
		assert.equal(readFileSync(marker, 'utf8'), '');
		gitOut(wtB, 'reset', '-q');
		gitOut(wtB, 'checkout', '--', 'src/auth/login.ts');
		rmSync(`${marker}.fail`);
	});

	it('chains to a relative core.hooksPath the user set (resolved in the worktree, as git does)', async () => {
		writeFiles(repo.root, { '.githooks/pre-commit': '#!/bin/sh\necho "own hooks path" >&2\n' });
		chmodSync(path.join(repo.root, '.githooks/pre-commit'), 0o755);
		commitAllFiles(repo.root, 'hooks folder');
		gitOut(repo.root, 'config', 'core.hooksPath', '.githooks');
		gitOut(wtB, 'merge', '-q', 'main', '-m', 'take main');
		const guard = await installCommitGuard(wtB, { cardId: 'B', command: [process.execPath, batonJs], dataDir });
		assert.equal(guard.chainsTo, '.githooks');
		stage(wtB, { 'docs/c.md': 'c\n' });
		const r = commit(wtB, '-m', 'relative hooks');
		assert.equal(r.status, 0, r.stderr);
		assert.equal(r.stderr.trim(), 'own hooks path');
		assert.equal(
			spawnSync('git', ['-C', repo.root, 'config', '--get', 'core.hooksPath'], { encoding: 'utf8' }).stdout,
			'.githooks\n',
		);
	});

	it('refreshing the guard keeps one include; removing the worktree prunes it at the next install', async () => {
		const includes = () =>
			spawnSync('git', ['-C', repo.root, 'config', '--get-regexp', '^includeif\\.'], { encoding: 'utf8' })
				.stdout.split('\n')
				.filter(l => l !== '');
		assert.equal(includes().length, 1, includes().join('\n'));
		const wtD = (await ensureWorktree({ repo: repo.root, cardId: 'D' })).path;
		await installCommitGuard(wtD, { cardId: 'D', command: [process.execPath, batonJs], dataDir });
		assert.equal(includes().length, 2);
		gitOut(repo.root, 'worktree', 'remove', wtD);
		await installCommitGuard(wtB, { cardId: 'B', command: [process.execPath, batonJs], dataDir });
		assert.equal(includes().length, 1);
		assert.ok(!existsSync(wtD));
	});

	it("is installed by the claim of a workspaces project's card (the hub's own program line and data dir)", async () => {
		const hub = await client(dataDir);
		try {
			await hub.request('project/settings/update', {
				project: 'pw',
				worktrees: true,
				roots: { [hostname()]: repo.root },
			});
		} finally {
			hub.close();
		}
		await baton(['create', 'UI work', '--id', 'W1', '--project', 'pw', '--scope', 'src/ui/**']);
		await baton(['create', 'Anything', '--id', 'W2', '--project', 'pw']);
		await baton(['claim', 'W1', '--project', 'pw'], 'agent-w1');
		const claimed = JSON.parse(await baton(['claim', 'W2', '--project', 'pw'], 'agent-w2')) as {
			workspace?: { path: string };
		};
		const wt = claimed.workspace?.path;
		assert.ok(wt !== undefined, 'the claim made a worktree');
		stage(wt, { 'src/ui/app.ts': 'export const app = 3;\n' });
		const r = commit(wt, '-m', 'ui');
		assert.equal(r.status, 1, r.stderr);
		assert.match(r.stderr, /src\/ui\/app\.ts: src\/ui\/\*\* held by W1 \(agent-w1\)/);
		gitOut(wt, 'reset', '-q');
	});

	it('lets the commit through, saying so, when the hub does not answer', async () => {
		await runBaton(['hub', 'stop'], { dataDir });
		stage(wtB, { 'src/auth/login.ts': 'export const login = 7;\n' });
		const r = commit(wtB, '-m', 'hub down');
		assert.equal(r.status, 0, r.stderr);
		assert.match(
			r.stderr,
			/the commit guard could not check this commit \(.+\); it was not checked against other claims/,
		);
	});
});

describe('the paths a commit changes', () => {
	it('outside a git worktree: a clear refusal, not a git usage error', async () => {
		await assert.rejects(
			committedPaths(path.dirname(repo.parent)),
			/is not in a git worktree: baton commit-guard runs in a card's worktree/,
		);
	});

	it('concluding a merge counts only what differs from both sides, not what the merged branch brought', async () => {
		const r = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
		try {
			const wt = (await ensureWorktree({ repo: r.root, cardId: 'M1' })).path;
			writeFiles(wt, { 'a.txt': 'a from the card\n' });
			commitAllFiles(wt, 'card changes a');
			writeFiles(r.root, { 'a.txt': 'a from main\n', 'b.txt': 'b from main\n' });
			commitAllFiles(r.root, 'main changes a and b');
			assert.notEqual(spawnSync('git', ['-C', wt, 'merge', '-q', 'main']).status, 0, 'a conflict in a.txt');
			writeFiles(wt, { 'a.txt': 'a resolved\n' });
			gitOut(wt, 'add', 'a.txt');
			assert.deepEqual(await committedPaths(wt, {}), ['a.txt']);
		} finally {
			r.cleanup();
		}
	});
});
