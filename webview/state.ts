/**
 * The board's state: the cards the board holds (every live card, Done's loaded pages: Done lists only
 * the cards down to the boundary of those pages, core/rules/donePages.ts), the agents, the filter, and one
 * sorted list per column that is kept up to date incrementally (binary-search insert/remove:
 * columnLists.ts), so an event touching one card costs O(log n) plus a splice, never a re-sort of
 * 50,000 cards; it also keeps the set of cards that need a human's input (an agent's unanswered question). Pure logic: no DOM, no
 * transport; every mutation returns a Change naming what the renderer must patch. The card and agent
 * rules (expired, stalled, waiting, deferred, health: cardMarkers.ts) are core's (lease.ts, health.ts,
 * claimable.ts), the same functions the hub and the extension's trees call: never re-written here.
 */
import { type DoneBoundary, isBelowBoundary } from '../core/rules/donePages';
import { agentHealth } from '../core/rules/health';
import {
	type Agent,
	type AgentHealth,
	type BacklogEvent,
	type Card,
	type HealthThresholds,
	type Pause,
	defaultHealthThresholds,
} from '../core/protocol';
import { type CardMarkers, cardMarkers } from './cardMarkers';
import { type Change, emptyChange, mergeChange } from './change';
import { type ColumnLists, insertIntoList, mergeIntoLists, refillLists, removeFromList } from './columnLists';
import { type ColumnId, columnOf, columnOrder } from './columns';
import { CardIndex } from './cardIndex';
import { type Filter, matchesFilter } from './filter';

export type { CardMarkers } from './cardMarkers';

export class BoardState {
	/** Cards as the hub last told us. */
	private readonly real = new Map<string, Card>();
	/** Optimistic versions of cards with a request in flight; shown instead of the real card. */
	private readonly overlay = new Map<string, Card>();
	/** Seq of the last event applied per card: a response older than it must not overwrite the card. */
	private readonly cardSeq = new Map<string, number>();
	private readonly lists: ColumnLists = { ready: [], inProgress: [], review: [], blocked: [], done: [] };
	private phaseCounts = new Map<string, number>();
	/** Cards whose agent asked a question nobody answered yet (`needsInput`), as the hub last said. */
	private readonly asking = new Set<string>();
	readonly agents = new Map<string, Agent>();
	/** The pauses of the line (pause/list, pauseBar.ts): a ready card they cover shows paused. */
	pauses: readonly Pause[] = [];
	thresholds: HealthThresholds = defaultHealthThresholds;
	/** The actor id the hub records for this board's connection (from HelloOk). */
	actor: string | undefined;
	lastSeq = 0;
	private filterValue: Required<Filter> = { text: '', phase: '', blocked: 'all', projects: [], epic: '', label: '' };
	/** Children by parent and labels in use (issue 31), kept as cards come and go. */
	readonly index = new CardIndex();
	/** Bumped whenever a card the hub reported changes: derived lists (projects, live claims) cache on it. */
	version = 0;
	private filterNeedle = '';
	/** Done shows the cards down to the last one of the pages loaded so far; null: every done card is here. */
	private doneBoundary: DoneBoundary | null = null;
	/** Cards deleted since the load: a Done page read before the deletion must not bring one back. */
	private readonly deleted = new Set<string>();
	/** Live pages are still loading (boardLoad.ts): readiness reported for a card not here yet waits for it. */
	private liveLoading = false;
	private readonly laterReadiness = new Map<string, number>();

	get size(): number {
		return this.real.size;
	}

	get filter(): Filter {
		return this.filterValue;
	}

	/** The card as shown (optimistic version while a request is in flight). */
	get(id: string): Card | undefined {
		return this.overlay.get(id) ?? this.real.get(id);
	}

	/** The card as the hub last reported it. */
	getReal(id: string): Card | undefined {
		return this.real.get(id);
	}

	isPending(id: string): boolean {
		return this.overlay.has(id);
	}

	/** The visible (filtered, sorted) cards of a column. */
	column(id: ColumnId): readonly Card[] {
		return this.lists[id];
	}

	/** Ids of the cards that need a human's input (an unanswered question), oldest change first. */
	needsInput(): string[] {
		return [...this.asking];
	}

	/** Every card as the hub last reported it. */
	cards(): IterableIterator<Card> {
		return this.real.values();
	}

	/** Every phase in use, sorted. */
	phases(): string[] {
		return [...this.phaseCounts.keys()].sort((a, b) => a.localeCompare(b));
	}

	/** Seq of the last event applied to this card (0 if none since load). */
	eventSeqOf(id: string): number {
		return this.cardSeq.get(id) ?? 0;
	}

