/**
 * `baton logs ID [--follow]`: what the agent a `baton run` seat started for a card wrote — the log
 * the supervisor keeps per card and run (dispatch/outputLog.ts, `<data dir>/runs/<run>/<card>.log`),
 * the file VS Code's seat output follows. While the card is in a seat its `dispatch.log` names the
 * file; afterwards the newest log of the card under this data dir's runs is read. `--follow` prints
 * new lines as they are written until the card leaves its seat (the hub's events say when) or Ctrl-C.
 * A card dispatched on another machine shows the last lines the hub has; one that never ran in a seat
 * here is an error saying so. Must not: write or cut the log (the supervisor owns it), or keep more
 * than one read's bytes in memory.
 */
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { resolveDataDir } from '../../core/paths';
import { BatonError } from '../../core/errors';
import type { BacklogEvent, Card } from '../../core/protocol';
import { logPath } from '../dispatch/outputLog';
import { type Command, type CommandContext, arg } from './command';
import { cliFlags } from './flags';
import { printJson } from './output';

const logsFlags = cliFlags({
	follow: { type: 'boolean', short: 'f', description: 'Keep printing new lines until the card leaves its seat' },
});

/** The most of a log printed at once (the supervisor caps a log at 4 MB by default); the rest is named. */
const readBytes = 1024 * 1024;
/** How often a followed log is read (the supervisor's own tail reads every 500 ms). */
const pollMs = 300;
/** After the card left its seat: read on until the log is quiet this long, at most finishMs. */
const quietMs = 1_000;
const finishMs = 5_000;

/** Where a card's seat output is: a file on this machine, or the hub's last lines of another's. */
export type LogSource = { file: string } | { host: string; lines: readonly string[] };

/**
 * The log of `card`: its seat's file while it sits in one on this host, else the newest
 * `runs/<run>/<card>.log` under `dataDir`; a seat on another host gives the hub's last lines.
 */
export function findLog(card: Card, dataDir: string, host: string = hostname()): LogSource | undefined {
	const d = card.dispatch ?? undefined;
	if (d !== undefined && d.host !== host) {
		return { host: d.host, lines: d.output ?? [] };
	}
	if (d?.log !== undefined && existsSync(d.log)) {
		return { file: d.log };
	}
	const runs = join(dataDir, 'runs');
	let newest: { file: string; at: number } | undefined;
	for (const run of existsSync(runs) ? readdirSync(runs) : []) {
		const file = logPath(dataDir, run, card.id);
		const at = existsSync(file) ? statSync(file).mtimeMs : undefined;
		if (at !== undefined && (newest === undefined || at > newest.at)) {
			newest = { file, at };
		}
	}
	return newest === undefined ? undefined : { file: newest.file };
}

/** Reads a file from `offset` (at most readBytes); the text and the offset after it. */
function readFrom(file: string, offset: number): { text: string; next: number; skipped: number } {
	const fd = openSync(file, 'r');
	try {
		const size = fstatSync(fd).size;
		// A log cut back by its cap (or a new one) is shorter than where we were: read it from its start.
		const from = size < offset ? 0 : offset;
		const start = Math.max(from, size - readBytes);
		const buf = Buffer.alloc(size - start);
		const n = buf.length === 0 ? 0 : readSync(fd, buf, 0, buf.length, start);
		return { text: buf.subarray(0, n).toString('utf8'), next: start + n, skipped: start - from };
	} finally {
		closeSync(fd);
	}
}

/** Whether `card` (the hub's, after an event) is still in the seat it was in when following began. */
function inSeat(card: Card | null | undefined, epoch: number): boolean {
	return card?.status === 'claimed' && card.dispatch != null && card.claimEpoch === epoch;
}

/** Prints complete lines as they come; the partial last line waits for its end (or the finish). */
class LinePrinter {
	private partial = '';

	constructor(private readonly ctx: CommandContext) {}

