/**
 * Whether two path globs can match a common path (two cards' scopes overlap), decided
 * exactly for glob.ts's dialect at a cost near linear in the globs' length (docs/decisions/0078-scope-exact-overlap.md: the product
 * of the two patterns, which Baton ran before, took |a| × |b| steps: `*a*a*…` × 100 against itself
 * cost 57 s for two cards). Both levels are the same problem: a glob is segments with `**`, a segment
 * is characters with `*`, and two such sequences meet when their heads and tails agree (both with a
 * wildcard) or when the one without takes the other's runs leftmost (`runsMeet`). Only a segment of
 * one or two positions, where "." and ".." matter, goes through the small exact product. Steps are
 * counted (`overlapSteps`) so tests bound the work; `globsOverlapByProduct` is the old product, kept
 * as the tests' reference. Pure and platform-free; braces are expanded before this runs.
 *
 * Conservative where it must choose: `*` and `**` match dotfiles here, so `src/**` overlaps
 * `src/.env`. Two scopes that a strict matcher would keep apart are never handed out together. No
 * file is named "." or "..".
 */
import { type CharToken, type Segment, parseGlob } from './glob';

/** The characters one single-character token accepts, as ranges over code points. */
interface CharSet {
	negated: boolean;
	ranges: readonly (readonly [number, number])[];
	/** The one character of a literal (most positions): two literals meet when they are equal. */
	code?: number;
}

const slash = 47; // '/'
const dot = 46; // '.'
const anyChar: CharSet = { negated: true, ranges: [] };

function charSet(token: Exclude<CharToken, { kind: 'star' }>): CharSet {
	switch (token.kind) {
		case 'char': {
			const code = token.value.codePointAt(0) ?? 0;
			return { negated: false, ranges: [[code, code]], code };
		}
		case 'any':
			return anyChar;
		case 'class':
			return {
				negated: token.negated,
				ranges: token.ranges.map(([lo, hi]) => [lo.codePointAt(0) ?? 0, hi.codePointAt(0) ?? 0] as const),
			};
	}
}

function contains(set: CharSet, code: number): boolean {
	return set.ranges.some(([lo, hi]) => code >= lo && code <= hi) !== set.negated;
}

let steps = 0;

/** Character comparisons and segment pairs looked at so far (tests bound the work with it; it only grows). */
export function overlapSteps(): number {
	return steps;
}

/** Whether some character other than `/` and those in `except` is in both sets. */
function charSetsMeet(a: CharSet, b: CharSet, except?: number): boolean {
	steps++;
	if (a.code !== undefined && b.code !== undefined) {
		return a.code === b.code && a.code !== slash && a.code !== except;
	}
	if (a.negated && b.negated) {
		return true; // two finite exclusions leave most of Unicode
	}
	const [pos, other] = a.negated ? [b, a] : [a, b];
	for (const [lo, hi] of pos.ranges) {
		// A few hundred characters of a range are enough: classes exclude only a handful.
		for (let c = lo; c <= hi && c - lo <= 512; c++) {
			if (c !== slash && c !== except && contains(other, c)) {
				return true;
			}
		}
	}
	return false;
}

/**
 * A sequence split at its wildcards, at either level: a segment's positions split at its `*`, or a
 * glob's segments split at its `**`. Everything before the first wildcard, the non-empty runs between
 * two, everything after the last.
 */
interface Runs<T> {
	head: readonly T[];
	middles: readonly (readonly T[])[];
	/** Empty when there is no wildcard. */
	tail: readonly T[];
	starred: boolean;
}

function runsOf<T>(items: readonly (T | null)[]): Runs<T> {
	const runs: T[][] = [[]];
	for (const item of items) {
		if (item === null) {
			runs.push([]);
		} else {
			runs[runs.length - 1]?.push(item);
		}
	}
	const starred = runs.length > 1;
	return {
		head: runs[0] ?? [],
		middles: runs.slice(1, -1).filter(r => r.length > 0),
		tail: starred ? (runs.at(-1) ?? []) : [],
		starred,
	};
}

