/**
 * Which files a card's scope covers (issue 13 §3), fast enough to decorate a 50,000-file workspace:
 * a scope's entries expanded (braces, by hand: the `braces` library stays out of the extension and
 * board bundles), each glob compiled to a RegExp that reads globOverlap.ts's dialect (its own parser:
 * `**` is zero or more segments, `*`/`?`/classes stay inside a segment, dotfiles match, `\` escapes),
 * and an index of many scopes keyed by their literal leading folders, so a path is tested only against
 * the globs that could match it. Also the faces' overlap test (a ready card waiting on another's files)
 * on the same expansion. Pure, platform-free and zod-free (types only from protocol.ts): it checks
 * nothing (core/scope.ts refuses bad entries when a card is written) and skips what it cannot read.
 */
import { globsOverlap, parseGlob } from './globOverlap';
import type { Card } from './protocol';

const lockPrefix = 'lock:';
/** The same bound core/scope.ts applies: an entry's braces expand to at most this many globs. */
const maxExpansions = 64;

/** One `{…}` of a glob: its alternatives, or undefined when it is a literal (`{a}`, `{}`). */
function alternatives(body: string): string[] | undefined {
	const range = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/.exec(body);
	if (range !== null) {
		const [, from = '', to = '', stepText] = range;
		const numeric = /^-?\d+$/.test(from) && /^-?\d+$/.test(to);
		if (!numeric && (/\d/.test(from) || /\d/.test(to))) {
			return undefined;
		}
		const [lo, hi] = numeric ? [Number(from), Number(to)] : [from.charCodeAt(0), to.charCodeAt(0)];
		const step = Math.max(1, Math.abs(Number(stepText ?? 1)));
		// `{01..10}` pads to the widest bound, as bash and the braces library do.
		const width = numeric && /^-?0\d/.test(from + ',' + to) ? Math.max(from.length, to.length) : 0;
		const out: string[] = [];
		for (let v = lo; lo <= hi ? v <= hi : v >= hi; v += lo <= hi ? step : -step) {
			if (out.length > maxExpansions) {
				break;
			}
			const text = numeric ? String(Math.abs(v)).padStart(width - (v < 0 ? 1 : 0), '0') : String.fromCharCode(v);
			out.push(numeric && v < 0 ? `-${text}` : text);
		}
		return out;
	}
	return body.includes(',') ? body.split(',') : undefined;
}

/** Expands a glob's braces (`src/{a,b}/**`, `f{1..3}.ts`); nested braces are left as they are. */
export function expandBraces(glob: string): string[] {
	const open = /(?<!\\)\{([^{}]*)\}/g;
	for (const m of glob.matchAll(open)) {
		const alts = alternatives(m[1] ?? '');
		if (alts !== undefined) {
			const head = glob.slice(0, m.index);
			const tails = expandBraces(glob.slice(m.index + m[0].length));
			return alts.flatMap(alt => tails.map(tail => head + alt + tail)).slice(0, maxExpansions);
		}
	}
	return [glob];
}

/** A glob without a leading `./` and `.` segments, or undefined for one that names no path. */
function normalize(glob: string): string | undefined {
	const segments = glob
		.replace(/^(\.\/)+/, '')
		.split('/')
		.filter(s => s !== '.' && s !== '');
	return segments.length === 0 || segments.includes('..') ? undefined : segments.join('/');
}

/** A scope's path globs, braces expanded, `./` dropped, locks and unreadable entries left out. */
export function scopeGlobs(entries: readonly string[]): string[] {
	const out = new Set<string>();
	for (const entry of entries) {
		if (entry.startsWith(lockPrefix)) {
			continue;
		}
		for (const g of expandBraces(entry)) {
			const glob = normalize(g);
			if (glob !== undefined) {
				out.add(glob);
			}
		}
	}
	return [...out];
}

/** A card's live scope (issue 13 §2): scope ∪ reserved while it is claimed, else nothing. */
export function liveScope(card: Pick<Card, 'status' | 'scope' | 'reserved'>): string[] {
	if (card.status !== 'claimed') {
		return [];
	}
	return [...new Set([...(card.scope ?? []), ...(card.reserved ?? [])])];
}

