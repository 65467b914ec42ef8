/**
 * The MCP launch command: `baton init` writes the command that starts the Baton that ran
 * it, checks that it starts before writing, and `baton up` prints the same. Detection on real files
 * (an npx cache path, a `baton` on PATH that is this install or another one); the CLI as a process
 * from a copy of the built bundles installed like npm does (an executable bin, a symlink on PATH).
 */
import assert from 'node:assert/strict';
import {
	chmodSync,
	copyFileSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { detectLaunch, launchCommand } from '../../mcp-server/cli/launch';
import { batonJs, childEnv, cleanupDataDir, ensureBuilt, repoRoot, runBaton, tempDataDir } from '../helpers/mcp';
import { gitRepo } from '../helpers/gitRepos';
import { spawnSync } from 'node:child_process';

let parent: string;
let dataDir: string;

before(() => {
	ensureBuilt();
	parent = mkdtempSync('/tmp/bt-launch-');
	dataDir = join(parent, 'unused-data-dir');
});

after(() => {
	rmSync(parent, { recursive: true, force: true });
});

/** A file at `path` (folders made), executable. */
function file(path: string, text = '#!/bin/sh\necho 0.0.0\n'): string {
	mkdirSync(join(path, '..'), { recursive: true });
	writeFileSync(path, text);
	chmodSync(path, 0o755);
	return path;
}

/** The built bundles copied as an install would lay them out: prefix/lib/…/dist/baton.js, prefix/bin/baton → it. */
function installCopy(name: string): { bin: string; script: string } {
	const dist = join(parent, name, 'lib', 'node_modules', 'baton-mcp', 'dist');
	mkdirSync(dist, { recursive: true });
	for (const f of ['baton.js', 'mcp.js', 'program.js']) {
		copyFileSync(join(repoRoot, 'dist', f), join(dist, f));
	}
	copyFileSync(join(repoRoot, 'package.json'), join(dist, '..', 'package.json'));
	chmodSync(join(dist, 'baton.js'), 0o755);
	symlinkSync(join(repoRoot, 'dist', 'pglite'), join(dist, 'pglite'));
	symlinkSync(join(repoRoot, 'dist', 'webview'), join(dist, 'webview'));
	const bin = join(parent, name, 'bin');
	mkdirSync(bin);
	symlinkSync(join(dist, 'baton.js'), join(bin, 'baton'));
	return { bin, script: join(dist, 'baton.js') };
}

describe('detectLaunch', () => {
	it('npx when run from the npx cache, baton when PATH has this install, else node with this copy', () => {
		const npxScript = file(join(parent, 'cache', '_npx', 'a1b2', 'node_modules', 'baton-mcp', 'dist', 'baton.js'));
		assert.equal(detectLaunch({ script: npxScript, env: { PATH: '/usr/bin' }, execPath: '/n' }).kind, 'npx');

		const mine = file(join(parent, 'mine', 'dist', 'baton.js'));
		const onPath = join(parent, 'mine-bin');
		mkdirSync(onPath);
		symlinkSync(mine, join(onPath, 'baton'));
		const found = detectLaunch({ script: mine, env: { PATH: `/nowhere:${onPath}` }, execPath: '/n' });
		assert.deepEqual(found, { kind: 'baton', why: `the baton on PATH (${join(onPath, 'baton')}) is this install` });
		assert.deepEqual(launchCommand('baton', { script: mine, env: {}, execPath: '/n' }), {
			command: 'baton',
			args: ['mcp'],
		});

		const other = file(join(parent, 'other-bin', 'baton'));
		const clone = detectLaunch({ script: mine, env: { PATH: join(other, '..') }, execPath: '/usr/bin/node' });
		assert.equal(clone.kind, 'node');
		assert.match(clone.why, /is another install: this copy, by absolute path/);
		assert.deepEqual(launchCommand('node', { script: join(onPath, 'baton'), env: {}, execPath: '/usr/bin/node' }), {
			command: '/usr/bin/node',
			args: [mine, 'mcp'],
		});
		assert.equal(
			detectLaunch({ script: mine, env: {}, execPath: '/n' }).why,
			'no baton on PATH: this copy, by absolute path',
		);
	});
});

describe('baton init and baton up: one launch command, checked before it is written', { concurrency: true }, () => {
	it('writes `baton mcp` when the baton on PATH is the one that ran, and up prints the same', async () => {
		const install = installCopy('global');
		const repo = gitRepo(parent, 'global-repo');
		const env = { PATH: `${install.bin}:${process.env.PATH ?? ''}` };
		const r = spawnSync(install.script, ['init', '--json', '--data-dir', dataDir], {
			cwd: repo,
			env: { ...process.env, ...env },
			encoding: 'utf8',
		});
		assert.equal(r.status, 0, r.stderr);
		const out = JSON.parse(r.stdout) as { launch: { command: string; args: string[] }; launchWhy: string };
		assert.deepEqual(out.launch.command, 'baton');
		assert.deepEqual(out.launch.args, ['mcp']);
		assert.match(out.launchWhy, /is this install/);
		assert.deepEqual(JSON.parse(readFileSync(join(repo, '.mcp.json'), 'utf8')), {
			mcpServers: { baton: { command: 'baton', args: ['mcp'], env: { BATON_DATA_DIR: dataDir } } },
		});

		const hubDir = tempDataDir();
		try {
			const up = spawnSync(install.script, ['up', '--once', '--json'], {
				cwd: repo,
				env: childEnv(hubDir, env),
				encoding: 'utf8',
				timeout: 60_000,
			});
			assert.equal(up.status, 0, up.stderr);
			const mcp = (JSON.parse(up.stdout) as { mcp: { command: string; args: string[]; claudeCode: string } }).mcp;
			assert.deepEqual([mcp.command, mcp.args], ['baton', ['mcp']]);
			assert.match(mcp.claudeCode, / -- baton mcp$/);
		} finally {
			await cleanupDataDir(hubDir);
		}
	});

	it('writes this copy by absolute path from a clone; the entry it writes starts', async () => {
		const repo = gitRepo(parent, 'clone-repo');
		const r = await runBaton(['init', '--json'], { dataDir, cwd: repo, env: { PATH: '/usr/bin:/bin' } });
		assert.equal(r.code, 0, r.stderr);
		const entry = (
			JSON.parse(readFileSync(join(repo, '.mcp.json'), 'utf8')) as {
				mcpServers: { baton: { command: string; args: string[] } };
			}
		).mcpServers.baton;
		assert.deepEqual(entry, { command: process.execPath, args: [batonJs, 'mcp'] });
		const started = spawnSync(entry.command, [...entry.args, '--version'], { encoding: 'utf8' });
		assert.equal(started.status, 0, started.stderr);
		assert.match(started.stdout, /^\d+\.\d+\.\d+\n$/);
	});

	it('refuses a launch command that does not start, saying why, and writes nothing', async () => {
		const repo = gitRepo(parent, 'refused-repo');
		// No baton on PATH: --launch baton cannot start.
		const noBaton = await runBaton(['init', '--launch', 'baton'], {
			dataDir,
			cwd: repo,
			env: { PATH: '/usr/bin:/bin' },
		});
		assert.equal(noBaton.code, 1, noBaton.stdout);
		assert.match(
			noBaton.stderr,
			/The MCP launch command does not start: "baton mcp --version" failed \(baton was not found on PATH\)\. Nothing was written\. Install Baton globally/,
		);
		// npx with an empty cache, offline: baton-mcp cannot be fetched (as before it is published).
		const cache = join(parent, 'empty-npm-cache');
		const npx = await runBaton(['init', '--launch', 'npx'], {
			dataDir,
			cwd: repo,
			env: { npm_config_offline: 'true', npm_config_cache: cache },
			timeoutMs: 90_000,
		});
		assert.equal(npx.code, 1, npx.stdout);
		assert.match(
			npx.stderr,
			/"npx -y baton-mcp mcp --version" failed \(it exited \d+.*Until baton-mcp is installable from npm, use --launch node/s,
		);
		assert.deepEqual(
			spawnSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: repo, encoding: 'utf8' }).stdout,
			'',
			'nothing was written',
		);
	});
});
