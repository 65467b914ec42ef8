/**
 * The live scopes of a backlog's claims and the first one a card's scope runs into (issue 13 §2): the
 * claim's general path, card/reserve and the editor ask "may this scope start now, and if not, who
 * holds its files?". Builds an index of the held scopes per project (locks by name, globs by their
 * first literal segment), each scope parsed once (checkScope, memoised by its entries), and prunes
 * glob pairs by their literal leading segments before the exact intersection (globOverlap.ts) runs. Pure and platform-free: the caller loads the held scopes and
 * takes whatever lock makes them current; this module reads nothing and decides no claim.
 */
import { type Scope, checkScope } from './scope';
import { globsOverlap } from './globOverlap';

/** A claim's live scope: its card's scope and what its holder reserved, in its project. */
export interface HeldScope {
	cardId: string;
	holder: string;
	title: string;
	project: string | null;
	entries: readonly string[];
}

/** Where a scope runs into a held one: the holder's card and the first overlapping pair of entries. */
export interface ScopeConflict {
	cardId: string;
	holder: string;
	title: string;
	/** The entry of the scope asked about. */
	mine: string;
	/** The holder's overlapping entry. */
	theirs: string;
}

interface Parsed {
	scope: Scope;
	/** Each glob with its literal leading segments (before the first one with a wildcard). */
	globs: readonly { glob: string; lead: readonly string[] }[];
}

const memo = new Map<string, Parsed>();
const memoLimit = 20_000;

/** A stored scope checked and expanded once; entries were checked on the way in, so this never throws in practice. */
export function parsedScope(entries: readonly string[]): Parsed {
	const key = entries.join('\n');
	const hit = memo.get(key);
	if (hit !== undefined) {
		return hit;
	}
	const scope = checkScope(entries);
	const parsed = { scope, globs: scope.globs.map(glob => ({ glob, lead: literalLead(glob) })) };
	if (memo.size >= memoLimit) {
		memo.clear();
	}
	memo.set(key, parsed);
	return parsed;
}

/** The segments before the first one with a glob character (`*`, `?`, `[`, `\`). */
function literalLead(glob: string): string[] {
	const lead: string[] = [];
	for (const segment of glob.split('/')) {
		if (segment === '') {
			continue;
		}
		if (/[*?[\\]/.test(segment)) {
			break;
		}
		lead.push(segment);
	}
	return lead;
}

/** One held glob, with its claim and literal lead. */
interface HeldGlob {
	held: HeldScope;
	glob: string;
	lead: readonly string[];
}

/** A trie over literal leads: a glob sits at the node its lead spells out. */
interface LeadNode {
	here: HeldGlob[];
	/** Made on the first child: most nodes are leaves. */
	children?: Map<string, LeadNode>;
}

const newNode = (): LeadNode => ({ here: [] });

/**
 * The held scopes of a backlog, indexed so one question touches only what can meet it: locks by
 * name, and per project a trie of the globs' literal leads. A glob can only meet the globs whose
 * lead is a prefix of its own (met on the way down its lead) or extends it (the subtree below).
 */
export class LiveScopes {
	private readonly locks = new Map<string, HeldScope[]>();
	private readonly tries = new Map<string | null, LeadNode>();

	constructor(held: readonly HeldScope[]) {
		for (const h of held) {
			if (h.entries.length === 0) {
				continue;
			}
			const parsed = parsedScope(h.entries);
			for (const lock of parsed.scope.locks) {
				const k = `${h.project ?? ''}\u0000${lock}`;
				const list = this.locks.get(k);
				if (list === undefined) {
					this.locks.set(k, [h]);
				} else {
					list.push(h);
				}
			}
			let root = this.tries.get(h.project);
			if (root === undefined) {
				root = newNode();
				this.tries.set(h.project, root);
			}
			for (const { glob, lead } of parsed.globs) {
				let node = root;
				for (const segment of lead) {
					node.children ??= new Map();
					let next = node.children.get(segment);
					if (next === undefined) {
						next = newNode();
						node.children.set(segment, next);
					}
					node = next;
				}
				node.here.push({ held: h, glob, lead });
			}
		}
	}

	/**
	 * The first held scope of `project` that `entries` overlaps (a shared lock first, then the globs in
	 * order), skipping `exceptCardId` (the card's own claim, when its holder reserves more). Cards of
	 * different projects never conflict.
	 */
	conflict(project: string | null, entries: readonly string[], exceptCardId?: string): ScopeConflict | undefined {
		if (entries.length === 0) {
			return undefined;
		}
		const mine = parsedScope(entries);
		for (const lock of mine.scope.locks) {
			const holder = this.locks.get(`${project ?? ''}\u0000${lock}`)?.find(h => h.cardId !== exceptCardId);
			if (holder !== undefined) {
				const name = `lock:${lock}`;
				return { cardId: holder.cardId, holder: holder.holder, title: holder.title, mine: name, theirs: name };
			}
		}
		const root = this.tries.get(project);
		if (root === undefined) {
			return undefined;
		}
		for (const g of mine.globs) {
			const meets = (theirs: HeldGlob): boolean =>
				theirs.held.cardId !== exceptCardId && globsOverlap(g.glob, theirs.glob);
			// Down the lead: globs whose lead is a prefix of this one's.
			let node: LeadNode | undefined = root;
			let found = node.here.find(meets);
			for (const segment of g.lead) {
				if (found !== undefined) {
					break;
				}
				node = node.children?.get(segment);
				if (node === undefined) {
					break;
				}
				found = node.here.find(meets);
			}
			// Below the whole lead: globs whose lead extends this one's.
			if (found === undefined && node !== undefined) {
				found = findBelow(node, meets);
			}
			if (found !== undefined) {
				const h = found.held;
				return { cardId: h.cardId, holder: h.holder, title: h.title, mine: g.glob, theirs: found.glob };
			}
		}
		return undefined;
	}
}

/** The first glob strictly below `node` that `meets`. */
function findBelow(node: LeadNode, meets: (g: HeldGlob) => boolean): HeldGlob | undefined {
	for (const child of node.children?.values() ?? []) {
		const found = child.here.find(meets) ?? findBelow(child, meets);
		if (found !== undefined) {
			return found;
		}
	}
	return undefined;
}
