/**
 * The live scopes of a backlog's claims and the first one a card's scope runs into (issue 13 §2): the
 * claim's general path, card/reserve and the editor ask "may this scope start now, and if not, who
 * holds its files?". Builds an index of the held scopes per project, each parsed once (checkScope,
 * memoised by its entries), and prunes glob pairs by their literal leading segments before the exact
 * intersection (globOverlap.ts) runs. Pure and platform-free: the caller loads the held scopes and
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

/**
 * Two globs can only meet when their literal leads agree as far as both go: at the first position
 * where both are literal and differ, no path matches both. A necessary condition, cheap to test.
 */
function leadsAgree(a: readonly string[], b: readonly string[]): boolean {
	const n = Math.min(a.length, b.length);
	for (let i = 0; i < n; i++) {
		if (a[i] !== b[i]) {
			return false;
		}
	}
	return true;
}

/** The first overlap of two parsed scopes (a shared lock, or an overlapping glob pair). */
function firstOverlap(a: Parsed, b: Parsed): { mine: string; theirs: string } | undefined {
	for (const lock of a.scope.locks) {
		if (b.scope.locks.includes(lock)) {
			return { mine: `lock:${lock}`, theirs: `lock:${lock}` };
		}
	}
	for (const mine of a.globs) {
		for (const theirs of b.globs) {
			if (leadsAgree(mine.lead, theirs.lead) && globsOverlap(mine.glob, theirs.glob)) {
				return { mine: mine.glob, theirs: theirs.glob };
			}
		}
	}
	return undefined;
}

/** The held scopes of a backlog, by project, ready to be asked about one scope after another. */
export class LiveScopes {
	private readonly byProject = new Map<string | null, { held: HeldScope; parsed: Parsed }[]>();

	constructor(held: readonly HeldScope[]) {
		for (const h of held) {
			if (h.entries.length === 0) {
				continue;
			}
			const list = this.byProject.get(h.project) ?? [];
			list.push({ held: h, parsed: parsedScope(h.entries) });
			this.byProject.set(h.project, list);
		}
	}

	/**
	 * The first held scope of `project` that `entries` overlaps, skipping `exceptCardId` (the card's own
	 * claim, when its holder reserves more). Cards of different projects never conflict.
	 */
	conflict(project: string | null, entries: readonly string[], exceptCardId?: string): ScopeConflict | undefined {
		if (entries.length === 0) {
			return undefined;
		}
		const held = this.byProject.get(project);
		if (held === undefined) {
			return undefined;
		}
		const mine = parsedScope(entries);
		for (const { held: h, parsed } of held) {
			if (h.cardId === exceptCardId) {
				continue;
			}
			const overlap = firstOverlap(mine, parsed);
			if (overlap !== undefined) {
				return { cardId: h.cardId, holder: h.holder, title: h.title, ...overlap };
			}
		}
		return undefined;
	}
}
