/**
 * Which files a card's scope covers, fast enough to decorate a 50,000-file workspace:
 * each glob of a scope (read by check.ts `readScope`, braces expanded by braces.ts) compiled to a
 * RegExp of glob.ts's dialect (`**` is zero or more segments, `*`/`?`/classes stay inside a segment,
 * dotfiles match, `\` escapes), and an index of many scopes on the lead tree (leadTree.ts), so a path
 * is tested only against the globs filed along its folders. Pure, platform-free and zod-free; it
 * checks nothing (check.ts refuses bad entries when a card is written) and skips what it cannot read.
 */
import { type CharToken, type Segment, literalLead, parseGlob } from './glob';
import { readScope } from './read';
import { type LeadNode, LeadTree } from './leadTree';

/** One UTF-16 unit as a RegExp atom (globOverlap.ts reads a glob unit by unit, so no `u` flag). */
const unit = (c: string): string =>
	/[A-Za-z0-9_]/.test(c) ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

function tokenSource(t: CharToken): string {
	switch (t.kind) {
		case 'char':
			return unit(t.value);
		case 'any':
			return '[^/]';
		case 'star':
			return '[^/]*';
		case 'class': {
			const ranges = t.ranges.map(([lo, hi]) => (lo === hi ? unit(lo) : `${unit(lo)}-${unit(hi)}`)).join('');
			return t.negated ? `[^/${ranges}]` : `[${ranges}]`;
		}
	}
}

/** A glob compiled: the RegExp of a whole relative path, and the literal folders it starts with. */
export interface CompiledGlob {
	glob: string;
	regex: RegExp;
	/** Leading segments without a wildcard: every path it matches starts with them. */
	prefix: string[];
}

/** Compiles one glob (braces already expanded) to a matcher of `/`-separated relative paths. */
export function compileGlob(glob: string): CompiledGlob {
	// parseGlob reads `**/**` as one `**`, which keeps the separators below simple.
	const segments = parseGlob(glob);
	let source = '';
	let endsWithSlash = true;
	segments.forEach((s, i) => {
		const last = i === segments.length - 1;
		if (s.kind === 'globstar') {
			if (last) {
				// Zero or more trailing segments: `src/**` covers `src` itself, `**` alone any path.
				source += i === 0 ? '[^/]+(?:/[^/]+)*' : '(?:/[^/]+)*';
			} else {
				source += `${i === 0 ? '' : '/'}(?:[^/]+/)*`;
				endsWithSlash = true;
				return;
			}
		} else {
			source += (endsWithSlash ? '' : '/') + s.tokens.map(tokenSource).join('');
		}
		endsWithSlash = false;
	});
	return { glob, regex: new RegExp(`^${source}$`), prefix: literalLead(segments) };
}

/** Whether one scope covers `path` (relative to its project root, `/`-separated). */
export function matchScope(entries: readonly string[]): (path: string) => boolean {
	const regexes = readScope(entries).globs.map(g => compileGlob(g).regex);
	return path => regexes.some(r => r.test(path));
}

interface IndexEntry<T> {
	owner: T;
	regex: RegExp;
	/** The literal end of the glob's last segment (`.ts` of `*.ts`): a path's name must end with it. */
	tail: string;
}

/**
 * What one folder of the index holds. A glob is filed at the folder its literal leading segments name, in the
 * cheapest form that decides it: `under` (the folder then `**`: every path reaching it matches),
 * `named` (then one plain name: a path in this very folder with that name), `leaf` (then one
 * wildcard segment: its RegExp on the name of a path in this folder), else `full` (the whole path's
 * RegExp, looked up by name when the glob ends in a plain one, and after a tail check otherwise).
 */
interface Filed<T> {
	under: T[];
	named: Map<string, T[]>;
	leaf: IndexEntry<T>[];
	fullByName: Map<string, IndexEntry<T>[]>;
	full: IndexEntry<T>[];
}

const newFiled = <T>(): Filed<T> => ({
	under: [],
	named: new Map(),
	leaf: [],
	fullByName: new Map(),
	full: [],
});

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
	const list = map.get(key);
	if (list === undefined) {
		map.set(key, [value]);
	} else {
		list.push(value);
	}
}

/** The literal text of a segment without wildcards, else undefined; and its literal tail. */
function literalOf(segment: Segment | undefined): { name: string | undefined; tail: string } {
	if (segment === undefined || segment.kind === 'globstar') {
		return { name: undefined, tail: '' };
	}
	let tail = '';
	for (const t of segment.tokens) {
		tail = t.kind === 'char' ? tail + t.value : '';
	}
	return { name: tail.length === segment.tokens.length ? tail : undefined, tail };
}

