/**
 * Packaging check (issue item 7): installs a .vsix into a fresh code-server extensions dir with
 * `--install-extension` and runs a smoke suite against the installed copy (not the source tree):
 * it activates, spawns the hub from the packaged dist/baton.js and claims a card.
 * Usage: node --import tsx test/extension/vsixTest.ts [path/to.vsix]   (default: <name>-<version>.vsix,
 * i.e. baton-mcp-<version>.vsix, in the repo root, as `npm run package` writes it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { repoRoot, runInVsCode } from './vscodeRun';

async function main(): Promise<number> {
	const { name, publisher, version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
		name: string;
		publisher: string;
		version: string;
	};
	const vsix = resolve(process.argv[2] ?? join(repoRoot, `${name}-${version}.vsix`));
	if (!existsSync(vsix)) {
		throw new Error(`${vsix} does not exist: run "npm run package" first.`);
	}
	const tmp = mkdtempSync('/tmp/bt-vsix-');
	try {
		const extensionsDir = join(tmp, 'ext');
		const codeServer = join(repoRoot, '.vscode-test/code-server/node_modules/.bin/code-server');
		const install = spawnSync(codeServer, ['--extensions-dir', extensionsDir, '--install-extension', vsix], {
			encoding: 'utf8',
			env: { ...process.env, XDG_CONFIG_HOME: join(tmp, 'xdg'), XDG_DATA_HOME: join(tmp, 'xdg') },
		});
		console.log(install.stdout.trim());
		if (install.status !== 0) {
			throw new Error(`--install-extension failed (${install.status}): ${install.stderr}`);
		}
		const id = `${publisher}.${name}`;
		const installed = readdirSync(extensionsDir).filter(d => d.startsWith(`${id}-`));
		console.log(`installed into ${extensionsDir}: ${installed.join(', ')}`);
		if (installed.length !== 1) {
			throw new Error(`the .vsix did not install as ${id}`);
		}
		// runTests needs an extension under development; an empty one keeps Baton the installed copy.
		const host = join(tmp, 'host');
		mkdirSync(host);
		writeFileSync(
			join(host, 'package.json'),
			JSON.stringify({ name: 'vsix-smoke-host', publisher: 'test', version: '0.0.0', engines: { vscode: '*' } }),
		);
		return await runInVsCode({
			suite: join(repoRoot, 'test/extension/suite/vsixSmoke.ts'),
			extensionDevelopmentPath: host,
			extensionsDir,
			env: { BATON_TEST_EXTENSIONS_DIR: extensionsDir },
		});
	} finally {
		rmSync(tmp, { recursive: true, force: true });
	}
}

main().then(
	code => process.exit(code),
	(e: unknown) => {
		console.error(e instanceof Error ? e.message : e);
		process.exit(1);
	},
);
