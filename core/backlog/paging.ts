/**
 * Pure helpers for list pages: the page query's SQL text, the claim order, cursors and the page's byte
 * budget. No I/O: the callers send the SQL and pass the rows back in.
 */
import type { Card, CardRow, Result } from '../protocol';
import { BatonError } from '../errors';

/**
 * A page stops after about this many bytes of cards, whatever its limit: it then has
 * fewer cards and a nextCursor. 1,000 ordinary cards fit; 1,000 cards of 25 KB would be a 25 MB
 * answer that costs the store most of a second and one client's flood of them starves the others.
 */
export const pageBytes = 1024 * 1024;

/**
 * What a card is counted as against pageBytes: its long texts as stored (octet_length reads a TOASTed
 * value's header, not the value) and 512 bytes for the rest of its JSON.
 */
const cardSize = (c: string): string =>
	`octet_length(${c}.body) + coalesce(octet_length(${c}.result), 0) + coalesce(octet_length(${c}.progress_note), 0) + 512`;

/**
 * Wraps a page query (`inner` selects `c`, a whole cards row, and the `order` columns, with its LIMIT):
 * rows past the byte budget come back with a null card, so the JSON of cards the page will not carry
 * is never built; the first card always counts. `page()` stops at the first null.
 */
function withinBudget(inner: string, order: string): string {
	return `SELECT CASE WHEN q.before < ${pageBytes} THEN baton_card(q.c) END AS card FROM (
			SELECT p.*, coalesce(sum(${cardSize('(p.c)')}) OVER (ORDER BY ${order}
				ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
			FROM (${inner}) p
		) q ORDER BY ${order.replaceAll('p.', 'q.')}`;
}

/**
 * A list page in claim order. The wire card is built only for the rows of the page: built before the
 * sort (a small table read in full), it cost more than the whole rest of the query. `claimable`: the
 * filter keeps only claimable cards, so the page is ordered by the claim index's key (claimOrder) and
 * read from cards_claim_idx; other lists read cards_order_idx.
 */
export function pageOf(where: string, limit: string, claimable = false): string {
	const order = claimable ? claimOrder : 'priority DESC, created_at, id';
	return withinBudget(
		`SELECT cards AS c, priority, created_at, id FROM cards WHERE ${where} ORDER BY ${order} LIMIT ${limit}`,
		`${claimable ? '-p.priority' : 'p.priority DESC'}, p.created_at, p.id`,
	);
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
	return withinBudget(
		`SELECT c, updated_at, id FROM cards c WHERE ${where} ORDER BY updated_at DESC, id DESC LIMIT ${limit}`,
		'p.updated_at DESC, p.id DESC',
	);
}

/**
 * The columns a list row is built from (protocol CardRow), and the row as JSON from them (the
 * same expressions as baton_card_fields): 17 fields instead of 46, none of the long texts.
 */
const rowColumns =
	'id, title, status, priority, phase, requires, depends_on, unmet_deps, defer_until, claim_owner, review, failed, needs_input, project, labels, parent, assignee';
const rowJson = `json_build_object('id', p.id, 'title', p.title, 'status', p.status, 'priority', p.priority,
		'phase', p.phase, 'requires', p.requires, 'dependsOn', p.depends_on, 'unmetDeps', p.unmet_deps,
		'deferUntil', baton_ts(p.defer_until), 'claimOwner', p.claim_owner, 'review', p.review, 'failed', p.failed,
		'needsInput', p.needs_input, 'project', p.project, 'labels', p.labels, 'parent', p.parent, 'assignee', p.assignee)`;

/**
 * A page of rows (card/listRows): the page query reads only the row's columns and its order's, and the
 * JSON is built after the LIMIT, for the page's rows only; `at` is the order's timestamp for the cursor.
 * No byte budget: a row has no long text (at most ~11 KB: 100 dependencies, 32 capabilities, 16 labels),
 * so a page of 1,000 stays far under limits.maxResponse.
 */
function rowsOf(inner: string, order: string, at: string): string {
	return `SELECT ${rowJson} AS card, baton_ts(p.${at}) AS at FROM (${inner}) p ORDER BY ${order}`;
}

/** pageOf's rows: the same filter and order. */
export function rowPageOf(where: string, limit: string, claimable = false): string {
	const order = claimable ? claimOrder : 'priority DESC, created_at, id';
	return rowsOf(
		`SELECT ${rowColumns}, created_at FROM cards WHERE ${where} ORDER BY ${order} LIMIT ${limit}`,
		`${claimable ? '-p.priority' : 'p.priority DESC'}, p.created_at, p.id`,
		'created_at',
	);
}

/** recentPageOf's rows: the same filter and order. */
export function recentRowPageOf(where: string, limit: string): string {
	return rowsOf(
		`SELECT ${rowColumns}, updated_at FROM cards c WHERE ${where} ORDER BY updated_at DESC, id DESC LIMIT ${limit}`,
		'p.updated_at DESC, p.id DESC',
		'updated_at',
	);
}

/** The lossless export's page in id order after `after` ($1, null = from the start), at most `limit` rows. */
export function exportPageOf(after: string, limit: string): string {
	return withinBudget(
		`SELECT cards AS c, id FROM cards WHERE (${after}::text IS NULL OR id > ${after}) ORDER BY id LIMIT ${limit}`,
		'p.id',
	);
}

/** Cards after the cursor (updatedAt, id placeholders) in recent order, on the recent index's key. */
export function afterInRecentOrder(updatedAt: string, id: string): string {
	return `(updated_at, id) < (${updatedAt}::timestamptz, ${id}::text)`;
}

export type ListOrder = 'priority' | 'recent';

/**
 * One page of a list: up to `limit` cards, fewer where the byte budget cut it (rows with a null card),
 * and, when there are more, the cursor after the last.
 */
export function page(
	rows: readonly { card: Card | null }[],
	limit: number,
	order: ListOrder = 'priority',
): Result<'card/list'> {
	const cards = cardsWithin(rows, limit);
	const last = cards[cards.length - 1];
	return rows.length > cards.length && last !== undefined
		? { cards, nextCursor: encodeCursor(last, order) }
		: { cards };
}

/** One page of rows (rowPageOf, recentRowPageOf): up to `limit`, and the cursor after the last when there are more. */
export function rowPage(
	rows: readonly { card: CardRow; at: string }[],
	limit: number,
	order: ListOrder = 'priority',
): Result<'card/listRows'> {
	const cards = rows.slice(0, limit).map(r => r.card);
	const last = rows[limit - 1];
	if (rows.length <= limit || last === undefined) {
		return { cards };
	}
	const key = order === 'recent' ? [last.at, last.card.id] : [last.card.priority, last.at, last.card.id];
	return { cards, nextCursor: cursorOf(key) };
}

/** The cards of a page's rows before the first one past the byte budget, at most `limit`. */
export function cardsWithin(rows: readonly { card: Card | null }[], limit: number): Card[] {
	const cards: Card[] = [];
	for (const row of rows) {
		if (row.card === null || cards.length >= limit) {
			break;
		}
		cards.push(row.card);
	}
	return cards;
}

function encodeCursor(card: Card, order: ListOrder): string {
	return cursorOf(order === 'recent' ? [card.updatedAt, card.id] : [card.priority, card.createdAt, card.id]);
}

/** A cursor from its key. The two orders' keys differ in shape (3 fields and 2), so one is never read as the other. */
function cursorOf(key: readonly (string | number)[]): string {
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
