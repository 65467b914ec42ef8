/**
 * CLI subcommands that act on cards: create, list, show, edit, claim, heartbeat, complete, release,
 * fail, reclaim, block, unblock, link, unlink, delete (reopen is in policyCommands.ts). Each is one hub request; the hub
 * validates with the protocol schemas, so the CLI refuses exactly what the MCP tools and board refuse.
 */
import { readFileSync } from 'node:fs';

import type { Card, CardStatus, CreateCardInput } from '../../core/protocol';
import {
	type Command,
	type CommandContext,
	arg,
	defined,
	epochOption,
	flag,
	intOpt,
	listOpt,
	repeatedOpt,
	show,
	stringOpt,
} from './command';
import { policyFields, policyOpt } from './policyCommands';
import { UsageError, cardTable, describeCard, eventTable, formatTable, truncate } from './output';

function statusLine(card: Card): string {
	const waiting = card.status === 'ready' && card.unmetDeps > 0 ? ` (waiting on ${card.unmetDeps})` : '';
	const owner = card.claimOwner === null ? '' : ` by ${card.claimOwner}, epoch ${card.claimEpoch}`;
	return `${card.id} is ${card.status}${waiting}${owner}: ${truncate(card.title, 60)}`;
}

function cardChange(ctx: CommandContext, result: { card: Card }): void {
	show(ctx, result, () => statusLine(result.card));
}

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

const cardFields = {
	body: { type: 'string', value: 'TEXT', description: 'Markdown description' },
	'body-file': { type: 'string', value: 'PATH', description: 'Read the body from a file ("-" for stdin)' },
	phase: { type: 'string', value: 'NAME', description: 'Lane or milestone label' },
	priority: { type: 'string', value: 'N', description: 'Higher is sooner (default 0)' },
	requires: {
		type: 'string',
		multiple: true,
		value: 'CAPS',
		description: 'Capabilities a claimer needs (comma-separated)',
	},
	acceptance: { type: 'string', multiple: true, value: 'TEXT', description: 'An acceptance criterion (repeatable)' },
	'max-attempts': { type: 'string', value: 'N', description: 'Claims before it parks in blocked (default 3)' },
	...policyFields,
} as const;

