/** `release`: give a held card back to the pool without counting it as a failure. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import { Reason, ReleaseParams } from '../../../core/protocol';
import { compactCard } from '../compact';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, registerListedTool, updatingTool } from '../toolListing';
import { toolHandler } from '../toolResult';

// refundAttempt is the supervisor's: a release gives the attempt back anyway.
const ReleaseToolParams = ReleaseParams.omit({ force: true, refundAttempt: true })
	.extend({ reason: Reason.optional().describe('Why you are handing it back') })
	.strict();

export function registerReleaseTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'release',
		{
			title: 'Release a card',
			description: 'Hand a card you hold back to ready (not a failure). Returns {card}.',
			listing: leanObject(ReleaseToolParams.omit({ epoch: true }), {
				cardId: 'Id',
				reason: 'Why',
			}),
			annotations: updatingTool,
		},
		toolHandler('release', ReleaseToolParams, async args => {
			const epoch = ctx.epochFor(args.cardId, args.epoch);
			const result = await ctx.request('card/release', { ...args, ...(epoch === undefined ? {} : { epoch }) });
			ctx.forgetLease(args.cardId);
			return { card: compactCard(result.card) };
		}),
	);
}
