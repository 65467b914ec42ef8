/**
 * `reserve`: widen the scope of a held card mid-work. The hub grants what no other live
 * claim of the project holds and names the holder and card of the rest; this tool only fills in the
 * session's epoch and drops the card from the answer (the agent holds it and knows it).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import { ReserveParams } from '../../../core/protocol';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, registerListedTool, updatingTool } from '../toolListing';
import { toolHandler } from '../toolResult';

export function registerReserveTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'reserve',
		{
			title: 'Reserve paths',
			description:
				'Add paths to the scope of a card you hold before editing them. Returns {granted, refused} (each naming its holder).',
			listing: leanObject(ReserveParams.omit({ epoch: true }), {
				cardId: 'Id',
				paths: 'Globs or lock:name',
			}),
			annotations: updatingTool,
		},
		toolHandler('reserve', ReserveParams, async args => {
			const epoch = ctx.epochFor(args.cardId, args.epoch);
			const result = await ctx.request('card/reserve', { ...args, ...(epoch === undefined ? {} : { epoch }) });
			return { granted: result.granted, refused: result.refused };
		}),
	);
}
