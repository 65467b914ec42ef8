/**
 * A unified patch read from a running `git diff` under two byte budgets, so a huge branch costs the
 * hub no more than its cap: each file's section keeps its header and the whole hunks that fit in
 * `fileBytes` (a file with none that fits is left out; the rest of its section is read and dropped
 * chunk by chunk, never held), and the patch as a whole stops at `totalBytes` — git is stopped there,
 * before it writes the rest. No hunk is ever split, so what is kept parses as a patch.
 * Must not: hold more than one file's budget of a section, or one line longer than that, in memory;
 * know about cards (reviewDiff.ts and the hub's cardDiff.ts do).
 */
import { spawn } from 'node:child_process';

import { BatonError } from '../../core/errors';

export interface PatchBudget {
	/** The whole patch kept, in bytes. */
	totalBytes: number;
	/** One file's section kept, in bytes. */
	fileBytes: number;
}

export interface StreamedPatch {
	patch: string;
	/** Something was cut or left out: a file over its budget, or files after the total budget. */
	truncated: boolean;
	/** Bytes git wrote before it ended or was stopped (the whole patch's size when `complete`). */
	patchBytes: number;
	/** git wrote the whole patch (it was not stopped at the total budget). */
	complete: boolean;
	/** The 0-based positions (git's order of files) of sections cut or left out; with !complete, every later one too. */
	cutSections: number[];
	/** Sections git wrote before it ended or was stopped. */
	sections: number;
}

const diffLine = Buffer.from('diff --git ');
const hunkLine = Buffer.from('@@ ');

/** Splits git's output into lines and keeps what fits; `stop` is called once the total budget is reached. */
export class PatchCutter {
	private readonly kept: Buffer[] = [];
	private keptBytes = 0;
	/** The current file's header lines, its hunks that fit so far, and the hunk being read. */
	private header: Buffer[] = [];
	private hunks: Buffer[] = [];
	private hunk: Buffer[] = [];
	private sectionBytes = 0;
	/** The current section went over its budget: its lines are dropped until the next one starts. */
	private skipping = false;
	private partial: Buffer[] = [];
	private partialBytes = 0;
	/** The line being read is too long to keep: dropped until its newline. */
	private dropLine = false;
	private section = -1;
	readonly cut: number[] = [];
	bytesRead = 0;
	stopped = false;

	constructor(
		private readonly budget: PatchBudget,
		private readonly stop: () => void,
	) {}

	push(chunk: Buffer): void {
		if (this.stopped) {
			return;
		}
		this.bytesRead += chunk.length;
		let start = 0;
		// `stopped` changes inside the loop (a section that does not fit the total stops it).
		// eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
		while (start < chunk.length && !this.stopped) {
			const nl = chunk.indexOf(10, start);
			const end = nl < 0 ? chunk.length : nl + 1;
			const piece = chunk.subarray(start, end);
			start = end;
			if (this.dropLine) {
				this.dropLine = nl < 0;
				continue;
			}
			if (this.partialBytes + piece.length > this.budget.fileBytes) {
				// A line longer than a file's budget can never be kept: its section is cut. A line that
				// starts a section is never that long (git's header lines are paths), so none is missed.
				this.partial = [];
				this.partialBytes = 0;
				this.dropLine = nl < 0;
				this.overBudget();
				continue;
			}
			if (nl < 0) {
				this.partial.push(Buffer.from(piece));
				this.partialBytes += piece.length;
				continue;
			}
			const line = this.partialBytes === 0 ? piece : Buffer.concat([...this.partial, piece]);
			this.partial = [];
			this.partialBytes = 0;
			this.line(line);
		}
	}

	/** git ended: the last section (and a last line without its newline) counts like the others. */
	finish(): void {
		if (!this.stopped && this.partialBytes > 0 && !this.dropLine) {
			this.line(Buffer.concat(this.partial));
		}
		this.closeSection();
	}

