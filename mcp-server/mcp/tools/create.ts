/** `create`: add one card, or a whole plan at once with {cards: [...]}. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

import { BatonError } from '../../../core/errors';
import { CreateCardInput, limits } from '../../../core/protocol';
import { createdCard } from '../compact';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, registerListedTool, updatingTool } from '../toolListing';
import { toolHandler } from '../toolResult';

/**
 * One card's fields at the top level, or `cards` for a plan. Kept as one flat object (not a union)
 * so tools/list stays small and every client renders it; the handler enforces "one or the other".
 */
const CreateToolParams = CreateCardInput.partial({ title: true })
	.extend({
		title: CreateCardInput.shape.title.optional().describe('Title of the single card to create (≤ 200 chars)'),
		cards: z
			.array(CreateCardInput)
			.min(1)
			.max(limits.createBatch)
			.optional()
			.describe('A whole plan instead of one card; dependsOn may name ids earlier in this list'),
	})
	.strict();
type CreateToolParams = z.output<typeof CreateToolParams>;

/**
 * Advertised schema: the single card's fields, and `cards` items as plain objects (they take the
 * same fields; repeating them would cost ~250 bytes of tools/list). The handler validates in full.
 * Loose, not z.object({}): the SDK hands the handler its own parse result, and a plain object would
 * strip every field of every card.
 */
const createListing = leanObject(
	// Attempt, retry and stall policies are the humans' to tune (CLI, board); agents need not pay for
	// them here (the handler still takes them).
	// The session gives new cards its project (context.ts); an agent may still name another.
	CreateToolParams.omit({
		cards: true,
		maxAttempts: true,
		backoffSeconds: true,
		stallReleaseSeconds: true,
		project: true,
		// Rare for an agent (labels and parent were paid for with them); still taken. autoClose is
		// named in the guide (guide.ts) instead, which every session reads.
		deferUntil: true,
		idempotencyKey: true,
		autoClose: true,
		discoveredFrom: true,
		// A card's own base branch is a human's choice; tools/list has no room for it.
		base: true,
	}),
	{
		id: 'Own id',
		title: 'Title, ≤ 200 chars',
		body: 'Markdown',
		phase: 'Lane or milestone',
		priority: 'Higher is sooner (0)',
		dependsOn: 'Ids to finish first',
		requires: 'Capabilities',
		acceptance: 'Acceptance criteria',
		review: 'Who approves it',
		scope: 'Paths it touches: globs, lock:name',
		labels: 'Labels',
		parent: 'Epic',
	},
)
	.extend({ cards: z.array(z.looseObject({})).optional().describe('Cards with the fields above') })
	.strict();

function toCards(args: CreateToolParams): z.output<typeof CreateCardInput>[] {
	const { cards, ...single } = args;
	const singleKeys = Object.keys(single);
	if (cards !== undefined) {
		if (singleKeys.length > 0) {
			throw new BatonError(
				'invalid_input',
				`Pass either one card's fields or cards, not both (got cards and ${singleKeys.join(', ')})`,
			);
		}
		return cards;
	}
	if (single.title === undefined) {
		throw new BatonError('invalid_input', 'title: required (or pass cards: [...] to create several)');
	}
	return [{ ...single, title: single.title }];
}

export function registerCreateTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'create',
		{
			title: 'Create cards',
			description: 'Create a card, or a plan with cards: [...] (dependsOn may name earlier ids). Returns {cards}.',
			listing: createListing,
			annotations: updatingTool,
		},
		toolHandler('create', CreateToolParams, async args => {
			const project = ctx.createProject;
			const cards = toCards(args).map(card =>
				project === undefined || card.project !== undefined ? card : { ...card, project },
			);
			const result = await ctx.request('card/create', { cards });
			return { cards: result.cards.map(createdCard) };
		}),
	);
}
