/**
 * What a mutation of the board's state changed (columns, cards, the phase choice), merged per flush,
 * and the binary search the column lists are kept sorted with. Pure: no state, no DOM.
 */
import type { Card } from '../core/protocol';
import type { ColumnId } from './columns';

/** What a mutation changed, so the renderer patches only that. */
export interface Change {
	columns: Set<ColumnId>;
	cards: Set<string>;
	/** The set of phases may have changed (refresh the phase filter). */
	phases: boolean;
}

export const emptyChange = (): Change => ({ columns: new Set(), cards: new Set(), phases: false });

export function mergeChange(into: Change, from: Change): Change {
	for (const c of from.columns) {
		into.columns.add(c);
	}
	for (const c of from.cards) {
		into.cards.add(c);
	}
	into.phases ||= from.phases;
	return into;
}

/** First index whose element sorts at or after `card`. */
export function lowerBound(list: readonly Card[], card: Card, order: (a: Card, b: Card) => number): number {
	let lo = 0;
	let hi = list.length;
	while (lo < hi) {
		const mid = (lo + hi) >>> 1;
		const item = list[mid];
		if (item !== undefined && order(item, card) < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

/** Merges two lists sorted by `order` into a new one (a page of cards into a column: one pass, no re-sort). */
export function mergeSorted(a: readonly Card[], b: readonly Card[], order: (x: Card, y: Card) => number): Card[] {
	const out: Card[] = [];
	let j = 0;
	for (const x of a) {
		for (let y = b[j]; y !== undefined && order(y, x) < 0; y = b[++j]) {
			out.push(y);
		}
		out.push(x);
	}
	for (let y = b[j]; y !== undefined; y = b[++j]) {
		out.push(y);
	}
	return out;
}
