/**
 * Which live claim a scope runs into, decided once for the hub and every face
 * (docs/decisions/0076-scope-one-module.md): the claim's general path, card/reserve, the board and the Backlog tree all ask `LiveScopes`
 * "may this scope start now, and if not, who holds its files?", and all say the answer with `heldBy`
 * ("files held by AUTH-3 (claude-code-1)"). The project rule: scopes meet only within one project,
 * and cards without a project are one more project of their own (a card with none never waits on a
 * project's claim, nor the other way round). Held scopes are indexed per project (locks by name, globs
 * on the lead tree), each read once (memoised by its entries); glob pairs are pruned by their literal
 * leads before overlap.ts decides them. Pure, platform-free and zod-free (types only from
 * core/protocol/index.ts): the caller loads the held scopes and takes whatever lock makes them current.
 */
import type { Card } from '../protocol';
import { type Scope, lockPrefix, readScope } from './read';
import { leadOf } from './glob';
import { LeadTree } from './leadTree';
import { globsOverlap } from './overlap';

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
	/** Each glob with its literal leading segments. */
	globs: readonly { glob: string; lead: readonly string[] }[];
}

const memo = new Map<string, Parsed>();
const memoLimit = 20_000;

/** A stored scope read once (the same held scopes are read claim after claim). */
function parsedScope(entries: readonly string[]): Parsed {
	const key = entries.join('\n');
	const hit = memo.get(key);
	if (hit !== undefined) {
		return hit;
	}
	const scope = readScope(entries);
	const parsed = { scope, globs: scope.globs.map(glob => ({ glob, lead: leadOf(glob) })) };
	if (memo.size >= memoLimit) {
		memo.clear();
	}
	memo.set(key, parsed);
	return parsed;
}

/** One held glob, with its claim. */
interface HeldGlob {
	held: HeldScope;
	glob: string;
}

/** One project's held scopes: locks by name, globs on the lead tree, and scopes too costly to compare. */
interface ProjectScopes {
	locks: Map<string, HeldScope[]>;
	globs: LeadTree<HeldGlob[]>;
	costly: HeldScope[];
}

/** Where one held scope was filed, so it can be taken out again. */
interface Filed {
	held: HeldScope;
	project: ProjectScopes;
	locks: readonly string[];
	globs: readonly HeldGlob[][];
	costly: boolean;
}

/**
 * The held scopes of a backlog, indexed so one question touches only what can meet it: per project,
 * locks by name and the globs' literal leads (a glob can only meet those whose lead is a prefix of its
 * own, or extends it). Kept between claims by the hub (core/backlog/liveScopeCache.ts): `add` and
 * `remove` change one claim's scope without rebuilding the rest.
 */
export class LiveScopes {
	private projects = new Map<string | null, ProjectScopes>();
	private filed = new Map<string, Filed>();
	/** Scopes taken out since the index was last built: their emptied lead nodes stay until a rebuild. */
	private removed = 0;

	constructor(held: Iterable<HeldScope> = []) {
		for (const h of held) {
			this.add(h);
		}
	}

	/** The held scope of `cardId`, as added (undefined when it holds none). */
	get(cardId: string): HeldScope | undefined {
		return this.filed.get(cardId)?.held;
	}

	/** How many claims hold a scope. */
	get size(): number {
		return this.filed.size;
	}

	/** Files a claim's live scope (replacing what its card held before). */
	add(h: HeldScope): void {
		this.remove(h.cardId);
		if (h.entries.length === 0) {
			return;
		}
		let p = this.projects.get(h.project);
		if (p === undefined) {
			p = { locks: new Map(), globs: new LeadTree<HeldGlob[]>(() => []), costly: [] };
			this.projects.set(h.project, p);
		}
		const parsed = parsedScope(h.entries);
		const filed: Filed = { held: h, project: p, locks: [], globs: [], costly: parsed.scope.costly === true };
		this.filed.set(h.cardId, filed);
		if (filed.costly) {
			p.costly.push(h);
			return;
		}
		filed.locks = parsed.scope.locks;
		for (const lock of parsed.scope.locks) {
			const list = p.locks.get(lock);
			if (list === undefined) {
				p.locks.set(lock, [h]);
			} else {
				list.push(h);
			}
		}
		const lists: HeldGlob[][] = [];
		for (const { glob, lead } of parsed.globs) {
			const list = p.globs.at(lead).value;
			list.push({ held: h, glob });
			lists.push(list);
		}
		filed.globs = lists;
	}

