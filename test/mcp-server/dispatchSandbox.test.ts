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
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readFileSync,
	realpathSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import { chooseSandbox, gitWrites, sandboxed } from '../../mcp-server/dispatch/sandbox';
import { seatbelted } from '../../mcp-server/dispatch/seatbelt';
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
		// macOS: sandbox-exec at its fixed place (never from PATH), used once a trial profile runs.
		assert.deepEqual(
			chooseSandbox({
				off: false,
				pathVar: process.env.PATH,
				platform: 'darwin',
				sandboxExec: '/nonexistent/sandbox-exec',
			}),
			{
				kind: 'none',
				why: '/nonexistent/sandbox-exec is not on this Mac',
			},
		);
		const fakes = mkdtempSync(path.join(tmpdir(), 'bt-seatbelt-'));
		const works = path.join(fakes, 'works');
		const refuses = path.join(fakes, 'refuses');
		writeFileSync(works, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
		writeFileSync(refuses, '#!/bin/sh\necho "sandbox_apply: Operation not permitted" >&2\nexit 71\n', { mode: 0o755 });
		assert.deepEqual(chooseSandbox({ off: false, pathVar: undefined, platform: 'darwin', sandboxExec: works }), {
			kind: 'seatbelt',
			program: works,
		});
		assert.deepEqual(chooseSandbox({ off: false, pathVar: undefined, platform: 'darwin', sandboxExec: refuses }), {
			kind: 'none',
			why: 'sandbox-exec cannot start a sandbox here: sandbox_apply: Operation not permitted',
		});
		rmSync(fakes, { recursive: true, force: true });
		if (bwrap !== undefined) {
			assert.deepEqual(chooseSandbox({ off: false, pathVar: path.dirname(bwrap) }), { kind: 'bwrap', program: bwrap });
		}
	});
});

describe('the macOS profile (Seatbelt)', () => {
	it('makes the worktree, its git writes, temp and the kind’s home writable, hides the data dir but its three files, and passes every path as a parameter', () => {
		const repo = makeRepo({ 'README.md': '# seatbelt\n' });
		repos.push(repo);
		const worktree = path.join(repo.root, '.baton', 'worktrees', 'SB-2');
		gitOut(repo.root, 'worktree', 'add', '-q', '-b', 'baton/SB-2', worktree);
		const home = path.join(repo.parent, 'home "quoted" (paren)');
		const dataDir = path.join(home, '.config', 'baton', 'backlog');
		mkdirSync(path.join(dataDir, 'runs', 'r'), { recursive: true });
		const socket = path.join(dataDir, 'hub.sock');
		const mcpConfig = path.join(dataDir, 'runs', 'r', 'SB-2.mcp.json');
		const prompt = path.join(dataDir, 'runs', 'r', 'SB-2.prompt.md');
		const launch = seatbelted(
			'/usr/bin/sandbox-exec',
			{ command: '/usr/local/bin/claude', args: ['-p', 'work'], cwd: worktree, env: { A: '1' } },
			{
				workspace: worktree,
				repoRoot: repo.root,
				dataDir,
				socket,
				readable: [mcpConfig, prompt],
				programs: [],
				kind: 'claude',
				home,
			},
		);
		assert.equal(launch.command, '/usr/bin/sandbox-exec');
		assert.equal(launch.args[0], '-p');
		const profile = launch.args[1]!;
		const defines = new Map<string, string>();
		let i = 2;
		for (; launch.args[i] === '-D'; i += 2) {
			const [key, ...value] = launch.args[i + 1]!.split('=');
			defines.set(key!, value.join('='));
		}
		assert.deepEqual(
			launch.args.slice(i),
			['/usr/local/bin/claude', '-p', 'work'],
			'the agent’s own line after the profile',
		);
		assert.doesNotMatch(profile, /quoted|paren|worktrees/, 'no path is spliced into the profile text');
		const lines = profile.trim().split('\n');
		assert.deepEqual(lines.slice(0, 3), ['(version 1)', '(allow default)', '(deny file-write*)']);
		// Later rules win: the writable set, then the data dirs denied, then their files allowed back.
		const keysIn = (line: string | undefined): string[] =>
			[...(line ?? '').matchAll(/\(param "([A-Z]\d+)"\)/g)].map(m => m[1]!);
		const valuesIn = (line: string | undefined): string[] => keysIn(line).map(k => defines.get(k)!);
		const writable = valuesIn(lines[3]);
		assert.match(lines[3]!, /^\(allow file-write\* /);
		for (const want of [
			realpathSync(worktree),
			realpathSync(path.join(repo.root, '.git', 'objects')),
			realpathSync(path.join(repo.root, '.git', 'worktrees', 'SB-2')),
			realpathSync(path.join(repo.root, '.git', 'refs', 'heads', 'baton')),
			realpathSync('/tmp'),
			realpathSync(path.join(home, '.claude')),
		]) {
			assert.ok(writable.includes(want), `${want} is writable`);
		}
		assert.ok(!writable.includes(realpathSync(repo.root)), 'the main checkout is not');
		assert.ok(!writable.some(w => w.endsWith(path.join('.git', 'refs', 'heads'))), 'no other branch’s ref');
		assert.match(lines[4]!, /^\(deny file-read\* file-write\* /);
		assert.deepEqual(valuesIn(lines[4]), [realpathSync(dataDir), realpathSync(path.join(home, '.config', 'baton'))]);
		assert.match(lines[5]!, /^\(allow file-read-metadata \(literal /, 'the folders can be looked at, not listed');
		assert.match(lines[6]!, /^\(allow file-read\* file-write\* \(literal /);
		assert.deepEqual(valuesIn(lines[6]), [path.resolve(socket)]);
		assert.deepEqual(valuesIn(lines[7]), [
			realpathSync(path.dirname(mcpConfig)) + '/SB-2.mcp.json',
			realpathSync(path.dirname(prompt)) + '/SB-2.prompt.md',
		]);
		assert.equal(lines.length, 8);
	});
});
