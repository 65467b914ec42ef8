/**
 * The Done column's paging in the page: its pager and counts (paging.ts), the "N more" footer, and
 * the next page loaded as the end of the loaded ones scrolls near (an IntersectionObserver on the
 * footer; the footer is also a button, so the keyboard and screen readers reach it). Wiring only: the
 * requests are paging.ts's, what Done shows is BoardState's, the drawing is ColumnView's.
 */
import type { Params, Result } from '../core/protocol';
import type { Change } from './change';
import { DoneTotals } from '../core/rules/donePages';
import { DonePager, donePageSize } from './paging';
import type { ColumnView } from './render';
import type { BoardState } from './state';

/** How far below the visible end of Done the next page is asked for (about eight cards). */
const nearEndMargin = 800;

export interface DoneColumnHost {
	column: ColumnView;
	list(params: Params<'card/list'>): Promise<Result<'card/list'>>;
	state: BoardState;
	queue(change: Change): void;
	showError(e: unknown): void;
	/** False until the first snapshot is drawn: nothing is redrawn or asked for before. */
	isLoaded(): boolean;
}

export class DoneColumn {
	readonly totals = new DoneTotals();
	readonly pager: DonePager;

	constructor(private readonly host: DoneColumnHost) {
		this.pager = new DonePager({
			list: params => host.list(params),
			state: host.state,
			queue: change => {
				host.queue(change);
			},
			showError: e => {
				host.showError(e);
			},
			changed: () => {
				if (host.isLoaded()) {
					this.update();
				}
			},
		});
		const button = host.column.moreButton;
		if (button !== undefined) {
			button.addEventListener('click', () => void this.pager.loadMore());
			new IntersectionObserver(
				entries => {
					if (host.isLoaded() && entries.some(e => e.isIntersecting)) {
						void this.pager.loadMore();
					}
				},
				{ root: host.column.scroller, rootMargin: `0px 0px ${nearEndMargin}px 0px` },
			).observe(button);
		}
	}

	/**
	 * Redraws Done's count and footer. The observer fires only when the footer enters the margin, so
	 * when a page leaves it there (a filter hid most of its cards) the next one is asked for here.
	 */
	update(): void {
		const { column, state } = this.host;
		const pager = this.pager;
		const f = state.filter;
		const filtered = f.text.trim() !== '' || f.phase !== '' || (f.projects ?? []).length > 0;
		column.setTotal(filtered ? undefined : this.totals.done, pager.more);
		const remaining = Math.max(0, this.totals.done - column.length);
		column.setMore(
			!pager.more
				? undefined
				: pager.loading
					? 'Loading…'
					: filtered
						? `Load ${donePageSize} more`
						: `${remaining.toLocaleString('en')} more`,
			pager.loading,
		);
		if (pager.more && !pager.loading && column.nearEnd(nearEndMargin)) {
			void pager.loadMore();
		}
	}
}
