/** `complete`: mark a held card done with a result. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import { CompleteParams } from '../../../core/protocol';
import { compactCard } from '../compact';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, registerListedTool } from '../toolListing';
import { toolHandler } from '../toolResult';

// Agents never force: that is the human override on the board.
const CompleteToolParams = CompleteParams.omit({ force: true }).strict();

export function registerCompleteTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'complete',
		{
			description: 'Mark a card you hold done. Returns {card, unblocked}: cards now claimable. Then claim the next.',
			listing: leanObject(CompleteToolParams, {
				cardId: 'Card id',
				epoch: 'Optional; from claim',
				result: 'Summary, commit, links',
			}),
		},
		toolHandler('complete', CompleteToolParams, async args => {
			const epoch = ctx.epochFor(args.cardId, args.epoch);
			const result = await ctx.request('card/complete', { ...args, ...(epoch === undefined ? {} : { epoch }) });
			ctx.forgetLease(args.cardId);
			return { card: compactCard(result.card), unblocked: result.unblocked };
		}),
	);
}
