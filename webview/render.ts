/**
 * The five columns as virtualised lists: each column renders only the cards in (and just around)
 * its visible scroll window, reusing DOM nodes by card id, so 5,000 cards cost the same to show as
 * 50 and an event patches at most one window. A narrow column (the detail pane open, a small window)
 * gets taller rows, so its cards' flags and lease wrap instead of being cut. Until the first snapshot
 * is drawn each column shows what the board is waiting for (connecting, loading) over skeleton rows,
 * never a count of 0. Card text is always set with textContent, never HTML, and styles are set
 * through CSSOM (the CSP allows no inline style attributes).
 */
import type { Card } from '../core/protocol';
import { type RenderContext, createCardElement, fillCard, narrowRowHeight, rowHeight } from './cardView';
import { type ColumnId, columnIds, columnTitles } from './columns';
import { el } from './dom';
/** Extra rows rendered above and below the window, so fast scrolling does not show holes. */
const overscan = 6;
/** Rows rendered when the column has no layout yet (hidden or not attached). */
const fallbackWindow = 24;
/**
 * Below this scroll width (a card under ~240 px: five columns beside the open detail pane at 1440 px)
 * a column is narrow: its rows are taller and its cards wrap their flags and meta line.
 */
const narrowColumnWidth = 256;

const emptyText: Readonly<Record<ColumnId, string>> = {
	ready: 'Nothing ready. Create a card with “New card” (N), or move a blocked or done card back here.',
	inProgress: 'Nobody is working on anything. Drag a ready card here to claim it yourself.',
	review: 'Nothing waits for review. Cards that need a review land here when their agent completes them.',
	blocked: 'Nothing is blocked.',
	done: 'Nothing is done yet.',
};
const emptyFilteredText = 'No cards match the filter.';

interface Row {
	el: HTMLElement;
	card: Card | undefined;
	index: number;
}

/** One virtualised column. */
export class ColumnView {
	readonly root: HTMLElement;
	readonly scroller: HTMLElement;
	private readonly list: HTMLElement;
	private readonly countEl: HTMLElement;
	private readonly loadingEl: HTMLElement;
	private readonly emptyEl: HTMLElement;
	private readonly marker: HTMLElement;
	/** Skeleton rows and what the board waits for, until the first snapshot is drawn. */
	private readonly skeleton: HTMLElement;
	private readonly skeletonText: HTMLElement;
	private placeholder: string | undefined;
	private loading = false;
	/** This column's row height: rowHeight, or narrowRowHeight while the column is narrow. */
	private rowH = rowHeight;
	private readonly rows = new Map<string, Row>();
	private readonly spare: HTMLElement[] = [];
	private cards: readonly Card[] = [];
	/** Done only: the count to show when the column holds fewer cards than exist, and if more exist. */
	private total: { count: number | undefined; more: boolean } = { count: undefined, more: false };

	/** Done only: "N more" at the end of the loaded pages (a button; main.ts loads the next page). */
	readonly moreButton: HTMLButtonElement | undefined;

	/** The Blocked column's all / failed / parked choice (main.ts feeds it into the filter). */
	readonly filterSelect: HTMLSelectElement | undefined;

	constructor(
		readonly id: ColumnId,
		private readonly ctx: () => RenderContext,
	) {
		this.root = el('section', `column column-${id}`);
		this.root.dataset.column = id;
		const head = el('header', 'column-head');
		const h = el('h2', 'column-title', columnTitles[id]);
		h.id = `col-title-${id}`;
		this.countEl = el('span', 'column-count', '…');
		// While the column's remaining pages load (boardLoad.ts).
		this.loadingEl = el('span', 'column-loading', 'loading…');
		this.loadingEl.hidden = true;
		head.append(h, this.countEl, this.loadingEl);
		if (id === 'blocked') {
			// Failed cards (attempts used up) need triage; parked ones wait for a human on purpose.
			this.filterSelect = el('select', 'input column-filter');
			this.filterSelect.setAttribute('aria-label', 'Show blocked cards: all, failed or parked');
			for (const [value, label] of [
				['all', 'All'],
				['failed', 'Failed'],
				['parked', 'Parked'],
			] as const) {
				const option = el('option', '', label);
				option.value = value;
				this.filterSelect.append(option);
			}
			head.append(this.filterSelect);
		}
		this.scroller = el('div', 'column-scroll');
		this.scroller.dataset.column = id;
		this.list = el('div', 'column-list');
		this.list.setAttribute('role', 'list');
		this.list.setAttribute('aria-labelledby', h.id);
		this.emptyEl = el('p', 'column-empty');
		this.marker = el('div', 'drop-marker');
		this.marker.hidden = true;
		this.skeleton = el('div', 'column-skeleton');
		this.skeletonText = el('p', 'column-skeleton-text');
		this.skeleton.append(this.skeletonText);
		for (let i = 0; i < 3; i++) {
			const bone = el('div', 'skeleton-card');
			bone.setAttribute('aria-hidden', 'true');
			this.skeleton.append(bone);
		}
		this.scroller.append(this.skeleton, this.list, this.emptyEl, this.marker);
		if (id === 'done') {
			this.moreButton = el('button', 'btn column-more');
			this.moreButton.type = 'button';
			this.moreButton.hidden = true;
			this.scroller.insertBefore(this.moreButton, this.marker);
		}
		this.root.append(head, this.scroller);
		this.root.setAttribute('aria-labelledby', h.id);
		this.scroller.addEventListener('scroll', () => this.renderWindow(), { passive: true });
		new ResizeObserver(() => this.fitRows()).observe(this.scroller);
		this.setPlaceholder('Connecting…');
	}

