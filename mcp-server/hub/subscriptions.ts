/**
 * Events to subscribers: `events/subscribe` replays the log after the client's seq in
 * pages up to what the event pump has delivered, each page once the client took the last one, then
 * switches the connection to live in the same tick, so nothing falls between and nothing comes twice;
 * `deliver` pushes each pumped batch to the live connections. A resume from before the log's
 * compaction horizon is answered `resync` instead, and so is a live subscriber that fell behind (more
 * than flowLimits.eventLag unsent): it gets no events until it took what was queued, then
 * a `{notice: 'resync', seq}` and the live feed from there. It reads the log through the backlog and
 * never writes; it wakes no claim.
 */
import type { Backlog } from '../../core/backlog';
import { createLogger } from '../../core/log';
import type { BacklogEvent, Result } from '../../core/protocol';
import { type Connection, send } from './connections';

const log = createLogger('hub').child('subscriptions');

export interface Subscription {
	/** Highest seq sent to this connection. */
	sent: number;
	/** False while the replay from the log runs; live events are then skipped (the replay covers them). */
	live: boolean;
	/** Fell behind: events are skipped until the connection drained, then it is resynced. */
	lagging?: boolean;
}

const replayPage = 500;

export class Subscriptions {
	constructor(
		private readonly backlog: Backlog,
		/** The event pump: the last seq it delivered. */
		private readonly pump: { readonly seq: number },
	) {}

	/**
	 * Replays the log after `afterSeq` in pages, then switches the connection to live pushes. After a
	 * seq older than the log's horizon (compacted events it never saw) it replays nothing and answers
	 * `resync`: live from the pump's seq, the client reloads. The horizon is read again once the replay
	 * caught up, in case compaction deleted an event the replay had not reached yet.
	 */
	async subscribe(conn: Connection, afterSeq: number): Promise<Result<'events/subscribe'>> {
		const sub: Subscription = { sent: afterSeq, live: false };
		conn.subscription = sub;
		let horizonChecked = false;
		if (afterSeq < (await this.backlog.logHorizon())) {
			return this.resync(sub);
		}
		for (;;) {
			const target = this.pump.seq;
			if (sub.sent >= target) {
				if (horizonChecked || sub.sent === afterSeq) {
					break;
				}
				horizonChecked = true;
				if (afterSeq < (await this.backlog.logHorizon())) {
					return this.resync(sub);
				}
				continue; // the pump may have delivered more during that read
			}
			// A client that does not read gets no more pages (flow.ts cuts it off if it never does).
			await conn.flow.drained();
			const page = await this.backlog.eventsAfter(sub.sent, replayPage);
			if (conn.subscription !== sub || conn.closed) {
				return { seq: sub.sent };
			}
			let progressed = false;
			for (const event of page) {
				if (event.seq > sub.sent && event.seq <= this.pump.seq) {
					sendEvent(conn, event);
					sub.sent = event.seq;
					progressed = true;
				}
			}
			if (!progressed || page.length < replayPage) {
				// Nothing more in the log up to what the pump has delivered (holes are rolled-back seqs).
				if (sub.sent < target) {
					sub.sent = Math.max(sub.sent, Math.min(target, this.pump.seq));
				}
			}
		}
		// Synchronous from the last check to here: no pump delivery can slip between replay and live.
		sub.live = true;
		return { seq: sub.sent };
	}

	/** Live from the pump's seq on, without the replay; the answer tells the client to reload. */
	private resync(sub: Subscription): Result<'events/subscribe'> {
		sub.sent = Math.max(sub.sent, this.pump.seq);
		sub.live = true;
		return { seq: sub.sent, resync: true };
	}

	/** Pushes a pumped batch to every live subscriber that keeps up, each event once. */
	deliver(connections: Iterable<Connection>, events: readonly BacklogEvent[]): void {
		// Each event is serialised once for all subscribers, and only if one takes it.
		const texts: (string | undefined)[] = [];
		for (const conn of connections) {
			const sub = conn.subscription;
			if (!sub?.live || sub.lagging === true) {
				continue;
			}
			for (const [i, event] of events.entries()) {
				if (conn.flow.lagging) {
					this.fallBehind(conn, sub);
					break;
				}
				if (event.seq > sub.sent) {
					conn.flow.send((texts[i] ??= eventText(event)));
					sub.sent = event.seq;
				}
			}
		}
	}

	/**
	 * Stops `conn`'s events while it takes what is queued; then tells it to reload (`resync`) and
	 * goes on live from the pump's seq. What is queued stays under flowLimits.eventLag and one event.
	 */
	private fallBehind(conn: Connection, sub: Subscription): void {
		sub.lagging = true;
		const from = sub.sent;
		void conn.flow.drained().then(() => {
			if (conn.closed || conn.subscription !== sub) {
				return;
			}
			sub.lagging = false;
			sub.sent = Math.max(sub.sent, this.pump.seq);
			log.info(`${conn.actor} fell behind on events after seq ${from}; resynced at ${sub.sent}`);
			send(conn, { notice: 'resync', seq: sub.sent });
		});
	}
}

function sendEvent(conn: Connection, event: BacklogEvent): void {
	conn.flow.send(eventText(event));
}

function eventText(event: BacklogEvent): string {
	return JSON.stringify({ event: event.type, seq: event.seq, data: event });
}
