/**
 * CLI subcommands that create, read and edit cards: create, list, show, edit, block, unblock, link,
 * unlink, delete (the claim cycle is in claimCommands.ts; reopen in policyCommands.ts; comment,
 * approve and reject in steeringCommands.ts). Each is one hub request whose flags are bound to its
 * params schema (flags.ts), so the CLI refuses exactly what the hub, the MCP tools and the board refuse.
 */
import { readFileSync } from 'node:fs';

import { BlockParams, CreateCardInput, ListParams, UpdateParams } from '../../core/protocol';
import { cardChange, cardChangeCommand, statusLine } from './cardChange';
import { claimCommands } from './claimCommands';
import { type Command, arg, show } from './command';
import { type FieldFlag, cliFlags, paramFlags } from './flags';
import { policyFieldFlags } from './policyCommands';
import { UsageError, cardTable, describeCard, eventTable, formatTable, messageList, truncate } from './output';

function readStdin(): string {
	return readFileSync(0, 'utf8');
}

/** A plan file: a JSON array of cards or {cards: [...]} (what the MCP create tool takes). */
function readPlan(path: string): unknown[] {
	let text: string;
	try {
		text = path === '-' ? readStdin() : readFileSync(path, 'utf8');
	} catch (e) {
		throw new UsageError(`Cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}.`);
	}
	let parsed: unknown;
	try {
		parsed = JSON.parse(text);
	} catch {
		throw new UsageError(`${path} is not JSON: expected an array of cards or {"cards": [...]}.`);
	}
	if (Array.isArray(parsed)) {
		return parsed;
	}
	if (typeof parsed === 'object' && parsed !== null && Array.isArray((parsed as { cards?: unknown }).cards)) {
		return (parsed as { cards: unknown[] }).cards;
	}
	throw new UsageError(`${path} must hold an array of cards or {"cards": [...]}.`);
}

/** The flags create and edit share: the same fields of CreateCardInput and UpdateParams. */
const cardFieldFlags = {
	body: { value: 'TEXT' },
	// Not the wire's 'null removes it': edit has --clear-phase for that.
	phase: { value: 'NAME', description: 'Lane or milestone label' },
	priority: {},
	requires: { value: 'CAPS' },
	acceptance: { value: 'TEXT', whole: true, description: 'An acceptance criterion' },
	maxAttempts: {},
	review: { value: 'MODE' },
	...policyFieldFlags,
} as const satisfies Record<string, FieldFlag>;

const bodyFileFlag = cliFlags({
	bodyFile: { type: 'string', value: 'PATH', description: 'Read the body from a file ("-" for stdin)' },
});

/** --body, or the text of --body-file. */
function bodyOf(body: string | undefined, file: string | undefined): string | undefined {
	if (file !== undefined && body !== undefined) {
		throw new UsageError('Use --body or --body-file, not both.');
	}
	if (file === undefined) {
		return body;
	}
	try {
		return file === '-' ? readStdin() : readFileSync(file, 'utf8');
	} catch (e) {
		throw new UsageError(`Cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}.`);
	}
}

const createFlags = paramFlags(CreateCardInput, {
	id: { value: 'ID' },
	...cardFieldFlags,
	dependsOn: { value: 'IDS' },
	deferUntil: { value: 'ISO' },
	idempotencyKey: { value: 'KEY' },
});
const planFlag = cliFlags({
	file: {
		type: 'string',
		value: 'PATH',
		description: 'Create every card in a JSON file: [...] or {"cards": [...]} ("-" for stdin)',
	},
});

const create: Command = {
	name: 'create',
	summary: 'Create a card, or a whole plan from a JSON file',
	args: '[TITLE]',
	minArgs: 0,
	maxArgs: 1,
	options: { ...createFlags.options, ...bodyFileFlag.options, ...planFlag.options },
	notes:
		'Cards in a plan file may depend on ids defined earlier in the same file; --review sets the review of\n' +
		'every card of the plan that does not say.',
	async run(ctx) {
		const { file } = planFlag.read(ctx.values);
		let cards: unknown[];
		if (file !== undefined) {
			if (ctx.positionals.length > 0) {
				throw new UsageError('Give either a TITLE or --file, not both.');
			}
			// --review is the plan's default; the other card flags describe one card, so a plan says them.
			const { review, ...others } = createFlags.read(ctx.values);
			const oneCard = Object.keys(others);
			if (oneCard.length > 0) {
				throw new UsageError(
					`With --file, set ${oneCard.join(', ')} per card in the plan; only --review applies to the whole plan.`,
				);
			}
			cards = readPlan(file).map(card =>
				review !== undefined && typeof card === 'object' && card !== null && !('review' in card)
					? { ...card, review }
					: card,
			);
		} else {
			const title = ctx.positionals[0];
			if (title === undefined) {
				throw new UsageError('Missing TITLE (or --file PATH for a plan).');
			}
			const fields = createFlags.read(ctx.values);
			const body = bodyOf(fields.body, bodyFileFlag.read(ctx.values).bodyFile);
			cards = [{ ...fields, title, ...(body === undefined ? {} : { body }) }];
		}
		const hub = await ctx.hub();
		// The hub validates every card of a plan file with the protocol schema; the cast only hands it over.
		const result = await hub.request('card/create', { cards: cards as CreateCardInput[] });
		show(
			ctx,
			result,
			() => `${cardTable(result.cards)}\nCreated ${result.cards.length} card${result.cards.length === 1 ? '' : 's'}.`,
		);
		return 0;
	},
};

