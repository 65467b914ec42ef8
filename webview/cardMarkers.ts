/**
 * A card's markers on the board (waiting, deferred, expired, stalled) at a moment: the rules are
 * core's (claimable.ts, lease.ts, health.ts), the same functions the hub and the extension's trees
 * call, never re-written here. Pure: the holder's health and the time are passed in.
 */
import { isDeferred, stateWord } from '../core/rules/claimable';
import { isCardStalled } from '../core/rules/health';
import { isLeaseExpired } from '../core/rules/lease';
import type { AgentHealth, Card, HealthThresholds } from '../core/protocol';

export interface CardMarkers {
	/** Ready but waiting on dependencies that are not done. */
	waiting: boolean;
	/** Ready but deferred (retry backoff) until a later time. */
	deferred: boolean;
	/** Claimed and the lease has run out (the reaper will return it). */
	expired: boolean;
	/**
	 * Claimed, lease running, no progress for stallSeconds, and the holder alive (healthy or late):
	 * a stale or dead holder shows as such, not as stalled (core/rules/health.ts `isCardStalled`).
	 */
	stalled: boolean;
}

/** `holder`: the health of the card's claim owner at `nowMs`, undefined when not known. */
export function cardMarkers(
	card: Card,
	nowMs: number,
	holder: AgentHealth | undefined,
	thresholds: HealthThresholds,
): CardMarkers {
	return {
		waiting: stateWord(card, nowMs) === 'waiting',
		deferred: isDeferred(card, nowMs),
		expired: isLeaseExpired(card, nowMs),
		stalled: isCardStalled(card, holder, nowMs, thresholds),
	};
}