function bodyOf(ctx: CommandContext): string | undefined {
	const file = stringOpt(ctx, 'body-file');
	const body = stringOpt(ctx, 'body');
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

const create: Command = {
	name: 'create',
	summary: 'Create a card, or a whole plan from a JSON file',
	args: '[TITLE]',
	minArgs: 0,
	maxArgs: 1,
	options: {
		id: { type: 'string', value: 'ID', description: 'Your own id (generated when omitted)' },
		...cardFields,
		'depends-on': { type: 'string', multiple: true, value: 'IDS', description: 'Ids that must be done first' },
		'defer-until': { type: 'string', value: 'ISO', description: 'Not claimable before this time' },
		'idempotency-key': {
			type: 'string',
			value: 'KEY',
			description: 'A repeated create with this key returns the same card',
		},
		file: {
			type: 'string',
			value: 'PATH',
			description: 'Create every card in a JSON file: [...] or {"cards": [...]} ("-" for stdin)',
		},
	},
	notes: 'Cards in a plan file may depend on ids defined earlier in the same file.',
	async run(ctx) {
		const file = stringOpt(ctx, 'file');
		let cards: unknown[];
		if (file !== undefined) {
			if (ctx.positionals.length > 0) {
				throw new UsageError('Give either a TITLE or --file, not both.');
			}
			cards = readPlan(file);
		} else {
			const title = ctx.positionals[0];
			if (title === undefined) {
				throw new UsageError('Missing TITLE (or --file PATH for a plan).');
			}
			cards = [
				defined({
					id: stringOpt(ctx, 'id'),
					title,
					body: bodyOf(ctx),
					phase: stringOpt(ctx, 'phase'),
					priority: intOpt(ctx, 'priority'),
					dependsOn: listOpt(ctx, 'depends-on'),
					requires: listOpt(ctx, 'requires'),
					acceptance: repeatedOpt(ctx, 'acceptance'),
					maxAttempts: intOpt(ctx, 'max-attempts'),
					backoffSeconds: policyOpt(ctx, 'backoff-seconds') ?? undefined,
					stallReleaseSeconds: policyOpt(ctx, 'stall-release-seconds') ?? undefined,
					deferUntil: stringOpt(ctx, 'defer-until'),
					idempotencyKey: stringOpt(ctx, 'idempotency-key'),
				}),
			];
		}
		const hub = await ctx.hub();
		// The hub validates every card with the protocol schema; the cast only hands it over.
		const result = await hub.request('card/create', { cards: cards as CreateCardInput[] });
		show(
			ctx,
			result,
			() => `${cardTable(result.cards)}\nCreated ${result.cards.length} card${result.cards.length === 1 ? '' : 's'}.`,
		);
		return 0;
	},
};

const list: Command = {
	name: 'list',
	summary: 'List cards',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: {
		status: { type: 'string', value: 'S', description: 'ready, claimed, blocked, done (comma-separated)' },
		phase: { type: 'string', value: 'NAME', description: 'Only this phase' },
		owner: { type: 'string', value: 'AGENT', description: 'Only cards held by this agent' },
		ready: { type: 'boolean', description: 'Only cards claimable now' },
		text: { type: 'string', value: 'TEXT', description: 'Match in id, title or body' },
		limit: { type: 'string', value: 'N', description: 'Page size (default 50)' },
		cursor: { type: 'string', value: 'C', description: 'Continue from a previous nextCursor' },
		all: { type: 'boolean', description: 'Follow nextCursor and list everything' },
	},
	async run(ctx) {
		const statuses = listOpt(ctx, 'status') as CardStatus[] | undefined;
		const params = defined({
			status: statuses === undefined ? undefined : statuses.length === 1 ? statuses[0] : statuses,
			phase: stringOpt(ctx, 'phase'),
			owner: stringOpt(ctx, 'owner'),
			readyOnly: flag(ctx, 'ready') ? true : undefined,
			text: stringOpt(ctx, 'text'),
			limit: intOpt(ctx, 'limit'),
			cursor: stringOpt(ctx, 'cursor'),
		});
		const hub = await ctx.hub();
		let result = await hub.request('card/list', params);
		if (flag(ctx, 'all')) {
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
	summary: 'Show a card with its dependencies, dependents, history and attempts',
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
			if (r.history.length > 0) {
				parts.push('', 'History:', eventTable(r.history));
			}
			return parts.join('\n');
		});
		return 0;
	},
};

const edit: Command = {
	name: 'edit',
	summary: "Change a card's title, body, phase, priority, requirements or criteria",
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: {
		title: { type: 'string', value: 'TEXT', description: 'New title' },
		...cardFields,
		'clear-phase': { type: 'boolean', description: 'Remove the phase' },
		version: { type: 'string', value: 'N', description: 'Refuse unless the card is still at this version' },
	},
	async run(ctx) {
		if (flag(ctx, 'clear-phase') && stringOpt(ctx, 'phase') !== undefined) {
			throw new UsageError('Use --phase or --clear-phase, not both.');
		}
		const hub = await ctx.hub();
		const result = await hub.request('card/update', {
			cardId: arg(ctx, 0),
			...defined({
				title: stringOpt(ctx, 'title'),
				body: bodyOf(ctx),
				phase: flag(ctx, 'clear-phase') ? null : stringOpt(ctx, 'phase'),
				priority: intOpt(ctx, 'priority'),
				requires: listOpt(ctx, 'requires'),
				acceptance: repeatedOpt(ctx, 'acceptance'),
				maxAttempts: intOpt(ctx, 'max-attempts'),
				backoffSeconds: policyOpt(ctx, 'backoff-seconds'),
				stallReleaseSeconds: policyOpt(ctx, 'stall-release-seconds'),
				version: intOpt(ctx, 'version'),
			}),
		});
		cardChange(ctx, result);
		return 0;
	},
};

