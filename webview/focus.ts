/**
 * Which card of the board has the keyboard: the rows' one tab stop (the focused card while it is
 * shown, else the first card of the first non-empty column), moving the focus to a card (its column
 * scrolled to it), and keeping the focus on the same card when a flush recycles the rows. No rules, no
 * requests: the keys are keyboard.ts's, the wiring main.ts's.
 */
import { type ColumnId, columnIds, columnOf } from './columns';
import type { BoardView } from './render';
import type { BoardState } from './state';

export class BoardFocus {
	/** The one card row reachable with Tab (RenderContext.tabStopId). */
	tabStopId: string | undefined;
	private focusedId: string | undefined;

	constructor(
		private readonly state: BoardState,
		private readonly view: BoardView,
	) {
		view.root.addEventListener('focusin', e => {
			const card = e.target instanceof HTMLElement ? e.target.closest<HTMLElement>('.card') : null;
			if (card?.dataset.id !== undefined) {
				this.focusedId = card.dataset.id;
			}
		});
	}

	/** Whether a card of the board has the focus (asked before a flush recycles the rows). */
	hasFocus(): boolean {
		return this.focusedId !== undefined && (document.activeElement?.closest('.board') ?? null) !== null;
	}

	updateTabStop(): void {
		const focused = this.focusedId === undefined ? undefined : this.state.get(this.focusedId);
		if (focused !== undefined && this.state.matches(focused)) {
			this.tabStopId = this.focusedId;
			return;
		}
		this.tabStopId = undefined;
		for (const col of columnIds) {
			const first = this.state.column(col)[0];
			if (first !== undefined) {
				this.tabStopId = first.id;
				return;
			}
		}
	}

	/** After a flush that found the focus on the board: rows are recycled, so it stays on the same card. */
	keep(): void {
		if (this.focusedId === undefined) {
			return;
		}
		// Rows are recycled: make sure focus stays on the same card, not on the node that held it.
		const card = this.state.get(this.focusedId);
		const node = card === undefined ? undefined : this.view.columns[columnOf(card.status)].elementFor(this.focusedId);
		if (node !== undefined && document.activeElement !== node) {
			node.focus({ preventScroll: true });
		}
	}

	cardIfShown(id: string): void {
		const card = this.state.get(id);
		if (card === undefined || !this.state.matches(card)) {
			return;
		}
		this.card(id, columnOf(card.status));
	}

	card(id: string, column: ColumnId): void {
		const col = this.view.columns[column];
		const index = col.indexOf(id);
		if (index < 0) {
			return;
		}
		this.focusedId = id;
		this.tabStopId = id;
		col.reveal(index);
		const prev = this.view.root.querySelector<HTMLElement>('.card[tabindex="0"]');
		if (prev !== null && prev.dataset.id !== id) {
			prev.tabIndex = -1;
		}
		const node = col.elementFor(id);
		if (node !== undefined) {
			node.tabIndex = 0;
			node.focus({ preventScroll: true });
		}
	}
}
