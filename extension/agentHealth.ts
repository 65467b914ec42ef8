/**
 * Agent health and "stalled", derived on this side from lastSeenAt and the thresholds (DESIGN §2):
 * a dead agent sends nothing, so only a client-side clock notices it going late, stale and dead.
 * Pure: callers pass now.
 */
import type { Agent, AgentHealth, Card, HealthThresholds } from '../core/protocol';

export function healthAt(lastSeenAt: string, now: number, t: HealthThresholds): AgentHealth {
	const ageSeconds = (now - Date.parse(lastSeenAt)) / 1000;
	if (ageSeconds < t.healthySeconds) {
		return 'healthy';
	}
	if (ageSeconds < t.lateSeconds) {
		return 'late';
	}
	return ageSeconds < t.staleSeconds ? 'stale' : 'dead';
}

/** Alive (healthy or late) while holding a card with no progress report for stallSeconds. */
export function isStalled(health: AgentHealth, held: readonly Card[], now: number, t: HealthThresholds): boolean {
	if (health !== 'healthy' && health !== 'late') {
		return false;
	}
	return held.some(card => {
		const since = card.progressAt ?? card.claimedAt;
		return since !== null && (now - Date.parse(since)) / 1000 >= t.stallSeconds;
	});
}

/** An agent as the views show it: health recomputed for now. */
export interface AgentView {
	agent: Agent;
	health: AgentHealth;
	stalled: boolean;
	/** Cards this agent holds, as far as this window knows them. */
	cards: Card[];
	/** Seconds since the hub last heard from it. */
	ageSeconds: number;
}

export const healthRank: Record<AgentHealth, number> = { healthy: 0, late: 1, stale: 2, dead: 3 };
