/**
 * README's lists of MCP tools and CLI commands against the program's own registries:
 * the tools a real MCP client lists (in-memory transport, no hub) and the CLI's command table. A tool
 * or a command added without README, or named in README but gone, fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';

import { BatonError } from '../../core/errors';
import { commands } from '../../mcp-server/cli/run';
import { ToolContext } from '../../mcp-server/mcp/context';
import { createMcpServer } from '../../mcp-server/mcp/server';
import { repoRoot } from '../helpers/mcp';

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');

/** The paragraph that starts with `start`, up to the next blank line. */
function paragraph(start: string): string {
	const from = readme.indexOf(start);
	assert.ok(from >= 0, `README has a paragraph starting "${start}"`);
	const end = readme.indexOf('\n\n', from);
	return readme.slice(from, end < 0 ? undefined : end);
}

/** The `names` in backticks of `text`, `baton ` dropped and `a b|c` read as `a b`, `a c`. */
function backticked(text: string, before?: string): string[] {
	const scope = before === undefined ? text : text.slice(0, text.indexOf(before));
	return [...scope.matchAll(/`([^`]+)`/g)].flatMap(m => {
		const [head, ...rest] = (m[1] ?? '').replace(/^baton /, '').split(' ');
		const tails = rest.join(' ');
		return tails === '' ? [head ?? ''] : tails.split('|').map(t => `${head} ${t}`);
	});
}

describe('README lists what the program has', () => {
	it('names every MCP tool, and only those', async () => {
		const server = createMcpServer(new ToolContext(() => Promise.reject(new BatonError('unavailable', 'no hub'))));
		const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
		await server.connect(serverSide);
		const client = new Client({ name: 'readme', version: '1' });
		await client.connect(clientSide);
		try {
			const tools = (await client.listTools()).tools.map(t => t.name).sort();
			const listed = [...new Set(backticked(paragraph('Tools: '), 'The loop is'))].sort();
			assert.deepEqual(listed, tools);
		} finally {
			await client.close();
		}
	});

	it('names every CLI command, and only those', () => {
		const listed = [...new Set(backticked(paragraph('Every operation is a subcommand'), 'Exit codes'))]
			.filter(n => n !== '--json')
			.sort();
		assert.deepEqual(listed, commands.map(c => c.name).sort());
	});
});
