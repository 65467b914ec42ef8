/**
 * The landing queue's notice: `{notice: 'landing', entries}` to the clients that show the backlog (not
 * MCP sessions: an agent never reads it), whenever the queue changes, at most 4 a second. This hub's own
 * landings tell it (landingLine.ts's onChange: a join, a turn, a leave); on PostgreSQL, where other hubs
 * land on the same store, a light poll of the queue every 2 s while anyone watches sends it when the
 * entries differ from the last ones sent. Nothing is read while nobody watches. Must not: change the
 * queue or decide anything about a landing (landingLine.ts and landing.ts do), or send to MCP sessions.
 */
import type { Backlog } from '../../core/backlog';
import { createLogger, errorText } from '../../core/log';

const log = createLogger('hub').child('landing');

export interface LandingNoticeOptions {
	backlog: Backlog;
	stopping: () => boolean;
	/** Sends a frame to every connection that said hello and shows the backlog (not `mcp` sessions). */
	broadcast: (frame: object) => void;
	/** Whether any such connection is open: without one, the queue is not read at all. */
	hasWatchers: () => boolean;
	/** Poll the queue this often while anyone watches (PostgreSQL: other hubs' landings); none by default. */
	pollMs?: number;
}

const noticeMinMs = 250;

export class LandingNotice {
	private timer: NodeJS.Timeout | undefined;
	private polling: NodeJS.Timeout | undefined;
	private lastNotice = 0;
	/** The entries last sent (as JSON); undefined while nobody watches, so the next watcher's first change goes out. */
	private sent: string | undefined;
	/** A change of this hub's queue is waiting for the timer: it goes out even if it reads the same. */
	private forced = false;
	private failing = false;

	constructor(private readonly options: LandingNoticeOptions) {}

	/** Starts the poll, when there is one. */
	start(): void {
		const pollMs = this.options.pollMs;
		if (pollMs === undefined || this.polling !== undefined) {
			return;
		}
		this.polling = setInterval(() => this.schedule(false), pollMs);
		this.polling.unref();
	}

	/** This hub's landing joined, took its turn or left its line. */
	changed(): void {
		this.schedule(true);
	}

	private schedule(force: boolean): void {
		if (this.options.stopping()) {
			return;
		}
		if (!this.options.hasWatchers()) {
			this.sent = undefined;
			return;
		}
		this.forced ||= force;
		if (this.timer !== undefined) {
			return;
		}
		const wait = Math.max(0, this.lastNotice + noticeMinMs - Date.now());
		this.timer = setTimeout(() => void this.send(), wait);
	}

	private async send(): Promise<void> {
		const force = this.takeForced();
		this.lastNotice = Date.now();
		try {
			const entries = await this.options.backlog.landingQueue.list();
			this.failing = false;
			const text = JSON.stringify(entries);
			if ((force || text !== this.sent) && !this.options.stopping()) {
				this.sent = text;
				this.options.broadcast({ notice: 'landing', entries });
			}
		} catch (e) {
			// A poll every 2 s against a store that is down says so once, not every time.
			if (!this.failing) {
				log.warn(`reading the landing queue for its notice failed: ${errorText(e)}`);
			}
			this.failing = true;
		} finally {
			this.timer = undefined;
			// A change that came while the queue was read goes out after it (throttled).
			if (this.forced) {
				this.schedule(true);
			}
		}
	}

	/** Whether a change of this hub's queue waits to go out; it no longer does after this. */
	private takeForced(): boolean {
		const forced = this.forced;
		this.forced = false;
		return forced;
	}

	/** No more notices (the hub is stopping). */
	stop(): void {
		clearTimeout(this.timer);
		clearInterval(this.polling);
		this.polling = undefined;
	}
}
