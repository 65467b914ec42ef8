/**
 * The board's state: the changes to the cards it holds (boardCards.ts keeps them and their column
 * lists), from the first load, the event feed, the hub's answers to our own requests, Done's pages
 * (Done lists only the cards down to the boundary of those pages, core/rules/donePages.ts), the live
 * pages read after the first render and optimistic moves with their rollback; and the agents with
 * their health. Pure logic: no DOM, no transport; every mutation returns a Change naming what the
 * renderer must patch. The card and agent rules (expired, stalled, waiting, deferred, health:
 * cardMarkers.ts) are core's (lease.ts, health.ts, claimable.ts), the same functions the hub and the
 * extension's trees call: never re-written here.
 */
import type { DoneBoundary } from '../core/rules/donePages';
import { agentHealth } from '../core/rules/health';
import {
	type Agent,
	type AgentHealth,
	type BacklogEvent,
	type Card,
	type HealthThresholds,
	type LandingEntry,
	type Pause,
	defaultHealthThresholds,
} from '../core/protocol';
import { BoardCards } from './boardCards';
import { type CardMarkers, cardMarkers } from './cardMarkers';
import { type Change, emptyChange, mergeChange } from './change';
import { mergeIntoLists, removeFromList } from './columnLists';
import { type ColumnId, columnOf } from './columns';

export type { CardMarkers } from './cardMarkers';

export class BoardState extends BoardCards {
	readonly agents = new Map<string, Agent>();
	/** The pauses of the line (pause/list, pauseBar.ts): a ready card they cover shows paused. */
	pauses: readonly Pause[] = [];
	/** The landing queue by card (landingView.ts): a card in it shows "Landing now" or its place in line. */
	landing: ReadonlyMap<string, LandingEntry> = new Map();
	/** Cards that came back from landing, with the hand-over they came back with (landingView.ts). */
	readonly landingReturns = new Map<string, string>();
	thresholds: HealthThresholds = defaultHealthThresholds;
	/** The actor id the hub records for this board's connection (from HelloOk). */
	actor: string | undefined;
	lastSeq = 0;
	/** Live pages are still loading (boardLoad.ts): readiness reported for a card not here yet waits for it. */
	private liveLoading = false;
	private readonly laterReadiness = new Map<string, number>();

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
}
