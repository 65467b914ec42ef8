/**
 * Epics in the Backlog tree: which cards of a status group nest under their parent, an
 * epic's "3 / 5 done", and the tooltip's lines for the tree (its epic, children, labels, related,
 * duplicates, discovered from). A child nests under its parent when both are in the same group; one
 * whose parent is elsewhere stays in its own group and names its epic ("in SHOP-1"), so In progress
 * still lists every card an agent holds. Pure but for the roll-ups' requests (EpicRollups); no
 * vscode import: backlogTree.ts turns this into tree items.
 */
import type { Card } from '../core/protocol';
import { type EpicRollups, type Rollup, rollupText } from '../core/protocol/epicRollups';

/** One group's cards as the tree shows them: its top rows, and each card's nested children. */
export interface Nesting {
	roots: Card[];
	children: ReadonlyMap<string, Card[]>;
	/** The card each nested card sits under. */
	parentOf: ReadonlyMap<string, Card>;
}

/** Nests `cards` (one group, in display order; children keep that order under their parent). */
export function nestCards(cards: readonly Card[]): Nesting {
	const byId = new Map(cards.map(c => [c.id, c]));
	const children = new Map<string, Card[]>();
	const parentOf = new Map<string, Card>();
	for (const c of cards) {
		const parent = c.parent == null ? undefined : byId.get(c.parent);
		if (parent !== undefined && parent !== c) {
			parentOf.set(c.id, parent);
		}
	}
	// The hub refuses parent cycles; should one reach us anyway, its cards stay top rows, never lost.
	for (const c of cards) {
		const seen = new Set<string>([c.id]);
		for (let p = parentOf.get(c.id); p !== undefined; p = parentOf.get(p.id)) {
			if (seen.has(p.id)) {
				parentOf.delete(c.id);
				break;
			}
			seen.add(p.id);
		}
	}
	const roots: Card[] = [];
	for (const c of cards) {
		const parent = parentOf.get(c.id);
		if (parent === undefined) {
			roots.push(c);
		} else {
			const list = children.get(parent.id) ?? [];
			list.push(c);
			children.set(parent.id, list);
		}
	}
	return { roots, children, parentOf };
}

/** Each parent's children among `cards` (which hold Done only by pages): one pass for a whole refresh. */
export function countChildren(cards: Iterable<Card>): Map<string, Rollup> {
	const counts = new Map<string, Rollup>();
	for (const c of cards) {
		if (c.parent != null) {
			const r = counts.get(c.parent) ?? { total: 0, done: 0 };
			r.total++;
			r.done += c.status === 'done' ? 1 : 0;
			counts.set(c.parent, r);
		}
	}
	return counts;
}

/**
 * The progress of `card` for the tree: the hub's roll-up once fetched (asked for on first use), until
 * then `local` (countChildren's); undefined for a card that is no epic.
 */
export function treeProgress(card: Card, local: Rollup | undefined, rollups: EpicRollups): Rollup | undefined {
	if (local === undefined && card.autoClose !== true) {
		return undefined;
	}
	const hub = rollups.get(card.id);
	if (hub != null) {
		return hub.total > 0 ? hub : undefined;
	}
	return local;
}

/** The description's epic words: "3 / 5 done" for an epic, "in SHOP-1" for a child shown apart from it. */
export function epicWords(progress: Rollup | undefined, card: Card, nested: boolean): string {
	const words: string[] = [];
	if (progress !== undefined) {
		words.push(rollupText(progress));
	}
	if (card.parent != null && !nested) {
		words.push(`in ${card.parent}`);
	}
	return words.join(' · ');
}

/** The tooltip's epic and link lines, as markdown; `md` escapes card text. */
export function linksMarkdown(
	card: Card,
	progress: Rollup | undefined,
	parentTitle: string | undefined,
	md: (text: string) => string,
): string {
	const lines: string[] = [];
	if (progress !== undefined) {
		lines.push(`$(checklist) **Epic:** ${rollupText(progress)}`);
	}
	if (card.parent != null) {
		lines.push(
			`$(type-hierarchy-super) **Part of** ${md(card.parent)}${parentTitle === undefined ? '' : ` ${md(parentTitle)}`}`,
		);
	}
	const list = (key: string, ids: readonly string[] | null | undefined): void => {
		if (ids != null && ids.length > 0) {
			lines.push(`**${key}:** ${ids.map(md).join(', ')}`);
		}
	};
	list('Labels', card.labels);
	list('Related', card.related);
	list('Duplicates', card.duplicates);
	list('Discovered from', card.discoveredFrom == null ? [] : [card.discoveredFrom]);
	return lines.map(l => `${l}\n\n`).join('');
}
