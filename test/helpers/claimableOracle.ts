/**
 * The claim rule written out from the cards and pauses alone, for the proofs that compare it with what
 * the store says (the fast-path differential, the claimable-with-parents property): a card is claimable
 * exactly when it is ready, has no unmet dependency of its own or of any ancestor, is not deferred
 * past `now`, has no child that is not done, no pause of everything, its project, phase or id
 * covers it, and no live claim holds files it touches (the overlap of globs is core/scope's). Beside it, the faces' check: the claim guards' table (core/rules/claimGuards.ts) over the
 * cards as card/list carries them, and over the holds a face derives itself (core/rules/faceHolds.ts).
 * Reads only what it is given; decides nothing for the product.
 */
import type { Backlog } from '../../core/backlog';
import type { Card, Pause } from '../../core/protocol';
import { stateWord, type StateWord } from '../../core/rules/claimable';
import { holdsOf } from '../../core/rules/faceHolds';
import { liveScopesOf, scopeWait } from '../../core/scope/conflicts';

/** Whether a pause of everything, the card's project, phase or id covers it. */
function pausedBy(c: Card, pauses: readonly Pick<Pause, 'scope' | 'target'>[]): boolean {
	return pauses.some(
		p =>
			p.scope === 'all' ||
			(p.scope === 'card' && p.target === c.id) ||
			(p.scope === 'project' && p.target === c.project) ||
			(p.scope === 'phase' && p.target === c.phase),
	);
}

/** The ids the rule says are claimable at `now`, sorted. */
export function ruleClaimable(
	cards: readonly Card[],
	now: Date = new Date(),
	pauses: readonly Pick<Pause, 'scope' | 'target'>[] = [],
): string[] {
	const byId = new Map(cards.map(c => [c.id, c]));
	const live = liveScopesOf(cards);
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
				!ancestorWaits(c) &&
				!pausedBy(c, pauses) &&
				scopeWait(c, live) === undefined,
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

/** Every ready card as card/list carries it (with the hub's holds), in id order. */
export async function listedReady(b: Backlog): Promise<Card[]> {
	const cards: Card[] = [];
	let cursor: string | undefined;
	do {
		const page = await b.list(
			{ actor: 'vscode:reader' },
			{ status: 'ready', limit: 1000, ...(cursor === undefined ? {} : { cursor }) },
		);
		cards.push(...page.cards);
		cursor = page.nextCursor;
	} while (cursor !== undefined);
	return cards.sort((a, b) => a.id.localeCompare(b.id));
}

/** The faces' words of the ready cards: the guard table over the hub's holds. */
export function faceWords(listed: readonly Card[], now: Date = new Date()): Map<string, StateWord> {
	return new Map(listed.map(c => [c.id, stateWord(c, now)]));
}

/**
 * The ids a face with every card at hand calls claimable: the guard table over the tree and files holds
 * it derives itself (faceHolds.ts), and the pause as card/list said it (`listed`), sorted.
 */
export function faceDerivedClaimable(
	cards: readonly Card[],
	listed: readonly Card[],
	now: Date = new Date(),
): string[] {
	const paused = new Set(listed.filter(c => c.paused === true).map(c => c.id));
	const held = holdsOf(cards);
	return cards
		.map(c => held(paused.has(c.id) ? { ...c, paused: true } : c))
		.filter(c => stateWord(c, now) === 'ready' && c.status === 'ready')
		.map(c => c.id)
		.sort();
}
