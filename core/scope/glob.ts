/**
 * Baton's glob dialect, read once for every use: `/`-separated segments, `**` as a whole
 * segment (zero or more segments), and within a segment `*` (any run of characters), `?` (one
 * character), `[...]` classes (ranges, `!`/`^` negation) and literal characters (`\` escapes one).
 * Parses a glob (braces already expanded: braces.ts), says why one is malformed, and names its literal
 * leading folders (what the indexes file it under). Pure and platform-free; it matches nothing
 * (overlap.ts, match.ts do) and refuses nothing (check.ts does).
 */

/** One character position of a segment pattern. */
export type CharToken =
	| { kind: 'char'; value: string }
	| { kind: 'any' } // ?
	| { kind: 'class'; negated: boolean; ranges: readonly (readonly [string, string])[] }
	| { kind: 'star' }; // *

export type Segment = { kind: 'globstar' } | { kind: 'pattern'; tokens: readonly CharToken[] };

/**
 * Splits a glob into segments; `**` alone is the globstar (two in a row are one: the same paths),
 * empty segments (`a//b`) are dropped.
 */
export function parseGlob(glob: string): Segment[] {
	const out: Segment[] = [];
	for (const s of glob.split('/')) {
		if (s === '**') {
			if (out.at(-1)?.kind !== 'globstar') {
				out.push({ kind: 'globstar' });
			}
		} else if (s !== '') {
			out.push({ kind: 'pattern', tokens: parseSegment(s) });
		}
	}
	return out;
}

/** The leading segments without a wildcard (escapes read): every path the glob matches starts with them. */
export function literalLead(segments: readonly Segment[]): string[] {
	const lead: string[] = [];
	for (const s of segments) {
		const chars = s.kind === 'pattern' ? s.tokens.flatMap(t => (t.kind === 'char' ? [t.value] : [])) : [];
		if (s.kind !== 'pattern' || chars.length !== s.tokens.length) {
			break;
		}
		lead.push(chars.join(''));
	}
	return lead;
}

/** `literalLead` of a glob's text, without parsing it when it has no escape or class (most globs). */
export function leadOf(glob: string): string[] {
	if (glob.includes('\\') || glob.includes('[')) {
		return literalLead(parseGlob(glob));
	}
	const lead: string[] = [];
	for (const segment of glob.split('/')) {
		if (segment.includes('*') || segment.includes('?')) {
			break;
		}
		if (segment !== '') {
			lead.push(segment);
		}
	}
	return lead;
}

/** A glob without a leading `./`, `.` and empty segments; undefined for one that names no path or has `..`. */
export function normalizeGlob(glob: string): string | undefined {
	const segments = glob
		.replace(/^(\.\/)+/, '')
		.split('/')
		.filter(s => s !== '.' && s !== '');
	return segments.length === 0 || segments.includes('..') ? undefined : segments.join('/');
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
