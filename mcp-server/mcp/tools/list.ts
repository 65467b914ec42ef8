/**
 * `list`: page through cards by status / phase, or only those claimable now, or those whose id, title
 * or body contain `text` (agents search before they create): the cards of the session's
 * project and those with none (as claim sees them), or every project's with project: '*'. Each card is
 * its row (card/listRows: no body, acceptance or other long text); `show` gives one card whole.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import { ClaimParams, ListParams, ListStatus, Phase } from '../../../core/protocol';
import { anyProject } from '../../cli/project';
import { compactRow } from '../compact';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, readOnlyTool, registerListedTool } from '../toolListing';
import { toolHandler } from '../toolResult';

const ListToolParams = ListParams.pick({ readyOnly: true, text: true, limit: true, cursor: true, label: true })
	.extend({
		// The words list prints: a status, or the state of a card not claimable now (waiting, deferred, paused).
		status: ListStatus.optional().describe('Only cards with this status or state'),
		phase: Phase.optional().describe('Only cards in this phase'),
		project: ClaimParams.shape.project,
	})
	.strict();

export function registerListTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'list',
		{
			title: 'List cards',
			description: 'Cards by status, phase, label, readyOnly or text. Returns {cards, nextCursor?}.',
			// project: the session's by default (context.ts); taken, not listed, to keep tools/list small.
			listing: leanObject(ListToolParams.omit({ project: true }), {
				status: 'Only this status',
				phase: 'Only this phase',
				readyOnly: 'Only claimable now',
				label: 'Only this label',
				text: 'Search',
				limit: 'Page size (50)',
				cursor: 'nextCursor',
			}),
			annotations: readOnlyTool,
		},
		toolHandler('list', ListToolParams, async args => {
			const { project: given, ...rest } = args;
			const project = ctx.claimProject(given);
			// As claim sees them: an agent without a project lists only cards with none.
			const params = project === anyProject ? rest : { ...rest, project };
			// Rows, not whole cards: what an agent picks by; `show` reads one card whole.
			const result = await ctx.request('card/listRows', params);
			const now = Date.now();
			return {
				cards: result.cards.map(row => compactRow(row, now)),
				...(result.nextCursor === undefined ? {} : { nextCursor: result.nextCursor }),
				...(result.waitsOn === undefined ? {} : { waitsOn: result.waitsOn }),
			};
		}),
	);
}