const claim: Command = {
	name: 'claim',
	summary: 'Claim the best ready card (or the card ID) for this agent',
	args: '[ID]',
	minArgs: 0,
	maxArgs: 1,
	options: {
		phase: { type: 'string', value: 'NAME', description: 'Only cards in this phase' },
		capabilities: { type: 'string', value: 'CAPS', description: 'Capabilities you have (comma-separated)' },
		ttl: { type: 'string', value: 'SECONDS', description: 'Lease length (default 300)' },
		wait: { type: 'string', value: 'SECONDS', description: 'Wait up to this long (≤ 60) for a card' },
	},
	notes: 'A CLI agent keeps its lease alive with explicit "baton heartbeat" calls.',
	async run(ctx) {
		const wait = intOpt(ctx, 'wait');
		const hub = await ctx.hub();
		const r = await hub.request(
			'card/claim',
			defined({
				cardId: ctx.positionals[0],
				phase: stringOpt(ctx, 'phase'),
				capabilities: listOpt(ctx, 'capabilities'),
				ttlSeconds: intOpt(ctx, 'ttl'),
				waitSeconds: wait,
			}),
			{ timeoutMs: (wait ?? 0) * 1000 + 15_000 },
		);
		show(ctx, r, () =>
			r.card === null || r.lease === null
				? `Nothing claimable${r.reason === undefined ? '.' : `: ${r.reason}`}`
				: `Claimed ${r.card.id} (epoch ${r.lease.epoch}, lease until ${r.lease.expiresAt}): ${truncate(r.card.title, 60)}\n` +
					`Next: baton heartbeat ${r.card.id} --progress N, then baton complete ${r.card.id} --result "..."`,
		);
		return 0;
	},
};

const heartbeat: Command = {
	name: 'heartbeat',
	summary: 'Report progress on a card you hold and renew its lease',
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: {
		epoch: epochOption,
		progress: { type: 'string', value: 'PCT', description: 'Percent done, 0-100' },
		note: { type: 'string', value: 'TEXT', description: 'What you are doing now' },
		ttl: { type: 'string', value: 'SECONDS', description: 'New lease length' },
	},
	async run(ctx) {
		const hub = await ctx.hub();
		const r = await hub.request('card/heartbeat', {
			cardId: arg(ctx, 0),
			...defined({
				epoch: intOpt(ctx, 'epoch'),
				progress: intOpt(ctx, 'progress'),
				note: stringOpt(ctx, 'note'),
				ttlSeconds: intOpt(ctx, 'ttl'),
			}),
		});
		show(ctx, r, () => `Lease on ${r.card.id} renewed until ${r.lease.expiresAt} (epoch ${r.lease.epoch}).`);
		return 0;
	},
};

const complete: Command = {
	name: 'complete',
	summary: 'Mark a card you hold as done',
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: {
		epoch: epochOption,
		result: { type: 'string', value: 'TEXT', description: 'Summary, commit, links' },
		force: { type: 'boolean', description: 'Human override: complete even if another agent holds it' },
		next: { type: 'boolean', description: 'Also claim the next best card in the same step' },
		phase: { type: 'string', value: 'NAME', description: 'With --next: only cards in this phase' },
		capabilities: { type: 'string', value: 'CAPS', description: 'With --next: capabilities you have' },
		ttl: { type: 'string', value: 'SECONDS', description: 'With --next: lease length (default 300)' },
	},
	async run(ctx) {
		if (!flag(ctx, 'next') && ['phase', 'capabilities', 'ttl'].some(o => ctx.values[o] !== undefined)) {
			throw new UsageError('--phase, --capabilities and --ttl apply to the next card: add --next, or drop them.');
		}
		const next = flag(ctx, 'next')
			? defined({
					phase: stringOpt(ctx, 'phase'),
					capabilities: listOpt(ctx, 'capabilities'),
					ttlSeconds: intOpt(ctx, 'ttl'),
				})
			: undefined;
		const hub = await ctx.hub();
		const r = await hub.request('card/complete', {
			cardId: arg(ctx, 0),
			...defined({
				epoch: intOpt(ctx, 'epoch'),
				result: stringOpt(ctx, 'result'),
				force: flag(ctx, 'force') ? true : undefined,
				next,
			}),
		});
		show(ctx, r, () => {
			const done = `Completed ${r.card.id}.${r.unblocked.length > 0 ? ` Now claimable: ${r.unblocked.join(', ')}.` : ''}`;
			if (r.next === undefined) {
				return done;
			}
			const { card, lease, reason } = r.next;
			return card === null || lease === null
				? `${done}\nNothing claimable next${reason === undefined ? '.' : `: ${reason}`}`
				: `${done}\nClaimed ${card.id} (epoch ${lease.epoch}, lease until ${lease.expiresAt}): ${truncate(card.title, 60)}`;
		});
		return 0;
	},
};

