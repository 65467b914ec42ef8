/**
 * The board's column lists (boardCards.ts keeps one per column, each sorted by its column's order): a card
 * put in or taken out by binary search, a page merged in one pass, every list refilled and sorted.
 * Each names the columns it touched in the Change. Pure list work: which cards are shown (the filter,
 * Done's boundary) is boardCards.ts's to decide; no DOM.
 */
import type { Card } from '../core/protocol';
import { type Change, emptyChange, lowerBound, mergeSorted } from './change';
import { type ColumnId, columnIds, columnOf, columnOrder } from './columns';

export type ColumnLists = Record<ColumnId, Card[]>;

/** Puts `card` into its column at its sorted place. */
export function insertIntoList(lists: ColumnLists, card: Card, change: Change): void {
	const col = columnOf(card.status);
	const list = lists[col];
	list.splice(lowerBound(list, card, columnOrder[col]), 0, card);
	change.columns.add(col);
}

/** Takes `card` out of its column, if there. */
export function removeFromList(lists: ColumnLists, card: Card, change: Change): void {
	const col = columnOf(card.status);
	const list = lists[col];
	let at = lowerBound(list, card, columnOrder[col]);
	if (list[at]?.id !== card.id) {
		// Not where its sort key says (e.g. filtered out, or an equal key): fall back to a scan.
		at = list.findIndex(c => c.id === card.id);
	}
	if (at >= 0) {
		list.splice(at, 1);
		change.columns.add(col);
	}
}

/** Merges each column's new cards (unsorted) into it: one sort of the new ones, one pass, no re-sort. */
export function mergeIntoLists(lists: ColumnLists, added: ReadonlyMap<ColumnId, Card[]>, change: Change): void {
	for (const [col, list] of added) {
		lists[col] = mergeSorted(lists[col], list.sort(columnOrder[col]), columnOrder[col]);
		change.columns.add(col);
	}
}

/** Refills every column with the `shown` cards, sorted; every column and the phase choice changed. */
export function refillLists(lists: ColumnLists, shown: Iterable<Card>): Change {
	const change = emptyChange();
	for (const col of columnIds) {
		lists[col] = [];
		change.columns.add(col);
	}
	for (const card of shown) {
		lists[columnOf(card.status)].push(card);
	}
	for (const col of columnIds) {
		lists[col].sort(columnOrder[col]);
	}
	change.phases = true;
	return change;
}