	add(text: string, skipped: number): void {
		if (skipped > 0) {
			this.emit([`(… ${skipped} earlier bytes of the log left out …)`]);
			this.partial = '';
		}
		const lines = (this.partial + text).split('\n');
		this.partial = lines.pop() ?? '';
		this.emit(lines);
	}

	finish(): void {
		if (this.partial !== '') {
			this.emit([this.partial]);
			this.partial = '';
		}
	}

	private emit(lines: readonly string[]): void {
		if (lines.length === 0) {
			return;
		}
		if (this.ctx.json) {
			for (const line of lines) {
				printJson(this.ctx.output, { line });
			}
		} else {
			this.ctx.output.out(lines.join('\n'));
		}
	}
}

function neverRan(card: Card, dataDir: string): BatonError {
	return new BatonError(
		'not_found',
		`Card ${card.id} never ran in a seat on this machine: there is no log of it under ${join(dataDir, 'runs')}. \`baton run\` keeps one for each card it starts an agent on; an agent that claimed the card itself keeps its own output.`,
		{ cardId: card.id, status: card.status },
	);
}

export const logsCommand: Command = {
	name: 'logs',
	summary: "What a card's baton run agent wrote (its seat's log); --follow until the card leaves its seat",
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: logsFlags.options,
	notes: 'With --json, each line is printed as {"line": …}.',
	async run(ctx) {
		const { follow } = logsFlags.read(ctx.values);
		const hub = await ctx.hub();
		// The card being followed (set once it is read) and how its leaving the seat is told.
		const seat: { left: (why: string) => void; watched?: { id: string; epoch: number } } = {
			left: () => undefined,
		};
		const leaving = new Promise<string>(resolve => (seat.left = resolve));
		if (follow) {
			// Subscribed before the card is read, so a seat left in between is seen as an event.
			hub.onEvent((e: BacklogEvent) => {
				const w = seat.watched;
				if (e.cardId === w?.id && !inSeat(e.data.card, w.epoch)) {
					seat.left(e.data.card == null ? 'it was deleted' : `it is ${e.data.card.status} now`);
				}
			});
			await hub.subscribe(hub.hello?.seq ?? 0);
		}
		const { card } = await hub.request('card/get', { cardId: arg(ctx, 0) });
		const dataDir = ctx.dataDir ?? resolveDataDir(process.env);
		const source = findLog(card, dataDir);
		if (source === undefined) {
			throw neverRan(card, dataDir);
		}
		const printer = new LinePrinter(ctx);
		if ('host' in source) {
			ctx.output.err(
				`${card.id} runs in a seat on ${source.host}; its log is on that machine. The last lines the hub has:`,
			);
			printer.add(source.lines.map(l => `${l}\n`).join(''), 0);
			return 0;
		}
		let read = readFrom(source.file, 0);
		printer.add(read.text, read.skipped);
		if (!follow) {
			printer.finish();
			return 0;
		}
		if (!inSeat(card, card.claimEpoch)) {
			printer.finish();
			ctx.output.err(`${card.id} is not in a seat now (it is ${card.status}): there is nothing more to follow.`);
			return 0;
		}
		seat.watched = { id: card.id, epoch: card.claimEpoch };
		const file = card.dispatch?.log ?? source.file;
		const poll = (): boolean => {
			const next = readFrom(file, read.next);
			read = next;
			printer.add(next.text, next.skipped);
			return next.text !== '';
		};
		const timer = setInterval(poll, pollMs);
		const why = await Promise.race([leaving, ctx.interrupted().then(() => undefined)]);
		clearInterval(timer);
		if (why !== undefined) {
			// The agent's last words come after the event that moved the card out of the seat.
			const until = Date.now() + finishMs;
			let quietSince = Date.now();
			while (Date.now() < until && Date.now() - quietSince < quietMs) {
				if (poll()) {
					quietSince = Date.now();
				} else {
					await new Promise(r => setTimeout(r, 100));
				}
			}
		}
		printer.finish();
		if (why !== undefined) {
			ctx.output.err(`${card.id} left its seat: ${why}.`);
		}
		return 0;
	},
};
