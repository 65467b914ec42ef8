/**
 * The npm package as a new user gets it (proof of §5): `npm pack` of the built repository,
 * its file list checked (what runs, nothing else), installed globally into an empty prefix with an
 * empty cache and `--offline` (so nothing may come from the registry, and no build step runs), then
 * the installed `baton` starts a hub with `up --once` and serves an MCP claim to the real SDK client,
 * and `npx baton-mcp mcp` picks the package's one bin. Packs with --ignore-scripts after ensureBuilt()
 * to stay fast; `npm pack` without it runs prepack (the production build) first.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
	existsSync,
	mkdtempSync,
	readFileSync,
	readdirSync,
	realpathSync,
	rmSync,
	statSync,
	writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import {
	type CliResult,
	childEnv,
	ensureBuilt,
	hubPid,
	isAlive,
	neutralCwd,
	repoRoot,
	tempDataDir,
	waitFor,
} from '../helpers/mcp';
import { gitRepo } from '../helpers/gitRepos';

interface PackResult {
	filename: string;
	size: number;
	unpackedSize: number;
	files: { path: string; size: number }[];
}

const packageJson = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
	name: string;
	version: string;
	scripts: Record<string, string>;
};
let work: string;
let prefix: string;
let dataDir: string;
let packed: PackResult;
let installedBaton = '';

/** npm's own variables from an enclosing `npm run` (prefix, cache, …) must not steer the child npm. */
function npmEnv(extra: Record<string, string> = {}): Record<string, string> {
	const env: Record<string, string> = {};
	for (const [k, v] of Object.entries(process.env)) {
		if (v !== undefined && !/^npm_/i.test(k)) {
			env[k] = v;
		}
	}
	return { ...env, ...extra };
}

function npm(args: string[], cwd: string): string {
	const r = spawnSync('npm', args, { cwd, env: npmEnv(), encoding: 'utf8', timeout: 120_000 });
	assert.equal(r.status, 0, `npm ${args.join(' ')} failed:\n${r.stderr}`);
	return r.stdout;
}

