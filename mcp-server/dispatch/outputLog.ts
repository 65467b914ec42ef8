/**
 * A dispatched agent's output (issue 30): one log file per card and run, `<dataDir>/runs/<run>/<card>.log`,
 * appended to by every attempt. The agent writes it directly (its stdout and stderr are the file, not a
 * pipe), so it keeps running when the supervisor is killed; the supervisor tails the file for the last
 * lines, the rate-limit words and the live table. Must not: hold the agent's output in a pipe, read a
 * file whole on every tick, or keep more than the last lines in memory.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Lines kept for a failure's reason and the table. */
export const keptLines = 20;
/** Longest line kept (the protocol's dispatch.output lines are ≤ 200 characters). */
const maxLineLength = 200;
/** Most bytes one read takes in: a chatty agent is followed, not replayed from the start. */
const maxReadBytes = 256 * 1024;

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

	/** `from`: where this attempt's output starts (the file's size before the header was written). */
	constructor(
		readonly path: string,
		from = 0,
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
		if (size <= this.offset) {
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
		return fresh;
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