	result(): StreamedPatch {
		return {
			patch: Buffer.concat(this.kept).toString('utf8'),
			truncated: this.stopped || this.cut.length > 0,
			patchBytes: this.bytesRead,
			complete: !this.stopped,
			cutSections: this.cut,
			sections: this.section + 1,
		};
	}

	private line(line: Buffer): void {
		if (startsWith(line, diffLine)) {
			this.closeSection();
			if (this.stopped) {
				return;
			}
			this.section++;
			this.header = [line];
			this.hunks = [];
			this.hunk = [];
			this.sectionBytes = line.length;
			this.skipping = false;
			return;
		}
		if (this.skipping || this.section < 0) {
			return;
		}
		if (startsWith(line, hunkLine)) {
			this.hunks.push(...this.hunk);
			this.hunk = [line];
		} else if (this.hunk.length === 0) {
			this.header.push(line);
		} else {
			this.hunk.push(line);
		}
		this.sectionBytes += line.length;
		if (this.sectionBytes > this.budget.fileBytes) {
			this.overBudget();
		}
	}

	/** The current section went over its budget: the hunk being read is dropped, and the rest of it. */
	private overBudget(): void {
		if (this.skipping || this.section < 0) {
			return;
		}
		this.skipping = true;
		this.hunk = [];
		this.cut.push(this.section);
	}

	/** Adds the finished section (its header and whole hunks that fit) to the patch, if it fits the total. */
	private closeSection(): void {
		if (this.section < 0 || this.stopped) {
			return;
		}
		const parts = this.skipping
			? this.hunks.length > 0
				? [...this.header, ...this.hunks]
				: []
			: [...this.header, ...this.hunks, ...this.hunk];
		this.header = [];
		this.hunks = [];
		this.hunk = [];
		const bytes = parts.reduce((n, b) => n + b.length, 0);
		if (this.keptBytes + bytes > this.budget.totalBytes) {
			if (!this.cut.includes(this.section)) {
				this.cut.push(this.section);
			}
			this.stopped = true;
			this.stop();
			return;
		}
		this.kept.push(...parts);
		this.keptBytes += bytes;
	}
}

function startsWith(line: Buffer, prefix: Buffer): boolean {
	return line.length >= prefix.length && line.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;
}

/**
 * Runs `git -C dir …args` and keeps its output under `budget` (PatchCutter). Rejects when git fails
 * (not when Baton stopped it at the budget) or runs longer than `timeoutMs`.
 */
export function streamPatch(
	dir: string,
	args: readonly string[],
	env: NodeJS.ProcessEnv,
	budget: PatchBudget,
	timeoutMs = 120_000,
): Promise<StreamedPatch> {
	return new Promise((resolve, reject) => {
		const child = spawn('git', ['-C', dir, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
		const cutter = new PatchCutter(budget, () => child.kill('SIGKILL'));
		let stderr = '';
		let timedOut = false;
		const timer = setTimeout(() => {
			timedOut = true;
			child.kill('SIGKILL');
		}, timeoutMs);
		child.stdout.on('data', (chunk: Buffer) => cutter.push(chunk));
		child.stderr.on('data', (chunk: Buffer) => {
			stderr = (stderr + chunk.toString('utf8')).slice(-4096);
		});
		child.once('error', e => {
			clearTimeout(timer);
			reject(
				(e as NodeJS.ErrnoException).code === 'ENOENT'
					? new BatonError('unavailable', 'git was not found on PATH. Install git or add its folder to PATH.')
					: e,
			);
		});
		child.once('close', code => {
			clearTimeout(timer);
			if (timedOut) {
				reject(
					new BatonError(
						'timeout',
						`git diff in ${dir} took longer than ${Math.round(timeoutMs / 1000)} s and was stopped.`,
					),
				);
				return;
			}
			if (!cutter.stopped && code !== 0) {
				reject(
					new BatonError('internal', `git diff in ${dir} exited with ${code}: ${stderr.trim().split('\n')[0] ?? ''}`),
				);
				return;
			}
			cutter.finish();
			resolve(cutter.result());
		});
	});
}
