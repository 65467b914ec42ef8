/** `link`: add dependency edges (refused when a link would close a cycle). */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

import { CardId, LinkParams, limits } from '../../../core/protocol';
import { compactCard } from '../compact';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, registerListedTool, updatingTool } from '../toolListing';
import { toolHandler } from '../toolResult';

/** Shared with `unlink`. */
export const LinkToolParams = LinkParams.extend({
	cardId: CardId.describe('The card that waits'),
	dependsOn: z
		.union([CardId, z.array(CardId).min(1).max(limits.dependsOn)])
		.optional()
		.describe('Id or ids of the cards it waits on'),
}).strict();

export function registerLinkTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'link',
		{
			title: 'Add dependencies',
			description: 'Make cardId wait until the dependsOn cards are done (no cycles), or relate it. Returns {card}.',
			// duplicates: taken, not listed (tools/list budget); the guide (guide.ts) names it.
			listing: leanObject(LinkToolParams.omit({ duplicates: true }), {
				cardId: 'Card',
				dependsOn: 'Id(s) it waits on',
				related: 'Related ids',
			}),
			annotations: { ...updatingTool, idempotentHint: true },
		},
		toolHandler('link', LinkToolParams, async args => ({
			card: compactCard((await ctx.request('card/link', args)).card),
		})),
	);
}
