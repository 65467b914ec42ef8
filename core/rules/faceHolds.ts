/**
 * The holds a face derives from its own copy of the cards (the extension's live cards, the board's):
 * open children, a waiting ancestor and files another claim holds, which a card arriving in an event
 * does not carry (only card/list and card/get put them on), and the pause from the pauses the face
 * reads (pause/list; without them, as the card last listed said). With these set, claimable.ts `stateWord` / `isClaimable` give the word the hub's claim would.
 * Pure and platform-free; it must not read the store or decide a word itself.
 */
import type { Card, Pause } from '../protocol';
import { pauseOf } from './dispatched';
import { liveScopesOf, scopeWait } from '../scope/conflicts';

/** Deeper than this, an ancestor walk stops (the hub refuses cycles; a copy mid-update may not be whole). */
const maxDepth = 64;

/**
 * A function that gives each card of `cards` with its tree and files holds as the set shows them (the
 * set's other fields, and `paused`, as they are). Build it once per redraw: it indexes the set.
 */
export function holdsOf(cards: Iterable<Card>, pauses?: readonly Pause[]): (card: Card) => Card {
	const byId = new Map<string, Card>();
	const open = new Map<string, number>();
	for (const c of cards) {
		byId.set(c.id, c);
	}
	for (const c of byId.values()) {
		if (c.parent != null && c.status !== 'done') {
			open.set(c.parent, (open.get(c.parent) ?? 0) + 1);
		}
	}
	const live = liveScopesOf(byId.values());
	const ancestorWaits = (card: Card): boolean => {
		let up = card.parent ?? null;
		for (let depth = 0; up !== null && depth < maxDepth; depth++) {
			const p = byId.get(up);
			if (p === undefined) {
				return false;
			}
			if (p.unmetDeps > 0) {
				return true;
			}
			up = p.parent ?? null;
		}
		return false;
	};
	return card => {
		if (card.status !== 'ready') {
			return card;
		}
		const { openChildren: _o, treeWaits: _t, filesHeldBy: _f, paused, ...rest } = card;
		const out: Card = rest;
		// A pause of one agent kind holds the card for that kind only: not the card's word.
		const pause = pauses === undefined ? undefined : pauseOf(card, pauses);
		if (pauses === undefined ? paused === true : pause !== undefined && pause.scope !== 'kind') {
			out.paused = true;
		}
		const n = open.get(card.id) ?? 0;
		if (n > 0) {
			out.openChildren = n;
		}
		if (ancestorWaits(card)) {
			out.treeWaits = true;
		}
		const files = live.size === 0 ? undefined : scopeWait(card, live);
		if (files !== undefined) {
			out.filesHeldBy = files.cardId;
		}
		return out;
	};
}
