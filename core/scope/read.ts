/**
 * A stored scope read: its entries split into globs (braces expanded,
 * `./` dropped) and lock names, without refusing anything, and the limits that bound what comparing
 * two scopes costs. The hub and every face read scopes here; check.ts, the gate at create, edit and
 * reserve, refuses what breaks these limits with the words to fix it, so a scope read here is over
 * them only when an older hub stored it (`costly`: compared with nothing, it meets every scope).
 * Pure, platform-free, zod-free and free of the gate's sentences (the board bundle carries this).
 */
import { expandBraces } from './braces';
import { normalizeGlob, parseGlob } from './glob';

/** What one scope may hold: each bounds the work of comparing it with another (docs/decisions/0077-scope-bounded-cost.md). */
export const scopeLimits = {
	/** Entries a card's scope may list. */
	entries: 64,
	/** Characters of one entry. */
	entryLength: 256,
	/** Globs one entry's braces may expand to. */
	expansions: 64,
	/** Globs a whole scope may expand to. */
	globs: 64,
	/**
	 * Characters of all of a scope's globs, braces expanded, counting one more per glob: comparing two
	 * scopes costs at most about the product of theirs (overlap.ts), so this bounds a claim's work.
	 */
	characters: 1024,
	/** `*` in one segment of a glob (`*a*b*` has three). */
	stars: 8,
} as const;

export const lockPrefix = 'lock:';
/** A scope read: its globs with braces expanded, and its lock names. */
export interface Scope {
	globs: readonly string[];
	locks: readonly string[];
	/** Over a limit (stored before the limits were): compared with nothing, it meets every scope. */
	costly?: true;
}

/** What the `characters` limit counts: each glob's length plus one. */
export function scopeCharacters(globs: readonly string[]): number {
	return globs.reduce((n, g) => n + g.length + 1, 0);
}

/** The most `*` in one segment of a glob, or 0 when the glob has too few `*` to matter. */
export function starsInSegment(glob: string): number {
	if (glob.split('*').length <= scopeLimits.stars + 1) {
		return 0; // too few to pass the limit: spares the parse (a stored scope is read once per claim)
	}
	let most = 0;
	for (const s of parseGlob(glob)) {
		most = Math.max(most, s.kind === 'pattern' ? s.tokens.filter(t => t.kind === 'star').length : 0);
	}
	return most;
}

/**
 * A stored scope read for comparing and matching, never refused: entries that name no path are
 * skipped, and a scope over the limits (stored by a hub before them) is read as `costly`.
 */
export function readScope(entries: readonly string[]): Scope {
	const globs = new Set<string>();
	const locks = new Set<string>();
	for (const entry of entries.slice(0, scopeLimits.entries * 4)) {
		if (entry.startsWith(lockPrefix)) {
			locks.add(entry.slice(lockPrefix.length));
			continue;
		}
		for (const g of entry.includes('{') ? expandBraces(entry, scopeLimits.expansions) : [entry]) {
			const glob = normalizeGlob(g);
			if (glob !== undefined) {
				globs.add(glob);
			}
		}
	}
	const costly =
		entries.length > scopeLimits.entries ||
		globs.size > scopeLimits.globs ||
		scopeCharacters([...globs]) > scopeLimits.characters ||
		[...globs].some(g => starsInSegment(g) > scopeLimits.stars);
	return { globs: [...globs], locks: [...locks], ...(costly ? { costly: true as const } : {}) };
}
