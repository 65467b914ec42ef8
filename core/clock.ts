/**
 * Where core gets the time. Rules never read the clock themselves: Backlog asks its Clock once per
 * operation and passes `now` down, so tests drive TTLs and backoff with a fake clock and never sleep.
 */

export interface Clock {
	now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

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
