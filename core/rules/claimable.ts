/**
 * Readiness as every face says it, read off the claim guards' table (claimGuards.ts). A card's one word
 * (`stateWord`) is its status, except that a ready card held back by a claimer-independent guard says
 * why: `waiting` (dependencies, open children, a waiting ancestor, files another claim holds),
 * `deferred` (retry backoff) or `paused`, in the table's order. So `ready` in a list, a card, the tree,
 * the board and MCP results always means "claimable now by some agent", and `baton stats` counts the
 * same words, so its numbers add up to what `baton list` shows. The claim statements say the same in
 * SQL (core/backlog/claimableSql.ts, from the table's pieces). No I/O, no clock reads; platform-free
 * and zod-free, so every face imports it. The per-claimer guards (capabilities, assignment, project,
 * max-held, phase, labels) are checked where the agent is known (claimGuards.ts `claimHold`).
 */
import { type Instant, instantMs } from '../clock';
import type { CardStatus } from '../protocol';
import { type GuardView, type HeldWord, cardHold } from './claimGuards';

/** The part of a card the readiness rules read (a core row, a wire card or a dependency ref). */
export type ReadinessView = GuardView;

/** Ready but waiting on dependencies that are not done. */
export function isWaiting(card: ReadinessView): boolean {
	return card.status === 'ready' && card.unmetDeps > 0;
}

/** Ready but kept out of the queue until deferUntil; at that very instant it is claimable again. */
export function isDeferred(card: ReadinessView, now: Instant): boolean {
	return card.status === 'ready' && card.deferUntil !== null && instantMs(card.deferUntil) > instantMs(now);
}

/** Claimable now by some agent: no claimer-independent guard holds it back. */
export function isClaimable(card: ReadinessView, now: Instant): boolean {
	return cardHold(card, now) === undefined;
}

/** What a ready card is now: claimable, or the word of the first guard holding it back. */
export type Readiness = 'claimable' | HeldWord;

/** The readiness of a ready card; null for any other status. */
export function readinessOf(card: ReadinessView, now: Instant): Readiness | null {
	if (card.status !== 'ready') {
		return null;
	}
	return cardHold(card, now)?.word ?? 'claimable';
}

/** A card's one word: its status, or for a ready card held back, why (`ready` = claimable now). */
export type StateWord = CardStatus | HeldWord;

/** Every word a card can show, in the order faces list them (list --status takes each). */
export const stateWords: readonly StateWord[] = [
	'ready',
	'waiting',
	'deferred',
	'paused',
	'claimed',
	'review',
	'blocked',
	'done',
];

/** The word every face prints for a card's state (list's STATUS, show, dependency lines, MCP `state`). */
export function stateWord(card: ReadinessView, now: Instant): StateWord {
	const r = readinessOf(card, now);
	return r === null || r === 'claimable' ? card.status : r;
}

/**
 * A dependency or dependent as card/get names it (protocol CardRef): a hub older than the readiness
 * fields sends only the status, which then reads as not held back.
 */
export interface RefView extends Omit<GuardView, 'unmetDeps' | 'deferUntil'> {
	unmetDeps?: number | undefined;
	deferUntil?: string | null | undefined;
}

/** stateWord of a referenced card. */
export function refStateWord(ref: RefView, now: Instant): StateWord {
	return stateWord({ ...ref, unmetDeps: ref.unmetDeps ?? 0, deferUntil: ref.deferUntil ?? null }, now);
}

/** A dependency as a face knows it: its id and enough to tell whether it is done. */
export interface DependencyView {
	id: string;
	status: CardStatus;
}

/**
 * The dependencies a card still waits on: those not done, in the order given. A done dependency is
 * never named (a review card is not done: its dependents keep waiting).
 */
export function unmetDependencies<T extends DependencyView>(deps: readonly T[]): T[] {
	return deps.filter(d => d.status !== 'done');
}
