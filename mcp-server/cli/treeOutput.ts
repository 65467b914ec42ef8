/**
 * The CLI's words for parents and children: `list --tree`'s order (each child under its
 * parent, its title indented) and `show`'s roll-up line ("3 / 5 done: 1 claimed, 1 ready"). Text only;
 * the counts come from card/get, the order from the cards' `parent`.
 */
import type { Card, ChildrenRollup } from '../../core/protocol';

/** Parents first, each followed by its children (depth-first), titles indented by depth; the rest keep their order. */
export function treeOrder(cards: readonly Card[]): Card[] {
	const byId = new Map(cards.map(c => [c.id, c]));
	const children = new Map<string, Card[]>();
	const roots: Card[] = [];
	for (const c of cards) {
		const parent = c.parent ?? null;
		if (parent !== null && byId.has(parent) && parent !== c.id) {
			const list = children.get(parent) ?? [];
			list.push(c);
			children.set(parent, list);
		} else {
			roots.push(c);
		}
	}
	const out: Card[] = [];
	const seen = new Set<string>();
	const visit = (c: Card, depth: number): void => {
		if (seen.has(c.id)) {
			return;
		}
		seen.add(c.id);
		out.push(depth === 0 ? c : { ...c, title: `${'  '.repeat(depth - 1)}└ ${c.title}` });
		for (const child of children.get(c.id) ?? []) {
			visit(child, depth + 1);
		}
	};
	for (const r of roots) {
		visit(r, 0);
	}
	return out;
}

/** "3 / 5 done (1 in review, 1 claimed)". */
export function rollupText(r: ChildrenRollup): string {
	const rest = (
		[
			[r.review, 'in review'],
			[r.claimed, 'claimed'],
			[r.blocked, 'blocked'],
			[r.ready, 'ready'],
			[r.waiting ?? 0, 'waiting'],
			[r.deferred ?? 0, 'deferred'],
			[r.paused ?? 0, 'paused'],
		] as const
	)
		.filter(([n]) => n > 0)
		.map(([n, word]) => `${n} ${word}`);
	return `${r.done} / ${r.total} done${rest.length > 0 ? ` (${rest.join(', ')})` : ''}`;
}
