/**
 * Pure readiness rules (DESIGN §3): whether a ready card waits on dependencies, is deferred by retry
 * backoff, or can be claimed now. The one definition rules.ts, the extension and the board use; the
 * claim statements in the backlog say the same in SQL (`unmet_deps = 0`, `defer_until <= now`).
 * No I/O, no clock reads; platform-free and zod-free, so every face imports it (docs/architecture.md).
 * Capabilities are per agent and are checked where the agent is known (rules.ts `checkClaimable`).
 */
import { type Instant, instantMs } from './clock';
import type { CardStatus } from './protocol';

/** The part of a card the readiness rules read (a core row or a wire card). */
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
