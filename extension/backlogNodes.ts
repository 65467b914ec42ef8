/**
 * The Backlog tree's model without vscode (issue item 2): its node kinds, the status groups in order,
 * which group a card belongs to, the context values the menus' `when` clauses read, and the
 * phase/label/text filter. Pure: it builds no tree item and reads no connection; backlogTree.ts does both.
 */
import { stateWord } from '../core/rules/claimable';
import type { Card, Pause } from '../core/protocol';
import { isFailed } from './alertRules';

export type GroupKey = 'ready' | 'waiting' | 'claimed' | 'review' | 'failed' | 'blocked' | 'done';

export interface GroupNode {
	kind: 'group';
	key: GroupKey;
}

export interface CardNode {
	kind: 'card';
	card: Card;
	group: GroupKey;
}

/** The one row of a tree whose project filter hides every card: "No cards in … — show all projects". */
export interface EmptyNode {
	kind: 'empty';
	label: string;
}

/** The last row of Done while more done cards exist than are loaded: "Load more…". */
export interface MoreNode {
	kind: 'more';
}

/** A pause on top of the tree: "Paused: project acme/web — paused by ann: deploy freeze". */
export interface PauseNode {
	kind: 'pause';
	pause: Pause;
}

export type BacklogNode = GroupNode | CardNode | EmptyNode | MoreNode | PauseNode;

export const moreNode: MoreNode = { kind: 'more' };

export interface BacklogFilter {
	phase?: string;
	/** One label: only cards that carry it. */
	label?: string;
	text?: string;
}

/** The status groups in the tree's order, with their labels and whether they start expanded. */
export const groups: readonly { key: GroupKey; label: string; expanded: boolean }[] = [
	{ key: 'ready', label: 'Ready', expanded: true },
	{ key: 'waiting', label: 'Waiting on dependencies', expanded: false },
	{ key: 'claimed', label: 'In progress', expanded: true },
	{ key: 'review', label: 'In review', expanded: true },
	{ key: 'failed', label: 'Failed — needs a look', expanded: true },
	{ key: 'blocked', label: 'Blocked', expanded: true },
	{ key: 'done', label: 'Done — recent', expanded: false },
];

/** One node per group, so refreshes fire and reveal the same objects. */
export const groupNodes = new Map<GroupKey, GroupNode>(groups.map(g => [g.key, { kind: 'group', key: g.key }]));

/** Which group a card belongs to. */
export function groupOf(card: Card): GroupKey {
	if (card.status === 'ready') {
		return stateWord(card, Date.now()) === 'waiting' ? 'waiting' : 'ready';
	}
	// A card whose attempts ran out needs triage, unlike one a human parked on purpose.
	return isFailed(card) ? 'failed' : card.status;
}

/**
 * Context value for `when` clauses: card.ready, card.waiting, card.claimed.mine,
 * card.review (card.review.own: this human completed it, so may not approve it), …; `.needsInput`
 * is appended while its agent waits for an answer.
 */
export function cardContextValue(card: Card, me: string): string {
	const group = groupOf(card);
	const base =
		group === 'claimed'
			? card.claimOwner === me
				? 'card.claimed.mine'
				: 'card.claimed.other'
			: group === 'review' && card.completedBy === me
				? 'card.review.own'
				: `card.${group}`;
	return card.needsInput === true ? `${base}.needsInput` : base;
}

/** Whether a card passes the tree's phase, label and text filter (the text also searches the body). */
export function matchesFilter(card: Card, filter: BacklogFilter): boolean {
	if (filter.phase !== undefined && card.phase !== filter.phase) {
		return false;
	}
	if (filter.label !== undefined && !(card.labels ?? []).includes(filter.label)) {
		return false;
	}
	if (filter.text !== undefined) {
		const t = filter.text.toLowerCase();
		return (
			card.id.toLowerCase().includes(t) || card.title.toLowerCase().includes(t) || card.body.toLowerCase().includes(t)
		);
	}
	return true;
}
