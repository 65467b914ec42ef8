/**
 * A dispatched agent's output: one log file per card and run, `<dataDir>/runs/<run>/<card>.log`,
 * appended to by every attempt. The agent writes it directly (its stdout and stderr are the file, opened
 * O_APPEND, not a pipe), so it keeps running when the supervisor is killed; the supervisor tails the
 * file for the last lines, the rate-limit signal and the live table, and keeps it within its cap
 * (`baton run --log-max-mb`, default 4): past the cap the file is cut to its last half, on a line
 * boundary, under a line saying how much was dropped. Why not a pipe the supervisor reads and caps: a
 * pipe ties every write of the agent to the supervisor's life — a supervisor killed with -9 would kill
 * its agents (EPIPE / SIGPIPE on their next line), and a slow one would stall them. The trade-offs of
 * cutting the file instead: it can pass the cap by what the agent writes in one tick (500 ms) before it
 * is cut; while no supervisor runs (between a -9 and the restart that adopts the agent) it grows
 * unbounded, and is cut at the adoption's first tick; what the agent writes in the instant of a cut
 * (between its last size check and the truncation, a few system calls) is lost, and what it writes
 * while the kept tail is written back lands before it. Must not: hold the agent's output in a pipe, read a file whole on every
 * tick, or keep more than the last lines (or one cap's half, while cutting) in memory.
 */
import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Lines kept for a failure's reason and the table. */
export const keptLines = 20;
/** Longest line kept (the protocol's dispatch.output lines are ≤ 200 characters). */
const maxLineLength = 200;
/** Most bytes one read takes in: a chatty agent is followed, not replayed from the start. */
const maxReadBytes = 256 * 1024;

/** A card's log is cut back to its last half past this size, unless the run says otherwise (--log-max-mb). */
export const defaultLogMaxBytes = 4 * 1024 * 1024;

/** The log file of `cardId` in run `run` under the data dir. */
export function logPath(dataDir: string, run: string, cardId: string): string {
	return join(dataDir, 'runs', run, `${cardId}.log`);
}

/**
 * Opens the log for appending (creating its folder) and writes the attempt's header line; returns the
 * file descriptor to hand to the child as stdout and stderr (closed by spawnAgent) and the offset
 * where the attempt's own output starts.
 */
export function openLogForAgent(path: string, header: string): { fd: number; offset: number } {
	mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
	const fd = openSync(path, 'a', 0o600);
	writeSync(fd, `--- ${header}\n`);
	return { fd, offset: fstatSync(fd).size };
}

/** Follows one log file from a byte offset: new complete lines, the last `keptLines` of them kept. */
export class LogTail {
	private offset: number;
	private partial = '';
	private readonly lines: string[] = [];
	private fd: number | undefined;

	/**
	 * `from`: where this attempt's output starts (the file's size before the header was written);
	 * `maxBytes`: the file's cap (0: none).
	 */
	constructor(
		readonly path: string,
		from = 0,
		private readonly maxBytes = defaultLogMaxBytes,
	) {
		this.offset = from;
	}

	/** Reads what was appended since the last call; returns the new complete lines (trimmed, cut to 200). */
	poll(): string[] {
		try {
			this.fd ??= openSync(this.path, 'r');
		} catch {
			return [];
		}
		const size = fstatSync(this.fd).size;
		if (size < this.offset) {
			// Cut by its cap (by this tail, or by the run before an adoption): follow it from the start.
			this.offset = 0;
			this.partial = '';
		}
		if (size <= this.offset) {
			// Nothing new, but what the agent wrote while the last cut was made may have passed the cap.
			this.capIfOver(size);
			return [];
		}
		if (size - this.offset > maxReadBytes) {
			// Too much at once: skip to the last part (the middle of a line is dropped with `partial`).
			this.offset = size - maxReadBytes;
			this.partial = '';
		}
		const buffer = Buffer.alloc(size - this.offset);
		const read = readSync(this.fd, buffer, 0, buffer.length, this.offset);
		this.offset += read;
		const text = this.partial + buffer.subarray(0, read).toString('utf8');
		const parts = text.split('\n');
		this.partial = (parts.pop() ?? '').slice(-4 * maxLineLength);
		const fresh = parts.map(cleanLine).filter(l => l !== '');
		this.lines.push(...fresh);
		if (this.lines.length > keptLines) {
			this.lines.splice(0, this.lines.length - keptLines);
		}
		this.capIfOver(size);
		return fresh;
	}

