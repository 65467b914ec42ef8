/**
 * The Done part of the extension's card cache: the connection loads every live card but
 * Done newest first, a page at a time (`card/list {status: 'done', order: 'recent'}`); this keeps the
 * cursor, where the loaded pages end (core/rules/donePages.ts), the backlog's done count (card/stats, then
 * the events) and the ids deleted since the snapshot, so a page read before a deletion does not bring
 * the card back. Owns no connection and fires nothing: HubConnection calls it and tells the views.
 */
import { type DoneBoundary, DoneTotals, boundaryAfter, isBelowBoundary } from '../core/rules/donePages';
import type { BacklogEvent, Card, Params, Result, StatsResult } from '../core/protocol';

type ListFn = (params: Params<'card/list'>) => Promise<Result<'card/list'>>;

/** Done cards per "Load more…" in the tree. */
export const donePageSize = 100;

export class DoneCache {
	readonly totals = new DoneTotals();
	private boundary: DoneBoundary | null = null;
	private cursor: string | undefined;
	private readonly deleted = new Set<string>();
	private pending: Promise<void> | undefined;
	/** Bumped by each fresh snapshot: a page of an older one is dropped. */
	private snapshot = 0;

	constructor(private readonly cards: Map<string, Card>) {}

	/** More done cards exist beyond the loaded pages. */
	get more(): boolean {
		return this.cursor !== undefined;
	}

	get loading(): boolean {
		return this.pending !== undefined;
	}

	/** Whether a done card is within the loaded pages (one below them waits for its page). */
	shows(card: Card): boolean {
		return !isBelowBoundary(card, this.boundary);
	}

	/**
	 * After the live cards of a fresh snapshot went into the map: the first Done page, then the stats
	 * (after it, so every change the snapshot holds is in their counts and not counted again by its event).
	 */
	async load(list: ListFn, stats: () => Promise<StatsResult>, firstPage: number): Promise<void> {
		this.snapshot++;
		this.pending = undefined;
		this.deleted.clear();
		const page = await list({ status: 'done', order: 'recent', limit: firstPage });
		this.addPage(page);
		this.totals.set(await stats());
	}

	/** The next page; resolves when it is in the map (at once when none is left or one is on its way). */
	loadMore(list: ListFn, pageSize = donePageSize): Promise<void> {
		const cursor = this.cursor;
		if (cursor === undefined) {
			return Promise.resolve();
		}
		const snapshot = this.snapshot;
		this.pending ??= list({ status: 'done', order: 'recent', limit: pageSize, cursor })
			.then(page => {
				if (snapshot === this.snapshot) {
					this.addPage(page);
				}
			})
			.finally(() => {
				this.pending = undefined;
			});
		return this.pending;
	}

	/** Call before the cache applies an event: counts it and remembers a deletion. */
	beforeEvent(e: BacklogEvent): void {
		this.totals.apply(e, this.cards.get(e.cardId));
		if (e.data.card === null) {
			this.deleted.add(e.cardId);
		}
	}

	private addPage(page: Result<'card/list'>): void {
		// A card already here is kept: events have kept it current; the page may be older.
		for (const card of page.cards) {
			if (!this.cards.has(card.id) && !this.deleted.has(card.id)) {
				this.cards.set(card.id, card);
			}
		}
		this.cursor = page.nextCursor;
		this.boundary = boundaryAfter(page.cards, page.nextCursor);
	}
}