function installed(args: string[]): CliResult {
	const r = spawnSync(installedBaton, args, {
		env: childEnv(dataDir),
		cwd: neutralCwd,
		encoding: 'utf8',
		timeout: 60_000,
	});
	return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

async function connect(command: string, args: string[], env: Record<string, string>, cwd: string): Promise<Client> {
	const transport = new StdioClientTransport({ command, args, env, cwd, stderr: 'pipe' });
	const client = new Client({ name: 'baton-package-test', version: '1.0.0' });
	await client.connect(transport);
	return client;
}

before(() => {
	ensureBuilt();
	work = mkdtempSync('/tmp/bt-pkg-');
	prefix = join(work, 'prefix');
	dataDir = tempDataDir();
	const out = npm(['pack', '--ignore-scripts', '--json', '--pack-destination', work], repoRoot);
	packed = (JSON.parse(out) as PackResult[])[0]!;
	console.log(
		`# ${packed.filename}: ${(packed.size / 1e6).toFixed(1)} MB packed, ${(packed.unpackedSize / 1e6).toFixed(1)} MB unpacked, ${packed.files.length} files`,
	);
	npm(
		[
			'install',
			'--global',
			'--prefix',
			prefix,
			'--cache',
			join(work, 'cache'),
			'--offline',
			'--no-audit',
			'--no-fund',
			join(work, packed.filename),
		],
		work,
	);
	installedBaton = join(prefix, 'bin', 'baton');
});

after(async () => {
	const pid = hubPid(dataDir);
	if (existsSync(installedBaton)) {
		installed(['hub', 'stop', '--json']);
	}
	if (pid !== undefined) {
		await waitFor(() => !isAlive(pid), 10_000, `hub ${pid} to exit`).catch(() => {
			process.kill(pid, 'SIGKILL');
		});
	}
	rmSync(dataDir, { recursive: true, force: true });
	rmSync(work, { recursive: true, force: true });
});

describe('the npm package, installed from its tarball', () => {
	it('ships only what runs: the bundles, PGlite assets with migrations and template, the board, docs files', () => {
		const paths = packed.files.map(f => f.path).sort();
		const allowed =
			/^(package\.json|README\.md|LICENSE|CHANGELOG\.md|dist\/(baton|mcp|program)\.js|dist\/pglite\/(pglite\.wasm|initdb\.wasm|pglite\.data|pg_trgm\.tar\.gz|template\.tar\.gz|migrations\/(\d{4}_\w+|functions)\.sql)|dist\/webview\/board\.(js|css))$/;
		assert.deepEqual(
			paths.filter(p => !allowed.test(p)),
			[],
			'no tests, sources, docs sources, CI scripts or maps',
		);
		for (const needed of [
			'dist/baton.js',
			'dist/mcp.js',
			'dist/program.js',
			'dist/pglite/pglite.wasm',
			'dist/pglite/template.tar.gz',
			'dist/pglite/migrations/0001_init.sql',
			'dist/pglite/migrations/functions.sql',
			'dist/webview/board.js',
			'CHANGELOG.md',
			'LICENSE',
		]) {
			assert.ok(paths.includes(needed), `${needed} is in the tarball`);
		}
		assert.equal(packed.filename, `${packageJson.name}-${packageJson.version}.tgz`);
		assert.ok(packed.size < 12e6, `tarball is ${packed.size} bytes (was 13.2 MB with tests and sources)`);
		assert.match(packageJson.scripts.prepack ?? '', /esbuild\.mjs --production/, 'npm pack ships a fresh build');
	});

	it('installs offline with no dependencies and links `baton` to the bundled bin', () => {
		const pkgDir = join(prefix, 'lib', 'node_modules', packageJson.name);
		assert.equal(realpathSync(installedBaton), join(realpathSync(pkgDir), 'dist', 'baton.js'));
		// Nothing beside the package, and nothing inside it: every runtime dependency is in the bundles.
		assert.deepEqual(readdirSync(join(prefix, 'lib', 'node_modules')), [packageJson.name]);
		assert.equal(existsSync(join(pkgDir, 'node_modules')), false, 'no dependency was installed');
	});

	it('`baton up --once` starts a hub from the installed package, prints its MCP command, serves the board', async () => {
		const r = installed(['up', '--once', '--json']);
		assert.equal(r.code, 0, r.stderr);
		const up = JSON.parse(r.stdout) as {
			hub: { pid: number; mode: string };
			mcp: { args: string[] };
			boardUrl: string | null;
		};
		assert.equal(up.hub.mode, 'pglite');
		// prefix/bin is not on this child's PATH: the command is this install's bundle by its real path.
		const pkgBin = join(realpathSync(join(prefix, 'lib', 'node_modules', packageJson.name)), 'dist', 'baton.js');
		assert.deepEqual(up.mcp.args, [pkgBin, 'mcp']);
		assert.match(up.boardUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+\/board\?ticket=/);
		const cmdline = readFileSync(`/proc/${up.hub.pid}/cmdline`, 'utf8').split('\0');
		assert.ok(cmdline.includes(installedBaton), `the hub runs the installed bin: ${cmdline.join(' ')}`);
		// The board's files are found beside the real dist/baton.js, not beside the bin's symlink.
		const signIn = await fetch(up.boardUrl ?? '', { redirect: 'manual' });
		assert.equal(signIn.status, 302);
		const cookie = signIn.headers.getSetCookie()[0]?.split(';')[0] ?? '';
		const script = await fetch(new URL('/board/board.js', up.boardUrl ?? ''), { headers: { cookie } });
		assert.equal(script.status, 200, await script.clone().text());
		const pkgDir = join(prefix, 'lib', 'node_modules', packageJson.name);
		assert.equal((await script.arrayBuffer()).byteLength, statSync(join(pkgDir, 'dist/webview/board.js')).size);
	});

	it('a claim installs the commit guard, the hub running as the installed `bin/baton` (not a file named baton.js)', () => {
		const root = gitRepo(work, 'guarded');
		const git = (...args: string[]) =>
			spawnSync('git', args, {
				cwd: root,
				encoding: 'utf8',
				env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
			});
		writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
		git('add', '-A');
		assert.equal(git('-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'first').status, 0);
		const inRepo = (args: string[]) =>
			spawnSync(installedBaton, args, { env: childEnv(dataDir), cwd: root, encoding: 'utf8', timeout: 60_000 });
		const on = inRepo(['settings', '--worktrees', 'on']);
		assert.equal(on.status, 0, on.stderr);
		assert.equal(inRepo(['create', 'Guarded card', '--id', 'G1']).status, 0);
		const claim = inRepo(['claim', 'G1', '--json']);
		assert.equal(claim.status, 0, claim.stderr);
		const wt = (JSON.parse(claim.stdout) as { workspace?: { path: string } }).workspace?.path ?? '';
		const gitDir = git('-C', wt, 'rev-parse', '--absolute-git-dir').stdout.trim();
		const hook = readFileSync(join(gitDir, 'baton', 'hooks', 'pre-commit'), 'utf8');
		const pkgBin = join(realpathSync(join(prefix, 'lib', 'node_modules', packageJson.name)), 'dist', 'baton.js');
		assert.ok(hook.includes(`'${pkgBin}' 'commit-guard' 'G1'`), hook);
		assert.equal(git('-C', wt, 'config', 'core.hooksPath').stdout.trim(), join(gitDir, 'baton', 'hooks'));
	});

	it('an MCP agent creates and claims a card through the installed `baton mcp`', async () => {
		const client = await connect(installedBaton, ['mcp'], childEnv(dataDir), neutralCwd);
		try {
			const created = await client.callTool({ name: 'create', arguments: { id: 'P1', title: 'Packaged card' } });
			assert.notEqual(created.isError, true, JSON.stringify(created.content));
			const claimed = await client.callTool({ name: 'claim', arguments: {} });
			assert.notEqual(claimed.isError, true, JSON.stringify(claimed.content));
			const result = claimed.structuredContent as { card: { id: string; status: string }; lease: { epoch: number } };
			assert.equal(result.card.id, 'P1');
			assert.equal(result.card.status, 'claimed');
			assert.equal(typeof result.lease.epoch, 'number');
		} finally {
			await client.close();
		}
	});

	it('`baton init` writes the command that starts this install: `baton mcp` on PATH, npx when run through npx', () => {
		const env = Object.fromEntries(
			Object.entries(childEnv(dataDir, { PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}` })).filter(
				([k]) => !/^npm_/i.test(k),
			),
		);
		const initIn = (
			name: string,
			command: string,
			args: string[],
			cwd: string,
		): { command: string; args: string[] } => {
			const repo = gitRepo(work, name);
			const r = spawnSync(command, [...args, 'init', '--dir', repo, '--json'], {
				cwd,
				env,
				encoding: 'utf8',
				timeout: 120_000,
			});
			assert.equal(r.status, 0, r.stderr);
			const entry = (
				JSON.parse(readFileSync(join(repo, '.mcp.json'), 'utf8')) as {
					mcpServers: { baton: { command: string; args: string[] } };
				}
			).mcpServers.baton;
			assert.deepEqual((JSON.parse(r.stdout) as { launch: unknown }).launch, { ...entry, env: {} });
			return entry;
		};
		// The global install on PATH: the entry is `baton mcp`, checked to start before it was written.
		assert.deepEqual(initIn('global-repo', installedBaton, [], neutralCwd), { command: 'baton', args: ['mcp'] });
		// Run through npx (offline, from the prefix's packages): the entry is npx's, checked the same way.
		assert.deepEqual(
			initIn('npx-repo', 'npx', ['--offline', '--cache', join(work, 'cache'), packageJson.name], join(prefix, 'lib')),
			{ command: 'npx', args: ['-y', packageJson.name, 'mcp'] },
		);
	});

	it('`npx baton-mcp mcp` runs the package’s only bin, `baton`', async () => {
		// npx resolves baton-mcp in the local node_modules (the prefix's lib/) and runs the bin it infers;
		// a global install links bins into prefix/bin, so that is on PATH as it would be for a user.
		const env = Object.fromEntries(
			Object.entries(childEnv(dataDir, { PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}` })).filter(
				([k]) => !/^npm_/i.test(k),
			),
		);
		const client = await connect(
			'npx',
			['--offline', '--cache', join(work, 'cache'), packageJson.name, 'mcp'],
			env,
			join(prefix, 'lib'),
		);
		try {
			assert.equal(client.getServerVersion()?.name, 'baton');
			const tools = await client.listTools();
			assert.ok(tools.tools.some(t => t.name === 'claim'));
		} finally {
			await client.close();
		}
	});
});