const release: Command = {
	name: 'release',
	summary: 'Hand a card you hold back to ready',
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: {
		epoch: epochOption,
		reason: { type: 'string', value: 'TEXT', description: 'Why' },
		force: { type: 'boolean', description: 'Human override: release even if another agent holds it' },
	},
	async run(ctx) {
		const hub = await ctx.hub();
		const r = await hub.request('card/release', {
			cardId: arg(ctx, 0),
			...defined({
				epoch: intOpt(ctx, 'epoch'),
				reason: stringOpt(ctx, 'reason'),
				force: flag(ctx, 'force') ? true : undefined,
			}),
		});
		cardChange(ctx, r);
		return 0;
	},
};

const fail: Command = {
	name: 'fail',
	summary: 'Report that work on a card you hold failed',
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: {
		reason: { type: 'string', value: 'TEXT', description: 'What went wrong (required)' },
		epoch: epochOption,
		'no-retry': { type: 'boolean', description: 'Park it in blocked instead of returning it to ready' },
		backoff: { type: 'string', value: 'SECONDS', description: 'Not claimable again for this long' },
	},
	async run(ctx) {
		const reason = stringOpt(ctx, 'reason');
		if (reason === undefined) {
			throw new UsageError('--reason is required: say what went wrong.');
		}
		const hub = await ctx.hub();
		const r = await hub.request('card/fail', {
			cardId: arg(ctx, 0),
			reason,
			...defined({
				epoch: intOpt(ctx, 'epoch'),
				retry: flag(ctx, 'no-retry') ? false : undefined,
				backoffSeconds: intOpt(ctx, 'backoff'),
			}),
		});
		cardChange(ctx, r);
		return 0;
	},
};

const reclaim: Command = {
	name: 'reclaim',
	summary: 'Take a card back from its holder (ID), every card of an agent (--from), or every expired lease',
	args: '[ID]',
	minArgs: 0,
	maxArgs: 1,
	options: {
		from: { type: 'string', value: 'AGENT', description: "Reclaim all of this agent's cards" },
		reason: { type: 'string', value: 'TEXT', description: 'Why' },
	},
	async run(ctx) {
		const from = stringOpt(ctx, 'from');
		const cardId = ctx.positionals[0];
		if (from !== undefined && cardId !== undefined) {
			throw new UsageError('Give a card ID or --from AGENT, not both.');
		}
		const reason = stringOpt(ctx, 'reason');
		const hub = await ctx.hub();
		const r =
			from === undefined
				? await hub.request('card/reclaim', defined({ cardId, reason }))
				: await hub.request('agent/reclaim', { agentId: from, ...defined({ reason }) });
		show(ctx, r, () =>
			r.cards.length === 0
				? 'Nothing to reclaim.'
				: `Reclaimed ${r.cards.length}: ${r.cards.map(c => c.id).join(', ')}`,
		);
		return 0;
	},
};

function simple(
	name: string,
	summary: string,
	method: 'card/block' | 'card/unblock',
	reason: 'required' | 'optional' | 'none',
): Command {
	return {
		name,
		summary,
		args: 'ID',
		minArgs: 1,
		maxArgs: 1,
		options:
			reason === 'none'
				? {}
				: { reason: { type: 'string', value: 'TEXT', description: reason === 'required' ? 'Why (required)' : 'Why' } },
		async run(ctx) {
			const r = stringOpt(ctx, 'reason');
			if (reason === 'required' && r === undefined) {
				throw new UsageError('--reason is required.');
			}
			const hub = await ctx.hub();
			const cardId = arg(ctx, 0);
			const result =
				method === 'card/block'
					? await hub.request(method, { cardId, reason: r ?? '' })
					: await hub.request(method, { cardId });
			cardChange(ctx, result);
			return 0;
		},
	};
}

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
	claim,
	heartbeat,
	complete,
	release,
	fail,
	reclaim,
	simple('block', 'Park a card in blocked (releases any claim)', 'card/block', 'required'),
	simple('unblock', 'Return a blocked card to ready', 'card/unblock', 'none'),
	linkCommand('link', 'Make ID wait until every DEP is done'),
	linkCommand('unlink', 'Stop ID waiting on each DEP'),
	deleteCommand,
];
