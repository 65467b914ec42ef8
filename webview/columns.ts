/**
 * The board's five columns: their ids, titles, the status a card has in each, and each column's
 * order. Pure definitions: no state, no DOM.
 */
import { refStateWord } from '../core/rules/claimable';
import { compareRecent } from '../core/rules/donePages';
import type { Card, CardRef, CardStatus } from '../core/protocol';

export type ColumnId = 'ready' | 'inProgress' | 'review' | 'blocked' | 'done';
export const columnIds: readonly ColumnId[] = ['ready', 'inProgress', 'review', 'blocked', 'done'];
export const columnTitles: Readonly<Record<ColumnId, string>> = {
	ready: 'Ready',
	inProgress: 'In progress',
	review: 'In review',
	blocked: 'Blocked',
	done: 'Done',
};
/** The status a card has once it sits in a column. */
export const columnStatus: Readonly<Record<ColumnId, CardStatus>> = {
	ready: 'ready',
	inProgress: 'claimed',
	review: 'review',
	blocked: 'blocked',
	done: 'done',
};

export function columnOf(status: CardStatus): ColumnId {
	switch (status) {
		case 'ready':
			return 'ready';
		case 'claimed':
			return 'inProgress';
		case 'review':
			return 'review';
		case 'blocked':
			return 'blocked';
		case 'done':
			return 'done';
	}
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Column orders: Ready by priority (higher first, ties older first); In review longest waiting first
 * (a review queue); the others most recent first.
 */
export const columnOrder: Readonly<Record<ColumnId, (a: Card, b: Card) => number>> = {
	ready: (a, b) => b.priority - a.priority || cmp(a.createdAt, b.createdAt) || cmp(a.id, b.id),
	inProgress: (a, b) => cmp(b.claimedAt ?? '', a.claimedAt ?? '') || cmp(a.id, b.id),
	review: (a, b) => cmp(a.updatedAt, b.updatedAt) || cmp(a.id, b.id),
	blocked: (a, b) => cmp(b.updatedAt, a.updatedAt) || cmp(a.id, b.id),
	// The hub's recent order exactly (ties by id descending), so Done's loaded pages stay a prefix of it.
	done: compareRecent,
};

/**
 * A dependency's or dependent's word in the detail pane: its column's title, or Waiting / Deferred / Paused for a
 * ready card held back (core/rules/claimable.ts, the words of `baton list` and the tree).
 */
export function refWord(ref: CardRef, nowMs: number): string {
	const word = refStateWord(ref, nowMs);
	return word === 'waiting'
		? 'Waiting'
		: word === 'deferred'
			? 'Deferred'
			: word === 'paused'
				? 'Paused'
				: columnTitles[columnOf(ref.status)];
}
