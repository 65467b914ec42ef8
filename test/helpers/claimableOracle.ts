/**
 * Issue 31's claim rule written out from the cards alone, for the proofs that compare it with what the
 * store says (the fast-path differential, the claimable-with-parents property): a card is claimable
 * exactly when it is ready, has no unmet dependency of its own or of any ancestor, is not deferred
 * past `now`, and has no child that is not done. Reads only the cards it is given; decides nothing
 * for the product.
 */
import type { Backlog } from '../../core/backlog';
import type { Card } from '../../core/protocol';

/** The ids the rule says are claimable at `now`, sorted. */
export function ruleClaimable(cards: readonly Card[], now: Date = new Date()): string[] {
	const byId = new Map(cards.map(c => [c.id, c]));
	const openParents = new Set(cards.filter(c => c.status !== 'done' && c.parent != null).map(c => c.parent));
	const ancestorWaits = (c: Card): boolean => {
		const seen = new Set<string>();
		for (let up = c.parent ?? null; up !== null && !seen.has(up); up = byId.get(up)?.parent ?? null) {
			seen.add(up);
			if ((byId.get(up)?.unmetDeps ?? 0) > 0) {
				return true;
			}
		}
		return false;
	};
	return cards
		.filter(
			c =>
				c.status === 'ready' &&
				c.unmetDeps === 0 &&
				(c.deferUntil === null || Date.parse(c.deferUntil) <= now.getTime()) &&
				!openParents.has(c.id) &&
				!ancestorWaits(c),
		)
		.map(c => c.id)
		.sort();
}

/** The backlog's claimable cards (every project), as list readyOnly reads them through claimableSql, sorted. */
export async function listedClaimable(b: Backlog): Promise<string[]> {
	const ids: string[] = [];
	let cursor: string | undefined;
	do {
		const page = await b.list(
			{ actor: 'vscode:reader' },
			{ readyOnly: true, limit: 1000, ...(cursor === undefined ? {} : { cursor }) },
		);
		ids.push(...page.cards.map(c => c.id));
		cursor = page.nextCursor;
	} while (cursor !== undefined);
	return ids.sort();
}
