/** `claim`: take the best ready card (or the one named) and return it with its lease. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import { ClaimParams } from '../../../core/protocol';
import { workspaceAllowanceMs } from '../../cli/hubClient';
import { compactCard } from '../compact';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, registerListedTool, updatingTool } from '../toolListing';
import { toolHandler } from '../toolResult';

/** dispatch is the supervisor's alone: an agent's claim neither lists nor takes it. */
const ClaimToolParams = ClaimParams.omit({ dispatch: true });

/** Head room over waitSeconds so a long-poll that ends empty is not mistaken for a dead hub. */
const claimTimeoutMarginMs = 15_000;
/**
 * MCP clients time requests out after 60 s by default (the SDK's DEFAULT_REQUEST_TIMEOUT_MSEC), so a
 * full 60 s wait would end as a client-side timeout instead of {card: null, reason}.
 */
const maxWaitSeconds = 55;

export function registerClaimTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'claim',
		{
			title: 'Claim a card',
			description:
				'Claim the best ready card, or cardId. Returns {card, lease, handoff?}, or card null and why. ' +
				'Then heartbeat; complete, release or fail it.',
			// project, root: the session sends its own (run.ts); the tool still takes them.
			listing: leanObject(ClaimToolParams.omit({ project: true, root: true }), {
				cardId: 'Claim this card',
				phase: 'Only this phase',
				capabilities: 'Your capabilities',
				ttlSeconds: 'Lease seconds (300)',
				waitSeconds: 'Wait ≤ 60 s',
				review: 'Take review work',
				labels: 'One of these labels',
			}),
			annotations: updatingTool,
		},
		toolHandler('claim', ClaimToolParams, async (args, signal) => {
			const capabilities = args.capabilities ?? (ctx.capabilities.length > 0 ? [...ctx.capabilities] : undefined);
			const waitSeconds = args.waitSeconds === undefined ? undefined : Math.min(args.waitSeconds, maxWaitSeconds);
			ctx.claimLabels = args.labels;
			const result = await ctx.request(
				'card/claim',
				{
					...args,
					project: ctx.claimProject(args.project),
					// A dispatched agent's claim {} is its own card (BATON_CARD_ID), which its session holds
					// whatever project its working directory infers.
					...(args.cardId === undefined && ctx.dispatchedCard !== undefined
						? { cardId: ctx.dispatchedCard, project: '*' }
						: {}),
					...ctx.claimRoot(args.root),
					...(capabilities === undefined ? {} : { capabilities }),
					...(waitSeconds === undefined ? {} : { waitSeconds }),
				},
				{
					timeoutMs:
						(waitSeconds ?? 0) * 1000 +
						claimTimeoutMarginMs +
						(ctx.claimRoot(args.root).root === undefined ? 0 : workspaceAllowanceMs),
				},
			);
			if (result.card !== null && result.lease !== null) {
				if (signal?.aborted === true) {
					// The client gave up (e.g. the user cancelled a waiting claim) and will never see this
					// card; left alone, the session's liveness pings would keep it leased indefinitely.
					await ctx.request('card/release', {
						cardId: result.card.id,
						epoch: result.lease.epoch,
						reason: 'claim cancelled by the MCP client',
					});
					return { card: null, lease: null, reason: 'The claim was cancelled.' };
				}
				ctx.rememberLease(result.card.id, result.lease.epoch);
			}
			return {
				card: result.card === null ? null : compactCard(result.card),
				lease: result.lease,
				...(result.reason === undefined ? {} : { reason: result.reason }),
				...(result.handoff === undefined ? {} : { handoff: result.handoff }),
				...(result.workspace === undefined ? {} : { workspace: result.workspace }),
			};
		}),
	);
}
