/**
 * `baton approve`: one card (the hub's `card/review`, answered as ever), several (`approve A B C`) or
 * every card in review whose checks passed (`--all-passing [--project P]`). Several are all checked
 * first — an unknown id, or a card that is not in review, is named with where it is and what to do,
 * and then nothing is approved — and land one at a time, dependencies before their dependents, each
 * reported as it happens ("Landed X on main as 1a2b3c4" / "X came back: why"); a card whose
 * dependency did not land is not tried. Exit 0 when every card landed (or was approved), 1 when any
 * did not. Every landing is the hub's (landing.ts); this module only orders, asks and reports.
 * Must not: decide who may approve (the hub does), or approve from inside a coding agent.
 */
import { BatonError } from '../../core/errors';
import { type Card, type Result, ReviewParams } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { stateWord } from '../../core/rules/claimable';
import { passesChecks } from '../../core/rules/review';
import { statusLine } from './cardChange';
import { type Command, type CommandContext, show } from './command';
import { cliFlags, paramFlags } from './flags';
import { approvalRefusal } from './insideAgent';
import { printJson, UsageError } from './output';
import { checkProject, chosenProject, noProjectFlag } from './project';
import { projectParams } from './projectNote';

const approveFlags = paramFlags(ReviewParams.pick({ note: true, version: true }), {
	note: { value: 'TEXT', description: 'A remark on the approval, kept in the log' },
	version: { value: 'N', description: 'Refuse if the card changed since this version (one card only)' },
});
const manyFlags = cliFlags({
	ownWork: {
		type: 'boolean',
		description: 'Approve a card you completed yourself (a conflict you resolved, say): recorded in its history',
	},
	allPassing: { type: 'boolean', description: 'Every card in review whose checks passed (or that has none)' },
	project: {
		type: 'string',
		value: 'ID',
		description: "With --all-passing: this project's cards (default: this folder's)",
	},
});

/** An approval's git may take a while (landing, its checkout's update): two minutes, not the usual 15 s. */
const landTimeoutMs = 120_000;

/** What happened to one card of a several-card approval (the --json answer's entries). */
export type ApproveOutcome =
	| { cardId: string; outcome: 'landed'; base: string; commit: string }
	| { cardId: string; outcome: 'approved'; kept?: string }
	| { cardId: string; outcome: 'came_back' | 'refused'; code: string; reason: string }
	| { cardId: string; outcome: 'not_tried'; reason: string };

function refuseInsideAgent(ctx: CommandContext, cardId: string): void {
	const why = ctx.insideAgent();
	if (why !== undefined) {
		throw new BatonError('invalid_input', approvalRefusal('approve', cardId, why), { insideAgent: why });
	}
}

/** One card: the hub's answer as before (its JSON is a contract scripts read). */
function reviewed(ctx: CommandContext, r: Result<'card/review'>): void {
	show(ctx, r, () => {
		const freed = r.unblocked.length === 0 ? '' : `\nNow claimable: ${r.unblocked.join(', ')}`;
		const ws = r.card.workspace;
		const landed =
			ws?.landed === undefined
				? ''
				: `\nLanded ${ws.branch} on ${ws.base} (${ws.landed.mode}) as ${ws.landed.commit.slice(0, 12)}.`;
		return `${statusLine(r.card)}${landed}${freed}`;
	});
}

/** Where a card that is not in review is, and what to do about it, in one sentence. */
export function notInReview(card: Card, now: number = Date.now()): string {
	const where = stateWord(card, now);
	switch (card.status) {
		case 'done':
			return `${card.id} is done already${card.workspace?.landed === undefined ? '' : ` (landed as ${card.workspace.landed.commit.slice(0, 7)} on ${card.workspace.base})`}: leave it out.`;
		case 'claimed':
			return `${card.id} is claimed by ${card.claimOwner ?? 'an agent'} and not finished: it waits for review once its agent completes it.`;
		case 'blocked':
			return `${card.id} is blocked${card.blockedReason === null ? '' : ` (${card.blockedReason})`}: \`baton unblock ${card.id}\` sends it back to an agent; it comes to review once completed.`;
		default:
			return `${card.id} is ${where}, not in review: an agent has not completed it yet (\`baton show ${card.id}\`).`;
	}
}

