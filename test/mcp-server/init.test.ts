/**
 * `baton init` in temp repositories: the built dist/baton.js run as a process for a fresh repository
 * (the entry it writes starts this copy), the CLI in process (runCliHere) for the rest. Fresh repo
 * (git root found from a subfolder, default client), detection, other servers kept byte for byte, a
 * second run unchanged, --dry-run writes nothing, a broken file refused with nothing written anywhere,
 * the AGENTS.md / CLAUDE.md choice, the launch and env flags, usage errors. No hub is started.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { unifiedDiff } from '../../mcp-server/cli/textDiff';
import { type CliResult, batonJs, ensureBuilt, runBaton, runCliHere } from '../helpers/mcp';
import { gitRepo, plainFolder } from '../helpers/gitRepos';

let parent: string;
let dataDir: string;

/** `baton init ...args` in `cwd`: in process (runCliHere; calls take turns), or as the bundle's process. */
function init(cwd: string, args: string[] = [], env?: Record<string, string>, bundle = false): Promise<CliResult> {
	const options = { dataDir, cwd, ...(env === undefined ? {} : { env }) };
	return bundle ? runBaton(['init', ...args], options) : runCliHere(['init', ...args], options);
}

interface InitJson {
	dir: string;
	dryRun: boolean;
	launch: { command: string; args: string[]; env: Record<string, string> };
	files: { path: string; action: string; purpose: string; preview?: string }[];
	changed: number;
	notes: string[];
}

async function initJson(
	cwd: string,
	args: string[] = [],
	env?: Record<string, string>,
	bundle = false,
): Promise<InitJson> {
	const r = await init(cwd, [...args, '--json'], env, bundle);
	assert.equal(r.code, 0, `baton init ${args.join(' ')} exited ${r.code}: ${r.stdout} ${r.stderr}`);
	return JSON.parse(r.stdout) as InitJson;
}

/** Every file under `dir` but .git/, with its text, so a test can tell that nothing changed. */
function snapshot(dir: string): Record<string, string> {
	const out: Record<string, string> = {};
	const walk = (d: string): void => {
		for (const e of readdirSync(d, { withFileTypes: true })) {
			if (e.name === '.git') {
				continue;
			}
			const p = join(d, e.name);
			if (e.isDirectory()) {
				walk(p);
			} else {
				out[relative(dir, p)] = readFileSync(p, 'utf8');
			}
		}
	};
	walk(dir);
	return out;
}

function actions(result: InitJson): Record<string, string> {
	return Object.fromEntries(result.files.map(f => [f.path, f.action]));
}

const write = (dir: string, file: string, text: string): void => {
	mkdirSync(join(dir, file, '..'), { recursive: true });
	writeFileSync(join(dir, file), text);
};

before(() => {
	ensureBuilt();
	parent = mkdtempSync(join(tmpdir(), 'baton-init-'));
	dataDir = join(parent, 'unused-data-dir');
});

after(() => {
	rmSync(parent, { recursive: true, force: true });
});

