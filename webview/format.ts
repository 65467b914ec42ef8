/** Durations as the board shows them (countdowns, ages). Pure: callers pass the milliseconds. */

/** "4m 05s", "1h 02m", "12s"; negative durations read as "expired 30s ago". */
export function formatRemaining(ms: number): string {
	if (ms <= 0) {
		return `expired ${formatDuration(-ms)} ago`;
	}
	return `${formatDuration(ms)} left`;
}

export function formatDuration(ms: number): string {
	const s = Math.floor(ms / 1000);
	if (s < 60) {
		return `${s}s`;
	}
	const m = Math.floor(s / 60);
	if (m < 60) {
		return `${m}m ${String(s % 60).padStart(2, '0')}s`;
	}
	const h = Math.floor(m / 60);
	if (h < 48) {
		return `${h}h ${String(m % 60).padStart(2, '0')}m`;
	}
	return `${Math.floor(h / 24)}d`;
}
