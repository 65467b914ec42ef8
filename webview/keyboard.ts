/**
 * Keyboard operation of the board (one tab stop, arrow keys inside it — the ARIA roving-tabindex
 * pattern). The keys are listed in `keyHelp`, which the page shows and links to the board with
 * aria-describedby, so what is documented is what is bound.
 */
import type { BoardView } from './render';
import { type ColumnId, columnIds } from './columns';

export const keyHelp =
	'Arrow keys move between cards and columns; Home/End jump to the ends. Enter opens a card, Escape closes it. ' +
	'Ctrl+Shift+→ / ← (⌘+Shift on a Mac) moves the focused card to the next / previous column ' +
	'(from In review: → approves, ← requests changes); ' +
	'Ctrl+Shift+↑ / ↓ moves it up or down in Ready (changes its priority). N creates a card, / jumps to the filter.';

export interface KeyboardHost {
	view: BoardView;
	/** Scrolls the card into view, makes it the tab stop and focuses it. */
	focusCard(id: string, column: ColumnId): void;
	open(id: string): void;
	/** Moves the card one column right (1) or left (-1); which column that is, is the host's call (In review). */
	moveBy(id: string, step: 1 | -1): void;
	reorder(id: string, delta: -1 | 1): void;
	newCard(): void;
	focusFilter(): void;
}

function isTyping(target: EventTarget | null): boolean {
	return (
		target instanceof HTMLInputElement ||
		target instanceof HTMLTextAreaElement ||
		target instanceof HTMLSelectElement ||
		(target instanceof HTMLElement && target.isContentEditable)
	);
}

export function attachKeyboard(host: KeyboardHost): void {
	const { view } = host;
	view.root.addEventListener('keydown', e => {
		if (!(e.target instanceof HTMLElement)) {
			return;
		}
		const cardEl = e.target.closest<HTMLElement>('.card');
		const id = cardEl?.dataset.id;
		const column = cardEl === null ? undefined : view.columnOfElement(cardEl);
		if (id === undefined || column === undefined) {
			return;
		}
		const col = view.columns[column];
		const index = col.indexOf(id);
		const mod = (e.ctrlKey || e.metaKey) && e.shiftKey;
		const at = columnIds.indexOf(column);
		const go = (c: ColumnId, i: number): void => {
			const target = view.columns[c].cardAt(Math.max(0, Math.min(i, view.columns[c].length - 1)));
			if (target !== undefined) {
				host.focusCard(target.id, c);
			}
		};
		let handled = true;
		switch (e.key) {
			case 'ArrowDown':
				if (mod) {
					if (column === 'ready') {
						host.reorder(id, 1);
					}
				} else {
					go(column, index + 1);
				}
				break;
			case 'ArrowUp':
				if (mod) {
					if (column === 'ready') {
						host.reorder(id, -1);
					}
				} else {
					go(column, index - 1);
				}
				break;
			case 'ArrowRight':
			case 'ArrowLeft': {
				const step = e.key === 'ArrowRight' ? 1 : -1;
				if (mod) {
					host.moveBy(id, step);
					break;
				}
				// Skip empty columns so focus never lands nowhere.
				for (let c = at + step; c >= 0 && c < columnIds.length; c += step) {
					const target = columnIds[c];
					if (target !== undefined && view.columns[target].length > 0) {
						go(target, index);
						break;
					}
				}
				break;
			}
			case 'Home':
				go(column, 0);
				break;
			case 'End':
				go(column, col.length - 1);
				break;
			case 'PageDown':
				go(column, index + Math.max(1, Math.floor(col.scroller.clientHeight / 100)));
				break;
			case 'PageUp':
				go(column, index - Math.max(1, Math.floor(col.scroller.clientHeight / 100)));
				break;
			case 'Enter':
			case ' ':
				host.open(id);
				break;
			default:
				handled = false;
		}
		if (handled) {
			e.preventDefault();
			e.stopPropagation();
		}
	});
	document.addEventListener('keydown', e => {
		if (isTyping(e.target) || e.ctrlKey || e.metaKey || e.altKey || document.querySelector('dialog[open]') !== null) {
			return;
		}
		if (e.key === 'n' || e.key === 'N') {
			e.preventDefault();
			host.newCard();
		} else if (e.key === '/') {
			e.preventDefault();
			host.focusFilter();
		}
	});
}
