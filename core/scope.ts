/**
 * A card's scope (issue 13 §2): path globs relative to its project's root (`src/auth/**`,
 * `package.json`) and named locks (`lock:db-migrations`). This module checks a scope (refusing, with
 * the entry and what to do, an absolute path, one that leaves the root, an empty or over-long entry, a
 * lock name with spaces, more than 64 entries, a brace pattern that expands to too many globs) and
 * decides whether two scopes overlap, naming the first overlapping pair. Pure and platform-free:
 * brace expansion is the `braces` library's, glob intersection is globOverlap.ts's; it knows nothing
 * of claims, projects or the store.
 */
import braces from 'braces';

import { BatonError } from './errors';
import { globSyntaxError, globsOverlap } from './globOverlap';

export const scopeLimits = {
	/** Entries a card's scope may list. */
	entries: 64,
	/** Characters of one entry. */
	entryLength: 256,
	/** Globs one entry's braces may expand to. */
	expansions: 64,
} as const;

const lockPrefix = 'lock:';
const lockName = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A checked scope: its globs with braces expanded, and its lock names. */
export interface Scope {
	globs: readonly string[];
	locks: readonly string[];
}

function refuse(entry: string, why: string, data: Record<string, unknown> = {}): never {
	throw new BatonError('invalid_input', `Scope entry "${entry}" ${why}`, { field: 'scope', entry, ...data });
}

/** Checks one path glob and returns it without a leading `./`. */
function checkGlob(entry: string): string {
	// eslint-disable-next-line no-control-regex
	if (/[\u0000-\u001f\u007f]/.test(entry)) {
		refuse(entry, 'has a control character. Use a path glob relative to the project root, like "src/auth/**".');
	}
	if (entry.startsWith('/') || entry.startsWith('~') || /^[A-Za-z]:[\\/]/.test(entry) || entry.startsWith('\\\\')) {
		refuse(
			entry,
			'is an absolute path. Scopes are relative to the project root: write "src/auth/**", not "/repo/src/auth/**".',
		);
	}
	const glob = entry.replace(/^(\.\/)+/, '');
	const segments = glob.split('/');
	if (segments.some(s => s === '..')) {
		refuse(entry, 'leaves the project root (".."). Name paths inside the repository, relative to its root.');
	}
	if (glob === '' || segments.every(s => s === '' || s === '.')) {
		refuse(entry, 'names no path. Use a glob like "src/**" or a file like "package.json".');
	}
	return segments.filter(s => s !== '.').join('/');
}

/**
 * How many globs the braces of `glob` expand to, counted before expanding (an entry of 256 characters
 * could otherwise ask for 2^40): each `{a,b,c}` multiplies by its alternatives, each `{1..9}` by its
 * range. Nested braces are refused: list the entries instead.
 */
function braceCount(glob: string): number {
	if (/\{[^}]*\{/.test(glob)) {
		refuse(glob, 'nests braces. List the alternatives as separate entries instead.');
	}
	let count = 1;
	for (const [, body = ''] of glob.matchAll(/(?<!\\)\{([^{}]*)\}/g)) {
		const range = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.-?\d+)?$/.exec(body);
		if (range !== null) {
			const [lo, hi] = [range[1] ?? '', range[2] ?? ''].map(v => (/^-?\d+$/.test(v) ? Number(v) : v.charCodeAt(0)));
			count *= Math.abs((hi ?? 0) - (lo ?? 0)) + 1;
		} else if (body.includes(',')) {
			count *= body.split(',').length;
		}
	}
	return count;
}

/**
 * Checks a scope and expands it. Throws `invalid_input` naming the first bad entry; the same scope
 * always gives the same Scope (entries in order, duplicates dropped).
 */
export function checkScope(entries: readonly string[]): Scope {
	if (entries.length > scopeLimits.entries) {
		throw new BatonError(
			'invalid_input',
			`A scope lists at most ${scopeLimits.entries} entries; this one has ${entries.length}. Use broader globs ("src/auth/**" for a folder).`,
			{ field: 'scope', entries: entries.length, limit: scopeLimits.entries },
		);
	}
	const globs = new Set<string>();
	const locks = new Set<string>();
	for (const entry of entries) {
		if (entry.length === 0 || entry.length > scopeLimits.entryLength) {
			refuse(entry.slice(0, 40), `must be 1 to ${scopeLimits.entryLength} characters long.`);
		}
		if (entry.startsWith(lockPrefix)) {
			const name = entry.slice(lockPrefix.length);
			if (!lockName.test(name)) {
				refuse(
					entry,
					'is not a lock name: after "lock:" use letters, digits, ".", "_" and "-" (no spaces), like "lock:db-migrations".',
				);
			}
			locks.add(name);
			continue;
		}
		const glob = checkGlob(entry);
		const syntax = globSyntaxError(glob);
		if (syntax !== undefined) {
			refuse(entry, `is not a valid glob: it ${syntax}`);
		}
		const count = braceCount(glob);
		if (count > scopeLimits.expansions) {
			refuse(entry, `expands to ${count} globs; at most ${scopeLimits.expansions}. Use a wildcard instead.`);
		}
		if (!glob.includes('{')) {
			globs.add(glob); // nothing to expand (braces() costs ~20 µs an entry)
			continue;
		}
		for (const g of braces(glob, { expand: true, rangeLimit: scopeLimits.expansions })) {
			globs.add(checkGlob(g));
		}
	}
	return { globs: [...globs], locks: [...locks] };
}

/** Where two scopes meet: the first pair of overlapping entries (a glob pair, or a shared lock). */
export interface ScopeOverlap {
	mine: string;
	theirs: string;
}

/** The first overlap of two checked scopes, or undefined when they can run side by side. */
export function scopesOverlap(a: Scope, b: Scope): ScopeOverlap | undefined {
	for (const lock of a.locks) {
		if (b.locks.includes(lock)) {
			return { mine: `${lockPrefix}${lock}`, theirs: `${lockPrefix}${lock}` };
		}
	}
	for (const mine of a.globs) {
		for (const theirs of b.globs) {
			if (globsOverlap(mine, theirs)) {
				return { mine, theirs };
			}
		}
	}
	return undefined;
}
