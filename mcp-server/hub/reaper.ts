/**
 * Returns expired leases to ready on exact timers ("as soon as they expire, not on a slow
 * poll"). Armed at the backlog's next lease expiry (one query at start and after each firing) and
 * pulled earlier by every lease a mutation hands out (`consider`), so writes cost no extra query.
 * Reclaim with no card id reclaims every expired lease (epoch++ happens in core).
 */
import { Backoff, type BackoffPolicy, backoffDelay, reconnectBackoff } from '../../core/backoff';
import type { Backlog } from '../../core/backlog';
import { type Clock, type Timer, systemClock } from '../../core/clock';

import { createLogger, errorText } from '../../core/log';

const log = createLogger('hub').child('reaper');

/** A fire that found nothing although an expiry had passed (clock skew vs core): wait longer each time. */
const skewBackoff: BackoffPolicy = { minMs: 50, maxMs: 1_000 };

export class Reaper {
	private timer: Timer | undefined;
	/** When the armed timer fires (ms since epoch). */
	private armedFor: number | undefined;
	private computing = false;
	private dirty = false;
	private stopped = false;
	/** Set when a fire found nothing to reclaim although an expiry had passed (clock skew vs core). */
	private idleFires = 0;
	/** Reads of the next expiry that failed in a row (store unreachable). */
	private readonly readRetry = new Backoff(reconnectBackoff);

	constructor(
		private readonly backlog: Backlog,
		private readonly onReclaimed: (count: number) => void = () => undefined,
		/** False while the disk is full: try again later (with the idle back-off) instead of writing. */
		private readonly canWrite: () => boolean = () => true,
		private readonly clock: Clock = systemClock,
	) {}

	/** Recomputes the next expiry; cheap to call often (coalesced to one query in flight). */
	rearm(): void {
		if (this.stopped) {
			return;
		}
		if (this.computing) {
			this.dirty = true;
			return;
		}
		this.computing = true;
		this.backlog
			.nextLeaseExpiry()
			.then(
				next => {
					this.readRetry.reset();
					this.arm(next);
				},
				(e: unknown) => {
					// Store unreachable: without a timer, a lease that expires meanwhile would stay held until
					// some later write pulls the reaper. Fire again with backoff: a reclaim, then this read.
					if (this.readRetry.failures === 0) {
						log.warn(`reaper could not read the next expiry: ${errorText(e)}; retrying`);
					}
					this.arm(new Date(this.clock.now().getTime() + this.readRetry.next()));
				},
			)
			.finally(() => {
				this.computing = false;
				if (this.dirty) {
					this.dirty = false;
					this.rearm();
				}
			});
	}

	/** A lease was granted or renewed until `expiresAt`: fire then if that is earlier than planned. */
	consider(expiresAt: string | null | undefined): void {
		if (expiresAt === null || expiresAt === undefined || this.stopped) {
			return;
		}
		const at = Date.parse(expiresAt);
		if (Number.isNaN(at) || (this.armedFor !== undefined && this.armedFor <= at + 5)) {
			return;
		}
		this.arm(new Date(at));
	}

	stop(): void {
		this.stopped = true;
		this.clock.clearTimer(this.timer);
	}

	private arm(next: Date | null): void {
		this.clock.clearTimer(this.timer);
		this.timer = undefined;
		this.armedFor = undefined;
		if (next === null || this.stopped) {
			return;
		}
		const now = this.clock.now().getTime();
		if (next.getTime() > now) {
			this.idleFires = 0;
		}
		// A few ms past the expiry so core's `expires < now` holds; back off if core still disagrees.
		const backoff = this.idleFires === 0 ? 0 : backoffDelay(skewBackoff, this.idleFires);
		const delay = Math.max(next.getTime() - now + 5, backoff);
		this.armedFor = now + delay;
		this.timer = this.clock.setTimeout(() => void this.fire(), delay);
	}

	private async fire(): Promise<void> {
		this.timer = undefined;
		this.armedFor = undefined;
		if (this.stopped) {
			return;
		}
		if (!this.canWrite()) {
			this.idleFires++;
			this.rearm();
			return;
		}
		try {
			const { cards } = await this.backlog.reclaim({ actor: 'hub' }, {});
			this.idleFires = cards.length > 0 ? 0 : this.idleFires + 1;
			if (cards.length > 0) {
				this.onReclaimed(cards.length);
			}
		} catch (e) {
			this.idleFires++;
			// While the store is unreachable the read in rearm() said so once already.
			if (this.readRetry.failures === 0) {
				log.error(`reaper failed: ${errorText(e)}`);
			}
		}
		this.rearm();
	}
}
