/** `list`: page through cards by status / phase, or only those claimable now. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import { CardStatus, ListParams, Phase } from '../../../core/protocol';
import { compactCards } from '../compact';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, readOnlyTool, registerListedTool } from '../toolListing';
import { toolHandler } from '../toolResult';

const ListToolParams = ListParams.pick({ readyOnly: true, limit: true, cursor: true })
	.extend({
		status: CardStatus.optional().describe('Only cards with this status'),
		phase: Phase.optional().describe('Only cards in this phase'),
	})
	.strict();

export function registerListTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'list',
		{
			title: 'List cards',
			description:
				'List cards by status or phase, or readyOnly (claimable now). Returns {cards, nextCursor?}; pass it as cursor for more.',
			listing: leanObject(ListToolParams, {
				status: 'Only this status',
				phase: 'Only this phase',
				readyOnly: 'Only claimable now',
				limit: 'Page size (50)',
				cursor: 'From nextCursor',
			}),
			annotations: readOnlyTool,
		},
		toolHandler('list', ListToolParams, async args => {
			const result = await ctx.request('card/list', args);
			return {
				cards: compactCards(result.cards),
				...(result.nextCursor === undefined ? {} : { nextCursor: result.nextCursor }),
			};
		}),
	);
}
