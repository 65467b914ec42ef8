/** `unlink`: remove dependency edges. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import { compactCard } from '../compact';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, registerListedTool, updatingTool } from '../toolListing';
import { toolHandler } from '../toolResult';
import { LinkToolParams } from './link';

export function registerUnlinkTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'unlink',
		{
			title: 'Remove dependencies',
			description: 'Stop cardId waiting on the dependsOn cards. Returns {card}.',
			// related/duplicates: taken, not listed (tools/list budget).
			listing: leanObject(LinkToolParams.omit({ related: true, duplicates: true }), {
				cardId: 'Card',
				dependsOn: 'Id(s) it waits on',
			}),
			annotations: { ...updatingTool, destructiveHint: true, idempotentHint: true },
		},
		toolHandler('unlink', LinkToolParams, async args => ({
			card: compactCard((await ctx.request('card/unlink', args)).card),
		})),
	);
}
