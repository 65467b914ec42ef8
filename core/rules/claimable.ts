/**
 * Pure readiness rules and the words every face prints for them (DESIGN §3). A ready card is exactly
 * one of: `waiting` (a dependency is not done), `deferred` (retry backoff, deferUntil not reached),
 * or claimable now; waiting is said first, as the claim refuses it first. The card's one word
 * (`stateWord`) is its status, except that a ready card held back says `waiting` or `deferred`, so
 * `ready` in a list, a card, the tree and the board always means "claimable now" and the counts of
 * `baton stats` add up to what `baton list` shows. core/rules/stateMachine.ts, the CLI, MCP results, the extension and
 * the board call these; the claim statements in the backlog say the same in SQL (`unmet_deps = 0`,
 * `defer_until <= now`). No I/O, no clock reads; platform-free and zod-free, so every face imports it
 * (docs/architecture.md). Capabilities, projects and scopes are per agent and are checked where the
 * agent is known (core/rules/claim.ts `checkClaimable`, scope*.ts).
 */
import { type Instant, instantMs } from '../clock';
import type { CardStatus } from '../protocol';

/** The part of a card the readiness rules read (a core row, a wire card or a dependency ref). */
export interface ReadinessView {
	status: CardStatus;
	unmetDeps: number;
	deferUntil: Instant | null;
}

/** Ready but waiting on dependencies that are not done. */
export function isWaiting(card: ReadinessView): boolean {
	return card.status === 'ready' && card.unmetDeps > 0;
}

/** Ready but kept out of the queue until deferUntil; at that very instant it is claimable again. */
export function isDeferred(card: ReadinessView, now: Instant): boolean {
	return card.status === 'ready' && card.deferUntil !== null && instantMs(card.deferUntil) > instantMs(now);
}

/** Ready, every dependency done, and not deferred. */
export function isClaimable(card: ReadinessView, now: Instant): boolean {
	return card.status === 'ready' && !isWaiting(card) && !isDeferred(card, now);
}

/** What a ready card is now: exactly one, waiting before deferred (stats counts them the same way). */
export type Readiness = 'claimable' | 'waiting' | 'deferred';

/** The readiness of a ready card; null for any other status. */
export function readinessOf(card: ReadinessView, now: Instant): Readiness | null {
	if (card.status !== 'ready') {
		return null;
	}
	return isWaiting(card) ? 'waiting' : isDeferred(card, now) ? 'deferred' : 'claimable';
}

/** A card's one word: its status, or for a ready card held back, why (`ready` = claimable now). */
export type StateWord = CardStatus | 'waiting' | 'deferred';

/** The word every face prints for a card's state (list's STATUS, show, dependency lines, MCP `state`). */
export function stateWord(card: ReadinessView, now: Instant): StateWord {
	const r = readinessOf(card, now);
	return r === null || r === 'claimable' ? card.status : r;
}

/**
 * A dependency or dependent as card/get names it (protocol CardRef): a hub older than the readiness
 * fields sends only the status, which then reads as not held back.
 */
export interface RefView {
	status: CardStatus;
	unmetDeps?: number | undefined;
	deferUntil?: string | null | undefined;
}

/** stateWord of a referenced card. */
export function refStateWord(ref: RefView, now: Instant): StateWord {
	return stateWord({ status: ref.status, unmetDeps: ref.unmetDeps ?? 0, deferUntil: ref.deferUntil ?? null }, now);
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
