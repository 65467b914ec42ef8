/**
 * Where core gets the time. Rules never read the clock themselves: Backlog asks its Clock once per
 * operation and passes `now` down, so tests drive TTLs and backoff with a fake clock and never sleep.
 * Platform-free and zod-free: the webview and the extension import it (docs/architecture.md).
 */

export interface Clock {
	now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * A point in time as each face holds it: a Date in core, an ISO string on the wire, epoch
 * milliseconds in the views' clocks. The derived rules take any of them, so every face calls the
 * same function instead of converting (or re-writing the rule).
 */
export type Instant = Date | string | number;

/** Epoch milliseconds of `t`; NaN for an unparsable string (every comparison with it is false). */
export function instantMs(t: Instant): number {
	return typeof t === 'number' ? t : typeof t === 'string' ? Date.parse(t) : t.getTime();
}

/** A clock that only moves when told to; for tests and for replaying scenarios. */
export class ManualClock implements Clock {
	private current: number;

	constructor(start: Date | string = '2026-01-01T00:00:00.000Z') {
		this.current = new Date(start).getTime();
	}

	now(): Date {
		return new Date(this.current);
	}

	advance(seconds: number): void {
		this.current += seconds * 1000;
	}

	set(at: Date | string): void {
		this.current = new Date(at).getTime();
	}
}
