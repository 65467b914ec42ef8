/**
 * The guards of "claimable now", in one table: each says what holds a card back, whether that depends on
 * the claiming agent, the word a face prints for a card it holds back, the key `stats` counts it under,
 * its plain check over what a card on the wire carries, and its refusal with the next step. The card's
 * own word (claimable.ts `stateWord`) is the first claimer-independent guard that holds it back, in the
 * table's order, so `ready` means claimable now by some agent; the per-claimer guards (assignment,
 * max-held, project, capabilities, phase, labels) only say why one agent may not take it.
 * The claim statements' SQL for the column guards comes from `sql` here (core/backlog/claimableSql.ts).
 * Pure: no I/O, no clock reads, no zod, no platform API, so every face imports it. It must not decide
 * transitions (core/rules/stateMachine.ts) nor read the store.
 */
import { type Instant, instantMs } from '../clock';
import type { CardStatus } from '../protocol';

/** The words a card held back by a claimer-independent guard shows instead of `ready`. */
export const heldWords = ['waiting', 'deferred', 'paused'] as const;
export type HeldWord = (typeof heldWords)[number];

/**
 * What the claimer-independent guards read: the card as a row, a wire card or a reference carries it.
 * The tree, pause and files fields are the hub's (card/list, card/get); absent (an older hub, a card
 * from an event) they read as not holding the card back.
 */
export interface GuardView {
	id?: string;
	status: CardStatus;
	unmetDeps: number;
	deferUntil: Instant | null;
	/** How many of its children are not done. */
	openChildren?: number | undefined;
	/** Its parent, or an ancestor, waits on a dependency. */
	treeWaits?: boolean | undefined;
	/** A pause of everything, its project, phase or id covers it. */
	paused?: boolean | undefined;
	/** The card whose live claim holds files it touches; null or absent: none. */
	filesHeldBy?: string | null | undefined;
}

/** What the per-claimer guards read of the card besides GuardView. */
export interface ClaimerCardView extends GuardView {
	requires?: readonly string[] | undefined;
	assignee?: string | null | undefined;
	project?: string | null | undefined;
	phase?: string | null | undefined;
	labels?: readonly string[] | undefined;
}

/** The claiming agent, as far as a face or the claim knows it; an absent field does not narrow. */
export interface Claimer {
	id: string;
	kind?: string | null | undefined;
	capabilities?: readonly string[] | null | undefined;
	/** '*' or undefined: any; null: only cards without a project; else its own and those without one. */
	project?: string | null | undefined;
	phase?: string | undefined;
	labels?: readonly string[] | undefined;
	/** How many cards it holds now, and the backlog's max-held (null: off). */
	held?: number | undefined;
	maxHeld?: number | null | undefined;
}

export type GuardName =
	| 'status'
	| 'dependencies'
	| 'children'
	| 'ancestors'
	| 'files'
	| 'defer'
	| 'pause'
	| 'assignment'
	| 'maxHeld'
	| 'project'
	| 'capabilities'
	| 'phase'
	| 'labels';

/** A guard of a claimer-independent kind: it sets the card's word. */
export interface CardGuard {
	name: GuardName;
	perClaimer: false;
	/** The word of a ready card it holds back (null: the status guard, whose word is the status). */
	word: HeldWord | null;
	/** card/stats' key that counts the ready cards it holds back first (null: not a ready card). */
	countKey: HeldWord | null;
	/** True when it keeps the card from being claimed at `now`. */
	holds(card: GuardView, now: Instant): boolean;
	/** Why, and what to do instead. */
	refusal(card: GuardView): string;
	/**
	 * The SQL condition of the card passing it, for a statement over `cards` (`a`: '' or 'alias.';
	 * `now`: a placeholder), when it is a column test; the others are checked where their rows are.
	 */
	sql?: (a: string, now: string) => string;
}

