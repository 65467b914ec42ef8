/**
 * PostgreSQL team mode: each machine's hub LISTENs on `baton_events` with its own
 * connection and pumps what other hubs wrote. The backlog's write transactions do not NOTIFY (a
 * transaction that has sent a NOTIFY takes one database-wide lock while it commits, which serialised
 * every commit); instead this hub `announce`s its own commits after they are committed, on this same
 * connection, coalesced to at most one NOTIFY per `announceGapMs` (the last one is never dropped).
 *
 * Safety net: a hub can die between a commit and its NOTIFY, so every `pollMs` the relay also asks
 * the pump to read the log (`eventsAfter` from what it has delivered: one indexed query). Any NOTIFY
 * from any hub has the same effect, so a lost one is usually covered by the next one.
 * Reconnects with backoff (core/backoff.ts `reconnectBackoff`: 100 ms doubling to 2 s) if the
 * connection drops, LISTENs again, and then kicks the pump so what other hubs wrote meanwhile (their
 * NOTIFYs reached no one) is read from the log: no wake-up is lost. Its own commits made meanwhile
 * are announced once it is back.
 */
import pg from 'pg';
import { Backoff, reconnectBackoff } from '../../core/backoff';
import { type Clock, type Timer, systemClock } from '../../core/clock';

import { createLogger, errorText } from '../../core/log';

export const notifyChannel = 'baton_events';

const log = createLogger('hub').child('notify');

export interface NotifyRelayOptions {
	/** Minimum time between two NOTIFYs this hub sends; commits in between share the next one. */
	announceGapMs?: number;
	/** How often to read the log even without a NOTIFY (a hub that died before announcing). */
	pollMs?: number;
	/** Time and timers (reconnects, the poll, the announce gap). Default systemClock. */
	clock?: Clock;
}

export class NotifyRelay {
	private client: pg.Client | undefined;
	private closed = false;
	/** Reconnect attempts since the connection was lost. */
	private readonly retry = new Backoff(reconnectBackoff);
	private retryTimer: Timer | undefined;
	private pollTimer: Timer | undefined;
	/** Highest seq committed here and not yet announced (0 = nothing to announce). */
	private unannounced = 0;
	private announcing = false;
	private announceTimer: Timer | undefined;
	private lastAnnounceAt = -Infinity;
	private readonly announceGapMs: number;
	private readonly pollMs: number;
	private readonly clock: Clock;

	constructor(
		private readonly databaseUrl: string,
		private readonly onNotify: () => void,
		options: NotifyRelayOptions = {},
	) {
		this.announceGapMs = options.announceGapMs ?? 5;
		this.pollMs = options.pollMs ?? 3_000;
		this.clock = options.clock ?? systemClock;
	}

	async start(): Promise<void> {
		await this.connect();
		if (this.pollMs > 0) {
			this.pollTimer = this.clock.setInterval(() => this.onNotify(), this.pollMs, { unref: true });
		}
	}

	async close(): Promise<void> {
		this.closed = true;
		this.clock.clearTimer(this.retryTimer);
		this.clock.clearTimer(this.announceTimer);
		this.clock.clearTimer(this.pollTimer);
		const client = this.client;
		this.client = undefined;
		if (client !== undefined && this.unannounced > 0) {
			// The last commits' announcement is sent, not dropped, when the hub stops.
			await client.query('SELECT pg_notify($1, $2)', [notifyChannel, String(this.unannounced)]).catch(() => undefined);
			this.unannounced = 0;
		}
		await client?.end().catch(() => undefined);
	}

	/** This hub committed up to `seq`: tell the other hubs (after commit, coalesced). */
	announce(seq: number): void {
		this.unannounced = Math.max(this.unannounced, seq);
		this.flushAnnounce();
	}

	private flushAnnounce(): void {
		if (this.closed || this.unannounced === 0 || this.announcing || this.announceTimer !== undefined) {
			return;
		}
		// Capped at the gap, so a wall clock set back never holds an announcement for longer.
		const wait = Math.min(this.lastAnnounceAt + this.announceGapMs - this.clock.now().getTime(), this.announceGapMs);
		if (wait > 0) {
			this.announceTimer = this.clock.setTimeout(() => {
				this.announceTimer = undefined;
				this.flushAnnounce();
			}, wait);
			return;
		}
		const client = this.client;
		if (client === undefined) {
			// Disconnected: connect() flushes once it is back.
			return;
		}
		const seq = this.unannounced;
		this.unannounced = 0;
		this.announcing = true;
		this.lastAnnounceAt = this.clock.now().getTime();
		client.query('SELECT pg_notify($1, $2)', [notifyChannel, String(seq)]).then(
			() => {
				this.announcing = false;
				this.flushAnnounce();
			},
			(e: unknown) => {
				// Keep it for the next attempt (after a reconnect, if the connection was lost).
				log.warn(`notify failed: ${errorText(e)}`);
				this.unannounced = Math.max(this.unannounced, seq);
				this.announcing = false;
				if (this.client === client) {
					this.flushAnnounce();
				}
			},
		);
	}

	private async connect(): Promise<void> {
		const client = new pg.Client({
			connectionString: this.databaseUrl,
			application_name: 'baton hub notify',
			// A server that stops answering (not refusing) must still end in a retry, not a hang.
			connectionTimeoutMillis: 10_000,
			keepAlive: true,
		});
		client.on('notification', msg => {
			// Our own announcements come back to us too; our pump already has those events.
			if (msg.channel === notifyChannel && msg.processId !== (client as { processID?: number }).processID) {
				this.onNotify();
			}
		});
		const lost = (): void => {
			if (this.client === client) {
				this.client = undefined;
				void client.end().catch(() => undefined);
				this.scheduleReconnect();
			}
		};
		client.on('error', e => {
			if (this.client === client) {
				log.warn(`notify connection lost (${e.message}); reconnecting with backoff`);
			}
			lost();
		});
		client.on('end', lost);
		try {
			await client.connect();
			await client.query(`LISTEN ${notifyChannel}`);
		} catch (e) {
			void client.end().catch(() => undefined);
			throw e;
		}
		if (this.closed) {
			await client.end().catch(() => undefined);
			return;
		}
		this.client = client;
		this.flushAnnounce();
	}

	private scheduleReconnect(): void {
		if (this.closed || this.retryTimer !== undefined) {
			return;
		}
		this.retryTimer = this.clock.setTimeout(() => {
			this.retryTimer = undefined;
			this.connect().then(
				() => {
					if (this.closed) {
						return;
					}
					log.info(`notify connection back after ${this.retry.failures} attempt(s): listening for other hubs again`);
					this.retry.reset();
					// Anything committed while we were not listening is read back from the log now: a NOTIFY
					// sent meanwhile reached no one, so this read is what keeps those wake-ups.
					this.onNotify();
				},
				(e: unknown) => {
					// One line per outage, not one per attempt; the hub's requests name the outage meanwhile.
					if (this.retry.failures === 1) {
						log.warn(`notify reconnect failed: ${errorText(e)}; retrying with backoff`);
					}
					this.scheduleReconnect();
				},
			);
		}, this.retry.next());
	}
}