type Meet<T> = (x: T, y: T) => boolean;

/** Whether `b` meets `a` position by position, `a` from `from` on. */
function fits<T>(a: readonly T[], from: number, b: readonly T[], meet: Meet<T>): boolean {
	for (let k = 0; k < b.length; k++) {
		const x = a[from + k];
		const y = b[k];
		if (x === undefined || y === undefined || !meet(x, y)) {
			return false;
		}
	}
	return true;
}

/**
 * Whether two split sequences have a common instance, where a wildcard stands for any run of items and
 * `meet` says whether two items have a common instance (every item alone has one). Both with a
 * wildcard: exactly when their heads agree from the start and their tails from the end, since
 * head, a's middles, b's middles, tail is then an instance of both. One without: its items must take
 * the other's head, tail, and each middle at the leftmost place it fits (whatever fits after a later
 * place fits after an earlier one). Linear in the lengths but for that leftmost search.
 */
function runsMeet<T>(a: Runs<T>, b: Runs<T>, meet: Meet<T>): boolean {
	if (a.starred && b.starred) {
		const [sh, lh] = a.head.length <= b.head.length ? [a.head, b.head] : [b.head, a.head];
		const [st, lt] = a.tail.length <= b.tail.length ? [a.tail, b.tail] : [b.tail, a.tail];
		return fits(lh, 0, sh, meet) && fits(lt, lt.length - st.length, st, meet);
	}
	if (!a.starred && !b.starred) {
		return a.head.length === b.head.length && fits(a.head, 0, b.head, meet);
	}
	const [text, p] = a.starred ? [b.head, a] : [a.head, b];
	const end = text.length - p.tail.length;
	if (p.head.length > end || !fits(text, 0, p.head, meet) || !fits(text, end, p.tail, meet)) {
		return false;
	}
	let at = p.head.length;
	for (const middle of p.middles) {
		while (at + middle.length <= end && !fits(text, at, middle, meet)) {
			at++;
		}
		if (at + middle.length > end) {
			return false;
		}
		at += middle.length;
	}
	return true;
}

/** A segment pattern read for comparison: each position's set (null for `*`), and its runs. */
interface Seg {
	sets: readonly (CharSet | null)[];
	runs: Runs<CharSet>;
	/** A position no file-name character fills (`[/]`): the segment matches nothing. */
	matchesNothing: boolean;
}

function readSegment(tokens: readonly CharToken[]): Seg {
	const sets = tokens.map(t => (t.kind === 'star' ? null : charSet(t)));
	const matchesNothing = sets.some(s => s !== null && !charSetsMeet(s, anyChar));
	return { sets, runs: runsOf(sets), matchesNothing };
}

/** A glob read once: its segments (null for `**`), and their runs. */
interface Read {
	segments: readonly (Seg | null)[];
	runs: Runs<Seg>;
}

const read = new Map<string, Read>();
const readLimit = 20_000;

/** A glob parsed and read once (memoised: the hub compares the same held globs claim after claim). */
function readGlob(glob: string): Read {
	let r = read.get(glob);
	if (r === undefined) {
		const segments = parseGlob(glob).map((s: Segment) => (s.kind === 'globstar' ? null : readSegment(s.tokens)));
		r = { segments, runs: runsOf(segments) };
		if (read.size >= readLimit) {
			read.clear();
		}
		read.set(glob, r);
	}
	return r;
}

const charsMeet: Meet<CharSet> = (x, y) => charSetsMeet(x, y);

/** Whether two segment patterns match a common file name (non-empty, not "." or ".."). */
function segmentsMeet(a: Seg, b: Seg, exact: boolean): boolean {
	steps++;
	if (a.matchesNothing || b.matchesNothing) {
		return false;
	}
	if (exact || a.sets.length <= 2 || b.sets.length <= 2) {
		return smallMeet(a.sets, b.sets);
	}
	// Three or more positions make a real name whatever they hold; two starred segments meet on a
	// name as long as their heads, their middles, a letter and their tails.
	return runsMeet(a.runs, b.runs, charsMeet);
}

