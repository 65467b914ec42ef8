/**
 * What a dispatched agent is given to reach Baton: the environment that ties its `baton mcp`
 * to the card the supervisor claimed for it (BATON_CARD_ID, BATON_AGENT, BATON_SESSION, BATON_AGENT_KIND,
 * BATON_DATA_DIR, BATON_PROJECT, and the seat credential BATON_SEAT_TOKEN with BATON_HUB_SOCKET), the MCP server entry that starts this installation's `baton mcp` with
 * that environment, and the `{mcpConfig}` file `{"mcpServers": {"baton": {command, args, env, trust}}}`
 * (Claude Code's --mcp-config format, which Gemini CLI reads as a settings file too; `trust` is Gemini's
 * "no confirmation for this server's tools", ignored by Claude Code). Must not: spawn anything.
 */
import { chmodSync, realpathSync, writeFileSync } from 'node:fs';

import { hubSocketVar, seatTokenVar } from '../../core/client/seatHub';
import type { McpLaunch } from '../../core/formats/mcpConfig';
import { mcpServerName } from '../../core/formats/mcpConfig';

/** Who a dispatched agent is: the seat connection's identity, which its own `baton mcp` takes over. */
export interface AgentIdentity {
	cardId: string;
	/** The agent id A (`<kind>-<run>-s<seat>-<short random>`). */
	agent: string;
	/** The session S the supervisor claimed the card under. */
	session: string;
	kind: string;
	dataDir: string;
	/** The card's project; absent or null: none (the agent's claim {} names the card anyway). */
	project?: string | null;
	/** The seat credential and the hub socket its `baton mcp` and `baton` CLI connect with. */
	seat?: { token: string; socket: string };
}

/** The environment variables of the agent process and of its `baton mcp`. */
export function agentEnv(id: AgentIdentity): Record<string, string> {
	return {
		BATON_CARD_ID: id.cardId,
		BATON_AGENT: id.agent,
		BATON_SESSION: id.session,
		BATON_AGENT_KIND: id.kind,
		BATON_DATA_DIR: id.dataDir,
		...(id.project === undefined || id.project === null ? {} : { BATON_PROJECT: id.project }),
		...(id.seat === undefined ? {} : { [seatTokenVar]: id.seat.token, [hubSocketVar]: id.seat.socket }),
	};
}

/**
 * How this installation starts `baton mcp`: this Node and this copy's dist/baton.js by absolute path,
 * so an agent gets the very Baton that runs the supervisor (not another `baton` on its PATH, and not
 * npx, which may fetch); `script` defaults to the running one (process.argv[1]).
 */
export function batonMcpCommand(
	script = process.argv[1],
	execPath = process.execPath,
): { command: string; args: string[] } {
	if (script === undefined) {
		throw new Error('Cannot tell where baton.js is: run it as "node dist/baton.js".');
	}
	let real = script;
	try {
		real = realpathSync(script);
	} catch {
		// Keep it as given.
	}
	return { command: execPath, args: [real, 'mcp'] };
}

/** The `baton` MCP server entry of one agent: this Baton's `baton mcp` with the agent's environment. */
export function agentMcpServer(baton: { command: string; args: readonly string[] }, id: AgentIdentity): McpLaunch {
	return { command: baton.command, args: [...baton.args], env: agentEnv(id) };
}

/** The `{mcpConfig}` file's text. */
export function mcpConfigText(server: McpLaunch): string {
	const entry = { command: server.command, args: server.args, env: server.env, trust: true };
	return `${JSON.stringify({ mcpServers: { [mcpServerName]: entry } }, null, 2)}\n`;
}

/**
 * Writes the file readable by its owner only (it names the data dir and the session). Gemini CLI
 * reads it only when no folder above it is writable by others, so put it under the data dir, not /tmp.
 */
export function writeMcpConfig(path: string, server: McpLaunch): void {
	writeFileSync(path, mcpConfigText(server), { mode: 0o600 });
	chmodSync(path, 0o600);
}
