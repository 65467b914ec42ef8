/**
 * `heartbeat`: report progress on a held card and renew its lease; with waitSeconds and an empty
 * inbox it first waits for a message (the answer to a question), then beats.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

import { HeartbeatParams } from '../../../core/protocol';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, registerListedTool, updatingTool } from '../toolListing';
import { toolHandler } from '../toolResult';

const HeartbeatToolParams = HeartbeatParams.extend({
	ttlSeconds: z.number().int().min(5).max(3600).optional().describe('New lease length in seconds'),
	// MCP only: the session's keep-alive pings renew the lease while it waits.
	waitSeconds: z.number().int().min(0).max(60).optional().describe('Wait up to this long for an inbox message'),
}).strict();

export function registerHeartbeatTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'heartbeat',
		{
			title: 'Report progress',
			description: 'Report progress on a held card; renews its lease. Returns {lease}. lease_lost: stop, claim again.',
			// `usage` ({inputTokens, outputTokens, costUsd}: the attempt's running total) is listed with a word
			// and no type: tools/list is at its byte budget, and a wrong shape is refused naming the fields.
			listing: leanObject(HeartbeatToolParams.omit({ epoch: true, usage: true }), {
				cardId: 'Id',
				progress: '%',
				note: 'Doing now',
				ttlSeconds: 'Lease s',
				waitSeconds: 'Inbox wait',
			}).extend({ usage: z.unknown().optional().describe('Tokens, USD') }),
			annotations: updatingTool,
		},
		toolHandler('heartbeat', HeartbeatToolParams, async ({ waitSeconds, ...args }, signal) => {
			await ctx.inbox.wait((waitSeconds ?? 0) * 1000, signal);
			const epoch = ctx.epochFor(args.cardId, args.epoch);
			const result = await ctx.request('card/heartbeat', { ...args, ...(epoch === undefined ? {} : { epoch }) });
			ctx.rememberLease(result.lease.cardId, result.lease.epoch);
			return { lease: result.lease };
		}),
	);
}
