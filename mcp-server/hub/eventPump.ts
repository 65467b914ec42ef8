/**
 * Turns committed events into one ordered, gap-free stream for this hub's subscribers. Local commits
 * arrive through `onCommitted` and go straight out when contiguous; anything else (another hub's
 * write on PostgreSQL, announced by NOTIFY) is read back with `eventsAfter`. On PostgreSQL a seq
 * hole can be a transaction that has not committed yet, so the pump waits briefly before skipping it.
 */
import type { BacklogEvent } from '../../core/protocol';

export interface EventSource {
	onCommitted(listener: (events: BacklogEvent[]) => void): () => void;
	eventsAfter(seq: number, limit: number): Promise<BacklogEvent[]>;
	lastSeq(): Promise<number>;
}

export interface EventPumpOptions {
	/** How long a seq hole may hold back later events before it is skipped (rolled-back sequence value). */
	holeWaitMs: number;
	pageSize?: number;
}

export class EventPump {
	private delivered = 0;
	private readonly pending = new Map<number, BacklogEvent>();
	private fetching = false;
	private fetchAgain = false;
	private holeTimer: NodeJS.Timeout | undefined;
	private holeSince: number | undefined;
	private unsubscribe: (() => void) | undefined;
	private stopped = false;

	constructor(
		private readonly source: EventSource,
		private readonly deliver: (events: BacklogEvent[]) => void,
		private readonly options: EventPumpOptions,
	) {}

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
		clearTimeout(this.holeTimer);
	}

	private drain(): void {
		this.drainContiguous();
		if (this.pending.size > 0) {
			// A gap before what we hold: fetch from the log, and if it stays, time the hole.
			void this.fetch();
		} else {
			clearTimeout(this.holeTimer);
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
		try {
			do {
				this.fetchAgain = false;
				await this.readLog();
			} while (this.wantsAnotherRead());
		} catch (e) {
			console.error(`baton hub: reading events failed: ${e instanceof Error ? e.message : String(e)}`);
		} finally {
			this.fetching = false;
		}
		if (this.pending.size > 0) {
			this.armHoleTimer();
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
		this.holeSince ??= Date.now();
		const wait = Math.max(0, this.holeSince + this.options.holeWaitMs - Date.now());
		this.holeTimer = setTimeout(
			() => {
				this.holeTimer = undefined;
				void this.fetch().then(() => {
					if (this.pending.size === 0 || this.holeSince === undefined) {
						return;
					}
					if (Date.now() - this.holeSince >= this.options.holeWaitMs) {
						// The missing seq never committed (a rolled-back transaction took it): skip it.
						this.delivered = Math.min(...this.pending.keys()) - 1;
						this.holeSince = undefined;
						this.drain();
					}
				});
			},
			Math.min(wait, 50),
		);
	}
}
