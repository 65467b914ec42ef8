/**
 * `review`: a reviewing agent's verdict on a card in review: approve (done, its
 * dependents start) or request changes (back to ready; the note is the next attempt's hand-over).
 * The agent takes review work first with `claim {review: true}` (capability `review`); the hub refuses
 * the card's own author and cards that wait for a human. Decides nothing itself.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import { ReviewParams } from '../../../core/protocol';
import { compactCard } from '../compact';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, registerListedTool, updatingTool } from '../toolListing';
import { toolHandler } from '../toolResult';

export function registerReviewTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'review',
		{
			title: 'Review a card',
			description:
				'Approve a card you claimed with review: true, or request changes (note required). Returns {card, unblocked}.',
			listing: leanObject(ReviewParams.pick({ cardId: true, approve: true, note: true }), {
				cardId: 'Id',
				approve: 'false = request changes',
				note: 'Required for changes',
			}),
			annotations: updatingTool,
		},
		toolHandler('review', ReviewParams, async args => {
			const epoch = ctx.epochFor(args.cardId, args.epoch);
			const result = await ctx.request('card/review', { ...args, ...(epoch === undefined ? {} : { epoch }) });
			ctx.forgetLease(args.cardId);
			return { card: compactCard(result.card), unblocked: result.unblocked };
		}),
	);
}
