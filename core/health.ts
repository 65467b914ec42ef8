/** Pure agent health (DESIGN §2, §5): derived from lastSeen and thresholds; callers pass now. */
import type { AgentHealth, HealthThresholds } from './protocol';

/** healthy < healthySeconds, late < lateSeconds, stale < staleSeconds, then dead. */
export function agentHealth(lastSeenAt: Date, now: Date, thresholds: HealthThresholds): AgentHealth {
	const age = (now.getTime() - lastSeenAt.getTime()) / 1000;
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

/**
 * Stalled = the card is held and its holder has reported no progress (nor claimed) for stallSeconds.
 * Liveness is not progress: a stalled agent may be perfectly alive; a human decides.
 */
export function isStalled(status: string, progressAt: Date | null, now: Date, thresholds: HealthThresholds): boolean {
	if (status !== 'claimed' || progressAt === null) {
		return false;
	}
	return now.getTime() - progressAt.getTime() >= thresholds.stallSeconds * 1000;
}
