/**
 * Flow control for one connection: the bytes queued to it and its requests. Requests
 * run at most `maxRunning` at a time, in arrival order, and start only while less than `highWater`
 * waits to be sent to the client; the rest wait in order, and with `maxWaiting` frames (or
 * `maxWaitingBytes`) waiting the socket is paused, so the client's own writes block instead of the
 * hub's memory growing. A connection with more than `maxQueued` bytes unsent, or with more than
 * `highWater` unsent and not one byte taken by the client for `stallMs`, is cut off with a line in the
 * hub's log, and what was queued to it is freed. It knows nothing of methods, frames or events:
 * requests.ts hands it tasks, subscriptions.ts asks it whether a subscriber keeps up.
 */
import { WebSocket } from 'ws';
import { createLogger, errorText } from '../../core/log';

const log = createLogger('hub').child('flow');

const mib = 1024 * 1024;

/** The numbers and why: docs/decisions/0024-backpressure.md. */
export const flowLimits = {
	/** Requests of one connection running at once: what another client's request may wait behind. */
	maxRunning: 4,
	/** Requests read and waiting for a slot before the socket is paused. */
	maxWaiting: 64,
	maxWaitingBytes: 8 * mib,
	/** New requests start only while at most this much waits to be sent to the connection. */
	highWater: 1 * mib,
	/** A live subscriber with more unsent than this stops getting events; it is resynced once drained. */
	eventLag: 4 * mib,
	/** More unsent than this (a client that does not read) and the connection is cut off. */
	maxQueued: 64 * mib,
	/** Over highWater without a byte taken by the client for this long, and the connection is cut off. */
	stallMs: 15_000,
} as const;

export type FlowLimits = { -readonly [K in keyof typeof flowLimits]: number };

type Task = () => Promise<void>;

const mb = (bytes: number): string => `${(bytes / mib).toFixed(1)} MB`;

export class ConnectionFlow {
	private unsent = 0;
	private running = 0;
	private readonly waiting: { task: Task; bytes: number }[] = [];
	private waitingBytes = 0;
	private paused = false;
	private closed = false;
	/** When the client last took bytes (or when bytes began to wait, after none did). */
	private progressAt = Date.now();
	private stallTimer: NodeJS.Timeout | undefined;
	private drainWaiters: (() => void)[] = [];

	constructor(
		private readonly ws: WebSocket,
		/** How the log names the connection ("connection 7 (codex-2)"). */
		private readonly name: () => string,
		private readonly limits: FlowLimits = flowLimits,
	) {}

	/** Bytes handed to the socket and not yet taken by the client. */
	get unsentBytes(): number {
		return this.unsent;
	}

	/** True while more than `eventLag` waits to be sent: a subscriber that does not keep up. */
	get lagging(): boolean {
		return this.unsent > this.limits.eventLag;
	}

	/** Sends one frame; false when the connection is closed or this frame would have put it over maxQueued (it is then cut off). */
	send(text: string): boolean {
		if (this.closed || this.ws.readyState !== WebSocket.OPEN) {
			return false;
		}
		const bytes = Buffer.byteLength(text);
		if (this.unsent + bytes > this.limits.maxQueued) {
			this.cutOff(
				`${mb(this.unsent)} unsent and ${mb(bytes)} more to send, over the ${mb(this.limits.maxQueued)} a connection may have queued (the client does not read)`,
			);
			return false;
		}
		if (this.unsent === 0) {
			this.progressAt = Date.now();
		}
		this.unsent += bytes;
		// The callback runs once the socket has written the frame (or failed to, on close).
		this.ws.send(text, () => this.taken(bytes));
		if (this.unsent > this.limits.highWater) {
			this.watchStall();
		}
		return true;
	}

	/**
	 * Runs `task` (one request) when a slot is free and the connection is not congested, after those
	 * that came before it; `bytes` is its frame's size, counted while it waits.
	 */
	admit(task: Task, bytes: number): void {
		if (this.closed) {
			return;
		}
		this.waiting.push({ task, bytes });
		this.waitingBytes += bytes;
		this.pump();
		if (
			!this.paused &&
			(this.waiting.length >= this.limits.maxWaiting || this.waitingBytes >= this.limits.maxWaitingBytes)
		) {
			// Frames already read by ws still arrive (at most one socket read); then the client's writes block.
			this.paused = true;
			this.ws.pause();
		}
	}

	/** Resolves once at most highWater waits to be sent, or the connection closed. */
	drained(): Promise<void> {
		if (this.closed || this.unsent <= this.limits.highWater) {
			return Promise.resolve();
		}
		return new Promise(resolve => this.drainWaiters.push(resolve));
	}

	/** The connection closed: what waits is dropped (the client re-sends what it did not get an answer to). */
	close(): void {
		this.closed = true;
		this.waiting.length = 0;
		this.waitingBytes = 0;
		clearTimeout(this.stallTimer);
		this.stallTimer = undefined;
		this.wakeDrainWaiters();
	}

	private pump(): void {
		while (
			!this.closed &&
			this.running < this.limits.maxRunning &&
			this.unsent <= this.limits.highWater &&
			this.waiting.length > 0
		) {
			const next = this.waiting.shift() as { task: Task; bytes: number };
			this.waitingBytes -= next.bytes;
			this.running++;
			next.task().then(
				() => this.finished(),
				(e: unknown) => {
					// requests.ts answers every failure itself; this would be a bug there.
					log.error(`a request of ${this.name()} failed unanswered: ${errorText(e)}`);
					this.finished();
				},
			);
		}
		if (
			this.paused &&
			!this.closed &&
			this.waiting.length <= this.limits.maxWaiting / 2 &&
			this.waitingBytes <= this.limits.maxWaitingBytes / 2
		) {
			this.paused = false;
			this.ws.resume();
		}
	}

	private finished(): void {
		this.running--;
		this.pump();
	}

	private taken(bytes: number): void {
		this.unsent -= bytes;
		this.progressAt = Date.now();
		if (this.unsent <= this.limits.highWater) {
			this.wakeDrainWaiters();
			this.pump();
		}
	}

	private wakeDrainWaiters(): void {
		const waiters = this.drainWaiters;
		this.drainWaiters = [];
		for (const w of waiters) {
			w();
		}
	}

	private watchStall(): void {
		if (this.stallTimer !== undefined || this.closed) {
			return;
		}
		const check = (): void => {
			this.stallTimer = undefined;
			if (this.closed || this.unsent <= this.limits.highWater) {
				return;
			}
			const idle = Date.now() - this.progressAt;
			if (idle >= this.limits.stallMs) {
				this.cutOff(
					`the client took no bytes for ${Math.round(idle / 100) / 10} s with ${mb(this.unsent)} waiting to be sent (it does not read)`,
				);
				return;
			}
			this.stallTimer = setTimeout(check, this.limits.stallMs - idle);
			this.stallTimer.unref();
		};
		this.stallTimer = setTimeout(check, Math.max(0, this.limits.stallMs - (Date.now() - this.progressAt)));
		this.stallTimer.unref();
	}

	/** Frees what is queued to the connection: the socket is destroyed, not closed politely (that would queue behind). */
	private cutOff(reason: string): void {
		if (this.closed) {
			return;
		}
		log.warn(`disconnected ${this.name()}: ${reason}`);
		this.close();
		this.ws.terminate();
	}
}