const fastSegmentsMeet: Meet<Seg> = (x, y) => segmentsMeet(x, y, false);

/**
 * Where a name stands as characters are added: empty, "." or ".." so far (names no file may have), or
 * a real name. A dot moves the first three along; anything else makes a name.
 */
const Name = { Empty: 0, Dot: 1, DotDot: 2, Real: 3 } as const;
type Name = (typeof Name)[keyof typeof Name];

/**
 * The exact product of two segments: meet(i, j, name) says a[i..] and b[j..] match a common rest that
 * makes `name` a real name. Used for a segment of at most two positions (where "." and ".." matter),
 * where it is linear in the other's length, and by `globsOverlapByProduct`.
 */
function smallMeet(a: readonly (CharSet | null)[], b: readonly (CharSet | null)[]): boolean {
	const memo = new Map<number, boolean>();
	const width = b.length + 1;
	const meet = (i: number, j: number, name: Name): boolean => {
		const key = (i * width + j) * 4 + name;
		const known = memo.get(key);
		if (known !== undefined) {
			return known;
		}
		memo.set(key, false);
		const ta = a[i];
		const tb = b[j];
		let out = ta === undefined && tb === undefined && name === Name.Real;
		// A star may match nothing more.
		if (!out && ta === null) {
			out = meet(i + 1, j, name);
		}
		if (!out && tb === null) {
			out = meet(i, j + 1, name);
		}
		// Or both sides take one common character: a star stays, a one-character token moves on.
		if (!out && ta !== undefined && tb !== undefined) {
			const sa = ta ?? anyChar;
			const sb = tb ?? anyChar;
			const ni = ta === null ? i : i + 1;
			const nj = tb === null ? j : j + 1;
			const next: Name[] = [];
			if (charSetsMeet(sa, sb, name === Name.Real ? undefined : dot)) {
				next.push(Name.Real);
			}
			if (name !== Name.Real && contains(sa, dot) && contains(sb, dot)) {
				next.push((name + 1) as Name);
			}
			out = next.some(n => (ni !== i || nj !== j || n !== name) && meet(ni, nj, n));
		}
		memo.set(key, out);
		return out;
	};
	return meet(0, 0, Name.Empty);
}

/** The product of two read globs' segments, `**` as zero or more segments (the reference). */
function globsMeet(a: readonly (Seg | null)[], b: readonly (Seg | null)[]): boolean {
	const memo = new Map<number, boolean>();
	const width = b.length + 1;
	const meet = (i: number, j: number): boolean => {
		const key = i * width + j;
		const known = memo.get(key);
		if (known !== undefined) {
			return known;
		}
		steps++;
		const sa = a[i];
		const sb = b[j];
		let out: boolean;
		if (sa === undefined && sb === undefined) {
			out = true;
		} else if (sa === null) {
			// ** matches no segment, or swallows one of the other side's (a globstar there too is fine).
			out = meet(i + 1, j) || (sb !== undefined && meet(i, j + 1));
		} else if (sb === null) {
			out = meet(i, j + 1) || (sa !== undefined && meet(i + 1, j));
		} else if (sa === undefined || sb === undefined) {
			out = false;
		} else {
			out = segmentsMeet(sa, sb, true) && meet(i + 1, j + 1);
		}
		memo.set(key, out);
		return out;
	};
	return meet(0, 0);
}

/** Whether the two globs (braces already expanded) can match a common path. */
export function globsOverlap(a: string, b: string): boolean {
	return runsMeet(readGlob(a).runs, readGlob(b).runs, fastSegmentsMeet);
}

/**
 * The same question answered by the product of the two globs (segment by segment, and character by
 * character within two segments: |a| × |b| steps): the reference test/core/scope.test.ts holds
 * `globsOverlap` to, and what Baton ran before the linear check. Not for the claim path.
 */
export function globsOverlapByProduct(a: string, b: string): boolean {
	return globsMeet(readGlob(a).segments, readGlob(b).segments);
}
