/** `stats`: counts of the backlog at a glance. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import { StatsParams } from '../../../core/protocol';
import { dropEmpty } from '../compact';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, readOnlyTool, registerListedTool } from '../toolListing';
import { toolHandler } from '../toolResult';

export function registerStatsTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'stats',
		{
			title: 'Backlog stats',
			description: 'Returns {counts, claimable, waiting, agents, ...}: cards by status, agent health.',
			listing: leanObject(StatsParams),
			annotations: readOnlyTool,
		},
		toolHandler('stats', StatsParams, async () => dropEmpty(await ctx.request('card/stats', {}))),
	);
}
