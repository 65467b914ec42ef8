/**
 * What holds the ready cards of a page back, as the claim guards the card's columns cannot say alone
 * (core/rules/claimGuards.ts): open children, a waiting ancestor, a pause of everything, its project,
 * phase or id, and files another live claim holds. card/list, card/listRows and card/get put them on the
 * cards they return (protocol Card's hold fields), so every face says the same word as the claim. One
 * statement over the page's ready cards (by primary key), and the live scopes only when one of them has
 * a scope. Reads only; decides no word itself (claimable.ts `stateWord` does, from these fields).
 */
import type { CardStatus, ListStatus } from '../protocol';
import { stateWord } from '../rules/claimable';
import { LiveScopes } from '../scope/conflicts';
import type { Queryable } from '../store/db';
import { pausedSql } from './claimableSql';
import { liveScopesSql } from './scopes';

/** The part of a card (or reference) the holds are put on. */
interface Holdable {
	id: string;
	status: CardStatus;
	openChildren?: number | undefined;
	treeWaits?: boolean | undefined;
	paused?: boolean | undefined;
	filesHeldBy?: string | undefined;
}

interface HoldRow {
	id: string;
	open: number;
	tw: boolean;
	paused: boolean;
	project: string | null;
	scope: string[];
}

/**
 * The cards with their holds set (only those that hold; others are left as they are). Cards that are
 * not ready are never held by these guards and are not read.
 */
export async function withHolds<T extends Holdable>(db: Queryable, cards: readonly T[]): Promise<T[]> {
	const ready = [...new Set(cards.filter(c => c.status === 'ready').map(c => c.id))];
	if (ready.length === 0) {
		return [...cards];
	}
	// Only the cards something may hold come back: decoding a row costs more than finding it (a page of
	// 1,000 ready cards took 27 ms returning every row, 5 ms returning the held ones).
	const rows = await db.query<HoldRow>(
		`SELECT c.id, c.open_children AS open, c.tree_waits AS tw,
			(EXISTS (SELECT 1 FROM pauses) AND ${pausedSql('c.')}) AS paused, c.project, c.scope
		 FROM cards c WHERE c.id = ANY($1::text[]) AND c.status = 'ready'
			AND (c.open_children > 0 OR c.tree_waits OR cardinality(c.scope) > 0
				OR (EXISTS (SELECT 1 FROM pauses) AND ${pausedSql('c.')}))`,
		[ready],
	);
	const holds = new Map<string, Partial<Holdable>>();
	let live: LiveScopes | undefined;
	for (const r of rows) {
		const h: Partial<Holdable> = {};
		if (r.open > 0) {
			h.openChildren = r.open;
		}
		if (r.tw) {
			h.treeWaits = true;
		}
		if (r.paused) {
			h.paused = true;
		}
		if (r.scope.length > 0) {
			live ??= await readLiveScopes(db);
			const conflict = live.conflict(r.project, r.scope, r.id);
			if (conflict !== undefined) {
				h.filesHeldBy = conflict.cardId;
			}
		}
		if (Object.keys(h).length > 0) {
			holds.set(r.id, h);
		}
	}
	return cards.map(c => {
		const h = holds.get(c.id);
		return h === undefined ? c : { ...c, ...h };
	});
}

async function readLiveScopes(db: Queryable): Promise<LiveScopes> {
	const [row] = await db.query<{ held: string }>(liveScopesSql);
	const held = JSON.parse(row?.held ?? '[]') as [string, string, string, string | null, string[]][];
	return new LiveScopes(
		held.map(([cardId, holder, title, project, entries]) => ({ cardId, holder, title, project, entries })),
	);
}

/**
 * Of a page filtered by words, the cards whose word is one asked for: the SQL filter of `waiting`
 * also returns the scoped cards a live claim may hold files of (overlap is not SQL's), and `ready` is
 * every ready card there; this keeps only those the words name. Stored statuses other than `ready`
 * keep their cards as they are.
 */
export function ofWords<T extends Holdable & { unmetDeps: number; deferUntil: string | null }>(
	cards: readonly T[],
	words: readonly ListStatus[],
	now: Date,
): T[] {
	return cards.filter(c => c.status !== 'ready' || words.includes('ready') || words.includes(stateWord(c, now)));
}
