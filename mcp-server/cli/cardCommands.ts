/**
 * CLI subcommands that create, read and edit cards: create, list, show, edit, block, unblock, link,
 * unlink, delete (the claim cycle is in claimCommands.ts; reopen in policyCommands.ts; comment,
 * approve and reject in steeringCommands.ts). Each is one hub request whose flags are bound to its
 * params schema (flags.ts), so the CLI refuses exactly what the hub, the MCP tools and the board refuse.
 */
import { z } from 'zod';

import { maxPlanBytes, readBoundedText } from '../../core/files/boundedRead';
import { stateWord } from '../../core/rules/claimable';
import { usageText } from '../../core/rules/usage';
import { BlockParams, CreateCardInput, LinkParams, ListParams, ProjectId, UpdateParams } from '../../core/protocol';
import { cardChange, cardChangeCommand, statusLine } from './cardChange';
import { claimCommands } from './claimCommands';
import { type Command, arg, show } from './command';
import { type FieldFlag, cliFlags, paramFlags } from './flags';
import { policyFieldFlags } from './policyCommands';
import { rollupText, treeOrder } from './treeOutput';
import { anyProject, chosenProject, noProjectFlag } from './project';
import { otherProjectsNote, projectParams } from './projectNote';
import { UsageError, cardTable, describeCard, eventTable, formatTable, messageList, refWord, truncate } from './output';

/** A plan file: a JSON array of cards or {cards: [...]} (what the MCP create tool takes). */
function readPlan(path: string): unknown[] {
	const text = readBoundedText(path, { maxBytes: maxPlanBytes, what: 'the plan file' });
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
	scope: { value: 'GLOBS', description: 'Paths it touches: globs from the project root, or lock:NAME' },
	labels: { value: 'LABELS', description: 'Labels, comma-separated (edit: replaces them all)' },
	parent: { value: 'ID', description: 'The card this one is part of (an epic)' },
	autoClose: { description: 'Complete it by itself when its last child is done' },
	base: { value: 'BRANCH', description: "Its worktree's base branch (workspaces), over the project's" },
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
	return readBoundedText(file, { maxBytes: maxPlanBytes, what: 'the body file' });
}