/**
 * Many scopes, each with an owner (a card), indexed by their globs' literal leading folders: `match`
 * walks a path's folders down that tree and looks only at the globs filed on the way (`src/auth/**`
 * is never tried on `docs/a.md`), most of them decided without a RegExp (see Filed).
 */
export class ScopeIndex<T> {
	private readonly tree = new LeadTree<Filed<T>>(newFiled);
	private count = 0;

	/** Number of globs indexed. */
	get size(): number {
		return this.count;
	}

	/** Files `owner`'s scope entries (locks are skipped: they name no file). */
	add(owner: T, entries: readonly string[]): void {
		for (const glob of readScope(entries).globs) {
			const segments = parseGlob(glob);
			const prefix = literalLead(segments);
			const rest = segments.slice(prefix.length);
			const last = literalOf(rest.at(-1));
			if (rest.length === 0) {
				// A plain path: filed under its own name at its parent folder.
				push(this.tree.at(prefix.slice(0, -1)).value.named, prefix.at(-1) ?? '', owner);
				this.count++;
				continue;
			}
			const node = this.tree.at(prefix).value;
			if (rest.length === 1 && rest[0]?.kind === 'globstar') {
				node.under.push(owner);
			} else if (rest.length === 1) {
				const leaf = rest[0]?.kind === 'pattern' ? rest[0].tokens.map(tokenSource).join('') : '';
				node.leaf.push({ owner, regex: new RegExp(`^${leaf}$`), tail: last.tail });
			} else if (last.name !== undefined) {
				push(node.fullByName, last.name, { owner, regex: compileGlob(glob).regex, tail: '' });
			} else {
				node.full.push({ owner, regex: compileGlob(glob).regex, tail: last.tail });
			}
			this.count++;
		}
	}

	/**
	 * The owners whose scope covers `path` (relative to the root, `/`-separated), each once, in the
	 * order they were added per folder depth; an empty array (shared: do not change it) when none do.
	 * `normalized`: the caller vouches for no empty, `.` or leading `/` segment (a file-system path).
	 */
	match(path: string, normalized = false): readonly T[] {
		const rel =
			!normalized && (path.charCodeAt(0) === slash || path.includes('//') || path.includes('./') || path.endsWith('/'))
				? path
						.split('/')
						.filter(s => s !== '' && s !== '.')
						.join('/')
				: path;
		const nameAt = rel.lastIndexOf('/') + 1;
		const name = rel.slice(nameAt);
		let out: T[] | undefined;
		let node: LeadNode<Filed<T>> | undefined = this.tree.root;
		// Down the path's folders by index, not split(): no array per path (a 50k-file pass is GC-bound
		// otherwise), and no closure per path either.
		for (let start = 0; node !== undefined;) {
			const filed = node.value;
			out = visit(filed, rel, name, out);
			if (start === nameAt) {
				// The folder that holds the path: plain names and one-segment wildcards decide on the name alone.
				out = filed.named.size > 0 ? addAll(filed.named.get(name), out) : out;
				out = filed.leaf.length > 0 ? collect(filed.leaf, name, name, out) : out;
			}
			if (start > rel.length) {
				break;
			}
			const end = rel.indexOf('/', start);
			node = node.children?.get(end < 0 ? rel.slice(start) : rel.slice(start, end));
			start = end < 0 ? rel.length + 1 : end + 1;
		}
		return out ?? none;
	}
}

const slash = 47;
const none: readonly never[] = [];

/** The globs of a folder on the path's way that do not depend on the path being in that very folder. */
function visit<T>(node: Filed<T>, rel: string, name: string, out: T[] | undefined): T[] | undefined {
	// Most folders on a path's way file no glob: the size checks spare them a hash of the name.
	let found = node.under.length > 0 ? addAll(node.under, out) : out;
	const byName = node.fullByName.size > 0 ? node.fullByName.get(name) : undefined;
	if (byName !== undefined) {
		found = collect(byName, rel, name, found);
	}
	return node.full.length > 0 ? collect(node.full, rel, name, found) : found;
}

function addAll<T>(owners: readonly T[] | undefined, out: T[] | undefined): T[] | undefined {
	for (const owner of owners ?? none) {
		if (out === undefined) {
			out = [owner];
		} else if (!out.includes(owner)) {
			out.push(owner);
		}
	}
	return out;
}

/** Adds the owners of `entries` whose RegExp matches `text` (the path, or its name for a leaf). */
function collect<T>(
	entries: readonly IndexEntry<T>[],
	text: string,
	name: string,
	out: T[] | undefined,
): T[] | undefined {
	for (const { owner, regex, tail } of entries) {
		if (name.endsWith(tail) && !(out?.includes(owner) ?? false) && regex.test(text)) {
			(out ??= []).push(owner);
		}
	}
	return out;
}
