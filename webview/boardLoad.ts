/**
 * The board's snapshot, progressively: the first page of each live status (ready, claimed,
 * review, blocked, in parallel) and the agents, then Done's first page, then `card/stats`; the events
 * that arrived meanwhile are applied and the board is drawn (`baton:first-render`). The remaining
 * pages of each live status then load in the background, one page merged per state change
 * (BoardState.addLivePage), until every live card is in (`baton:live-complete`). Events are applied
 * live meanwhile, so a page never replaces a card the board holds (an event kept it current; the page
 * may be older) nor brings back one deleted since: Done's pages' rule. A newer load (resync) drops
 * the pages of an older one. Requests and bookkeeping only: no DOM, no rendering of its own (the
 * host draws), no rules of which card shows where (BoardState's).
 */
import { Backoff, firstConnectBackoff } from '../core/backoff';
import type { BacklogEvent, CardStatus, Params, Result, StatsResult } from '../core/protocol';
import type { Change } from './change';
import type { DoneColumn } from './doneColumn';
import type { BoardState } from './state';

/** Live cards per page: ~1 MB of JSON, a few ms of validation and merge each. */
export const livePageSize = 1000;
export const liveStatuses = ['ready', 'claimed', 'review', 'blocked'] as const satisfies readonly CardStatus[];
export type LiveStatus = (typeof liveStatuses)[number];

export interface BoardLoadHost {
	list(params: Params<'card/list'>): Promise<Result<'card/list'>>;
	agents(): Promise<Result<'agent/list'>>;
	stats(): Promise<StatsResult>;
	state: BoardState;
	done: DoneColumn;
	queue(change: Change): void;
	showError(e: unknown): void;
	/** Draws the whole board with the snapshot (its first render). */
	renderAll(): void;
	/** A live status's last page is in: its column's count and hint are redrawn. */
	liveChanged(): void;
}

export class BoardLoad {
	/** The snapshot's first render happened: events are applied as they come. */
	loaded = false;
	/** Events that arrive before the first render; applied then, in order. */
	private readonly buffered: BacklogEvent[] = [];
	/** The next page of each live status still loading. */
	private readonly cursors = new Map<LiveStatus, string>();
	private counts: StatsResult['counts'] | undefined;
	/** Bumped by load(): the pages of an older load are dropped when they arrive. */
	private generation = 0;
	private drawn: () => void = () => undefined;
	/** Resolves at the first snapshot's first render, whichever load drew it. */
	readonly firstRender = new Promise<void>(resolve => {
		this.drawn = resolve;
	});

	constructor(
		private readonly host: BoardLoadHost,
		private readonly pageSize = livePageSize,
	) {}

	/** Every live card is loaded. */
	get complete(): boolean {
		return this.cursors.size === 0;
	}

	/** Keeps `event` for the first render if that has not happened yet (true: kept, do not apply it). */
	buffer(event: BacklogEvent): boolean {
		if (this.loaded) {
			return false;
		}
		this.buffered.push(event);
		return true;
	}

	/**
	 * A live column's header while its pages load: the hub's count (under a filter, the loaded matches
	 * with "+"); `more` false once its pages are all in (the column counts its cards).
	 */
	pendingCount(status: LiveStatus, filtered: boolean): { count: number | undefined; more: boolean } {
		if (!this.cursors.has(status)) {
			return { count: undefined, more: false };
		}
		return { count: filtered ? undefined : this.counts?.[status], more: true };
	}

	/**
	 * Loads a snapshot and draws it (at boot, and again on resync); resolves after that first render,
	 * with false if a newer load replaced this one first. The remaining live pages follow by themselves.
	 */
	async load(): Promise<boolean> {
		const generation = ++this.generation;
		const { host } = this;
		const { state } = host;
		this.loaded = false;
		this.cursors.clear();
		const [pages, agents] = await Promise.all([
			Promise.all(liveStatuses.map(status => host.list({ status, limit: this.pageSize }))),
			host.agents(),
		]);
		if (generation !== this.generation) {
			return false;
		}
		pages.forEach((page, i) => {
			const status = liveStatuses[i];
			if (page.nextCursor !== undefined && status !== undefined) {
				this.cursors.set(status, page.nextCursor);
			}
		});
		state.load(
			pages.flatMap(p => p.cards),
			this.complete,
		);
		performance.mark('baton:live-loaded');
		// The first Done page after the live cards (a card done meanwhile is known already and kept), the
		// stats after both, so every change the snapshot holds is counted by them and not by its event too.
		await host.done.pager.reset(state.filter, true);
		performance.mark('baton:done-loaded');
		const stats = await host.stats();
		if (generation !== this.generation) {
			return false;
		}
		host.done.totals.set(stats);
		this.counts = stats.counts;
		performance.mark('baton:data-loaded');
		state.setAgents(agents.agents);
		state.thresholds = agents.thresholds;
		for (const e of this.buffered.splice(0)) {
			host.done.totals.apply(e, state.getReal(e.cardId), this.complete);
			state.applyEvent(e);
		}
		this.loaded = true;
		host.renderAll();
		this.drawn();
		void this.rest(generation);
		return true;
	}

	/** The remaining pages of every live status, the four in parallel. */
	private async rest(generation: number): Promise<void> {
		await Promise.all([...this.cursors.keys()].map(status => this.restOf(status, generation)));
		if (generation === this.generation) {
			this.host.state.liveLoaded();
			performance.mark('baton:live-complete');
			document.dispatchEvent(new CustomEvent('baton:live-complete'));
		}
	}

	private async restOf(status: LiveStatus, generation: number): Promise<void> {
		const retry = new Backoff(firstConnectBackoff);
		while (generation === this.generation) {
			const cursor = this.cursors.get(status);
			if (cursor === undefined) {
				return;
			}
			let page: Result<'card/list'>;
			try {
				page = await this.host.list({ status, limit: this.pageSize, cursor });
				retry.reset();
			} catch (e) {
				// Offline or a timeout: the column stays incomplete until a retry gets the page.
				if (generation === this.generation && retry.failures === 0) {
					this.host.showError(e);
				}
				const delay = retry.next();
				await new Promise(resolve => setTimeout(resolve, delay));
				continue;
			}
			if (generation !== this.generation) {
				return;
			}
			this.host.queue(this.host.state.addLivePage(page.cards));
			if (page.nextCursor === undefined) {
				this.cursors.delete(status);
				this.host.liveChanged();
			} else {
				this.cursors.set(status, page.nextCursor);
			}
		}
	}
}
