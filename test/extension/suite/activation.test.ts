/** Activation: lazy, cheap, registers everything package.json promises, and reaches the hub it spawns. */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { describe, it } from './harness';
import { api, env, extensionId, waitFor } from './helpers';

describe('activation', () => {
	it('is not active before a Baton view or command is used', () => {
		const ext = vscode.extensions.getExtension(extensionId);
		assert.ok(ext, 'the extension under development is loaded');
		assert.equal(ext.isActive, false, 'activation is lazy (on view or command), not on startup');
	});

	it('activates and registers every contributed command', async () => {
		const ext = vscode.extensions.getExtension(extensionId);
		assert.ok(ext);
		const t0 = performance.now();
		const baton = await api();
		const wall = performance.now() - t0;
		console.log(
			`module evaluation ${baton.moduleLoadMs.toFixed(1)} ms + activate() ${baton.activationMs.toFixed(1)} ms (CPU ${baton.activationCpuMs.toFixed(1)} ms); ext.activate() ${wall.toFixed(1)} ms as VS Code reports it`,
		);
		// Logged, not asserted: the 50 ms target is the activation bench's (median of fresh extension hosts,
		// docs/benchmarks.md). One cold run here measured 81 ms of CPU on CI and 37-44 ms on a warm machine.
		assert.ok(baton.activationCpuMs > 0, 'the extension measured its own activation');
		const contributed = (
			ext.packageJSON as { contributes: { commands: { command: string }[] } }
		).contributes.commands.map(c => c.command);
		const registered = new Set(await vscode.commands.getCommands(true));
		const missing = contributed.filter(c => !registered.has(c));
		assert.deepEqual(missing, [], 'every command in package.json is registered');
		assert.ok(contributed.length >= 20, `${contributed.length} commands contributed`);
	});

	it('spawns the hub with VS Code’s runtime and connects to it', async () => {
		const baton = await api();
		await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
		const hubJson = join(env('BATON_TEST_DATA_DIR'), 'hub.json');
		assert.ok(existsSync(hubJson), 'the hub wrote hub.json into the configured data dir');
		const info = JSON.parse(readFileSync(hubJson, 'utf8')) as { pid: number };
		assert.notEqual(info.pid, process.pid, 'the hub runs in its own process, not in the extension host');
		assert.match(baton.hub.me, /^vscode:/, 'the human acts as agent vscode:<user>');
	});

	it('feature-detects the MCP server definition provider API', async () => {
		const baton = await api();
		const [major = 0, minor = 0] = vscode.version.split('.').map(Number);
		const hasApi = major > 1 || minor >= 101;
		assert.equal(baton.mcp.registered, hasApi, `VS Code ${vscode.version}`);
		if (!baton.mcp.registered) {
			assert.match(baton.mcp.reason, /1\.101/);
		}
	});
});

describe('card worktrees stay out of the Explorer, the file watcher and search', () => {
	it("adds .baton/worktrees to VS Code's own default excludes (merged, not replacing them)", () => {
		const defaults = (section: string, key: string) =>
			vscode.workspace.getConfiguration(section).inspect<Record<string, boolean>>(key)?.defaultValue ?? {};
		const exclude = defaults('files', 'exclude');
		assert.equal(exclude['**/.baton/worktrees'], true, JSON.stringify(exclude));
		assert.equal(exclude['**/.git'], true, `VS Code's own default stays: ${JSON.stringify(exclude)}`);
		const watcher = defaults('files', 'watcherExclude');
		assert.equal(watcher['**/.baton/worktrees/**'], true, JSON.stringify(watcher));
		// VS Code's own patterns stay (they differ between versions: `**/.git/objects/**`, later `.git/objects/**`).
		assert.ok(
			Object.keys(watcher).some(k => k.includes('.git/objects')),
			JSON.stringify(watcher),
		);
		const search = defaults('search', 'exclude');
		assert.equal(search['**/.baton/worktrees'], true, JSON.stringify(search));
		assert.equal(search['**/node_modules'], true, JSON.stringify(search));
	});

	it('finds no file of a card worktree', async () => {
		const root = env('BATON_TEST_WORKSPACE');
		mkdirSync(join(root, '.baton', 'worktrees', 'X'), { recursive: true });
		writeFileSync(join(root, '.baton', 'worktrees', 'X', 'findme-wt.txt'), 'in a worktree\n');
		writeFileSync(join(root, 'findme-main.txt'), 'in the checkout\n');
		try {
			const found = await vscode.workspace.findFiles('**/findme-*.txt');
			assert.deepEqual(
				found.map(u => vscode.workspace.asRelativePath(u)),
				['findme-main.txt'],
			);
		} finally {
			rmSync(join(root, '.baton'), { recursive: true, force: true });
			rmSync(join(root, 'findme-main.txt'), { force: true });
		}
	});
});