/** A guard that depends on the claiming agent. */
export interface ClaimerGuard {
	name: GuardName;
	perClaimer: true;
	holds(card: ClaimerCardView, claimer: Claimer): boolean;
	refusal(card: ClaimerCardView, claimer: Claimer): string;
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;
const idOf = (card: GuardView): string => (card.id === undefined ? 'The card' : `Card ${card.id}`);
const nextStep: Record<Exclude<CardStatus, 'ready'>, string> = {
	claimed: 'Claim another card, or ask a human to reclaim it.',
	review: 'It waits for a review: approve it or request changes; a reviewing agent claims it with review: true.',
	blocked: 'Unblock it first.',
	done: 'Reopen it first if it needs more work.',
};

/** Deferred at `now`: its deferUntil is still ahead (at that very instant it is claimable again). */
function deferredAt(card: GuardView, now: Instant): boolean {
	return card.deferUntil !== null && instantMs(card.deferUntil) > instantMs(now);
}

/**
 * The claimer-independent guards, in the order the card's word is decided and stats counts them: a
 * card two guards hold back shows the first one's word (a deferred card whose files are held says
 * `deferred`). Column guards first, then the pause, then files (whose overlap is checked last, over
 * the few scoped cards left).
 */
export const cardGuards: readonly CardGuard[] = [
	{
		name: 'status',
		perClaimer: false,
		word: null,
		countKey: null,
		holds: card => card.status !== 'ready',
		refusal: card =>
			card.status === 'ready'
				? `${idOf(card)} is ready.`
				: `${idOf(card)} is ${card.status}; it cannot be claimed. ${nextStep[card.status]}`,
		sql: a => `${a}status = 'ready'`,
	},
	{
		name: 'dependencies',
		perClaimer: false,
		word: 'waiting',
		countKey: 'waiting',
		holds: card => card.unmetDeps > 0,
		refusal: card =>
			`${idOf(card)} waits on ${plural(card.unmetDeps, 'unfinished dependency', 'unfinished dependencies')}. Claim one of those, or claim without a card id.`,
		sql: a => `${a}unmet_deps = 0`,
	},
	{
		name: 'children',
		perClaimer: false,
		word: 'waiting',
		countKey: 'waiting',
		holds: card => (card.openChildren ?? 0) > 0,
		refusal: card =>
			`${idOf(card)} has ${plural(card.openChildren ?? 0, 'open child', 'open children')}; it is claimable once they are done. Claim one of them instead.`,
		sql: a => `${a}open_children = 0`,
	},
	{
		name: 'ancestors',
		perClaimer: false,
		word: 'waiting',
		countKey: 'waiting',
		holds: card => card.treeWaits === true,
		refusal: card =>
			`${idOf(card)} waits while its parent waits on dependencies. Claim the parent's dependencies first.`,
		sql: a => `NOT ${a}tree_waits`,
	},
	{
		name: 'defer',
		perClaimer: false,
		word: 'deferred',
		countKey: 'deferred',
		holds: deferredAt,
		refusal: card =>
			`${idOf(card)} is deferred until ${card.deferUntil === null ? '?' : new Date(instantMs(card.deferUntil)).toISOString()} (retry backoff); claim it after that.`,
		sql: (a, now) => `(${a}defer_until IS NULL OR ${a}defer_until <= ${now})`,
	},
	{
		name: 'pause',
		perClaimer: false,
		word: 'paused',
		countKey: 'paused',
		holds: card => card.paused === true,
		refusal: card => `${idOf(card)} is paused. It is claimable again after baton resume.`,
	},
	{
		name: 'files',
		perClaimer: false,
		word: 'waiting',
		countKey: 'waiting',
		holds: card => card.filesHeldBy != null,
		refusal: card =>
			`${idOf(card)} touches files that ${card.filesHeldBy ?? 'another claim'} holds. Claim it after ${card.filesHeldBy ?? 'that claim'} ends, or claim another card.`,
	},
];

const coversProject = (claimer: Claimer, project: string | null): boolean =>
	claimer.project === undefined || claimer.project === '*' || project === null || project === claimer.project;

/** The guards that depend on the claiming agent, checked where the agent is known. */
export const claimerGuards: readonly ClaimerGuard[] = [
	{
		name: 'assignment',
		perClaimer: true,
		holds: (card, c) => {
			const a = card.assignee ?? null;
			return a !== null && a !== c.id && (c.kind == null || a !== `kind:${c.kind}`);
		},
		refusal: card => {
			const a = card.assignee ?? '?';
			return `${idOf(card)} is assigned to ${a}; only ${a.startsWith('kind:') ? `an agent of kind ${a.slice(5)}` : 'that agent'} may claim it. Claim another card, or ask a human to reassign it.`;
		},
	},
	{
		name: 'maxHeld',
		perClaimer: true,
		holds: (_card, c) => c.maxHeld != null && (c.held ?? 0) >= c.maxHeld,
		refusal: (_card, c) =>
			`agent ${c.id} already holds ${plural(c.held ?? 0, 'card', 'cards')} (max-held ${c.maxHeld ?? '?'}): complete, release or fail one first.`,
	},
	{
		name: 'project',
		perClaimer: true,
		holds: (card, c) => !coversProject(c, card.project ?? null),
		refusal: (card, c) =>
			`${idOf(card)} belongs to project ${card.project ?? '?'}; you work in ${c.project ?? 'no project'}. Claim a card of your project, or start the agent in ${card.project ?? '?'}'s repository.`,
	},
	{
		name: 'capabilities',
		perClaimer: true,
		holds: (card, c) => c.capabilities != null && missingCapabilities(card, c.capabilities).length > 0,
		refusal: (card, c) =>
			`${idOf(card)} needs capabilities you lack [${missingCapabilities(card, c.capabilities ?? []).join(', ')}]; claim with capabilities that include them.`,
	},
	{
		name: 'phase',
		perClaimer: true,
		holds: (card, c) => c.phase !== undefined && card.phase !== c.phase,
		refusal: (card, c) =>
			`${idOf(card)} is in phase ${card.phase ?? '(none)'}, not ${c.phase ?? '?'}; claim without a phase or in its own.`,
	},
	{
		name: 'labels',
		perClaimer: true,
		holds: (card, c) =>
			c.labels !== undefined && c.labels.length > 0 && !(card.labels ?? []).some(l => c.labels?.includes(l)),
		refusal: (card, c) =>
			`${idOf(card)} has none of the labels [${(c.labels ?? []).join(', ')}]; claim without labels or with one of its own.`,
	},
];

/** The capabilities a card requires that `have` lacks. */
export function missingCapabilities(card: ClaimerCardView, have: readonly string[]): string[] {
	return (card.requires ?? []).filter(r => !have.includes(r));
}

/** The first claimer-independent guard that holds the card back at `now`; undefined: claimable now. */
export function cardHold(card: GuardView, now: Instant): CardGuard | undefined {
	return cardGuards.find(g => g.holds(card, now));
}

/** The first guard, of either kind, that keeps `claimer` from taking the card now; undefined: it may. */
export function claimHold(card: ClaimerCardView, claimer: Claimer, now: Instant): CardGuard | ClaimerGuard | undefined {
	return cardHold(card, now) ?? claimerGuards.find(g => g.holds(card, claimer));
}

/** The guard of a name (the table's entry). */
export function guardNamed(name: GuardName): CardGuard | ClaimerGuard {
	const g = [...cardGuards, ...claimerGuards].find(x => x.name === name);
	if (g === undefined) {
		throw new Error(`no claim guard ${name}`);
	}
	return g;
}

/**
 * The column guards' SQL, joined: the condition of "claimable now" over the card's own columns
 * (status, dependencies, children, ancestors, defer). Files and pauses are checked over their tables.
 */
export function columnGuardsSql(now: string, a = ''): string {
	return cardGuards
		.filter(g => g.sql !== undefined)
		.map(g => g.sql?.(a, now) ?? 'true')
		.join(' AND ');
}
