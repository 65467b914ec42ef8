/**
 * `stats`: counts of the backlog at a glance, as claim and list see it: the session's project and
 * cards with none (project: '*' counts every project).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import { StatsParams } from '../../../core/protocol';
import { anyProject } from '../../cli/project';
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
			description: 'Returns {counts, claimable, waiting, agents, ...}.',
			// project: the session's by default (context.ts); taken, not listed, to keep tools/list small.
			listing: leanObject(StatsParams.omit({ project: true })),
			annotations: readOnlyTool,
		},
		toolHandler('stats', StatsParams, async args => {
			const project = ctx.claimProject(args.project);
			return dropEmpty(await ctx.request('card/stats', project === anyProject ? {} : { project }));
		}),
	);
}