// Each test works in its own repository: they run side by side.
describe('baton init', { concurrency: true }, () => {
	it('sets up a fresh repository from a subfolder, then finds nothing to change', async () => {
		const repo = gitRepo(parent, 'fresh');
		// The bundle as users run it: the entry written must start this copy from its own argv.
		const first = await initJson(join(repo, 'src'), [], undefined, true);
		assert.equal(first.dir, repo);
		assert.deepEqual(actions(first), { '.mcp.json': 'create', 'AGENTS.md': 'create' });
		assert.match(first.notes.join('\n'), /No MCP client found .*configured Claude Code/);
		// Run from this clone (no baton on PATH that is this copy): the entry starts this copy.
		assert.deepEqual(JSON.parse(readFileSync(join(repo, '.mcp.json'), 'utf8')), {
			mcpServers: { baton: { command: process.execPath, args: [batonJs, 'mcp'] } },
		});
		const agents = readFileSync(join(repo, 'AGENTS.md'), 'utf8');
		assert.match(agents, /^<!-- baton:begin -->\n[\s\S]*`claim`[\s\S]*<!-- baton:end -->\n$/);
		const files = snapshot(repo);

		const again = await init(repo);
		assert.equal(again.code, 0, again.stderr);
		assert.match(again.stdout, /unchanged +\.mcp\.json/);
		assert.match(again.stdout, /unchanged +AGENTS\.md/);
		assert.match(again.stdout, /Nothing to change\.\n$/);
		assert.deepEqual(snapshot(repo), files);
	});

	it('detects the clients, merges into their files keeping other servers byte for byte, and picks CLAUDE.md', async () => {
		const repo = gitRepo(parent, 'existing');
		const other = '"other": {"command": "x", "args": ["--flag", 2], "env": {"K": "v"}}';
		write(
			repo,
			'.vscode/mcp.json',
			`{\n\t// tools\n\t"inputs": [],\n\t"servers": {\n\t\t${other}\n\t}\n}\n`.replace('\t// tools\n', ''),
		);
		mkdirSync(join(repo, '.cursor'));
		write(repo, 'CLAUDE.md', '# Project\n\nBuild with make.\n');
		write(repo, 'AGENTS.md', '# For other agents\n');
		const result = await initJson(repo);
		assert.deepEqual(actions(result), {
			'.mcp.json': 'create',
			'.cursor/mcp.json': 'create',
			'.vscode/mcp.json': 'update',
			'CLAUDE.md': 'update',
		});
		assert.match(
			result.files.map(f => f.purpose).join('\n'),
			/found CLAUDE\.md[\s\S]*found \.cursor\/[\s\S]*found \.vscode\/mcp\.json/,
		);
		const vscode = readFileSync(join(repo, '.vscode/mcp.json'), 'utf8');
		assert.ok(
			vscode.startsWith(`{\n\t"inputs": [],\n\t"servers": {\n\t\t${other},\n\t\t"baton": {\n\t\t\t"type": "stdio",`),
			vscode,
		);
		const claude = readFileSync(join(repo, 'CLAUDE.md'), 'utf8');
		assert.ok(claude.startsWith('# Project\n\nBuild with make.\n\n<!-- baton:begin -->\n'));
		assert.equal(readFileSync(join(repo, 'AGENTS.md'), 'utf8'), '# For other agents\n');

		// A CLAUDE.md that points to AGENTS.md leaves the section to AGENTS.md.
		const pointing = gitRepo(parent, 'pointing');
		write(pointing, 'CLAUDE.md', 'Read @AGENTS.md first.\n');
		write(pointing, 'AGENTS.md', '# Agents\n');
		const chosen = await initJson(pointing, ['--client', 'claude-code']);
		assert.deepEqual(actions(chosen), { '.mcp.json': 'create', 'AGENTS.md': 'update' });
		assert.equal(readFileSync(join(pointing, 'CLAUDE.md'), 'utf8'), 'Read @AGENTS.md first.\n');
	});

	it('previews with --dry-run and writes nothing', async () => {
		const repo = gitRepo(parent, 'dry');
		write(repo, '.mcp.json', '{\n  "mcpServers": {\n    "other": {"command": "y"}\n  }\n}\n');
		const files = snapshot(repo);
		const result = await initJson(repo, ['--dry-run']);
		assert.equal(result.dryRun, true);
		assert.deepEqual(actions(result), { '.mcp.json': 'update', 'AGENTS.md': 'create' });
		const [mcp, agents] = result.files;
		assert.match(
			mcp?.preview ?? '',
			/^--- a\/\.mcp\.json\n\+\+\+ b\/\.mcp\.json\n@@ -1,5 \+1,12 @@\n[\s\S]*- {4}"other": \{"command": "y"\}\n\+ {4}"other": \{"command": "y"\},\n\+ {4}"baton": \{/,
		);
		assert.match(agents?.preview ?? '', /^\+\+\+ b\/AGENTS\.md \(new file\)\n\+<!-- baton:begin -->/);
		const human = await init(repo, ['--dry-run']);
		assert.equal(human.code, 0);
		assert.match(human.stdout, /Dry run: 2 files would change; nothing was written\.\n$/);
		assert.deepEqual(snapshot(repo), files);
	});

	it('refuses a broken file before writing anything, with the entry to add by hand', async () => {
		const repo = gitRepo(parent, 'broken');
		write(repo, '.mcp.json', '{"mcpServers": {}}\n');
		write(repo, '.vscode/mcp.json', '{\n  // my servers\n  "servers": {}\n  "inputs": []\n}\n');
		const files = snapshot(repo);
		const r = await init(repo, ['--json']);
		assert.equal(r.code, 1, r.stdout);
		const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string } };
		assert.equal(error.code, 'invalid_input');
		assert.match(
			error.message,
			/^\.vscode\/mcp\.json is not valid JSON \(CommaExpected on line 4\)\. Nothing was written.*"baton":\{"type":"stdio"/,
		);
		assert.match(r.stderr, /baton init: \.vscode\/mcp\.json is not valid JSON/);
		write(repo, 'AGENTS.md', 'a\n<!-- baton:begin -->\n');
		const markers = await init(repo, ['--client', 'claude-code']);
		assert.equal(markers.code, 1);
		assert.match(markers.stderr, /AGENTS\.md has 1 "<!-- baton:begin -->" and 0 "<!-- baton:end -->"/);
		assert.deepEqual(snapshot(repo), { ...files, 'AGENTS.md': 'a\n<!-- baton:begin -->\n' });
	});

	it('takes --dir, --client all, --launch and --data-dir, and --instructions none', async () => {
		const folder = plainFolder(parent, 'plain');
		const result = await initJson(parent, [
			'--dir',
			folder,
			'--client',
			'all',
			'--launch',
			'node',
			'--data-dir',
			'team-data',
			'--instructions',
			'none',
		]);
		assert.equal(result.dir, folder);
		assert.deepEqual(actions(result), {
			'.mcp.json': 'create',
			'.cursor/mcp.json': 'create',
			'.vscode/mcp.json': 'create',
		});
		const entry = {
			command: process.execPath,
			args: [batonJs, 'mcp'],
			env: { BATON_DATA_DIR: join(parent, 'team-data') },
		};
		assert.deepEqual(JSON.parse(readFileSync(join(folder, '.cursor/mcp.json'), 'utf8')), {
			mcpServers: { baton: entry },
		});
		assert.deepEqual(JSON.parse(readFileSync(join(folder, '.vscode/mcp.json'), 'utf8')), {
			servers: { baton: { type: 'stdio', ...entry } },
		});
		// Switching the launch rewrites only the entry, and the file keeps its mode through the temp-file rename.
		chmodSync(join(folder, '.cursor/mcp.json'), 0o600);
		// A `baton` on PATH, so the entry init checks before writing starts.
		const bin = join(parent, 'bin');
		write(bin, 'baton', `#!/bin/sh\nexec ${process.execPath} ${batonJs} "$@"\n`);
		chmodSync(join(bin, 'baton'), 0o755);
		const global = await initJson(folder, ['--client', 'cursor', '--launch', 'baton', '--instructions', 'none'], {
			PATH: `${bin}:${process.env.PATH ?? ''}`,
		});
		assert.deepEqual(actions(global), { '.cursor/mcp.json': 'update' });
		assert.deepEqual(JSON.parse(readFileSync(join(folder, '.cursor/mcp.json'), 'utf8')), {
			mcpServers: { baton: { command: 'baton', args: ['mcp'] } },
		});
		assert.equal(statSync(join(folder, '.cursor/mcp.json')).mode & 0o777, 0o600);
		assert.deepEqual(readdirSync(join(folder, '.cursor')), ['mcp.json']);
		// Without --launch (or --data-dir) a re-run keeps the entry someone chose.
		const kept = await initJson(folder, ['--client', 'cursor', '--instructions', 'none']);
		assert.deepEqual(actions(kept), { '.cursor/mcp.json': 'unchanged' });
		assert.match(kept.files[0]?.purpose ?? '', /its baton entry kept: --launch replaces it/);
	});

	it('exits 2 on a bad flag value', async () => {
		const r = await init(parent, ['--client', 'emacs']);
		assert.equal(r.code, 2, r.stderr);
		assert.match(r.stderr, /--client emacs: use claude-code, cursor, vscode or all\./);
		const missing = await init(parent, ['--dir', join(parent, 'nope')]);
		assert.equal(missing.code, 1);
		assert.match(missing.stderr, /is not a folder/);
	});
});

describe('unifiedDiff', () => {
	it('prints hunks with three lines of context, merging close changes', () => {
		const before = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm'].join('\n');
		const after = before.replace('b', 'B').replace('d', 'D').replace('m', 'm\nn');
		assert.equal(
			unifiedDiff('f.txt', `${before}\n`, `${after}\n`),
			[
				'--- a/f.txt',
				'+++ b/f.txt',
				'@@ -1,7 +1,7 @@',
				' a',
				'-b',
				'+B',
				' c',
				'-d',
				'+D',
				' e',
				' f',
				' g',
				'@@ -11,3 +11,4 @@',
				' k',
				' l',
				' m',
				'+n',
			].join('\n'),
		);
		assert.equal(unifiedDiff('f', 'same\n', 'same\n'), '');
		assert.equal(unifiedDiff('f', '', 'x\n'), '--- a/f\n+++ b/f\n@@ -0,0 +1,1 @@\n+x');
	});
});
