/** `complete`: mark a held card done with a result. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import { z } from 'zod';

import { BatonError } from '../../../core/errors';
import { CompleteParams, NextClaim } from '../../../core/protocol';
import { workspaceAllowanceMs } from '../../cli/hubClient';
import { compactCard } from '../compact';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, registerListedTool, updatingTool } from '../toolListing';
import { toolHandler } from '../toolResult';

// Agents never force: that is the human override on the board. `next` is a flag here: the next card is
// claimed with the session's capabilities and project, as `claim` would (phase and ttl as given).
const CompleteToolParams = CompleteParams.omit({ force: true, next: true })
	.extend({
		next: z.boolean().optional().describe('Also claim the next card, as claim would'),
		phase: NextClaim.shape.phase.describe('With next: only this phase'),
		ttlSeconds: NextClaim.shape.ttlSeconds,
	})
	.strict();

export function registerCompleteTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'complete',
		{
			title: 'Complete a card',
			description:
				'Mark a card you hold done. Returns {card, unblocked}; next: true also claims your next card: next {card, lease}.',
			listing: leanObject(CompleteToolParams.omit({ epoch: true }), {
				cardId: 'Id',
				result: 'Summary, commit, links',
				next: 'Claim the next too',
				phase: 'For next',
				ttlSeconds: 'For next',
			}),
			annotations: updatingTool,
		},
		toolHandler('complete', CompleteToolParams, async args => {
			const { next, phase, ttlSeconds, ...rest } = args;
			if (next !== true && (phase !== undefined || ttlSeconds !== undefined)) {
				throw new BatonError(
					'invalid_input',
					'phase and ttlSeconds apply to the next card: add next: true, or drop them.',
				);
			}
			const epoch = ctx.epochFor(args.cardId, args.epoch);
			// An agent Baton's supervisor started (BATON_CARD_ID) does one card: its seat takes
			// the next, under the seat limits, so `next` claims nothing here and says so.
			const chain = next === true && ctx.dispatchedCard === undefined;
			const capabilities = ctx.capabilities.length > 0 ? [...ctx.capabilities] : undefined;
			const result = await ctx.request(
				'card/complete',
				{
					...rest,
					...(epoch === undefined ? {} : { epoch }),
					...(chain
						? {
								next: {
									project: ctx.project,
									...ctx.claimRoot(undefined),
									...(phase === undefined ? {} : { phase }),
									...(ttlSeconds === undefined ? {} : { ttlSeconds }),
									...(capabilities === undefined ? {} : { capabilities }),
									...(ctx.claimLabels === undefined ? {} : { labels: [...ctx.claimLabels] }),
								},
							}
						: {}),
				},
				// The next card's worktree may be made first (hubClient.ts workspaceAllowanceMs).
				chain && ctx.root !== undefined ? { timeoutMs: 15_000 + workspaceAllowanceMs } : undefined,
			);
			ctx.forgetLease(args.cardId);
			// Team mode: whether the branch reached origin (a failed push leaves the completion standing).
			const push = result.push === undefined ? {} : { push: result.push };
			if (result.next === undefined) {
				const oneCard =
					next === true && !chain
						? {
								next: {
									card: null,
									lease: null,
									reason: 'Baton started this agent for one card; its supervisor dispatches the next. Exit now.',
								},
							}
						: {};
				return { card: compactCard(result.card), unblocked: result.unblocked, ...push, ...oneCard };
			}
			const claimed = result.next;
			if (claimed.card !== null && claimed.lease !== null) {
				ctx.rememberLease(claimed.card.id, claimed.lease.epoch);
			}
			return {
				card: compactCard(result.card),
				unblocked: result.unblocked,
				...push,
				next: {
					card: claimed.card === null ? null : compactCard(claimed.card),
					lease: claimed.lease,
					...(claimed.reason === undefined ? {} : { reason: claimed.reason }),
					...(claimed.handoff === undefined ? {} : { handoff: claimed.handoff }),
					...(claimed.workspace === undefined ? {} : { workspace: claimed.workspace }),
				},
			};
		}),
	);
}
