/**
 * A card's scope: path globs relative to its project's root (`src/auth/**`,
 * `package.json`) and named locks (`lock:db-migrations`). `checkScope` is the gate at create, edit
 * and reserve: it refuses, with the entry or the limit and what to do, an absolute path, one that
 * leaves the root, an empty or over-long entry, a lock name with spaces, a malformed glob, nested
 * braces, and every scope too costly to compare (too many entries, globs, characters or
 * stars in a segment: read.ts's limits), so no claim ever meets one. For valid entries it gives what
 * read.ts `readScope` gives. Pure and platform-free; it decides no overlap (overlap.ts, conflicts.ts)
 * and knows nothing of claims.
 */
import { BatonError } from '../errors';
import { braceCount, expandBraces, nestsBraces } from './braces';
import { globSyntaxError, normalizeGlob } from './glob';
import { type Scope, lockPrefix, scopeCharacters, scopeLimits, starsInSegment } from './read';

const lockName = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function refuse(entry: string, why: string, data: Record<string, unknown> = {}): never {
	throw new BatonError('invalid_input', `Scope entry "${entry}" ${why}`, { field: 'scope', entry, ...data });
}

function refuseScope(what: string, limit: keyof typeof scopeLimits, has: number, todo: string): never {
	throw new BatonError(
		'invalid_input',
		`A scope ${what} at most ${scopeLimits[limit].toLocaleString('en')}; this one has ${has.toLocaleString('en')}. ${todo}`,
		{ field: 'scope', limit, max: scopeLimits[limit], has },
	);
}

/** Checks one path glob and returns it without a leading `./` or `.` segments. */
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
	if (entry.split('/').includes('..')) {
		refuse(entry, 'leaves the project root (".."). Name paths inside the repository, relative to its root.');
	}
	const glob = normalizeGlob(entry);
	if (glob === undefined) {
		refuse(entry, 'names no path. Use a glob like "src/**" or a file like "package.json".');
	}
	return glob;
}

/**
 * Checks a scope and expands it. Throws `invalid_input` naming the first bad entry or the limit it
 * passes; the same scope always gives the same Scope (entries in order, duplicates dropped).
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
			if (!lockName.test(entry.slice(lockPrefix.length))) {
				refuse(
					entry,
					'is not a lock name: after "lock:" use letters, digits, ".", "_" and "-" (no spaces), like "lock:db-migrations".',
				);
			}
			locks.add(entry.slice(lockPrefix.length));
			continue;
		}
		const glob = checkGlob(entry);
		const syntax = globSyntaxError(glob);
		if (syntax !== undefined) {
			refuse(entry, `is not a valid glob: it ${syntax}`);
		}
		if (nestsBraces(glob)) {
			refuse(glob, 'nests braces. List the alternatives as separate entries instead.');
		}
		const count = braceCount(glob);
		if (count > scopeLimits.expansions) {
			refuse(entry, `expands to ${count} globs; at most ${scopeLimits.expansions}. Use a wildcard instead.`);
		}
		const stars = starsInSegment(glob);
		if (stars > scopeLimits.stars) {
			refuse(
				entry,
				`has ${stars} "*" in one segment; at most ${scopeLimits.stars} (comparing it with other scopes would cost too much). Use fewer wildcards, like "src/*auth*.ts".`,
				{ limit: 'stars', max: scopeLimits.stars, has: stars },
			);
		}
		for (const g of glob.includes('{') ? expandBraces(glob, scopeLimits.expansions) : [glob]) {
			globs.add(checkGlob(g));
		}
	}
	const todo = 'Use broader globs ("src/auth/**" for a folder) or split the card.';
	if (globs.size > scopeLimits.globs) {
		refuseScope('expands (braces included) to', 'globs', globs.size, todo);
	}
	const characters = scopeCharacters([...globs]);
	if (characters > scopeLimits.characters) {
		refuseScope('holds (braces expanded)', 'characters', characters, todo);
	}
	return { globs: [...globs], locks: [...locks] };
}
