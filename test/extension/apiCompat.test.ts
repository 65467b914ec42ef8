/**
 * The extension installs in VS Code 1.100 and in forks without the newer APIs, checked
 * without VS Code: the type checker only knows the 1.100 API (@types/vscode pinned to the engine), so
 * anything newer must be reached through a cast of the `vscode` namespace, and each such module must
 * feature-detect what it looks up. The behaviour itself runs in test/extension's suite on code-server
 * 1.100 (no MCP API: activation.test.ts asserts the provider is not registered and activation still
 * succeeds) and 1.117 (mcpProvider.test.ts: VS Code starts the server the provider gives).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

const repoRoot = join(import.meta.dirname, '..', '..');
const packageJson = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
	engines: { vscode: string };
	devDependencies: Record<string, string>;
	activationEvents: string[];
	contributes: Record<string, unknown>;
};

/** Modules allowed to reach beyond the typed 1.100 API, each with the guard it must contain. */
const featureDetected: Record<string, RegExp[]> = {
	'extension/mcpProvider.ts': [
		/typeof register !== 'function'/,
		/typeof Definition !== 'function'/,
		/isAtLeast\(vscode\.version, 1, 101\)/,
	],
};

function extensionSources(): { path: string; text: string }[] {
	return readdirSync(join(repoRoot, 'extension'), { withFileTypes: true, recursive: true })
		.filter(e => e.isFile() && e.name.endsWith('.ts'))
		.map(e => {
			const path = join(e.parentPath, e.name);
			return { path: relative(repoRoot, path), text: readFileSync(path, 'utf8') };
		});
}

describe('VS Code API compatibility', () => {
	it('types only the API of the oldest supported VS Code', () => {
		const engine = /^\^1\.(\d+)\.0$/.exec(packageJson.engines.vscode);
		const types = /^~1\.(\d+)\.0$/.exec(packageJson.devDependencies['@types/vscode'] ?? '');
		assert.ok(engine && types, `engines.vscode ${packageJson.engines.vscode}, @types/vscode pinned with ~`);
		assert.equal(types[1], engine[1], '@types/vscode is the engine minimum, so tsc refuses newer APIs');
		assert.equal(engine[1], '100');
	});

	it('reaches newer or optional APIs only in modules that feature-detect them', () => {
		const untyped = extensionSources().filter(s => /\bvscode as unknown\b|\(vscode as\b/.test(s.text));
		assert.deepEqual(
			untyped.map(s => s.path).sort(),
			Object.keys(featureDetected).sort(),
			'a cast of the vscode namespace outside the known modules bypasses the 1.100 type check',
		);
		for (const source of untyped) {
			for (const guard of featureDetected[source.path] ?? []) {
				assert.match(source.text, guard, `${source.path} guards with ${String(guard)}`);
			}
		}
	});

	it('declares the MCP provider in a way older VS Code ignores instead of refusing', () => {
		// An unknown activation event or contribution point is skipped by older VS Code (with a log
		// line); an unknown *engine* would refuse the install, so no proposed API is enabled.
		assert.ok(packageJson.activationEvents.includes('onMcpServerDefinitionProvider:baton'));
		assert.ok(Array.isArray(packageJson.contributes.mcpServerDefinitionProviders));
		assert.equal('enabledApiProposals' in packageJson, false, 'a proposed API would block marketplace installs');
	});
});
