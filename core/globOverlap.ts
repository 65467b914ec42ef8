/**
 * Whether two path globs can match a common path (issue 13 §2: two cards' scopes overlap), decided
 * exactly for the glob language Baton accepts: `/`-separated segments, `**` as a whole segment (zero
 * or more segments), and within a segment `*` (any run of characters), `?` (one character), `[...]`
 * classes (ranges, `!`/`^` negation) and literal characters (`\` escapes one). Braces are expanded
 * by the caller before this runs. Pure and platform-free: no I/O, no glob library at run time (no
 * library decides the intersection of two globs; matching a path is a different question).
 *
 * Conservative where it must choose: `*` and `**` match dotfiles here, so `src/**` overlaps
 * `src/.env`. Two scopes that a strict matcher would keep apart are never handed out together.
 */

/** One character position of a segment pattern. */
type CharToken =
	| { kind: 'char'; value: string }
	| { kind: 'any' } // ?
	| { kind: 'class'; negated: boolean; ranges: readonly (readonly [string, string])[] }
	| { kind: 'star' }; // *

type Segment = { kind: 'globstar' } | { kind: 'pattern'; tokens: readonly CharToken[] };

/** Splits a glob into segments; `**` alone is the globstar, empty segments (`a//b`) are dropped. */
export function parseGlob(glob: string): Segment[] {
	return glob
		.split('/')
		.filter(s => s !== '')
		.map(s => (s === '**' ? { kind: 'globstar' } : { kind: 'pattern', tokens: parseSegment(s) }));
}

function parseSegment(segment: string): CharToken[] {
	const tokens: CharToken[] = [];
	for (let i = 0; i < segment.length; i++) {
		const c = segment.charAt(i);
		if (c === '\\' && i + 1 < segment.length) {
			tokens.push({ kind: 'char', value: segment.charAt(++i) });
		} else if (c === '*') {
			// `**` inside a segment (`a**b`) is a star, as in every glob dialect.
			if (tokens.at(-1)?.kind !== 'star') {
				tokens.push({ kind: 'star' });
			}
		} else if (c === '?') {
			tokens.push({ kind: 'any' });
		} else if (c === '[') {
			const end = classEnd(segment, i);
			if (end === -1) {
				tokens.push({ kind: 'char', value: c }); // an unclosed `[` is a literal
			} else {
				tokens.push(parseClass(segment.slice(i + 1, end)));
				i = end;
			}
		} else {
			tokens.push({ kind: 'char', value: c });
		}
	}
	return tokens;
}

/**
 * Why `glob` is not a glob Baton accepts (as a sentence ending in what to do), or undefined. Refused:
 * a lone trailing `\`, a `[` whose class never closes, a backwards range (`[z-a]`), braces that do not
 * balance, empty braces. The matcher would read some of these as literal characters; a scope is
 * refused instead, because its author almost surely meant something else.
 */
export function globSyntaxError(glob: string): string | undefined {
	let depth = 0;
	for (const segment of glob.split('/')) {
		for (let i = 0; i < segment.length; i++) {
			const c = segment.charAt(i);
			if (c === '\\') {
				if (i + 1 >= segment.length) {
					return 'ends a segment with a lone "\\". Escape a backslash as "\\\\", or remove it.';
				}
				i++;
			} else if (c === '[') {
				const end = classEnd(segment, i);
				if (end === -1) {
					return 'opens a character class "[" that never closes. Close it with "]", or write "\\[" for the character.';
				}
				const backwards = backwardsRange(segment.slice(i + 1, end));
				if (backwards !== undefined) {
					return `has the range "${backwards}" backwards. Write the lower character first.`;
				}
				i = end;
			} else if (c === '{') {
				depth++;
				if (segment.charAt(i + 1) === '}') {
					return 'has empty braces "{}". List alternatives inside them, like "{a,b}", or remove them.';
				}
			} else if (c === '}') {
				if (--depth < 0) {
					return 'closes a brace "}" it never opened. Write "\\}" for the character.';
				}
			}
		}
	}
	return depth > 0 ? 'opens a brace "{" that never closes. Close it with "}".' : undefined;
}

/** The first range of a class body whose ends are in the wrong order (`z-a`), or undefined. */
function backwardsRange(body: string): string | undefined {
	let i = body.startsWith('!') || body.startsWith('^') ? 1 : 0;
	for (; i < body.length; i++) {
		let lo = body.charAt(i);
		if (lo === '\\') {
			lo = body.charAt(++i);
		}
		if (body.charAt(i + 1) === '-' && i + 2 < body.length) {
			let hi = body.charAt(i + 2);
			const start = i;
			i += 2;
			if (hi === '\\') {
				hi = body.charAt(++i);
			}
			if (lo > hi) {
				return body.slice(start, i + 1);
			}
		}
	}
	return undefined;
}

/** Index of the `]` closing the class opened at `start`, or -1 (a `]` first in the class is literal). */
function classEnd(segment: string, start: number): number {
	let i = start + 1;
	if (segment.charAt(i) === '!' || segment.charAt(i) === '^') {
		i++;
	}
	if (segment.charAt(i) === ']') {
		i++;
	}
	for (; i < segment.length; i++) {
		if (segment.charAt(i) === '\\') {
			i++;
		} else if (segment.charAt(i) === ']') {
			return i;
		}
	}
	return -1;
}