const listFlags = paramFlags(ListParams, {
	status: { value: 'S' },
	phase: { value: 'NAME' },
	owner: { value: 'AGENT' },
	readyOnly: { flag: 'ready' },
	text: { value: 'TEXT' },
	limit: {},
	cursor: { value: 'C' },
});
const allFlag = cliFlags({ all: { type: 'boolean', description: 'Follow nextCursor and list everything' } });

const list: Command = {
	name: 'list',
	summary: 'List cards',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: { ...listFlags.options, ...allFlag.options },
	async run(ctx) {
		const params = listFlags.read(ctx.values);
		const hub = await ctx.hub();
		let result = await hub.request('card/list', params);
		if (allFlag.read(ctx.values).all) {
			const cards = [...result.cards];
			while (result.nextCursor !== undefined) {
				result = await hub.request('card/list', { ...params, cursor: result.nextCursor });
				cards.push(...result.cards);
			}
			result = { cards };
		}
		const page = result;
		show(ctx, page, () =>
			page.nextCursor === undefined
				? cardTable(page.cards)
				: `${cardTable(page.cards)}\nMore: baton list --cursor ${page.nextCursor} (or --all)`,
		);
		return 0;
	},
};

const showCommand: Command = {
	name: 'show',
	summary: 'Show a card with its dependencies, dependents, history, attempts and messages',
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: {},
	async run(ctx) {
		const hub = await ctx.hub();
		const r = await hub.request('card/get', { cardId: arg(ctx, 0) });
		show(ctx, r, () => {
			const parts = [describeCard(r.card)];
			const refs = (label: string, list: typeof r.dependencies): void => {
				if (list.length > 0) {
					parts.push('', `${label}:`, ...list.map(d => `  ${d.id}  ${d.status}  ${truncate(d.title, 60)}`));
				}
			};
			refs('Depends on', r.dependencies);
			refs('Dependents', r.dependents);
			if (r.attempts.length > 0) {
				parts.push(
					'',
					'Attempts:',
					formatTable(
						['EPOCH', 'OWNER', 'OUTCOME', 'PROGRESS', 'NOTE'],
						r.attempts.map(a => [
							String(a.epoch),
							a.owner,
							a.outcome,
							a.progress === null ? '-' : `${a.progress}%`,
							truncate(a.progressNote ?? a.reason ?? a.result ?? '', 50),
						]),
					),
				);
			}
			if (r.messages.length > 0) {
				parts.push('', 'Messages:', messageList(r.messages));
			}
			if (r.history.length > 0) {
				parts.push('', 'History:', eventTable(r.history));
			}
			return parts.join('\n');
		});
		return 0;
	},
};

const editFlags = paramFlags(UpdateParams, {
	title: { value: 'TEXT' },
	...cardFieldFlags,
	version: { description: 'Refuse unless the card is still at this version' },
});
const clearPhaseFlag = cliFlags({ clearPhase: { type: 'boolean', description: 'Remove the phase' } });

const edit: Command = {
	name: 'edit',
	summary: "Change a card's title, body, phase, priority, requirements or criteria",
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: { ...editFlags.options, ...bodyFileFlag.options, ...clearPhaseFlag.options },
	async run(ctx) {
		const { clearPhase } = clearPhaseFlag.read(ctx.values);
		const fields = editFlags.read(ctx.values);
		if (clearPhase && fields.phase !== undefined) {
			throw new UsageError('Use --phase or --clear-phase, not both.');
		}
		const body = bodyOf(fields.body, bodyFileFlag.read(ctx.values).bodyFile);
		const hub = await ctx.hub();
		const result = await hub.request('card/update', {
			cardId: arg(ctx, 0),
			...fields,
			...(body === undefined ? {} : { body }),
			...(clearPhase ? { phase: null } : {}),
		});
		cardChange(ctx, result);
		return 0;
	},
};

const blockFlags = paramFlags(BlockParams, { reason: { value: 'TEXT' } });

const block = cardChangeCommand('block', 'Park a card in blocked (releases any claim)', blockFlags, (hub, cardId, p) =>
	hub.request('card/block', { cardId, ...p }),
);
const unblock = cardChangeCommand('unblock', 'Return a blocked card to ready', cliFlags({}), (hub, cardId) =>
	hub.request('card/unblock', { cardId }),
);

function linkCommand(name: 'link' | 'unlink', summary: string): Command {
	return {
		name,
		summary,
		args: 'ID DEP...',
		minArgs: 2,
		maxArgs: Infinity,
		options: {},
		async run(ctx) {
			const hub = await ctx.hub();
			const [cardId = '', ...deps] = ctx.positionals;
			const r = await hub.request(name === 'link' ? 'card/link' : 'card/unlink', { cardId, dependsOn: deps });
			show(ctx, r, () => `${statusLine(r.card)}\n${r.card.id} depends on: ${r.card.dependsOn.join(', ') || 'nothing'}`);
			return 0;
		},
	};
}

const deleteCommand: Command = {
	name: 'delete',
	summary: 'Delete a card (refused while other cards depend on it)',
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: {},
	async run(ctx) {
		const hub = await ctx.hub();
		const r = await hub.request('card/delete', { cardId: arg(ctx, 0) });
		show(ctx, r, () => `Deleted ${r.deleted}.`);
		return 0;
	},
};

export const cardCommands: readonly Command[] = [
	create,
	list,
	showCommand,
	edit,
	// The claim cycle lives in its own module; listed here so `baton --help` keeps its order.
	...claimCommands,
	block,
	unblock,
	linkCommand('link', 'Make ID wait until every DEP is done'),
	linkCommand('unlink', 'Stop ID waiting on each DEP'),
	deleteCommand,
];
