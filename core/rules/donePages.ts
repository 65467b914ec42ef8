/**
 * Done by pages, the rules the board and the Backlog tree share. Both load every live card
 * but only the newest done cards, a page at a time (`card/list {status: 'done', order: 'recent'}`:
 * updatedAt, then id, both descending). A face shows only the done cards at or above the last card
 * of its loaded pages (the boundary), so what it shows is a gapless prefix of the hub's order; and
 * since it cannot count cards it does not hold, it keeps the backlog's totals from `card/stats` and
 * the events. Pure and zod-free (types only from core/protocol/index.ts): no I/O, no clock.
 */
import type { BacklogEvent, Card, CardStatus, StatsResult } from '../protocol';

/** The last card of the Done pages loaded so far. */
export interface DoneBoundary {
	updatedAt: string;
	id: string;
}

/** The hub's recent order: the newest change first, ties by id descending. */
export function compareRecent(a: Card, b: Card): number {
	if (a.updatedAt !== b.updatedAt) {
		return a.updatedAt < b.updatedAt ? 1 : -1;
	}
	return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/**
 * Whether `card` sorts after the boundary in recent order (it belongs to a page not loaded yet, so
 * it waits for that page); `null`: every done card is loaded.
 */
export function isBelowBoundary(card: Card, boundary: DoneBoundary | null): boolean {
	if (boundary === null) {
		return false;
	}
	// ISO timestamps of one format (the hub's, to the millisecond) compare as strings.
	return card.updatedAt < boundary.updatedAt || (card.updatedAt === boundary.updatedAt && card.id < boundary.id);
}

/** Where a page leaves the boundary: at its last card, or nowhere when it was the last page. */
export function boundaryAfter(cards: readonly Card[], nextCursor: string | undefined): DoneBoundary | null {
	const last = cards[cards.length - 1];
	return nextCursor === undefined || last === undefined ? null : { updatedAt: last.updatedAt, id: last.id };
}

/**
 * Every card and every done card of the backlog. Seeded from `card/stats`, then moved by each event
 * newer than the stats.
 */
export class DoneTotals {
	total = 0;
	done = 0;
	private seq = 0;

	set(stats: StatsResult): void {
		this.total = stats.total;
		this.done = stats.counts.done;
		this.seq = stats.lastSeq;
	}

	/**
	 * Counts one event; `before` is the card as the face knew it. A card the face does not know was on
	 * an unloaded Done page, unless the event created it: every other status is loaded in full. While
	 * live pages still load (`liveComplete` false) it may be live: the event's type tells (a deletion
	 * of such a card is counted as a done one's).
	 */
	apply(event: BacklogEvent, before: Card | undefined, liveComplete = true): void {
		if (event.seq <= this.seq) {
			return;
		}
		this.seq = event.seq;
		const was: CardStatus | undefined =
			before?.status ?? (event.type === 'created' ? undefined : liveComplete ? 'done' : statusBefore(event));
		const now = event.data.card?.status;
		this.total += (now === undefined ? 0 : 1) - (was === undefined ? 0 : 1);
		this.done += (now === 'done' ? 1 : 0) - (was === 'done' ? 1 : 0);
	}
}

/** The status before `event` of a card that may be on any unloaded page: done, or some live status. */
function statusBefore(event: BacklogEvent): CardStatus {
	const now = event.data.card?.status;
	if (now === undefined || event.type === 'reopened') {
		return 'done';
	}
	return now !== 'done' || event.type === 'completed' || event.type === 'approved' ? 'ready' : 'done';
}

type ListPage = (params: {
	status: CardStatus;
	limit: number;
	cursor?: string;
}) => Promise<{ cards: Card[]; nextCursor?: string | undefined }>;

/**
 * Every card of the live statuses (ready, claimed, review, blocked): one page-through per status, the
 * four in parallel. I/O only through `list` (the face's `card/list` request).
 */
export async function loadLiveCards(list: ListPage, pageSize = 1000): Promise<Card[]> {
	const statuses: CardStatus[] = ['ready', 'claimed', 'review', 'blocked'];
	const parts = await Promise.all(
		statuses.map(async status => {
			const cards: Card[] = [];
			let cursor: string | undefined;
			do {
				const page = await list({ status, limit: pageSize, ...(cursor === undefined ? {} : { cursor }) });
				cards.push(...page.cards);
				cursor = page.nextCursor;
			} while (cursor !== undefined);
			return cards;
		}),
	);
	return parts.flat();
}
