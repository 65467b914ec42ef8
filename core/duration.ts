/**
 * The one way every face writes a duration for people (countdowns, ages): "12s", "4m 05s", "1h 02m",
 * "3d". Whole units, cut down, never rounded up, so a countdown never shows more time than is left and
 * the tree, the board and the CLI print the same text for the same span. Pure and platform-free (the
 * board and the extension import it); says nothing about what the span means (lease.ts, health.ts).
 */

/** `ms` as "12s", "4m 05s", "1h 02m" (under 48 hours) or "3d"; a negative span reads as 0s. */
export function formatDuration(ms: number): string {
	const s = Math.max(0, Math.floor(ms / 1000));
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