	/** Replaces everything with a fresh snapshot (initial load); `complete` false: live pages follow. */
	load(cards: readonly Card[], complete = true): Change {
		this.version++;
		this.liveLoading = !complete;
		this.laterReadiness.clear();
		this.real.clear();
		this.overlay.clear();
		this.cardSeq.clear();
		this.phaseCounts.clear();
		this.asking.clear();
		this.deleted.clear();
		this.index.clear();
		for (const card of cards) {
			this.real.set(card.id, card);
			this.index.set(card.id, card);
			this.countPhase(card.phase, 1);
			this.trackAsking(card.id, card.needsInput === true);
		}
		return this.rebuildLists();
	}

	/** Applies one event from the hub's feed: data.card is the card after the change. */
	applyEvent(event: BacklogEvent): Change {
		const change = emptyChange();
		if (event.seq <= this.lastSeq) {
			return change;
		}
		this.lastSeq = event.seq;
		this.cardSeq.set(event.cardId, event.seq);
		// The hub's word replaces any optimistic guess for this card.
		const shownBefore = this.get(event.cardId);
		this.overlay.delete(event.cardId);
		const next = event.data.card;
		if (next === null) {
			this.removeReal(event.cardId, shownBefore, change);
		} else {
			this.putReal(next, shownBefore, change);
		}
		for (const r of event.data.readiness ?? []) {
			const card = this.real.get(r.id);
			if (card === undefined && this.liveLoading) {
				this.laterReadiness.set(r.id, r.unmetDeps);
			} else if (card !== undefined && card.unmetDeps !== r.unmetDeps) {
				this.putReal({ ...card, unmetDeps: r.unmetDeps }, this.get(r.id), change);
			}
		}
		return change;
	}

	/**
	 * Applies a card the hub returned for our own request, unless an event for that card arrived
	 * after the request was sent (the event is newer, or says the same).
	 */
	applyResult(card: Card, sentAtSeq: number): Change {
		const change = emptyChange();
		if (this.eventSeqOf(card.id) > sentAtSeq) {
			return change;
		}
		const shown = this.get(card.id);
		this.overlay.delete(card.id);
		this.putReal(card, shown, change);
		return change;
	}

	/**
	 * Adds a page of Done (newest first) and moves the boundary to its end (`null`: that was the last
	 * page). A card the board already knows is kept as it is: events have kept it current since the
	 * load, and the page may have been read before its last change; a card deleted since is dropped.
	 */
	addDonePage(cards: readonly Card[], boundary: DoneBoundary | null): Change {
		const change = emptyChange();
		for (const card of cards) {
			if (!this.real.has(card.id) && !this.deleted.has(card.id)) {
				this.putReal(card, undefined, change);
			}
		}
		mergeChange(change, this.setDoneBoundary(boundary));
		return change;
	}

	/**
	 * Adds a page of a live status read after the first render, by Done's pages' rule: a card the board
	 * holds is kept (events kept it current; the page may be older), one deleted since is dropped, and
	 * readiness an event reported before the card was here is applied. One merge per column, no re-sort.
	 */
	addLivePage(cards: readonly Card[]): Change {
		const change = emptyChange();
		const added = new Map<ColumnId, Card[]>();
		for (const page of cards) {
			if (this.real.has(page.id) || this.deleted.has(page.id)) {
				continue;
			}
			const unmetDeps = this.laterReadiness.get(page.id);
			const card = unmetDeps === undefined ? page : { ...page, unmetDeps };
			this.version++;
			change.phases ||= card.phase !== null && !this.phaseCounts.has(card.phase);
			this.countPhase(card.phase, 1);
			this.real.set(card.id, card);
			this.index.set(card.id, card);
			this.trackAsking(card.id, card.needsInput === true);
			if (this.matches(card)) {
				const col = columnOf(card.status);
				const list = added.get(col) ?? [];
				list.push(card);
				added.set(col, list);
			}
		}
		mergeIntoLists(this.lists, added, change);
		return change;
	}

	/** Every live page is in: readiness is applied by events alone again. */
	liveLoaded(): void {
		this.liveLoading = false;
		this.laterReadiness.clear();
	}

	/** Where Done stops (the last card of the loaded pages), and re-lists Done against it. */
	setDoneBoundary(boundary: DoneBoundary | null): Change {
		this.doneBoundary = boundary;
		const change = emptyChange();
		const list: Card[] = [];
		for (const id of new Set([...this.real.keys(), ...this.overlay.keys()])) {
			const card = this.get(id);
			if (card?.status === 'done' && this.matches(card)) {
				list.push(card);
			}
		}
		this.lists.done = list.sort(columnOrder.done);
		change.columns.add('done');
		return change;
	}

	/** Shows `patch` at once while its request is in flight. */
	optimistic(id: string, patch: Partial<Card>): Change {
		const change = emptyChange();
		const shown = this.get(id);
		if (shown === undefined) {
			return change;
		}
		// A status change is an update: the hub sets updatedAt too, so the card lands where it will stay
		// (on top of Done, whose loaded pages end at a boundary it must not fall below).
		const moved = patch.status !== undefined && patch.status !== shown.status;
		const next: Card = { ...shown, ...(moved ? { updatedAt: new Date().toISOString() } : {}), ...patch, id };
		this.overlay.set(id, next);
		this.moveShown(shown, next, change);
		return change;
	}