function parseClass(body: string): CharToken {
	let i = 0;
	let negated = false;
	if (body.startsWith('!') || body.startsWith('^')) {
		negated = true;
		i = 1;
	}
	const ranges: [string, string][] = [];
	while (i < body.length) {
		let lo = body.charAt(i);
		if (lo === '\\' && i + 1 < body.length) {
			lo = body.charAt(++i);
		}
		if (body.charAt(i + 1) === '-' && i + 2 < body.length) {
			let hi = body.charAt(i + 2);
			i += 2;
			if (hi === '\\' && i + 1 < body.length) {
				hi = body.charAt(++i);
			}
			ranges.push(lo <= hi ? [lo, hi] : [hi, lo]);
		} else {
			ranges.push([lo, lo]);
		}
		i++;
	}
	return { kind: 'class', negated, ranges };
}

/** The characters one single-character token accepts, as sorted disjoint ranges over code points. */
type CharSet = { negated: boolean; ranges: readonly (readonly [number, number])[] };

function charSet(token: Exclude<CharToken, { kind: 'star' }>): CharSet {
	switch (token.kind) {
		case 'char': {
			const code = token.value.codePointAt(0) ?? 0;
			return { negated: false, ranges: [[code, code]] };
		}
		case 'any':
			return { negated: true, ranges: [] };
		case 'class':
			return {
				negated: token.negated,
				ranges: token.ranges.map(([lo, hi]) => [lo.codePointAt(0) ?? 0, hi.codePointAt(0) ?? 0] as const),
			};
	}
}

const slash = 47; // '/'
const dot = 46; // '.'

function contains(set: CharSet, code: number): boolean {
	return set.ranges.some(([lo, hi]) => code >= lo && code <= hi) !== set.negated;
}

/** Whether some character other than `/` and those in `except` is in both sets. */
function charSetsMeet(a: CharSet, b: CharSet, except: readonly number[]): boolean {
	const excluded = [slash, ...except];
	if (a.negated && b.negated) {
		return true; // two finite exclusions leave most of Unicode
	}
	const [pos, other] = a.negated ? [b, a] : [a, b];
	for (const [lo, hi] of pos.ranges) {
		// A few hundred characters of a range are enough: classes exclude only a handful.
		for (let c = lo; c <= hi && c - lo <= 512; c++) {
			if (!excluded.includes(c) && contains(other, c)) {
				return true;
			}
		}
	}
	return false;
}

/**
 * Where a segment's text stands as characters are added: empty, "." or ".." so far (names no file
 * may have), or a real name. A dot moves the first three along; anything else makes a name.
 */
const Name = { Empty: 0, Dot: 1, DotDot: 2, Real: 3 } as const;
type Name = (typeof Name)[keyof typeof Name];

/** Whether two segment patterns match a common file name (non-empty, not "." or ".."). */
function segmentsMeet(a: readonly CharToken[], b: readonly CharToken[]): boolean {
	const anyChar: CharSet = { negated: true, ranges: [] };
	const memo = new Map<number, boolean>();
	const width = b.length + 1;
	// meet(i, j, name): a[i..] and b[j..] match a common rest that makes `name` a real name. Indexes
	// never go back and a star's self-loop only moves `name` forward, so the recursion ends.
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
		if (!out && ta?.kind === 'star') {
			out = meet(i + 1, j, name);
		}
		if (!out && tb?.kind === 'star') {
			out = meet(i, j + 1, name);
		}
		// Or both sides take one common character: a star stays, a one-character token moves on.
		if (!out && ta !== undefined && tb !== undefined) {
			const sa = ta.kind === 'star' ? anyChar : charSet(ta);
			const sb = tb.kind === 'star' ? anyChar : charSet(tb);
			const ni = ta.kind === 'star' ? i : i + 1;
			const nj = tb.kind === 'star' ? j : j + 1;
			const afterDot = name === Name.Real ? Name.Real : ((name + 1) as Name);
			const steps: Name[] = [];
			if (charSetsMeet(sa, sb, name === Name.Real ? [] : [dot])) {
				steps.push(Name.Real);
			}
			if (name !== Name.Real && contains(sa, dot) && contains(sb, dot)) {
				steps.push(afterDot);
			}
			out = steps.some(next => (ni !== i || nj !== j || next !== name) && meet(ni, nj, next));
		}
		memo.set(key, out);
		return out;
	};
	return meet(0, 0, Name.Empty);
}

/** Whether two parsed globs match a common path. */
function globsMeet(a: readonly Segment[], b: readonly Segment[]): boolean {
	const memo = new Map<number, boolean>();
	const width = b.length + 1;
	const meet = (i: number, j: number): boolean => {
		const key = i * width + j;
		const known = memo.get(key);
		if (known !== undefined) {
			return known;
		}
		const sa = a[i];
		const sb = b[j];
		let out: boolean;
		if (sa === undefined && sb === undefined) {
			out = true;
		} else if (sa?.kind === 'globstar') {
			// ** matches no segment, or swallows one of the other side's (a globstar there too is fine).
			out = meet(i + 1, j) || (sb !== undefined && meet(i, j + 1));
		} else if (sb?.kind === 'globstar') {
			out = meet(i, j + 1) || (sa !== undefined && meet(i + 1, j));
		} else if (sa === undefined || sb === undefined) {
			out = false;
		} else {
			out = segmentsMeet(sa.tokens, sb.tokens) && meet(i + 1, j + 1);
		}
		memo.set(key, out);
		return out;
	};
	return meet(0, 0);
}

/** Whether the two globs (braces already expanded) can match a common path. */
export function globsOverlap(a: string, b: string): boolean {
	return globsMeet(parseGlob(a), parseGlob(b));
}
