/**
 * Countdowns as the board shows them; the duration text itself is core/duration.ts, the tree's too.
 * Pure: callers pass the milliseconds.
 */
import { formatDuration } from '../core/duration';

/** "4m 05s", "1h 02m", "12s"; negative durations read as "expired 30s ago". */
export function formatRemaining(ms: number): string {
	if (ms <= 0) {
		return `expired ${formatDuration(-ms)} ago`;
	}
	return `${formatDuration(ms)} left`;
}
