/**
 * The bubblewrap sandbox of `baton run`'s agents (mcp-server/dispatch/sandbox.ts), run for real: a shell
 * in the sandbox of a card's linked worktree tries each path. Writable: the worktree, a commit there
 * (objects, the card branches' refs and reflogs, its admin dir), the private /tmp, the kind's home folders. Read-only: the main
 * checkout, the repository's config and hooks, the rest of home. Hidden: the data dir's token, also when
 * the data dir is the default one under ~/.config/baton; the card's MCP config stays readable. And the
 * choice: no bwrap on PATH, or --no-sandbox, is no sandbox, with the reason.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import { chooseSandbox, gitWrites, sandboxed } from '../../mcp-server/dispatch/sandbox';
import { spawnAgent } from '../../mcp-server/dispatch/spawnAgent';
import { type TestRepo, gitOut, makeRepo } from '../helpers/workspaceRepo';

const bwrap = ['/usr/bin/bwrap', '/usr/local/bin/bwrap'].find(p => existsSync(p));
const repos: TestRepo[] = [];

after(() => {
	for (const r of repos) {
		r.cleanup();
	}
});

describe('the agent sandbox', { skip: bwrap === undefined ? 'bubblewrap is not installed' : false }, () => {
	it('lets the agent write its worktree and commit, and nothing of the checkout, home or data dir', () => {
		const repo = makeRepo({ 'README.md': '# sandbox\n' });
		repos.push(repo);
		const worktree = path.join(repo.root, '.baton', 'worktrees', 'SB-1');
		gitOut(repo.root, 'worktree', 'add', '-q', '-b', 'baton/SB-1', worktree);
		const home = path.join(repo.parent, 'home');
		mkdirSync(path.join(home, '.claude'), { recursive: true });
		// The default data dir, under ~/.config/baton: hidden whole.
		const dataDir = path.join(home, '.config', 'baton', 'backlog');
		mkdirSync(path.join(dataDir, 'run'), { recursive: true });
		mkdirSync(path.join(dataDir, 'runs', 'r'), { recursive: true });
		writeFileSync(path.join(dataDir, 'run', 'token'), 'secret');
		const mcpConfig = path.join(dataDir, 'runs', 'r', 'SB-1.mcp.json');
		writeFileSync(mcpConfig, '{"mcpServers":{}}');
		assert.deepEqual(
			gitWrites(worktree),
			[
				path.join('.git', 'worktrees', 'SB-1'),
				'.git/objects',
				'.git/refs/heads/baton',
				'.git/logs/refs/heads/baton',
			].map(p => path.join(repo.root, p)),
		);
		const mainBranch = gitOut(repo.root, 'branch', '--show-current');
		const mainBefore = gitOut(repo.root, 'rev-parse', mainBranch);
		const attempt = (name: string, command: string): string =>
			`if ${command} 2>/dev/null; then echo "${name} yes"; else echo "${name} no"; fi`;
		const script = [
			attempt('token', `cat ${path.join(dataDir, 'run', 'token')}`),
			attempt('mcpConfig', `cat ${mcpConfig} >/dev/null`),
			attempt('worktree', 'echo x > work.txt'),
			attempt('commit', 'git add work.txt && git commit -qm sandboxed'),
			attempt('checkout', `echo x > ${path.join(repo.root, 'pwned.txt')}`),
			attempt('moveMain', `git update-ref refs/heads/${mainBranch} HEAD`),
			attempt('gitConfig', `echo x >> ${path.join(repo.root, '.git', 'config')}`),
			attempt('gitHooks', `echo x > ${path.join(repo.root, '.git', 'hooks', 'pre-commit')}`),
			attempt('tmp', 'echo x > /tmp/scratch'),
			attempt('claudeHome', `echo x > ${path.join(home, '.claude', 'state')}`),
			attempt('home', `echo x > ${path.join(home, 'pwned.txt')}`),
			attempt('newHub', `mkdir -p ${path.join(dataDir, 'run', 'x')}`),
		].join('\n');
		const launch = sandboxed(
			bwrap ?? '',
			{ command: '/bin/sh', args: ['-c', script], cwd: worktree, env: { ...process.env } as Record<string, string> },
			{
				workspace: worktree,
				repoRoot: repo.root,
				dataDir,
				socket: path.join(dataDir, 'run', 'hub.sock'),
				readable: [mcpConfig],
				programs: [],
				kind: 'claude',
				home,
			},
		);
		const r = spawnSync(launch.command, launch.args, { cwd: launch.cwd, env: launch.env, encoding: 'utf8' });
		assert.equal(r.status, 0, r.stderr);
		const said = Object.fromEntries(
			r.stdout
				.trim()
				.split('\n')
				.map(l => l.split(' ') as [string, string]),
		);
		assert.deepEqual(said, {
			token: 'no',
			mcpConfig: 'yes',
			worktree: 'yes',
			commit: 'yes',
			checkout: 'no',
			moveMain: 'no',
			gitConfig: 'no',
			gitHooks: 'no',
			tmp: 'yes',
			claudeHome: 'yes',
			// This test's home is under /tmp: the write lands in the sandbox's private /tmp, not here (below).
			// The real home is read-only: dispatchSeats.test.ts.
			home: 'yes',
			newHub: 'no',
		});
		assert.equal(gitOut(repo.root, 'log', '-1', '--format=%s', 'baton/SB-1'), 'sandboxed');
		assert.equal(gitOut(repo.root, 'rev-parse', mainBranch), mainBefore);
		assert.equal(existsSync(path.join(repo.root, 'pwned.txt')), false);
		assert.equal(existsSync(path.join(home, 'pwned.txt')), false);
		assert.equal(existsSync('/tmp/scratch') && readFileSync('/tmp/scratch', 'utf8') === 'x\n', false);
		assert.equal(readFileSync(path.join(home, '.claude', 'state'), 'utf8'), 'x\n');
	});
});

describe('stopping a sandboxed agent', { skip: bwrap === undefined ? 'bubblewrap is not installed' : false }, () => {
	it('a stop right after the start ends it with the TERM, not the KILL after the grace', async () => {
		// Before the agent's exec only bubblewrap is in the group; the TERM must not be lost on it (it was,
		// and the agent then ran for the whole grace: a "stop now" that did not stop).
		const agent = await spawnAgent({
			command: bwrap!,
			args: ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--', 'sh', '-c', 'sleep 300'],
			cwd: '/',
			env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
			logFd: openSync('/dev/null', 'w'),
		});
		const exit = await agent.stop(600_000);
		assert.deepEqual(exit, { code: null, signal: 'SIGTERM' });
		// The KILL that follows takes the rest of the group (the sandbox's init, an agent that had just
		// started); its members are gone once the system has reaped them.
		const groupAlive = (): boolean => {
			try {
				process.kill(-agent.pid, 0);
				return true;
			} catch {
				return false;
			}
		};
		for (let i = 0; i < 200 && groupAlive(); i++) {
			await new Promise(resolve => setTimeout(resolve, 50));
		}
		assert.equal(groupAlive(), false, 'nothing of its group is left');
	});
});

describe('choosing the sandbox', () => {
	it('is none, with the reason, without bwrap on PATH, with --no-sandbox, or off Linux', () => {
		assert.deepEqual(chooseSandbox({ off: false, pathVar: '/nonexistent' }), {
			kind: 'none',
			why: 'bubblewrap (bwrap) is not on PATH; install it (Debian/Ubuntu: apt install bubblewrap)',
		});
		assert.deepEqual(chooseSandbox({ off: true, pathVar: process.env.PATH }), {
			kind: 'none',
			why: '--no-sandbox was given',
		});
		assert.equal(chooseSandbox({ off: false, pathVar: process.env.PATH, platform: 'darwin' }).kind, 'none');
		if (bwrap !== undefined) {
			assert.deepEqual(chooseSandbox({ off: false, pathVar: path.dirname(bwrap) }), { kind: 'bwrap', program: bwrap });
		}
	});
});
