/** `show`: one card with its dependencies, dependents, history, earlier attempts and messages. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import { GetParams } from '../../../core/protocol';
import { compactAttempt, compactCard, compactEvent, compactMessage, compactRef } from '../compact';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, readOnlyTool, registerListedTool } from '../toolListing';
import { toolHandler } from '../toolResult';

export function registerShowTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'show',
		{
			title: 'Show a card',
			description:
				'Returns {card, dependencies, dependents, history, attempts, messages}; read attempts before resuming.',
			listing: leanObject(GetParams, { cardId: 'Id' }),
			annotations: readOnlyTool,
		},
		toolHandler('show', GetParams, async args => {
			const result = await ctx.request('card/get', args);
			return {
				card: compactCard(result.card),
				dependencies: result.dependencies.map(d => compactRef(d)),
				dependents: result.dependents.map(d => compactRef(d)),
				history: result.history.map(compactEvent),
				attempts: result.attempts.map(compactAttempt),
				messages: result.messages.map(compactMessage),
				...(result.parent === undefined ? {} : { parent: compactRef(result.parent) }),
				...(result.children === undefined
					? {}
					: { children: { ...result.children, cards: result.children.cards.map(d => compactRef(d)) } }),
			};
		}),
	);
}