type Segment = ReturnType<typeof parseGlob>[number];
type Token = Extract<Segment, { kind: 'pattern' }>['tokens'][number];

/** One UTF-16 unit as a RegExp atom (globOverlap.ts reads a glob unit by unit, so no `u` flag). */
const unit = (c: string): string =>
	/[A-Za-z0-9_]/.test(c) ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

function tokenSource(t: Token): string {
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
	// `**/**` is `**`: collapsing keeps the separators below simple.
	const segments = parseGlob(glob).filter((s, i, all) => !(s.kind === 'globstar' && all[i - 1]?.kind === 'globstar'));
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
	const prefix: string[] = [];
	for (const s of segments) {
		const chars = s.kind === 'pattern' ? s.tokens.filter(t => t.kind === 'char') : [];
		if (s.kind !== 'pattern' || chars.length !== s.tokens.length) {
			break;
		}
		prefix.push(chars.map(t => t.value).join(''));
	}
	return { glob, regex: new RegExp(`^${source}$`), prefix };
}

/** Whether one scope covers `path` (relative to its project root, `/`-separated). */
export function matchScope(entries: readonly string[]): (path: string) => boolean {
	const regexes = scopeGlobs(entries).map(g => compileGlob(g).regex);
	return path => regexes.some(r => r.test(path));
}

interface IndexEntry<T> {
	owner: T;
	regex: RegExp;
	/** The literal end of the glob's last segment (`.ts` of `*.ts`): a path's name must end with it. */
	tail: string;
}

/**
 * One folder of the index. A glob is filed at the folder its literal leading segments name, in the
 * cheapest form that decides it: `under` (the folder then `**`: every path reaching it matches),
 * `named` (then one plain name: a path in this very folder with that name), `leaf` (then one
 * wildcard segment: its RegExp on the name of a path in this folder), else `full` (the whole path's
 * RegExp, looked up by name when the glob ends in a plain one, and after a tail check otherwise).
 */
interface IndexNode<T> {
	children: Map<string, IndexNode<T>>;
	under: T[];
	named: Map<string, T[]>;
	leaf: IndexEntry<T>[];
	fullByName: Map<string, IndexEntry<T>[]>;
	full: IndexEntry<T>[];
}