const createFlags = paramFlags(CreateCardInput, {
	id: { value: 'ID' },
	...cardFieldFlags,
	dependsOn: { value: 'IDS' },
	deferUntil: { value: 'ISO' },
	idempotencyKey: { value: 'KEY' },
	project: { value: 'ID', description: "Project id (default: BATON_PROJECT, else this folder's git repository)" },
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
	options: { ...createFlags.options, ...noProjectFlag.options, ...bodyFileFlag.options, ...planFlag.options },
	notes:
		'Cards in a plan file may depend on ids defined earlier in the same file; --review, --project and\n' +
		'--base set those of every card of the plan that does not say. Without --project or\n' +
		"--no-project, cards get BATON_PROJECT, else the project of this folder's git repository.",
	async run(ctx) {
		const { file } = planFlag.read(ctx.values);
		const { project: projectFlag, ...fields } = createFlags.read(ctx.values);
		const chosen = await chosenProject(projectFlag, noProjectFlag.read(ctx.values).noProject, ctx.workingProject);
		const project = chosen === null || chosen === anyProject ? undefined : chosen;
		let cards: unknown[];
		if (file !== undefined) {
			if (ctx.positionals.length > 0) {
				throw new UsageError('Give either a TITLE or --file, not both.');
			}
			// --review, --project and --base are the plan's defaults; the other card flags describe one card.
			const { review, base, ...others } = fields;
			const oneCard = Object.keys(others);
			if (oneCard.length > 0) {
				throw new UsageError(
					`With --file, set ${oneCard.join(', ')} per card in the plan; only --review, --project and --base apply to the whole plan.`,
				);
			}
			const defaults = {
				...(review === undefined ? {} : { review }),
				...(base === undefined ? {} : { base }),
				...(project === undefined ? {} : { project }),
			};
			cards = readPlan(file).map(card =>
				typeof card === 'object' && card !== null && !Array.isArray(card) ? { ...defaults, ...card } : card,
			);
		} else {
			const title = ctx.positionals[0];
			if (title === undefined) {
				throw new UsageError('Missing TITLE (or --file PATH for a plan).');
			}
			const body = bodyOf(fields.body, bodyFileFlag.read(ctx.values).bodyFile);
			cards = [
				{
					...fields,
					title,
					...(body === undefined ? {} : { body }),
					...(project === undefined ? {} : { project }),
				},
			];
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

/** list's --project also takes "*" (every project), as claim's does. */
const ListCliParams = ListParams.extend({
	project: z
		.union([ProjectId, z.literal(anyProject)])
		.optional()
		.describe('Only this project\'s cards and cards with none; "*": every project (default: this folder\'s project)'),
});
const listFlags = paramFlags(ListCliParams, {
	status: { value: 'S' },
	phase: { value: 'NAME' },
	owner: { value: 'AGENT' },
	readyOnly: { flag: 'ready' },
	label: { value: 'LABEL', description: 'Only cards with this label' },
	parent: { value: 'ID', description: 'Only the children of this card' },
	text: { value: 'TEXT' },
	limit: {},
	cursor: { value: 'C' },
	project: { value: 'ID' },
});
const allFlag = cliFlags({ all: { type: 'boolean', description: 'Follow nextCursor and list everything' } });
const treeFlag = cliFlags({
	tree: { type: 'boolean', description: 'Every page, children indented under their parent (implies --all)' },
});

const list: Command = {
	name: 'list',
	summary: 'List cards',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: { ...listFlags.options, ...noProjectFlag.options, ...allFlag.options, ...treeFlag.options },
	async run(ctx) {
		const { project: flag, ...rest } = listFlags.read(ctx.values);
		// The claim's rule (projectNote.ts): outside a repository, only cards without a project.
		const project = await chosenProject(flag, noProjectFlag.read(ctx.values).noProject, ctx.workingProject);
		const params = { ...rest, ...projectParams(project) };
		const hub = await ctx.hub();
		let result = await hub.request('card/list', params);
		const { tree } = treeFlag.read(ctx.values);
		if (allFlag.read(ctx.values).all || tree) {
			const cards = [...result.cards];
			const waitsOn = { ...result.waitsOn };
			while (result.nextCursor !== undefined) {
				result = await hub.request('card/list', { ...params, cursor: result.nextCursor });
				cards.push(...result.cards);
				Object.assign(waitsOn, result.waitsOn);
			}
			result = Object.keys(waitsOn).length === 0 ? { cards } : { cards, waitsOn };
		}
		// --status takes the words STATUS prints (core/rules/claimable.ts stateWords): the hub's `ready` is
		// every ready card, so the page keeps only the cards whose word was asked for (ready = claimable now).
		const words = rest.status === undefined ? undefined : ([] as string[]).concat(rest.status);
		const now = Date.now();
		const page =
			words === undefined ? result : { ...result, cards: result.cards.filter(c => words.includes(stateWord(c, now))) };
		// Only a first page notes what the project hides (a --cursor page continues a listing).
		const note =
			ctx.json || rest.cursor !== undefined
				? undefined
				: await otherProjectsNote(hub, project, await hub.request('card/stats', projectParams(project)), 'listed');
		show(ctx, page, () =>
			[
				cardTable(tree ? treeOrder(page.cards) : page.cards, page.waitsOn),
				...(page.nextCursor === undefined ? [] : [`More: baton list --cursor ${page.nextCursor} (or --all)`]),
				...(note === undefined ? [] : [note]),
			].join('\n'),
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
			const parts = [
				describeCard(r.card, r.dependencies, Date.now(), r.effectivePriority),
				`Usage: ${usageText(r.usage)}`,
			];
			const refs = (label: string, list: typeof r.dependencies): void => {
				if (list.length > 0) {
					parts.push('', `${label}:`, ...list.map(d => `  ${d.id}  ${refWord(d)}  ${truncate(d.title, 60)}`));
				}
			};
			refs('Depends on', r.dependencies);
			refs('Dependents', r.dependents);
			if (r.children !== undefined) {
				parts.push(
					'',
					`Children: ${rollupText(r.children)}`,
					...r.children.cards.map(d => `  ${d.id}  ${refWord(d)}  ${truncate(d.title, 60)}`),
				);
			}
			if (r.attempts.length > 0) {
				parts.push(
					'',
					'Attempts:',
					formatTable(
						['EPOCH', 'OWNER', 'OUTCOME', 'PROGRESS', 'USAGE', 'NOTE'],
						r.attempts.map(a => [
							String(a.epoch),
							a.owner,
							a.outcome,
							a.progress === null ? '-' : `${a.progress}%`,
							a.usage === undefined ? '-' : usageText(a.usage),
							// How the attempt ended (the reviewer's note, the failure, the result) over its last progress note.
							truncate(a.reason ?? a.result ?? a.progressNote ?? '', 50),
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
	project: { value: 'ID', description: 'Move it to this project' },
});
const clearPhaseFlag = cliFlags({ clearPhase: { type: 'boolean', description: 'Remove the phase' } });
const treeEditFlags = cliFlags({
	noParent: { type: 'boolean', description: 'Take it out of its parent' },
	noAutoClose: { type: 'boolean', description: 'Stop completing it by itself when its children are done' },
	noBase: { type: 'boolean', description: "Drop its own base branch: the project's applies" },
});

const edit: Command = {
	name: 'edit',
	summary: "Change a card's title, body, phase, priority, requirements, criteria, project or scope",
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: {
		...editFlags.options,
		...noProjectFlag.options,
		...bodyFileFlag.options,
		...clearPhaseFlag.options,
		...treeEditFlags.options,
	},
	async run(ctx) {
		const { clearPhase } = clearPhaseFlag.read(ctx.values);
		const { noProject } = noProjectFlag.read(ctx.values);
		const fields = editFlags.read(ctx.values);
		if (noProject && fields.project !== undefined) {
			throw new UsageError('Use --project or --no-project, not both.');
		}
		if (clearPhase && fields.phase !== undefined) {
			throw new UsageError('Use --phase or --clear-phase, not both.');
		}
		const tree = treeEditFlags.read(ctx.values);
		if (tree.noBase && fields.base !== undefined) {
			throw new UsageError('Use --base or --no-base, not both.');
		}
		const body = bodyOf(fields.body, bodyFileFlag.read(ctx.values).bodyFile);
		const hub = await ctx.hub();
		const result = await hub.request('card/update', {
			cardId: arg(ctx, 0),
			...fields,
			...(body === undefined ? {} : { body }),
			...(clearPhase ? { phase: null } : {}),
			...(noProject ? { project: null } : {}),
			...(tree.noParent ? { parent: null } : {}),
			...(tree.noAutoClose ? { autoClose: false } : {}),
			...(tree.noBase ? { base: null } : {}),
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

/** link/unlink's links that do not block. */
const linkFlags = paramFlags(LinkParams, {
	related: { value: 'IDS', description: 'Related cards (kept on both; never blocking)' },
	duplicates: { value: 'IDS', description: 'Cards it duplicates' },
});

function linkCommand(name: 'link' | 'unlink', summary: string): Command {
	return {
		name,
		summary,
		args: 'ID [DEP...]',
		minArgs: 1,
		maxArgs: Infinity,
		options: linkFlags.options,
		async run(ctx) {
			const hub = await ctx.hub();
			const [cardId = '', ...deps] = ctx.positionals;
			const links = linkFlags.read(ctx.values);
			if (deps.length === 0 && links.related === undefined && links.duplicates === undefined) {
				throw new UsageError(`Name a DEP, --related or --duplicates for ${cardId}.`);
			}
			const r = await hub.request(name === 'link' ? 'card/link' : 'card/unlink', {
				cardId,
				...(deps.length > 0 ? { dependsOn: deps } : {}),
				...links,
			});
			const related = r.card.related ?? [];
			show(
				ctx,
				r,
				() =>
					`${statusLine(r.card)}\n${r.card.id} depends on: ${r.card.dependsOn.join(', ') || 'nothing'}` +
					(related.length > 0 ? `\nrelated: ${related.join(', ')}` : ''),
			);
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
	linkCommand('link', 'Make ID wait until every DEP is done, or relate it to other cards (--related)'),
	linkCommand('unlink', 'Stop ID waiting on each DEP, or remove --related / --duplicates links'),
	deleteCommand,
];
