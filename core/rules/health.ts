/**
 * Pure agent health and "stalled": the one definition the hub, the extension's trees
 * and status bar, and the board all call. Derived from lastSeenAt, the card's progress time and the
 * thresholds; no I/O, no clock reads (callers pass now). Platform-free and zod-free (types only from
 * core/protocol/index.ts), so the webview and the extension import it (docs/architecture.md).
 */
import { type Instant, instantMs } from '../clock';
import { isLeaseExpired } from './lease';
import type { AgentHealth, CardStatus, HealthThresholds } from '../protocol';

/**
 * healthy < healthySeconds, late < lateSeconds, stale < staleSeconds, then dead (each bound belongs
 * to the worse state). An unparsable lastSeenAt reads as dead.
 */
export function agentHealth(lastSeenAt: Instant, now: Instant, thresholds: HealthThresholds): AgentHealth {
	const age = (instantMs(now) - instantMs(lastSeenAt)) / 1000;
	if (age < thresholds.healthySeconds) {
		return 'healthy';
	}
	if (age < thresholds.lateSeconds) {
		return 'late';
	}
	if (age < thresholds.staleSeconds) {
		return 'stale';
	}
	return 'dead';
}

/** Alive = healthy or late. A stale or dead agent is shown as stale or dead, never as stalled. */
export function isAlive(health: AgentHealth): boolean {
	return health === 'healthy' || health === 'late';
}

/** The part of a card the stall rule reads (a core row or a wire card). */
export interface StallView {
	status: CardStatus;
	claimOwner: string | null;
	progressAt: Instant | null;
	claimedAt: Instant | null;
	leaseExpiresAt: Instant | null;
}

/**
 * Quiet = held, and no progress reported (nor the claim made, when it never reported) for at least
 * stallSeconds. The clock half of "stalled"; says nothing about the holder.
 */
export function isQuiet(card: StallView, now: Instant, stallSeconds: number): boolean {
	if (card.status !== 'claimed') {
		return false;
	}
	const since = card.progressAt ?? card.claimedAt;
	return since !== null && instantMs(now) - instantMs(since) >= stallSeconds * 1000;
}

/**
 * Stalled = quiet, the lease still running, and the holder alive: liveness is not progress, so a
 * stalled agent may be perfectly alive and a human decides. A card whose lease ran out is "expired",
 * and one held by a stale or dead agent shows that agent's health instead. `holder` undefined means
 * the holder is not known here (agents not loaded yet): the card alone decides.
 */
export function isCardStalled(
	card: StallView,
	holder: AgentHealth | undefined,
	now: Instant,
	thresholds: HealthThresholds,
): boolean {
	if (holder !== undefined && !isAlive(holder)) {
		return false;
	}
	return !isLeaseExpired(card, now) && isQuiet(card, now, thresholds.stallSeconds);
}

/** An agent is stalled when it is alive and one of the cards it holds is stalled. */
export function isAgentStalled(
	health: AgentHealth,
	held: readonly StallView[],
	now: Instant,
	thresholds: HealthThresholds,
): boolean {
	return isAlive(health) && held.some(card => isCardStalled(card, health, now, thresholds));
}
