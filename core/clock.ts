/**
 * Where core gets the time and its timers. Rules never read the clock themselves: Backlog asks its
 * Clock once per operation and passes `now` down; the hub's timers (reaper, event pump, notify relay)
 * and the clients' reconnects (RpcClient, the extension's connection) arm theirs through a Clock. So
 * tests drive TTLs, backoff and reconnects with a ManualClock and never sleep.
 * Platform-free and zod-free: the webview and the extension import it (docs/architecture.md).
 */

declare const timerBrand: unique symbol;

/** An armed timer, to pass back to `clearTimer`. Opaque: what it holds depends on the clock. */
export interface Timer {
	readonly [timerBrand]: true;
}

export interface TimerOptions {
	/** Node only: the timer does not keep the process alive (background polls, safety nets). */
	unref?: boolean;
}

export interface Clock {
	now(): Date;
	/** Calls `fn` once, `ms` from now. */
	setTimeout(fn: () => void, ms: number, options?: TimerOptions): Timer;
	/** Calls `fn` every `ms` until cleared. */
	setInterval(fn: () => void, ms: number, options?: TimerOptions): Timer;
	/** Cancels a timeout or an interval; undefined and timers that already fired are ignored. */
	clearTimer(timer: Timer | undefined): void;
}

/** What the platform's timer functions return: a Timeout object in node, a number in a browser. */
type PlatformHandle = ReturnType<typeof globalThis.setTimeout>;

function platformTimer(handle: PlatformHandle, options: TimerOptions | undefined): Timer {
	if (options?.unref === true) {
		(handle as { unref?: () => void }).unref?.();
	}
	return handle as unknown as Timer;
}

/** The real time and the platform's timers (node or browser). */
export const systemClock: Clock = {
	now: () => new Date(),
	setTimeout: (fn, ms, options) => platformTimer(globalThis.setTimeout(fn, ms), options),
	setInterval: (fn, ms, options) => platformTimer(globalThis.setInterval(fn, ms), options),
	clearTimer: timer => {
		if (timer !== undefined) {
			// clearTimeout and clearInterval share one id space in node and in browsers.
			globalThis.clearTimeout(timer as unknown as PlatformHandle);
		}
	},
};

/** Resolves after `ms` on `clock` (a ManualClock resolves it when advanced past it). */
export function sleep(clock: Clock, ms: number): Promise<void> {
	return new Promise(resolve => clock.setTimeout(resolve, ms));
}

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

interface ManualTimer {
	due: number;
	/** Arming order: timers due at the same ms fire in the order they were armed, as real ones do. */
	order: number;
	fn: () => void;
	/** Set for an interval: re-armed this many ms after each firing. */
	every: number | undefined;
}

/**
 * A clock that only moves when told to; for tests and for replaying scenarios. Its timers fire when
 * it is advanced past them, in due order, each seeing `now()` at its own due time.
 */
export class ManualClock implements Clock {
	private current: number;
	private nextOrder = 0;
	private readonly timers = new Set<ManualTimer>();

	constructor(start: Date | string = '2026-01-01T00:00:00.000Z') {
		this.current = new Date(start).getTime();
	}

	now(): Date {
		return new Date(this.current);
	}

	setTimeout(fn: () => void, ms: number): Timer {
		return this.arm(fn, ms, undefined);
	}

	setInterval(fn: () => void, ms: number): Timer {
		return this.arm(fn, ms, Math.max(1, ms));
	}

	clearTimer(timer: Timer | undefined): void {
		this.timers.delete(timer as unknown as ManualTimer);
	}

	/** Timers armed and not yet fired or cleared (an interval counts once). */
	get pendingTimers(): number {
		return this.timers.size;
	}

	/** Moves time forward, firing every timer that falls due on the way (synchronously). */
	advance(seconds: number): void {
		const target = this.current + seconds * 1000;
		for (let t = this.due(target); t !== undefined; t = this.due(target)) {
			this.fire(t);
		}
		this.current = target;
	}

	/**
	 * Moves time forward by `ms`, firing due timers in order and letting promises settle before and
	 * after each firing, so async work a timer starts (a read, a reconnect) runs before the next one.
	 */
	async tick(ms: number): Promise<void> {
		const target = this.current + ms;
		await settle();
		for (let t = this.due(target); t !== undefined; t = this.due(target)) {
			this.fire(t);
			await settle();
		}
		this.current = target;
	}

	/** Jumps to `at` without firing timers (they fire on the next advance or tick). */
	set(at: Date | string): void {
		this.current = new Date(at).getTime();
	}

	private arm(fn: () => void, ms: number, every: number | undefined): Timer {
		const timer: ManualTimer = { due: this.current + Math.max(0, ms), order: this.nextOrder++, fn, every };
		this.timers.add(timer);
		return timer as unknown as Timer;
	}

	/** The earliest timer due at or before `target`. */
	private due(target: number): ManualTimer | undefined {
		let first: ManualTimer | undefined;
		for (const t of this.timers) {
			if (
				t.due <= target &&
				(first === undefined || t.due < first.due || (t.due === first.due && t.order < first.order))
			) {
				first = t;
			}
		}
		return first;
	}

	private fire(t: ManualTimer): void {
		this.current = Math.max(this.current, t.due);
		if (t.every === undefined) {
			this.timers.delete(t);
		} else {
			t.due += t.every;
			t.order = this.nextOrder++;
		}
		t.fn();
	}
}

/**
 * Lets pending promise callbacks run: one real macrotask turn drains every microtask queued before
 * and during it, so a chain of awaits on already-settled promises completes.
 */
function settle(): Promise<void> {
	return new Promise(resolve => globalThis.setTimeout(resolve, 0));
}
