/**
 * createMcpServer: the Baton MCP server with its tools, the guide resource and the guide prompt,
 * independent of the transport (stdio in run.ts, in-memory in tests). Holds no timers.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import packageJson from '../../package.json';
import type { ToolContext } from './context';
import { guideText, guideUri } from './guide';
import { type ListedTool, useCompactToolListing } from './toolListing';
import { registerClaimTool } from './tools/claim';
import { registerCommentTool } from './tools/comment';
import { registerCompleteTool } from './tools/complete';
import { registerCreateTool } from './tools/create';
import { registerFailTool } from './tools/fail';
import { registerHeartbeatTool } from './tools/heartbeat';
import { registerLinkTool } from './tools/link';
import { registerListTool } from './tools/list';
import { registerReleaseTool } from './tools/release';
import { registerReserveTool } from './tools/reserve';
import { registerReviewTool } from './tools/review';
import { registerShowTool } from './tools/show';
import { registerStatsTool } from './tools/stats';
import { registerUnlinkTool } from './tools/unlink';
import { type ToolCallback, withInbox } from './toolResult';

export function createMcpServer(ctx: ToolContext): McpServer {
	const server = new McpServer(
		{ name: 'baton', title: 'Baton backlog', version: packageJson.version },
		{ instructions: guideText },
	);
	const tools = new Map<string, ListedTool>();
	for (const [name, register] of [
		['claim', registerClaimTool],
		['heartbeat', registerHeartbeatTool],
		['complete', registerCompleteTool],
		['release', registerReleaseTool],
		['fail', registerFailTool],
		['reserve', registerReserveTool],
		['create', registerCreateTool],
		['list', registerListTool],
		['show', registerShowTool],
		['link', registerLinkTool],
		['unlink', registerUnlinkTool],
		['stats', registerStatsTool],
		['comment', registerCommentTool],
		['review', registerReviewTool],
	] as const) {
		const tool = register(server, ctx);
		// Every tool, whatever it is, hands the agent its inbox.
		tool.registered.update({ callback: withInbox(ctx.inbox, tool.registered.handler as ToolCallback) });
		tools.set(name, tool);
	}
	useCompactToolListing(server, tools);
	server.registerResource(
		'guide',
		guideUri,
		{ title: 'How to work with Baton', description: 'The claim -> heartbeat -> complete loop', mimeType: 'text/plain' },
		uri => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: guideText }] }),
	);
	server.registerPrompt(
		'baton-guide',
		{ title: 'Work from the Baton backlog', description: 'The claim -> heartbeat -> complete loop' },
		() => ({ messages: [{ role: 'user', content: { type: 'text', text: guideText } }] }),
	);
	return server;
}