	/** Drops the optimistic version: the card goes back to what the hub last said. */
	rollback(id: string): Change {
		const change = emptyChange();
		const shown = this.overlay.get(id);
		if (shown === undefined) {
			return change;
		}
		this.overlay.delete(id);
		const real = this.real.get(id);
		if (real === undefined) {
			removeFromList(this.lists, shown, change);
		} else {
			this.moveShown(shown, real, change);
		}
		return change;
	}

	setAgents(agents: readonly Agent[]): void {
		this.agents.clear();
		for (const a of agents) {
			this.agents.set(a.id, a);
		}
	}

	setFilter(filter: Filter): Change {
		this.filterValue = {
			text: filter.text,
			phase: filter.phase,
			blocked: filter.blocked ?? 'all',
			projects: filter.projects ?? [],
			epic: filter.epic ?? '',
			label: filter.label ?? '',
		};
		this.filterNeedle = filter.text.trim().toLowerCase();
		return this.rebuildLists();
	}

	matches(card: Card): boolean {
		if (card.status === 'done' && isBelowBoundary(card, this.doneBoundary)) {
			return false;
		}
		return matchesFilter(card, this.filterValue, this.filterNeedle);
	}

	/** Dependencies of a card that are not done yet (ids we do not know are listed as unknown). */
	waitingOn(card: Card): { id: string; title: string | undefined }[] {
		const out: { id: string; title: string | undefined }[] = [];
		for (const dep of card.dependsOn) {
			const d = this.real.get(dep);
			if (d?.status !== 'done') {
				out.push({ id: dep, title: d?.title });
			}
		}
		return out;
	}

	/**
	 * Health of agent `id` at `nowMs`, derived from its lastSeenAt (the hub's `health` is as old as
	 * the last agents notice, and a dead agent sends none); undefined for an agent not known here.
	 */
	healthOf(id: string | null, nowMs: number): AgentHealth | undefined {
		const agent = id === null ? undefined : this.agents.get(id);
		return agent === undefined ? undefined : agentHealth(agent.lastSeenAt, nowMs, this.thresholds);
	}

	markers(card: Card, nowMs: number): CardMarkers {
		return cardMarkers(card, nowMs, this.healthOf(card.claimOwner, nowMs), this.thresholds);
	}

	private putReal(next: Card, shownBefore: Card | undefined, change: Change): void {
		const prev = this.real.get(next.id);
		this.version++;
		// A new project joins the project choice the same way a new phase joins the phase choice.
		change.phases ||= (prev?.project ?? null) !== (next.project ?? null);
		if (prev?.phase !== next.phase) {
			if (prev !== undefined) {
				this.countPhase(prev.phase, -1);
			}
			this.countPhase(next.phase, 1);
			change.phases = true;
		}
		this.real.set(next.id, next);
		this.index.set(next.id, next);
		this.trackAsking(next.id, next.needsInput === true);
		this.moveShown(shownBefore, this.get(next.id) ?? next, change);
	}

	private removeReal(id: string, shownBefore: Card | undefined, change: Change): void {
		const prev = this.real.get(id);
		this.version++;
		if (prev !== undefined) {
			this.countPhase(prev.phase, -1);
			change.phases = true;
		}
		this.real.delete(id);
		this.index.set(id, undefined);
		this.deleted.add(id);
		this.cardSeq.delete(id);
		this.trackAsking(id, false);
		if (shownBefore !== undefined) {
			removeFromList(this.lists, shownBefore, change);
		}
		change.cards.add(id);
	}

	/** Replaces the shown version of a card in the column lists. */
	private moveShown(before: Card | undefined, after: Card, change: Change): void {
		if (before !== undefined) {
			removeFromList(this.lists, before, change);
		}
		if (this.matches(after)) {
			insertIntoList(this.lists, after, change);
		}
		change.cards.add(after.id);
	}

	private rebuildLists(): Change {
		const shown: Card[] = [];
		for (const id of new Set([...this.real.keys(), ...this.overlay.keys()])) {
			const card = this.get(id);
			if (card !== undefined && this.matches(card)) {
				shown.push(card);
			}
		}
		return refillLists(this.lists, shown);
	}

	private trackAsking(id: string, asking: boolean): void {
		if (asking) {
			this.asking.add(id);
		} else {
			this.asking.delete(id);
		}
	}

	private countPhase(phase: string | null, delta: number): void {
		if (phase === null) {
			return;
		}
		const n = (this.phaseCounts.get(phase) ?? 0) + delta;
		if (n <= 0) {
			this.phaseCounts.delete(phase);
		} else {
			this.phaseCounts.set(phase, n);
		}
	}
}