	/** Cuts the file back to its tail when `size` passed the cap; what it kept counts as read. */
	private capIfOver(size: number): void {
		if (this.maxBytes > 0 && size > this.maxBytes) {
			this.offset = capLog(this.path, this.maxBytes);
			this.partial = '';
		}
	}

	/** The last lines so far (a trailing line without its newline included). */
	last(n = keptLines): string[] {
		const partial = cleanLine(this.partial);
		const all = partial === '' ? this.lines : [...this.lines, partial];
		return all.slice(-n);
	}

	close(): void {
		if (this.fd !== undefined) {
			closeSync(this.fd);
			this.fd = undefined;
		}
	}
}

/**
 * Cuts the log at `path` to its last half of `maxBytes` (from a line start) under a line saying what
 * was dropped; returns its size after. Writes through an O_APPEND descriptor, as the agent does: what
 * the agent writes meanwhile is never overwritten.
 */
export function capLog(path: string, maxBytes: number): number {
	const fd = openSync(path, 'a+');
	try {
		const keep = Math.floor(maxBytes / 2);
		let size = fstatSync(fd).size;
		if (size <= maxBytes) {
			return size;
		}
		let tail = readAt(fd, size - keep, keep);
		// Catch up with what the agent wrote while the tail was read, so the window in which a write can
		// be lost (between the last size read and the truncation) is a few system calls wide.
		for (let round = 0; round < 3; round++) {
			const now = fstatSync(fd).size;
			if (now === size) {
				break;
			}
			tail = Buffer.concat([tail, readAt(fd, size, now - size)]).subarray(-keep);
			size = now;
		}
		ftruncateSync(fd, 0);
		const firstLine = tail.indexOf(10) + 1;
		const kept = tail.subarray(firstLine > 0 && firstLine < tail.length ? firstLine : 0);
		const note = `--- baton: this log passed its cap of ${maxBytes} bytes (baton run --log-max-mb); the first ${size - kept.length} bytes were dropped, the tail is kept\n`;
		writeSync(fd, Buffer.concat([Buffer.from(note), kept]));
		return fstatSync(fd).size;
	} finally {
		closeSync(fd);
	}
}

function readAt(fd: number, position: number, length: number): Buffer {
	const buffer = Buffer.alloc(Math.max(0, length));
	const read = readSync(fd, buffer, 0, buffer.length, position);
	return buffer.subarray(0, read);
}

/** A line as the table and the reasons show it: no terminal control codes, no CR, at most 200 characters. */
export function cleanLine(line: string): string {
	// eslint-disable-next-line no-control-regex
	const plain = line.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '');
	const text = plain.trim();
	return text.length > maxLineLength ? `${text.slice(0, maxLineLength - 1)}…` : text;
}

/** The current size of a file (0 when missing): where a new attempt's output will start. */
export function fileSize(path: string): number {
	try {
		const fd = openSync(path, 'r');
		try {
			return fstatSync(fd).size;
		} finally {
			closeSync(fd);
		}
	} catch {
		return 0;
	}
}

/** A reason with the agent's last output lines, within the protocol's 1000 characters. */
export function withLines(head: string, lines: readonly string[]): string {
	if (lines.length === 0) {
		return cut(`${head}; it printed nothing`);
	}
	let kept = [...lines];
	let text = `${head}; last output:\n${kept.join('\n')}`;
	while (text.length > 1000 && kept.length > 1) {
		kept = kept.slice(1);
		text = `${head}; last output:\n${kept.join('\n')}`;
	}
	return cut(text);
}

export function cut(text: string): string {
	return text.length > 1000 ? `${text.slice(0, 999)}…` : text;
}
