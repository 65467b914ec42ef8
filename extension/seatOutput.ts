/**
 * A seat's live output one click away: an output channel per seat ("Baton seat 2"), fed by
 * tailing the `dispatch.log` file of the card that sits in that seat (the supervisor writes the agent's
 * output there), and following the seat to its next card. A seat whose run is on another host shows
 * the card's last output lines from the hub (`dispatch.output`) instead, as the log is not on this
 * machine. Reads files and the connection's cache; never writes either.
 */
import { open } from 'node:fs/promises';
import { hostname } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import * as vscode from 'vscode';
import { visibleText } from '../core/visibleText';
import type { Card } from '../core/protocol';
import type { DispatchWatch } from './dispatchWatch';
import type { HubConnection } from './hubConnection';

/** How often an open seat's log is read for new output. */
const pollMs = 300;
/** Bytes of a log read at most per poll (a burst is shown over several polls, the host never stalls). */
const chunkBytes = 256 * 1024;
/** How long a leaving card's log is read on: until quiet this long, at most finishMs. */
const quietMs = 1_000;
const finishMs = 5_000;
/** What a seat keeps of its text for `recent` (the tests read it; the channel has it all). */
const keepChars = 16 * 1024;

class SeatTail implements vscode.Disposable {
	readonly channel: vscode.OutputChannel;
	private cardId: string | undefined;
	private file: string | undefined;
	private offset = 0;
	private decoder = new StringDecoder('utf8');
	/** Reads and switches, one at a time and in order. */
	private queue: Promise<unknown> = Promise.resolve();
	private busy = false;
	private readonly timer: ReturnType<typeof setInterval>;
	/** The end of what the channel shows, for the tests. */
	recent = '';

	constructor(
		readonly run: string,
		readonly seat: number,
	) {
		this.channel = vscode.window.createOutputChannel(`Baton seat ${seat}${run === 'default' ? '' : ` (${run})`}`);
		this.timer = setInterval(() => this.poll(), pollMs);
	}

	/** The card now in this seat (undefined: free); a new card starts a new section of the output. */
	follow(card: Card | undefined): void {
		this.queue = this.queue.then(() => this.switchTo(card)).catch(() => undefined);
	}

	/** Reads what the current log has left, then moves to `card`'s (serialised with the polls by `queue`). */
	private async switchTo(card: Card | undefined): Promise<void> {
		const d = card?.dispatch ?? undefined;
		if (card?.id === this.cardId && (d?.log ?? undefined) === this.file) {
			return;
		}
		await this.finishOld();
		if (card === undefined || !d) {
			if (this.cardId !== undefined) {
				this.append(`── seat ${this.seat} is free ──\n`);
			}
			this.cardId = undefined;
			this.file = undefined;
			return;
		}
		if (card.id !== this.cardId) {
			this.append(
				`── ${card.id} ${card.title} · ${d.kind} · started ${new Date(d.startedAt).toLocaleTimeString()} ──\n`,
			);
		}
		this.cardId = card.id;
		if (d.host !== hostname()) {
			this.file = undefined;
			this.append(`(runs on ${d.host}: its log is not on this machine; the last lines the hub has)\n`);
			this.append((d.output ?? []).map(l => `${l}\n`).join(''));
			return;
		}
		if (d.log !== this.file) {
			this.file = d.log;
			this.offset = 0;
			this.decoder = new StringDecoder('utf8');
		}
		await this.read();
	}

	private append(text: string): void {
		// The agent's own bytes: no escape sequence or bidi override reaches the channel raw.
		this.channel.append(visibleText(text, { multiline: true }));
		this.recent = (this.recent + text).slice(-keepChars);
	}

	/**
	 * Reads the log of the card that is leaving the seat until it has been quiet for a second (at most
	 * 5 s): the agent's last words ("completed A4") are written after its complete, i.e. after the event
	 * that moved the card out of the seat.
	 */
	private async finishOld(): Promise<void> {
		if (this.file === undefined) {
			return;
		}
		const until = Date.now() + finishMs;
		let quietSince = Date.now();
		while (Date.now() < until && Date.now() - quietSince < quietMs) {
			if (await this.read()) {
				quietSince = Date.now();
			} else {
				await new Promise(r => setTimeout(r, 100));
			}
		}
	}

	private poll(): void {
		if (!this.busy) {
			this.busy = true;
			this.queue = this.queue
				.then(() => this.read())
				.then(
					() => (this.busy = false),
					() => (this.busy = false),
				);
		}
	}

	/** Appends what the log gained since the last read; true when it read something. */
	private async read(): Promise<boolean> {
		const file = this.file;
		if (file === undefined) {
			return false;
		}
		try {
			const fh = await open(file, 'r');
			try {
				const { size } = await fh.stat();
				if (size < this.offset) {
					this.offset = 0; // a new log in the same place
				}
				if (size === this.offset) {
					return false;
				}
				const buf = Buffer.alloc(Math.min(chunkBytes, size - this.offset));
				const { bytesRead } = await fh.read(buf, 0, buf.length, this.offset);
				this.offset += bytesRead;
				this.append(this.decoder.write(buf.subarray(0, bytesRead)));
				return bytesRead > 0;
			} finally {
				await fh.close();
			}
		} catch {
			// Not written yet (the agent is starting), or removed with its card's workspace: next poll.
			return false;
		}
	}

	dispose(): void {
		clearInterval(this.timer);
		this.channel.dispose();
	}
}

export class SeatOutputs implements vscode.Disposable {
	private readonly tails = new Map<string, SeatTail>();
	private readonly disposables: vscode.Disposable[] = [];

	constructor(
		private readonly hub: HubConnection,
		private readonly watch: DispatchWatch,
	) {
		this.disposables.push(hub.onDidChangeCards(() => this.followAll()));
	}

	/** Opens the seat's output channel (made on first use) and shows it. */
	show(run: string, seat: number): SeatTail {
		const key = `${run}/${seat}`;
		let tail = this.tails.get(key);
		if (tail === undefined) {
			tail = new SeatTail(run, seat);
			this.tails.set(key, tail);
		}
		tail.follow(this.cardIn(run, seat));
		tail.channel.show(true);
		return tail;
	}

	/** The text a seat's channel ended with (undefined: never opened); for the tests. */
	recent(run: string, seat: number): string | undefined {
		return this.tails.get(`${run}/${seat}`)?.recent;
	}

	private cardIn(run: string, seat: number): Card | undefined {
		return this.watch.seats().find(s => s.run === run && s.seat === seat)?.card;
	}

	private followAll(): void {
		for (const tail of this.tails.values()) {
			tail.follow(this.cardIn(tail.run, tail.seat));
		}
	}

	dispose(): void {
		for (const d of this.disposables) {
			d.dispose();
		}
		for (const t of this.tails.values()) {
			t.dispose();
		}
	}
}
