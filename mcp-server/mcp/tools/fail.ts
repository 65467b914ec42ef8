/** `fail`: report that work on a held card failed, for a retry or to park it. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import { FailParams } from '../../../core/protocol';
import { compactCard } from '../compact';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, registerListedTool, updatingTool } from '../toolListing';
import { toolHandler } from '../toolResult';

export function registerFailTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'fail',
		{
			title: 'Report a failure',
			description:
				'Report failed work on a card you hold: retried later, or blocked (retry false, attempts used up). Returns {card}.',
			listing: leanObject(FailParams.omit({ epoch: true }), {
				cardId: 'Id',
				reason: 'What went wrong',
				retry: 'Retry later (true)',
				backoffSeconds: 'Wait before retry',
			}),
			annotations: updatingTool,
		},
		toolHandler('fail', FailParams, async args => {
			const epoch = ctx.epochFor(args.cardId, args.epoch);
			const result = await ctx.request('card/fail', { ...args, ...(epoch === undefined ? {} : { epoch }) });
			ctx.forgetLease(args.cardId);
			return { card: compactCard(result.card) };
		}),
	);
}