/** `cards` with each card after the given cards it depends on (a stable order otherwise). */
export function landingOrder(cards: readonly Card[]): Card[] {
	const byId = new Map(cards.map(c => [c.id, c]));
	const out: Card[] = [];
	const placed = new Set<string>();
	const visiting = new Set<string>();
	const place = (card: Card): void => {
		if (placed.has(card.id) || visiting.has(card.id)) {
			return; // a cycle cannot exist (the DAG refuses it); the guard keeps this total anyway
		}
		visiting.add(card.id);
		for (const dep of card.dependsOn) {
			const d = byId.get(dep);
			if (d !== undefined) {
				place(d);
			}
		}
		visiting.delete(card.id);
		placed.add(card.id);
		out.push(card);
	};
	cards.forEach(place);
	return out;
}

/** Reads every id, refusing all of them (nothing approved) when any is unknown or not in review. */
async function checkAll(hub: RpcClient, ids: readonly string[]): Promise<Card[]> {
	const problems: string[] = [];
	const cards: Card[] = [];
	let code: 'not_found' | 'invalid_transition' = 'invalid_transition';
	for (const id of ids) {
		try {
			const { card } = await hub.request('card/get', { cardId: id });
			if (card.status === 'review') {
				cards.push(card);
			} else {
				problems.push(notInReview(card));
			}
		} catch (e) {
			if (!BatonError.is(e, 'not_found')) {
				throw e;
			}
			code = 'not_found';
			problems.push(`${id}: no such card (\`baton list --status review\` lists the cards waiting for review).`);
		}
	}
	if (problems.length > 0) {
		throw new BatonError(
			code,
			`Nothing was approved: ${problems.join(' ')} Approve the others without ${problems.length === 1 ? 'it' : 'them'}.`,
			{ problems },
		);
	}
	return cards;
}

/** Every card in review of the project (or all), whose checks passed. */
async function allPassing(ctx: CommandContext, hub: RpcClient, flag: string | undefined): Promise<Card[]> {
	const checked = flag === undefined ? undefined : checkProject(flag, '--project');
	const project = await chosenProject(checked, noProjectFlag.read(ctx.values).noProject, ctx.workingProject);
	const cards: Card[] = [];
	let cursor: string | undefined;
	do {
		const page = await hub.request('card/list', {
			status: 'review',
			limit: 500,
			...projectParams(project),
			...(cursor === undefined ? {} : { cursor }),
		});
		cards.push(...page.cards.filter(c => c.status === 'review' && passesChecks(c)));
		cursor = page.nextCursor;
	} while (cursor !== undefined);
	return cards;
}

/** Lands one card, reporting it; what happened. */
async function landOne(
	ctx: CommandContext,
	hub: RpcClient,
	card: Card,
	note: string | undefined,
): Promise<ApproveOutcome> {
	try {
		const r = await hub.request(
			'card/review',
			{ cardId: card.id, approve: true, ...(note === undefined ? {} : { note }) },
			{ timeoutMs: landTimeoutMs },
		);
		const ws = r.card.workspace;
		if (ws?.landed !== undefined) {
			say(ctx, `Landed ${card.id} on ${ws.base} as ${ws.landed.commit.slice(0, 7)}`);
			return { cardId: card.id, outcome: 'landed', base: ws.base, commit: ws.landed.commit };
		}
		if (ws !== undefined) {
			say(ctx, `Approved ${card.id}; its branch ${ws.branch} is kept (the project lands nothing itself: --land none)`);
			return { cardId: card.id, outcome: 'approved', kept: ws.branch };
		}
		say(ctx, `Approved ${card.id} (it has no branch to land)`);
		return { cardId: card.id, outcome: 'approved' };
	} catch (e) {
		if (!BatonError.is(e)) {
			throw e;
		}
		// A conflict sends the card back to ready (its data carries the card); a refusal leaves it in review.
		const back = (e.data as { card?: Card } | undefined)?.card?.status === 'ready';
		say(ctx, back ? `${card.id} came back: ${e.message}` : `${card.id} was not landed: ${e.message}`);
		return { cardId: card.id, outcome: back ? 'came_back' : 'refused', code: e.code, reason: e.message };
	}
}

