/**
 * A card's epic line on the board: an epic shows "3 / 5 done" (its bar at the card's foot
 * shows the same share), a child shows its epic's id with a small progress bar, and labels show as
 * chips. The counts are the hub's roll-up (core/protocol/epicRollups.ts); until it arrives, the
 * children the board holds. Builds elements with text only; keeps no state beyond the roll-ups'.
 */
import type { Card } from '../core/protocol';
import { type EpicRollups, type Rollup, rollupText } from '../core/protocol/epicRollups';
import type { BoardState } from './state';
import { el } from './dom';

/**
 * The progress of epic `id`, or undefined when it is not one. Only cards known to have children (or
 * to close with them) are asked of the hub, so a board of plain cards costs no request.
 */
export function epicProgress(state: BoardState, rollups: EpicRollups | undefined, id: string): Rollup | undefined {
	if (!state.index.isParent(id) && state.get(id)?.autoClose !== true) {
		return undefined;
	}
	const hub = rollups?.get(id);
	if (hub != null) {
		return hub.total > 0 ? hub : undefined;
	}
	let total = 0;
	let done = 0;
	for (const c of state.index.children(id)) {
		total++;
		done += c.status === 'done' ? 1 : 0;
	}
	return total > 0 ? { total, done } : undefined;
}

function bar(r: Rollup): HTMLElement {
	const track = el('span', 'tag-bar');
	const fill = el('span', 'tag-bar-fill');
	fill.style.width = `${Math.round((100 * r.done) / r.total)}%`;
	track.append(fill);
	return track;
}

/**
 * Fills a card's tag line (epic progress, its epic, labels); returns the words for its aria-label and
 * the epic's share done (0–100) for the card's bar, undefined when the card is no epic.
 */
export function fillTags(
	line: HTMLElement,
	card: Card,
	state: BoardState,
	rollups: EpicRollups | undefined,
): { words: string[]; percent: number | undefined } {
	const words: string[] = [];
	const chips: HTMLElement[] = [];
	const own = epicProgress(state, rollups, card.id);
	if (own !== undefined) {
		const chip = el('span', 'tag tag-epic', rollupText(own));
		chip.title = `Epic: ${own.done} of its ${own.total} children are done`;
		chips.push(chip);
		words.push(`epic, ${rollupText(own)}`);
	}
	if (card.parent != null) {
		const parent = state.get(card.parent);
		const p = epicProgress(state, rollups, card.parent);
		const chip = el('span', 'tag tag-parent', card.parent);
		chip.title = `Part of ${card.parent}${parent === undefined ? '' : ` ${parent.title}`}${p === undefined ? '' : `: ${rollupText(p)}`}`;
		if (p !== undefined) {
			chip.append(bar(p));
		}
		chips.push(chip);
		words.push(`part of ${card.parent}${p === undefined ? '' : `, ${rollupText(p)}`}`);
	}
	for (const label of card.labels ?? []) {
		chips.push(el('span', 'tag tag-label', label));
	}
	if ((card.labels ?? []).length > 0) {
		words.push(`labels ${(card.labels ?? []).join(', ')}`);
	}
	line.replaceChildren(...chips);
	line.hidden = chips.length === 0;
	return { words, percent: own === undefined ? undefined : Math.round((100 * own.done) / own.total) };
}
