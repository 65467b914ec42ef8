/**
 * This hub's side of the landing queue (core/backlog/landingQueue.ts): a landing joins its base's line
 * in the store, waits for its turn (polling the store, every 100 ms rising to 500 ms), lands, and leaves
 * the line whatever happened. A landing of this hub that leaves a line wakes this hub's waiters of that
 * line at once, so a full line does not sit idle until their next poll (up to 500 ms a landing, measured
 * by the land bench); other hubs' waiters find out by polling. While this hub has entries it beats for
 * them every 5 s, so hubs on one PostgreSQL agree on one lander per base and a dead hub's entries are
 * dropped after 30 s. An entry dropped while waiting (this hub stalled past the stale limit) joins
 * again at the end of the line. Must not: run git or decide anything about the card (landing.ts does
 * both), or hold a store connection while it waits. `onChange` is told after each join, turn taken and
 * leave (the hub's landing notice, landingNotice.ts).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

import type { LandingQueue } from '../../core/backlog/landingQueue';
import { createLogger, errorText } from '../../core/log';

const log = createLogger('hub').child('landing');

const beatMs = 5_000;
const firstPollMs = 100;
const maxPollMs = 500;

export interface LandingTicket {
	cardId: string;
	project: string;
	base: string;
	/** Who approved or completed the card. */
	actor: string;
}

export class LandingLine {
	/** This hub process, as the store's entries name their holder. */
	readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
	private entries = 0;
	private beating: NodeJS.Timeout | undefined;
	/** This hub's waiters, by line (project and base): each wakes its poll's sleep early. */
	private readonly waiters = new Map<string, Set<() => void>>();

	constructor(
		private readonly queue: LandingQueue,
		private readonly onChange: () => void = () => undefined,
	) {}

	/** Runs `land` when `ticket`'s turn in its base's line comes; the line moves on when it settles. */
	async turn<T>(ticket: LandingTicket, land: () => Promise<T>): Promise<T> {
		const entry = { ...ticket, holder: this.holder };
		const line = `${ticket.project}\u0000${ticket.base}`;
		await this.queue.join(entry);
		this.hold(1);
		this.onChange();
		try {
			for (let pollMs = firstPollMs; ; pollMs = Math.min(pollMs * 2, maxPollMs)) {
				const now = await this.queue.take(ticket.cardId, this.holder);
				if (now === 'turn') {
					this.onChange();
					break;
				}
				if (now === 'out') {
					log.warn(
						`${ticket.cardId} fell out of the landing queue of ${ticket.base} (stalled past 30 s): joining again`,
					);
					await this.queue.join(entry);
					this.onChange();
				}
				await this.sleep(line, pollMs);
			}
			return await land();
		} finally {
			await this.queue
				.leave(ticket.cardId, this.holder)
				.catch((e: unknown) => log.error(`${ticket.cardId}: leaving the landing queue failed: ${errorText(e)}`));
			this.hold(-1);
			this.onChange();
			// The line may be this hub's waiters' now: each asks the store at once (one of them gets the turn).
			for (const wake of [...(this.waiters.get(line) ?? [])]) {
				wake();
			}
		}
	}

	/** Waits `ms`, or less when a landing of this hub leaves `line`. */
	private sleep(line: string, ms: number): Promise<void> {
		return new Promise(resolve => {
			let waiting = this.waiters.get(line);
			if (waiting === undefined) {
				waiting = new Set();
				this.waiters.set(line, waiting);
			}
			const set = waiting;
			const wake = () => {
				clearTimeout(timer);
				set.delete(wake);
				if (set.size === 0 && this.waiters.get(line) === set) {
					this.waiters.delete(line);
				}
				resolve();
			};
			const timer = setTimeout(wake, ms);
			set.add(wake);
		});
	}

	private hold(delta: number): void {
		this.entries += delta;
		if (this.entries > 0 && this.beating === undefined) {
			this.beating = setInterval(() => {
				this.queue
					.beat(this.holder)
					.catch((e: unknown) => log.warn(`beating for the landing queue failed: ${errorText(e)}`));
			}, beatMs);
			this.beating.unref();
		} else if (this.entries === 0 && this.beating !== undefined) {
			clearInterval(this.beating);
			this.beating = undefined;
		}
	}
}
