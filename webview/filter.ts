/**
 * The board's filter (text, phase, blocked kind, projects, epic, label) and whether a card passes it. Pure: no
 * state, no DOM. The Done column's paging boundary is not a filter: BoardState applies it.
 */
import type { Card } from '../core/protocol';

export interface Filter {
	/** Case-insensitive match in id or title; '' matches all. */
	text: string;
	/** Exact phase; '' matches all. */
	phase: string;
	/** Which blocked cards the Blocked column shows: failed ones (attempts used up), parked ones, or all. */
	blocked?: BlockedFilter;
	/** Projects to show; cards without a project always show; empty or absent: every project. */
	projects?: readonly string[];
	/** An epic's id: the epic and its children; '' or absent: every card. */
	epic?: string;
	/** One label; '' or absent: every card. */
	label?: string;
}

export type BlockedFilter = 'all' | 'failed' | 'parked';
export const blockedFilters: readonly BlockedFilter[] = ['all', 'failed', 'parked'];

/** Whether `card` passes `filter`; `needle` is the filter's text, trimmed and lower-cased. */
export function matchesFilter(card: Card, filter: Required<Filter>, needle: string): boolean {
	if (filter.phase !== '' && card.phase !== filter.phase) {
		return false;
	}
	const projects = filter.projects;
	if (projects.length > 0 && card.project != null && !projects.includes(card.project)) {
		return false;
	}
	if (filter.label !== '' && card.labels?.includes(filter.label) !== true) {
		return false;
	}
	if (filter.epic !== '' && card.id !== filter.epic && card.parent !== filter.epic) {
		return false;
	}
	const blocked = filter.blocked;
	if (card.status === 'blocked' && blocked !== 'all' && (card.failed === true) !== (blocked === 'failed')) {
		return false;
	}
	if (needle === '') {
		return true;
	}
	return card.id.toLowerCase().includes(needle) || card.title.toLowerCase().includes(needle);
}

/** Whether the filter hides anything (the columns then say "No cards match the filter"). */
export function isFiltering(f: Filter): boolean {
	return (
		f.text.trim() !== '' ||
		f.phase !== '' ||
		(f.projects ?? []).length > 0 ||
		(f.blocked ?? 'all') !== 'all' ||
		(f.epic ?? '') !== '' ||
		(f.label ?? '') !== ''
	);
}