	/** Takes a card's live scope out (its claim ended); nothing when it held none. */
	remove(cardId: string): void {
		const f = this.filed.get(cardId);
		if (f === undefined) {
			return;
		}
		this.filed.delete(cardId);
		if (++this.removed > 1024 && this.removed > 4 * this.filed.size) {
			// A hub keeps this set for days: rebuild it now and then, so the lead nodes of scopes long
			// gone do not pile up (about 0.1 ms for 200 claims, once per thousand ended claims).
			const held = [...this.filed.values()].map(x => x.held);
			this.projects = new Map();
			this.filed = new Map();
			this.removed = 0;
			for (const h of held) {
				this.add(h);
			}
			return;
		}
		const p = f.project;
		if (f.costly) {
			p.costly.splice(p.costly.indexOf(f.held), 1);
			return;
		}
		for (const lock of f.locks) {
			const list = p.locks.get(lock) ?? [];
			const left = list.filter(h => h !== f.held);
			if (left.length === 0) {
				p.locks.delete(lock);
			} else {
				p.locks.set(lock, left);
			}
		}
		for (const list of new Set(f.globs)) {
			for (let i = list.length - 1; i >= 0; i--) {
				if (list[i]?.held === f.held) {
					list.splice(i, 1);
				}
			}
		}
	}

	/**
	 * The first held scope of `project` that `entries` overlaps (a shared lock first, then the globs in
	 * order), skipping `exceptCardId` (the card's own claim). A scope stored over the limits before
	 * they existed meets every scope of its project: deciding it would cost too much.
	 */
	conflict(project: string | null, entries: readonly string[], exceptCardId?: string): ScopeConflict | undefined {
		const p = this.projects.get(project);
		if (entries.length === 0 || p === undefined) {
			return undefined;
		}
		const other = (h: HeldScope): boolean => h.cardId !== exceptCardId;
		const at = (h: HeldScope, mine: string, theirs: string): ScopeConflict => ({
			cardId: h.cardId,
			holder: h.holder,
			title: h.title,
			mine,
			theirs,
		});
		const mine = parsedScope(entries);
		const costly = p.costly.find(other);
		if (costly !== undefined) {
			return at(costly, entries[0] ?? '', costly.entries[0] ?? '');
		}
		for (const lock of mine.scope.locks) {
			const holder = p.locks.get(lock)?.find(other);
			if (holder !== undefined) {
				return at(holder, `${lockPrefix}${lock}`, `${lockPrefix}${lock}`);
			}
		}
		if (mine.scope.costly === true) {
			const held =
				[...p.locks.values()].flat().find(other) ?? p.globs.find([], list => list.find(g => other(g.held)))?.held;
			return held && at(held, entries[0] ?? '', held.entries[0] ?? '');
		}
		for (const g of mine.globs) {
			const found = p.globs.find(g.lead, list => list.find(h => other(h.held) && globsOverlap(g.glob, h.glob)));
			if (found !== undefined) {
				return at(found.held, g.glob, found.glob);
			}
		}
		return undefined;
	}
}

/**
 * The first overlap of two read scopes, pair by pair without the index (a shared lock, then the first
 * meeting glob pair), or undefined when they can run side by side: the plain reference the contention
 * proof and the tests hold `LiveScopes` to.
 */
export function scopesOverlap(a: Scope, b: Scope): Pick<ScopeConflict, 'mine' | 'theirs'> | undefined {
	const lock = a.locks.find(l => b.locks.includes(l));
	if (lock !== undefined) {
		return { mine: `${lockPrefix}${lock}`, theirs: `${lockPrefix}${lock}` };
	}
	for (const mine of a.globs) {
		const theirs = b.globs.find(g => globsOverlap(mine, g));
		if (theirs !== undefined) {
			return { mine, theirs };
		}
	}
	return undefined;
}

/** A card's live scope: scope ∪ reserved while it is claimed, else nothing. */
export function liveScope(card: Pick<Card, 'status' | 'scope' | 'reserved'>): string[] {
	if (card.status !== 'claimed') {
		return [];
	}
	return [...new Set([...(card.scope ?? []), ...(card.reserved ?? [])])];
}

/** The live scopes of the claimed cards among `cards` (a face's copy of the backlog). */
export function liveScopesOf(cards: Iterable<Card>): LiveScopes {
	const held: HeldScope[] = [];
	for (const card of cards) {
		const entries = liveScope(card);
		if (entries.length > 0) {
			held.push({
				cardId: card.id,
				holder: card.claimOwner ?? 'unknown',
				title: card.title,
				project: card.project ?? null,
				entries,
			});
		}
	}
	return new LiveScopes(held);
}

/** The live claim a ready card waits on for its files, as the hub decides it; else undefined. */
export function scopeWait(card: Card, live: LiveScopes): ScopeConflict | undefined {
	const scope = card.scope ?? [];
	return card.status !== 'ready' || scope.length === 0
		? undefined
		: live.conflict(card.project ?? null, scope, card.id);
}

/** "files held by AUTH-3 (claude-code-1)", or "lock:db held by …" for a lock: every face's words for a wait. */
export function heldBy(c: ScopeConflict): string {
	return `${c.theirs.startsWith(lockPrefix) ? c.theirs : 'files'} held by ${c.cardId} (${c.holder})`;
}

/** "waits on files held by AUTH-3 (claude-code-1)": one card's wait, as the board and the tree show it. */
export function scopeWaitText(c: ScopeConflict): string {
	return `waits on ${heldBy(c)}`;
}