	/**
	 * Until the first snapshot is drawn: what the column waits for ("Connecting…", "Loading cards…")
	 * over skeleton rows, and no count. undefined: the cards are here.
	 */
	setPlaceholder(text: string | undefined): void {
		this.placeholder = text;
		this.skeleton.hidden = text === undefined;
		this.skeletonText.textContent = text ?? '';
		this.root.classList.toggle('column--placeholder', text !== undefined);
		this.updateBusy();
		this.updateCount();
	}

	private updateBusy(): void {
		this.root.setAttribute('aria-busy', String(this.loading || this.placeholder !== undefined));
	}

	/** Narrow or wide rows, by the column's width (a ResizeObserver calls it). */
	private fitRows(): void {
		// offsetWidth counts the scrollbar: a column must not turn narrow because it grew one.
		const width = this.scroller.offsetWidth;
		const narrow = width > 0 && width < narrowColumnWidth;
		const h = narrow ? narrowRowHeight : rowHeight;
		this.root.classList.toggle('column--narrow', narrow);
		if (h === this.rowH) {
			return;
		}
		const first = Math.floor(this.scroller.scrollTop / this.rowH);
		this.rowH = h;
		this.list.style.height = `${this.cards.length * h}px`;
		for (const row of this.rows.values()) {
			row.index = -1; // re-placed at the new height by renderWindow
		}
		this.scroller.scrollTop = first * h;
		this.renderWindow();
	}

	get length(): number {
		return this.cards.length;
	}

	cardAt(index: number): Card | undefined {
		return this.cards[index];
	}

	indexOf(id: string): number {
		return this.cards.findIndex(c => c.id === id);
	}

	/**
	 * Done: what the count says while not every card is loaded. `count` is the backlog's number (shown
	 * when no filter applies); otherwise the loaded matches show, with "+" while `more` pages exist.
	 */
	setTotal(count: number | undefined, more: boolean): void {
		this.total = { count, more };
		this.updateCount();
	}

	/** Live columns: the "loading…" hint while their remaining pages load. */
	setLoading(loading: boolean): void {
		this.loading = loading;
		this.loadingEl.hidden = !loading;
		this.updateBusy();
	}

	/** Done: the footer under the loaded pages: "N more", "Loading…", or nothing when all are here. */
	setMore(text: string | undefined, loading: boolean): void {
		const button = this.moreButton;
		if (button === undefined) {
			return;
		}
		button.hidden = text === undefined;
		button.textContent = text ?? '';
		button.disabled = loading;
		button.setAttribute('aria-busy', String(loading));
	}

	/** Whether the end of the loaded cards is within `margin` px of the column's visible bottom. */
	nearEnd(margin: number): boolean {
		return this.cards.length * this.rowH - (this.scroller.scrollTop + this.scroller.clientHeight) < margin;
	}

	private updateCount(): void {
		if (this.placeholder !== undefined) {
			this.emptyEl.hidden = true;
			this.countEl.textContent = '…';
			this.countEl.setAttribute('aria-label', 'not loaded yet');
			return;
		}
		const n = this.cards.length;
		const { count, more } = this.total;
		const shown = count ?? n;
		const plus = count === undefined && more ? '+' : '';
		// An empty Done with pages still to load is not "nothing is done".
		this.emptyEl.hidden = n > 0 || more;
		this.countEl.textContent = `${shown.toLocaleString('en')}${plus}`;
		this.countEl.setAttribute(
			'aria-label',
			`${shown}${plus === '' ? '' : ' or more'} card${shown === 1 && plus === '' ? '' : 's'}`,
		);
	}

	/** New list for the column (a new array after every change that touched it). */
	setCards(cards: readonly Card[]): void {
		this.cards = cards;
		this.updateCount();
		this.list.style.height = `${cards.length * this.rowH}px`;
		const filter = this.ctx().state.filter;
		const blockedOnly = this.id === 'blocked' && filter.blocked !== undefined && filter.blocked !== 'all';
		const filtered = filter.text !== '' || filter.phase !== '' || !!filter.epic || !!filter.label;
		this.emptyEl.textContent =
			cards.length > 0
				? ''
				: filtered
					? emptyFilteredText
					: blockedOnly
						? `No ${filter.blocked} cards.`
						: emptyText[this.id];
		this.renderWindow(true);
	}

