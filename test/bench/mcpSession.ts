/**
 * `baton mcp` (or any stdio MCP server) driven by the real MCP SDK client, for the benches that time
 * what an agent feels (mcp.ts, fastPaths.ts). Spawns and talks; measures nothing itself.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { batonJs } from './hubProcess';

export interface Session {
	client: Client;
	/** pid of the spawned MCP server. */
	pid: number | null;
	close(): Promise<void>;
}

/** Spawns `baton mcp` (or any stdio MCP server) and completes the MCP initialize handshake. */
export async function openSession(command: string, args: string[], cwd?: string): Promise<Session> {
	const transport = new StdioClientTransport({ command, args, stderr: 'pipe', ...(cwd ? { cwd } : {}) });
	const client = new Client({ name: 'baton-bench', version: '1.0.0' });
	await client.connect(transport);
	return { client, pid: transport.pid, close: () => client.close() };
}

/**
 * `baton mcp` of this build, or of another one's baton.js (`script`); `nodeArgs` go to node before the
 * script (the fleet bench's --cpu-prof, which NODE_OPTIONS refuses).
 */
export function batonSession(
	dataDir: string,
	agent: string,
	script = batonJs,
	nodeArgs: readonly string[] = [],
): Promise<Session> {
	return openSession(process.execPath, [...nodeArgs, script, 'mcp', '--data-dir', dataDir, '--agent', agent]);
}

export type ToolOutput = Record<string, unknown>;

/** Calls a tool and returns its structuredContent; a tool error is a bench failure, not a number. */
export async function call(session: Session, name: string, args: Record<string, unknown>): Promise<ToolOutput> {
	const result = await session.client.callTool({ name, arguments: args });
	if (result.isError === true) {
		throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
	}
	return (result.structuredContent ?? {}) as ToolOutput;
}
