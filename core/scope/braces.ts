/**
 * Brace expansion of a scope entry, the one expander every face uses (it replaced the
 * `braces` library the hub used and a hand-written copy the faces used): `src/{a,b}/**`, `f{1..3}.ts`,
 * `f{01..10}.ts` (padded to the widest bound), `{a..e}` (letters), `{1..9..3}` (a step), as bash and
 * the `braces` library expand them. An escaped `\{` and a brace without a comma or range (`{a}`) stay
 * literal; nested braces are left as they are (check.ts refuses them). Counts before expanding, so an
 * entry asking for 2^40 globs costs nothing to refuse. Pure and platform-free; it checks nothing.
 */

const braceRun = /(?<!\\)\{([^{}]*)\}/g;
const rangeBody = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/;

interface Range {
	lo: number;
	hi: number;
	step: number;
	numeric: boolean;
	/** `{01..10}`: digits to pad to (0: none). */
	width: number;
}

/** A `{from..to[..step]}` body read, or undefined when it is not one (`{a..1}` mixes kinds). */
function readRange(body: string): Range | undefined {
	const m = rangeBody.exec(body);
	if (m === null) {
		return undefined;
	}
	const [, from = '', to = '', stepText] = m;
	const numeric = /^-?\d+$/.test(from) && /^-?\d+$/.test(to);
	if (!numeric && (/\d/.test(from) || /\d/.test(to))) {
		return undefined;
	}
	const [lo, hi] = numeric ? [Number(from), Number(to)] : [from.charCodeAt(0), to.charCodeAt(0)];
	const step = Math.max(1, Math.abs(Number(stepText ?? 1)));
	const width = numeric && /^-?0\d/.test(from + ',' + to) ? Math.max(from.length, to.length) : 0;
	return { lo, hi, step, numeric, width };
}

/** How many alternatives one `{…}` body stands for (1 when it is literal). */
function alternativeCount(body: string): number {
	const range = readRange(body);
	if (range !== undefined) {
		return Math.floor(Math.abs(range.hi - range.lo) / range.step) + 1;
	}
	return body.includes(',') ? body.split(',').length : 1;
}

/** One `{…}` body's alternatives (at most `limit`), or undefined when it is literal. */
function alternatives(body: string, limit: number): string[] | undefined {
	const range = readRange(body);
	if (range === undefined) {
		return body.includes(',') ? body.split(',').slice(0, limit) : undefined;
	}
	const { lo, hi, step, numeric, width } = range;
	const out: string[] = [];
	for (let v = lo; (lo <= hi ? v <= hi : v >= hi) && out.length < limit; v += lo <= hi ? step : -step) {
		const text = numeric ? String(Math.abs(v)).padStart(width - (v < 0 ? 1 : 0), '0') : String.fromCharCode(v);
		out.push(numeric && v < 0 ? `-${text}` : text);
	}
	return out;
}

/** Whether an entry nests braces (`{a,{b,c}}`), which neither expander ever read the same way. */
export function nestsBraces(glob: string): boolean {
	return /\{[^}]*\{/.test(glob);
}

/** How many globs `glob`'s braces expand to, computed without expanding them. */
export function braceCount(glob: string): number {
	let count = 1;
	for (const [, body = ''] of glob.matchAll(braceRun)) {
		count *= alternativeCount(body);
	}
	return count;
}

/** Expands a glob's braces, in order, at most `limit` globs (check.ts refuses an entry that asks for more). */
export function expandBraces(glob: string, limit: number): string[] {
	for (const m of glob.matchAll(braceRun)) {
		const alts = alternatives(m[1] ?? '', limit);
		if (alts !== undefined) {
			const head = glob.slice(0, m.index);
			const tails = expandBraces(glob.slice(m.index + m[0].length), limit);
			return alts.flatMap(alt => tails.map(tail => head + alt + tail)).slice(0, limit);
		}
	}
	return [glob];
}