	/** Re-fills a card's row if it is rendered (after a change that did not move it). */
	refreshCard(id: string): void {
		const row = this.rows.get(id);
		const card = row === undefined ? undefined : this.cards[row.index];
		if (row !== undefined && card?.id === id) {
			row.card = card;
			fillCard(row.el, card, this.ctx());
		}
	}

	/** Re-fills every rendered row (clock tick: countdowns, stalled/expired markers). */
	refreshAll(): void {
		const ctx = this.ctx();
		for (const row of this.rows.values()) {
			if (row.card !== undefined) {
				fillCard(row.el, row.card, ctx);
			}
		}
	}

	elementFor(id: string): HTMLElement | undefined {
		return this.rows.get(id)?.el;
	}

	/** Scrolls so that the card at `index` is visible, then renders that window. */
	reveal(index: number): void {
		const top = index * this.rowH;
		const view = this.scroller.clientHeight;
		if (top < this.scroller.scrollTop) {
			this.scroller.scrollTop = top;
		} else if (view > 0 && top + this.rowH > this.scroller.scrollTop + view) {
			this.scroller.scrollTop = top + this.rowH - view;
		}
		this.renderWindow();
	}

	/** Insertion index for a pointer at client y (between cards). */
	indexAtY(clientY: number): number {
		const rect = this.scroller.getBoundingClientRect();
		const y = clientY - rect.top + this.scroller.scrollTop;
		return Math.max(0, Math.min(this.cards.length, Math.floor(y / this.rowH + 0.5)));
	}

	showMarker(index: number | undefined): void {
		if (index === undefined) {
			this.marker.hidden = true;
			return;
		}
		this.marker.hidden = false;
		this.marker.style.transform = `translateY(${index * this.rowH - 5}px)`;
	}

	/** Renders the rows in the scroll window; with `force`, re-fills rows whose card object changed. */
	renderWindow(force = false): void {
		const ctx = this.ctx();
		const rowH = this.rowH;
		const height = this.scroller.clientHeight;
		const top = this.scroller.scrollTop;
		const first = Math.max(0, Math.floor(top / rowH) - overscan);
		const visible = height > 0 ? Math.ceil(height / rowH) : fallbackWindow;
		const last = Math.min(this.cards.length, Math.floor(top / rowH) + visible + overscan + 1);
		const keep = new Set<string>();
		for (let i = first; i < last; i++) {
			const card = this.cards[i];
			if (card !== undefined) {
				keep.add(card.id);
			}
		}
		for (const [id, row] of this.rows) {
			if (!keep.has(id)) {
				this.rows.delete(id);
				row.el.remove();
				this.spare.push(row.el);
			}
		}
		for (let i = first; i < last; i++) {
			const card = this.cards[i];
			if (card === undefined) {
				continue;
			}
			let row = this.rows.get(card.id);
			if (row === undefined) {
				const node = this.spare.pop() ?? createCardElement();
				row = { el: node, card: undefined, index: -1 };
				this.rows.set(card.id, row);
				this.list.append(node);
			}
			if (row.index !== i) {
				row.index = i;
				row.el.style.transform = `translateY(${i * rowH}px)`;
				row.el.style.height = `${rowH - 8}px`;
				row.el.setAttribute('aria-posinset', String(i + 1));
			}
			row.el.setAttribute('aria-setsize', String(this.cards.length));
			if (row.card !== card || force) {
				row.card = card;
				fillCard(row.el, card, ctx);
			}
		}
	}
}

/** The five columns side by side. */
export class BoardView {
	readonly root: HTMLElement;
	readonly columns: Record<ColumnId, ColumnView>;

	constructor(ctx: () => RenderContext) {
		this.root = el('div', 'board');
		this.root.setAttribute('role', 'region');
		this.root.setAttribute('aria-label', 'Board');
		this.root.setAttribute('aria-describedby', 'board-keys');
		const cols = {} as Record<ColumnId, ColumnView>;
		for (const id of columnIds) {
			cols[id] = new ColumnView(id, ctx);
			this.root.append(cols[id].root);
		}
		this.columns = cols;
	}

	/** Every column's placeholder (see ColumnView.setPlaceholder). */
	setPlaceholder(text: string | undefined): void {
		for (const id of columnIds) {
			this.columns[id].setPlaceholder(text);
		}
	}

	/** Which column and insertion index lies under a client point. */
	targetAt(x: number, y: number): { column: ColumnId; index: number } | undefined {
		for (const id of columnIds) {
			const r = this.columns[id].root.getBoundingClientRect();
			if (x >= r.left && x <= r.right && y >= r.top && y <= r.bottom) {
				return { column: id, index: this.columns[id].indexAtY(y) };
			}
		}
		return undefined;
	}

	columnOfElement(node: Element): ColumnId | undefined {
		const c = node.closest<HTMLElement>('[data-column]')?.dataset.column;
		return columnIds.find(id => id === c);
	}
}