const newNode = <T>(): IndexNode<T> => ({
	children: new Map(),
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
 * is never tried on `docs/a.md`), most of them decided without a RegExp (see IndexNode).
 */
export class ScopeIndex<T> {
	private readonly root = newNode<T>();
	private count = 0;

	/** Number of globs indexed. */
	get size(): number {
		return this.count;
	}

	/** Files `owner`'s scope entries (locks are skipped: they name no file). */
	add(owner: T, entries: readonly string[]): void {
		for (const glob of scopeGlobs(entries)) {
			const compiled = compileGlob(glob);
			const segments = parseGlob(glob).filter(
				(s, i, all) => !(s.kind === 'globstar' && all[i - 1]?.kind === 'globstar'),
			);
			let node = this.root;
			for (const segment of compiled.prefix) {
				let next = node.children.get(segment);
				if (next === undefined) {
					next = newNode();
					node.children.set(segment, next);
				}
				node = next;
			}
			const rest = segments.slice(compiled.prefix.length);
			const last = literalOf(rest.at(-1));
			if (rest.length === 0) {
				// A plain path: filed under its own name at its parent folder.
				node = this.root;
				for (const segment of compiled.prefix.slice(0, -1)) {
					node = node.children.get(segment) ?? node;
				}
				push(node.named, compiled.prefix.at(-1) ?? '', owner);
			} else if (rest.length === 1 && rest[0]?.kind === 'globstar') {
				node.under.push(owner);
			} else if (rest.length === 1) {
				const leaf = rest[0]?.kind === 'pattern' ? rest[0].tokens.map(tokenSource).join('') : '';
				node.leaf.push({ owner, regex: new RegExp(`^${leaf}$`), tail: last.tail });
			} else if (last.name !== undefined) {
				push(node.fullByName, last.name, { owner, regex: compiled.regex, tail: '' });
			} else {
				node.full.push({ owner, regex: compiled.regex, tail: last.tail });
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
		let node: IndexNode<T> | undefined = this.root;
		// Down the path's folders by index, not split(): no array per path (a 50k-file pass is GC-bound
		// otherwise), and no closure per path either.
		for (let start = 0; node !== undefined;) {
			out = visit(node, rel, name, out);
			if (start === nameAt) {
				// The folder that holds the path: plain names and one-segment wildcards decide on the name alone.
				out = node.named.size > 0 ? addAll(node.named.get(name), out) : out;
				out = node.leaf.length > 0 ? collect(node.leaf, name, name, out) : out;
			}
			if (start > rel.length) {
				break;
			}
			const end = rel.indexOf('/', start);
			node = node.children.get(end < 0 ? rel.slice(start) : rel.slice(start, end));
			start = end < 0 ? rel.length + 1 : end + 1;
		}
		return out ?? none;
	}
}

const slash = 47;
const none: readonly never[] = [];

/** The globs of a folder on the path's way that do not depend on the path being in that very folder. */
function visit<T>(node: IndexNode<T>, rel: string, name: string, out: T[] | undefined): T[] | undefined {
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

/** Where two scopes meet: the first pair of overlapping entries (a glob pair, or a shared lock). */
export interface EntryOverlap {
	mine: string;
	theirs: string;
}

/**
 * The first overlap of two scopes given as entries (core/scope.ts `scopesOverlap` on unchecked
 * entries, without the braces library), or undefined when they can run side by side.
 */
export function scopeEntriesOverlap(a: readonly string[], b: readonly string[]): EntryOverlap | undefined {
	const locksOf = (entries: readonly string[]) => entries.filter(e => e.startsWith(lockPrefix));
	const theirLocks = new Set(locksOf(b));
	const lock = locksOf(a).find(l => theirLocks.has(l));
	if (lock !== undefined) {
		return { mine: lock, theirs: lock };
	}
	const theirs = scopeGlobs(b);
	for (const mine of scopeGlobs(a)) {
		const other = theirs.find(t => globsOverlap(mine, t));
		if (other !== undefined) {
			return { mine, theirs: other };
		}
	}
	return undefined;
}

/** A ready card's scope meets a live claim of the same project: which card, held by whom, where. */
export interface ScopeWait {
	holder: Card;
	overlap: EntryOverlap;
}

/**
 * The live claim a ready card would wait on (issue 13 §4: "waits on files held by AUTH-3
 * (claude-code-1)"): the first claimed card of the same project (a card without one meets every
 * project) whose live scope overlaps this card's scope; undefined when none does or it is not ready.
 */
export function scopeWait(card: Card, cards: Iterable<Card>): ScopeWait | undefined {
	const scope = card.scope ?? [];
	if (card.status !== 'ready' || scope.length === 0) {
		return undefined;
	}
	for (const other of cards) {
		if (other.id === card.id || other.status !== 'claimed') {
			continue;
		}
		const a = card.project ?? null;
		const b = other.project ?? null;
		if (a !== null && b !== null && a !== b) {
			continue;
		}
		const live = liveScope(other);
		const overlap = live.length === 0 ? undefined : scopeEntriesOverlap(scope, live);
		if (overlap !== undefined) {
			return { holder: other, overlap };
		}
	}
	return undefined;
}

/** "waits on files held by AUTH-3 (claude-code-1)", or "waits on lock:db held by …" for a lock. */
export function scopeWaitText(wait: ScopeWait): string {
	const what = wait.overlap.theirs.startsWith(lockPrefix) ? wait.overlap.theirs : 'files';
	return `waits on ${what} held by ${wait.holder.id} (${wait.holder.claimOwner ?? 'unknown'})`;
}
