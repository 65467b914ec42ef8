/**
 * What every bench script shares: percentiles, a row builder that judges a value against its target,
 * and the BENCH_JSON line run.ts collects. Only arithmetic and printing: no timing of its own.
 */

/** One measured number, as it appears in docs/benchmarks.md. */
export interface BenchRow {
	metric: string;
	value: number;
	unit: string;
	/** Human form of the target ("≤ 1", "≥ 1.0×"); omitted for numbers reported without a target. */
	target?: string;
	/** Met the target; omitted when there is no target. */
	ok?: boolean;
	/** Short context shown beside the number (sample size, what exactly was timed). */
	note?: string;
}

/** A block of preformatted text for the docs (EXPLAIN plans, tool lists). */
export interface BenchSection {
	title: string;
	text: string;
}

/** The payload of the BENCH_JSON line: `rows` is the contract, `notes` and `sections` are optional. */
export interface BenchReport {
	name: string;
	rows: BenchRow[];
	notes?: string[];
	sections?: BenchSection[];
}

/** Nearest-rank percentile of unsorted samples (p in 0–100). */
export function percentile(samples: readonly number[], p: number): number {
	if (samples.length === 0) {
		return Number.NaN;
	}
	const sorted = [...samples].sort((a, b) => a - b);
	const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
	return sorted[rank]!;
}

export function median(samples: readonly number[]): number {
	return percentile(samples, 50);
}

/**
 * The median time of `n` calls of `fn` in ms, after `warmups` untimed calls (a process's first calls
 * pay WASM tier-up and plan caching).
 */
export async function timedP50(n: number, fn: () => Promise<unknown>, warmups: number): Promise<number> {
	for (let i = 0; i < warmups; i++) {
		await fn();
	}
	const samples: number[] = [];
	for (let i = 0; i < n; i++) {
		const t = performance.now();
		await fn();
		samples.push(performance.now() - t);
	}
	return median(samples);
}

/** Rounds to 3 significant digits so the docs do not pretend to more precision than a noisy box has. */
export function round(value: number): number {
	if (!Number.isFinite(value) || value === 0) {
		return value;
	}
	const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(value))));
	return Number(value.toFixed(Math.min(digits, 6)));
}

type Bound = { max: number } | { min: number };

/** A row judged against an upper (`max`) or lower (`min`) bound; `none` for context numbers. */
export function row(metric: string, value: number, unit: string, bound?: Bound, note?: string): BenchRow {
	const r: BenchRow = { metric, value: round(value), unit };
	if (bound !== undefined) {
		if ('max' in bound) {
			r.target = `≤ ${bound.max}`;
			r.ok = value <= bound.max;
		} else {
			r.target = `≥ ${bound.min}`;
			r.ok = value >= bound.min;
		}
	}
	if (note !== undefined) {
		r.note = note;
	}
	return r;
}

/** Prints a row as a human line (stdout) as soon as it is measured. */
export function printRow(r: BenchRow): void {
	const verdict = r.ok === undefined ? '' : r.ok ? '  ok' : '  MISSED';
	const target = r.target === undefined ? '' : `  (target ${r.target} ${r.unit})`;
	const note = r.note === undefined ? '' : `  [${r.note}]`;
	console.log(`  ${r.metric}: ${r.value} ${r.unit}${target}${verdict}${note}`);
}

/** Collects rows and prints them; `finish()` prints the BENCH_JSON line, which must be the last line. */
export class Reporter {
	private readonly rows: BenchRow[] = [];
	private readonly notes: string[] = [];
	private readonly sections: BenchSection[] = [];

	constructor(private readonly name: string) {}

	add(r: BenchRow): BenchRow {
		this.rows.push(r);
		printRow(r);
		return r;
	}

	note(text: string): void {
		this.notes.push(text);
		console.log(`  note: ${text}`);
	}

	section(title: string, text: string): void {
		this.sections.push({ title, text });
		console.log(`  --- ${title} ---\n${text}`);
	}

	finish(): void {
		const report: BenchReport = { name: this.name, rows: this.rows };
		if (this.notes.length > 0) {
			report.notes = this.notes;
		}
		if (this.sections.length > 0) {
			report.sections = this.sections;
		}
		console.log(`BENCH_JSON ${JSON.stringify(report)}`);
	}
}

/** Peak resident set size of this process so far, in MB (getrusage maxrss). */
export function peakRssMb(): number {
	return process.resourceUsage().maxRSS / 1024;
}

/** Milliseconds since `start` (a `performance.now()` value). */
export function since(start: number): number {
	return performance.now() - start;
}
