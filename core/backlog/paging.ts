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

/** One page of a list: `limit` cards and, when there are more, the cursor after the last. */
export function page(rows: readonly { card: Card }[], limit: number): Result<'card/list'> {
	const cards = rows.slice(0, limit).map(r => r.card);
	const last = cards[cards.length - 1];
	return rows.length > limit && last !== undefined ? { cards, nextCursor: encodeCursor(last) } : { cards };
}

function encodeCursor(card: Card): string {
	return Buffer.from(JSON.stringify([card.priority, card.createdAt, card.id])).toString('base64url');
}

export function decodeCursor(cursor: string): [number, string, string] {
	try {
		const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
		if (
			Array.isArray(value) &&
			value.length === 3 &&
			typeof value[0] === 'number' &&
			typeof value[1] === 'string' &&
			typeof value[2] === 'string'
		) {
			return [value[0], value[1], value[2]];
		}
	} catch {
		// fall through to the refusal below
	}
	throw new BatonError('invalid_input', 'That cursor is not one this backlog returned; start again without a cursor.', {
		field: 'cursor',
	});
}