function say(ctx: CommandContext, line: string): void {
	if (!ctx.json) {
		ctx.output.out(line);
	}
}

/** Lands `cards` in dependency order, one at a time; exit 0 when all landed or were approved. */
async function landAll(ctx: CommandContext, hub: RpcClient, cards: readonly Card[], note?: string): Promise<number> {
	const results: ApproveOutcome[] = [];
	const failed = new Set<string>();
	for (const card of landingOrder(cards)) {
		const dep = card.dependsOn.find(d => failed.has(d));
		if (dep !== undefined) {
			const reason = `its dependency ${dep} did not land, so it was not tried; it stays in review.`;
			say(ctx, `${card.id} was not landed: ${reason}`);
			results.push({ cardId: card.id, outcome: 'not_tried', reason });
			failed.add(card.id);
			continue;
		}
		const r = await landOne(ctx, hub, card, note);
		results.push(r);
		if (r.outcome !== 'landed' && r.outcome !== 'approved') {
			failed.add(card.id);
		}
	}
	const good = results.length - failed.size;
	if (ctx.json) {
		printJson(ctx.output, { results });
	} else if (failed.size > 0) {
		ctx.output.out(`${good} of ${results.length} landed; not landed: ${[...failed].join(', ')}.`);
	} else if (results.length > 1) {
		ctx.output.out(`All ${results.length} landed.`);
	}
	return failed.size === 0 ? 0 : 1;
}

export const approveCommand: Command = {
	name: 'approve',
	summary:
		'Approve cards in review: each lands on its base, dependencies first (--all-passing: all whose checks passed)',
	args: '[ID...]',
	minArgs: 0,
	maxArgs: Infinity,
	options: { ...approveFlags.options, ...manyFlags.options, ...noProjectFlag.options },
	notes:
		'With one ID, --version refuses a card that changed since you looked at it. A card with a workspace lands\n' +
		'its branch first: a checkout of the base with changes to the landed files refuses the approval (exit 1),\n' +
		'and a conflict sends the card back to ready with the conflict as its hand-over (exit 1).\n' +
		'Several IDs (or --all-passing): every card is checked first, and an unknown one or one not in review\n' +
		'approves none; then each lands in turn, reported as it happens. Exit 0 when all landed, 1 when any did not.',
	async run(ctx) {
		const p = approveFlags.read(ctx.values);
		const many = manyFlags.read(ctx.values);
		const ids = [...new Set(ctx.positionals)];
		if (many.allPassing && ids.length > 0) {
			throw new UsageError('Name cards or use --all-passing, not both.');
		}
		if (!many.allPassing && ids.length === 0) {
			throw new UsageError('Name the cards to approve, or use --all-passing.');
		}
		if (!many.allPassing && (many.project !== undefined || noProjectFlag.read(ctx.values).noProject)) {
			throw new UsageError('--project and --no-project go with --all-passing.');
		}
		if (p.version !== undefined && (many.allPassing || ids.length > 1)) {
			throw new UsageError('--version names one card version: use it with one ID.');
		}
		if (many.ownWork && (many.allPassing || ids.length > 1)) {
			throw new UsageError('--own-work approves one card you completed yourself: use it with one ID.');
		}
		refuseInsideAgent(ctx, ids.join(', ') || 'in review');
		const hub = await ctx.hub();
		if (!many.allPassing && ids.length === 1) {
			const cardId = ids[0] ?? '';
			const own = many.ownWork ? { ownWork: true as const } : {};
			reviewed(
				ctx,
				await hub.request('card/review', { cardId, approve: true, ...p, ...own }, { timeoutMs: landTimeoutMs }),
			);
			return 0;
		}
		const cards = many.allPassing ? await allPassing(ctx, hub, many.project) : await checkAll(hub, ids);
		if (cards.length === 0) {
			show(ctx, { results: [] }, () => 'No card in review has passed its checks: nothing to approve.');
			return 0;
		}
		return landAll(ctx, hub, cards, p.note);
	},
};
