/**
 * core/formats/mcpConfig.ts, pure: the `baton` entry merged into MCP config texts with every other entry
 * and comment kept, idempotence, indentation and line endings, and the refusals (not JSON, not an
 * object) that name the file and the entry to add by hand.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BatonError } from '../../core/errors';
import { type McpLaunch, currentEntry, detectIndent, mergeMcpConfig } from '../../core/formats/mcpConfig';

const npx: McpLaunch = { command: 'npx', args: ['-y', 'baton-mcp', 'mcp'], env: {} };
const global: McpLaunch = { command: 'baton', args: ['mcp'], env: { BATON_DATA_DIR: '/data' } };

describe('mergeMcpConfig', () => {
	it('creates a new file in each client format, 2-space indented, ending with a newline', () => {
		const claude = mergeMcpConfig('claude-code', undefined, npx, '.mcp.json');
		assert.equal(claude, `${JSON.stringify({ mcpServers: { baton: { command: 'npx', args: npx.args } } }, null, 2)}\n`);
		const vscode = JSON.parse(mergeMcpConfig('vscode', undefined, global, '.vscode/mcp.json')) as unknown;
		assert.deepEqual(vscode, {
			servers: { baton: { type: 'stdio', command: 'baton', args: ['mcp'], env: { BATON_DATA_DIR: '/data' } } },
		});
	});

	it('adds the entry after the other servers without touching their text', () => {
		const other = '{"command": "x", "args": [1, 2], "env": {"K": "v"}}';
		const before = `{\n    "keep": true,\n    "mcpServers": {\n        "other": ${other}\n    }\n}\n`;
		const after = mergeMcpConfig('cursor', before, npx, '.cursor/mcp.json');
		assert.ok(
			after.startsWith(`{\n    "keep": true,\n    "mcpServers": {\n        "other": ${other},\n        "baton": {\n`),
		);
		assert.ok(after.endsWith('        }\n    }\n}\n'));
		const parsed = JSON.parse(after) as { mcpServers: Record<string, unknown> };
		assert.deepEqual(parsed.mcpServers.other, JSON.parse(other));
		assert.deepEqual(parsed.mcpServers.baton, { command: 'npx', args: npx.args });
	});

	it('returns the same text when the entry is already there (a second run changes nothing)', () => {
		const once = mergeMcpConfig('vscode', '{\n\t"servers": {}\n}', global, 'f');
		assert.equal(mergeMcpConfig('vscode', once, global, 'f'), once);
		// Key order of the existing entry does not count as a change.
		const reordered =
			'{"servers": {"baton": {"env": {"BATON_DATA_DIR": "/data"}, "args": ["mcp"], "command": "baton", "type": "stdio"}}}';
		assert.equal(mergeMcpConfig('vscode', reordered, global, 'f'), reordered);
	});

	it('replaces a changed entry in place and keeps tabs and CRLF line endings', () => {
		const first = mergeMcpConfig('claude-code', '{\r\n\t"a": [1]\r\n}', npx, 'f');
		assert.ok(!/[^\r]\n/.test(first), 'every newline is CRLF');
		assert.match(first, /\r\n\t"mcpServers": \{\r\n\t\t"baton": \{\r\n\t\t\t"command": "npx"/);
		const second = mergeMcpConfig('claude-code', first, global, 'f');
		assert.ok(second.startsWith('{\r\n\t"a": [1],\r\n\t"mcpServers": {\r\n\t\t"baton": {\r\n\t\t\t"command": "baton"'));
		assert.deepEqual((JSON.parse(second) as { mcpServers: { baton: unknown } }).mcpServers.baton, {
			command: 'baton',
			args: ['mcp'],
			env: { BATON_DATA_DIR: '/data' },
		});
	});

	it('reads a file with a byte order mark and keeps the mark; tells the entry already there', () => {
		const after = mergeMcpConfig('claude-code', '\uFEFF{\n  "mcpServers": {}\n}\n', npx, 'f');
		assert.ok(after.startsWith('\uFEFF{\n  "mcpServers": {\n    "baton": {\n'));
		assert.deepEqual(currentEntry('claude-code', after), { command: 'npx', args: npx.args });
		assert.equal(currentEntry('vscode', after), undefined);
		assert.equal(currentEntry('cursor', undefined), undefined);
		assert.equal(currentEntry('cursor', '{ nope'), undefined);
	});

	it('keeps comments and trailing commas (JSONC, as VS Code writes its config files)', () => {
		const before = '{\n  // my servers\n  "servers": {\n    /* local */ "x": {"command": "x"},\n  },\n}\n';
		const after = mergeMcpConfig('vscode', before, npx, '.vscode/mcp.json');
		assert.ok(
			after.startsWith('{\n  // my servers\n  "servers": {\n    /* local */ "x": {"command": "x"},\n    "baton": {\n'),
		);
		assert.deepEqual(currentEntry('vscode', after), { type: 'stdio', command: 'npx', args: npx.args });
		assert.equal(mergeMcpConfig('vscode', after, npx, '.vscode/mcp.json'), after);
	});

	it('adds the servers object when the file has none, or has null', () => {
		for (const before of ['{}', '{"mcpServers": null}', '{\n  "other": 1\n}']) {
			const after = mergeMcpConfig('cursor', before, npx, 'f');
			assert.deepEqual(currentEntry('cursor', after), { command: 'npx', args: npx.args }, before);
			assert.ok(after.endsWith('}\n'));
		}
	});

	it('refuses what it must not rewrite, naming the file and the entry to add by hand', () => {
		const cases: [string, RegExp][] = [
			['{ nope', /\.mcp\.json is not valid JSON \(\w+ on line 1\)\. Nothing was written/],
			['{\n  "mcpServers": {}\n  "b": 1\n}', /is not valid JSON \(CommaExpected on line 3\)/],
			['[1]', /does not hold a JSON object/],
			['{"mcpServers": [1]}', /"mcpServers" that is not a JSON object/],
		];
		for (const [text, message] of cases) {
			assert.throws(
				() => mergeMcpConfig('claude-code', text, npx, '.mcp.json'),
				(e: unknown) => {
					assert.ok(BatonError.is(e, 'invalid_input'));
					assert.match(e.message, message);
					assert.match(e.message, /"baton":\{"command":"npx","args":\["-y","baton-mcp","mcp"\]\}/);
					return true;
				},
			);
		}
	});
});

describe('detectIndent', () => {
	it('finds the indentation unit from the first indented line', () => {
		assert.equal(detectIndent('{\n\t"a": 1\n}'), '\t');
		assert.equal(detectIndent('{\n    "a": 1\n}'), '    ');
		assert.equal(detectIndent('{"a": 1}'), '  ');
	});
});
