/**
 * Pure helpers for list pages: the page query's SQL text, the claim order and cursors. No I/O: the
 * callers send the SQL and pass the rows back in.
 */
import type { Card, Result } from '../protocol';
import { BatonError } from '../errors';

/**
 * A list page in claim order. The wire card is built only for the rows of the page: built before the
 * sort (a small table read in full), it cost more than the whole rest of the query. `claimable`: the
 * filter keeps only claimable cards, so the page is ordered by the claim index's key (claimOrder) and
 * read from cards_claim_idx; other lists read cards_order_idx.
 */
export function pageOf(where: string, limit: string, claimable = false): string {
	const order = claimable ? claimOrder : 'priority DESC, created_at, id';
	return `SELECT baton_card(p.c) AS card FROM (
			SELECT cards AS c, priority, created_at, id FROM cards WHERE ${where}
			ORDER BY ${order} LIMIT ${limit}
		) p ORDER BY ${claimable ? '-p.priority' : 'p.priority DESC'}, p.created_at, p.id`;
}

/**
 * The claim order (max priority, then oldest, then id) as the key of cards_claim_idx (migration
 * 0006). It is written with -priority so that only that index serves it: cards_order_idx, which every
 * list uses, holds the same order over all cards, and statistics taken while most cards were ready made
 * the two look alike, so picks read cards_order_idx and stepped over every done card ahead of the
 * first ready one, until the next ANALYZE.
 */
export const claimOrder = '(-priority), created_at, id';

/** Cards after the cursor (priority, createdAt, id placeholders) in claim order, on the claim index's key. */
export function afterInClaimOrder(priority: string, createdAt: string, id: string): string {
	return `(-priority, created_at, id) > (-${priority}::int, ${createdAt}::timestamptz, ${id}::text)`;
}

/**
 * A list page in recent order: the most recently changed first (updated_at, then id, descending).
 * With only done cards (`status = 'done'` written as a constant, so PGlite's generic plans can use a
 * partial index) it reads cards_done_recent_idx (migration 0014) and stops after `limit` rows.
 */
export function recentPageOf(where: string, limit: string): string {
	return `SELECT baton_card(c) AS card FROM cards c WHERE ${where} ORDER BY updated_at DESC, id DESC LIMIT ${limit}`;
}

/** Cards after the cursor (updatedAt, id placeholders) in recent order, on the recent index's key. */
export function afterInRecentOrder(updatedAt: string, id: string): string {
	return `(updated_at, id) < (${updatedAt}::timestamptz, ${id}::text)`;
}

export type ListOrder = 'priority' | 'recent';

/** One page of a list: `limit` cards and, when there are more, the cursor after the last. */
export function page(
	rows: readonly { card: Card }[],
	limit: number,
	order: ListOrder = 'priority',
): Result<'card/list'> {
	const cards = rows.slice(0, limit).map(r => r.card);
	const last = cards[cards.length - 1];
	return rows.length > limit && last !== undefined ? { cards, nextCursor: encodeCursor(last, order) } : { cards };
}

function encodeCursor(card: Card, order: ListOrder): string {
	// The two orders' cursors differ in shape (3 fields and 2), so one is never read as the other.
	const key = order === 'recent' ? [card.updatedAt, card.id] : [card.priority, card.createdAt, card.id];
	return Buffer.from(JSON.stringify(key)).toString('base64url');
}

function cursorValue(cursor: string): unknown {
	try {
		return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
	} catch {
		return undefined;
	}
}

function badCursor(order: ListOrder): BatonError {
	return new BatonError(
		'invalid_input',
		`That cursor is not one this backlog returned for order '${order}'; start again without a cursor.`,
		{ field: 'cursor' },
	);
}

export function decodeCursor(cursor: string): [number, string, string] {
	const value = cursorValue(cursor);
	if (
		Array.isArray(value) &&
		value.length === 3 &&
		typeof value[0] === 'number' &&
		typeof value[1] === 'string' &&
		typeof value[2] === 'string'
	) {
		return [value[0], value[1], value[2]];
	}
	throw badCursor('priority');
}

/** The (updatedAt, id) a recent-order cursor continues after. */
export function decodeRecentCursor(cursor: string): [string, string] {
	const value = cursorValue(cursor);
	if (
		Array.isArray(value) &&
		value.length === 2 &&
		typeof value[0] === 'string' &&
		!Number.isNaN(Date.parse(value[0])) &&
		typeof value[1] === 'string'
	) {
		return [value[0], value[1]];
	}
	throw badCursor('recent');
}
