/**
 * Turns committed events into one ordered, gap-free stream for this hub's subscribers. Local commits
 * arrive through `onCommitted` and go straight out when contiguous; anything else (another hub's
 * write on PostgreSQL, announced by NOTIFY) is read back with `eventsAfter`. On PostgreSQL a seq
 * hole can be a transaction that has not committed yet, so the pump waits briefly before skipping it.
 * A read that fails (the store unreachable) is retried with backoff and never lets a hole be skipped,
 * so an outage delays events but never drops one.
 */
import { Backoff, reconnectBackoff } from '../../core/backoff';
import { type Clock, type Timer, systemClock } from '../../core/clock';
import { createLogger, errorText } from '../../core/log';
import type { BacklogEvent } from '../../core/protocol';

const log = createLogger('hub').child('events');

export interface EventSource {
	onCommitted(listener: (events: BacklogEvent[]) => void): () => void;
	eventsAfter(seq: number, limit: number): Promise<BacklogEvent[]>;
	lastSeq(): Promise<number>;
}

export interface EventPumpOptions {
	/** How long a seq hole may hold back later events before it is skipped (rolled-back sequence value). */
	holeWaitMs: number;
	pageSize?: number;
	/** Time and timers (hole waits, read retries); tests pass a ManualClock. Default systemClock. */
	clock?: Clock;
}

export class EventPump {
	private delivered = 0;
	private readonly pending = new Map<number, BacklogEvent>();
	private fetching = false;
	private fetchAgain = false;
	private holeTimer: Timer | undefined;
	private holeSince: number | undefined;
	private unsubscribe: (() => void) | undefined;
	private stopped = false;
	/** When the last read that succeeded began (ms since epoch); a hole is skipped only after such a read. */
	private lastReadStartedAt = 0;
	/** Set while reads fail (the store is unreachable): when they began failing. */
	private failedSince: number | undefined;
	private readonly retry = new Backoff(reconnectBackoff);
	private retryTimer: Timer | undefined;
	private readonly clock: Clock;

	constructor(
		private readonly source: EventSource,
		private readonly deliver: (events: BacklogEvent[]) => void,
		private readonly options: EventPumpOptions,
	) {
		this.clock = options.clock ?? systemClock;
	}

	/** Highest seq handed to `deliver`; subscribers replay from the log up to here, then go live. */
	get seq(): number {
		return this.delivered;
	}

	async start(): Promise<void> {
		this.delivered = await this.source.lastSeq();
		this.unsubscribe = this.source.onCommitted(events => {
			for (const e of events) {
				if (e.seq > this.delivered) {
					this.pending.set(e.seq, e);
				}
			}
			this.drain();
		});
	}

	/** Something was committed elsewhere (NOTIFY from another hub): read it from the log. */
	kick(): void {
		void this.fetch();
	}

	stop(): void {
		this.stopped = true;
		this.unsubscribe?.();
		this.clock.clearTimer(this.holeTimer);
		this.clock.clearTimer(this.retryTimer);
	}

	private drain(): void {
		this.drainContiguous();
		if (this.pending.size > 0) {
			// A gap before what we hold: fetch from the log, and if it stays, time the hole.
			void this.fetch();
		} else {
			this.clock.clearTimer(this.holeTimer);
			this.holeTimer = undefined;
			this.holeSince = undefined;
		}
	}

	private async fetch(): Promise<void> {
		if (this.stopped) {
			return;
		}
		if (this.fetching) {
			this.fetchAgain = true;
			return;
		}
		this.fetching = true;
		this.clock.clearTimer(this.retryTimer);
		this.retryTimer = undefined;
		let failed = false;
		let failure: unknown;
		try {
			do {
				this.fetchAgain = false;
				const startedAt = this.clock.now().getTime();
				await this.readLog();
				this.lastReadStartedAt = startedAt;
			} while (this.wantsAnotherRead());
		} catch (e) {
			failed = true;
			failure = e;
		} finally {
			this.fetching = false;
		}
		if (failed) {
			this.retryLater(failure);
			return;
		}
		if (this.failedSince !== undefined) {
			const away = this.clock.now().getTime() - this.failedSince;
			log.info(`reading events again after ${Math.round(away / 1000)} s`);
			this.failedSince = undefined;
			this.retry.reset();
		}
		this.skipStaleHole();
		if (this.pending.size > 0) {
			this.armHoleTimer();
		}
	}

	/**
	 * The store did not answer (PostgreSQL restarting): read again with backoff until it does. Holes
	 * are not timed meanwhile: a seq we could not read is not a rolled-back one, and skipping it would
	 * lose the event for every subscriber and the wake-up it carries.
	 */
	private retryLater(e: unknown): void {
		if (this.stopped) {
			return;
		}
		if (this.failedSince === undefined) {
			this.failedSince = this.clock.now().getTime();
			log.warn(`reading events failed: ${errorText(e)}; retrying until the store answers`);
		}
		this.retryTimer = this.clock.setTimeout(() => {
			this.retryTimer = undefined;
			void this.fetch();
		}, this.retry.next());
	}

	/** A hole that a whole successful read, begun after the hole's wait, still did not fill is skipped. */
	private skipStaleHole(): void {
		if (this.pending.size === 0 || this.holeSince === undefined) {
			return;
		}
		if (this.lastReadStartedAt >= this.holeSince + this.options.holeWaitMs) {
			// The missing seq never committed (a rolled-back transaction took it): skip it.
			this.delivered = Math.min(...this.pending.keys()) - 1;
			this.holeSince = undefined;
			this.drain();
		}
	}

	/** Reads the log after `delivered` page by page until a gap or the end. */
	private async readLog(): Promise<void> {
		const pageSize = this.options.pageSize ?? 1000;
		for (;;) {
			const page = await this.source.eventsAfter(this.delivered, pageSize);
			for (const e of page) {
				if (e.seq > this.delivered) {
					this.pending.set(e.seq, e);
				}
			}
			this.drainContiguous();
			if (page.length < pageSize || this.stopped || this.pending.size > 0) {
				return;
			}
		}
	}

	/** A kick arrived while reading (set from another callback, hence a method, not a field test). */
	private wantsAnotherRead(): boolean {
		return this.fetchAgain && !this.stopped;
	}

	private drainContiguous(): void {
		const batch: BacklogEvent[] = [];
		for (;;) {
			const next = this.pending.get(this.delivered + 1);
			if (next === undefined) {
				break;
			}
			this.pending.delete(next.seq);
			this.delivered = next.seq;
			batch.push(next);
		}
		if (batch.length > 0) {
			this.holeSince = undefined;
			this.deliver(batch);
		}
	}

	private armHoleTimer(): void {
		if (this.holeTimer !== undefined || this.stopped) {
			return;
		}
		const now = this.clock.now().getTime();
		this.holeSince ??= now;
		const wait = Math.max(0, this.holeSince + this.options.holeWaitMs - now);
		// Read again now and then while waiting (the transaction may commit), and once the wait is over:
		// fetch() skips the hole only when that later read succeeded and still lacks it.
		this.holeTimer = this.clock.setTimeout(
			() => {
				this.holeTimer = undefined;
				void this.fetch();
			},
			Math.min(wait, 50),
		);
	}
}
