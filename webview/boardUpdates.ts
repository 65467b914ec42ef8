/**
 * What reaches the DOM after the board's state changed: changes are merged and flushed once per
 * microtask (the changed columns, the phase, project and tag choices, the detail pane, the summary,
 * the live columns' counts and Done), the whole board is redrawn after a (re)load, and `baton:applied`
 * tells tests and the benchmark which events reached the DOM. Must not: change BoardState, send
 * requests or build elements (state.ts, actions.ts and render.ts do).
 */
import { type BoardLoad, liveStatuses } from './boardLoad';
import { type Change, emptyChange, mergeChange } from './change';
import { columnIds, columnOf } from './columns';
import type { DetailPane } from './detail';
import type { DoneColumn } from './doneColumn';
import type { EmptyBoard } from './emptyBoard';
import { isFiltering } from './filter';
import type { FirstLoad } from './firstLoad';
import type { BoardFocus } from './focus';
import type { ProjectPicker } from './projects';
import type { BoardView } from './render';
import { projectsSeen } from './scopeView';
import type { BoardState } from './state';
import type { TagFilter } from './tagFilter';
import type { Toolbar } from './toolbar';

/** Emitted on document after a batch of events reached the DOM (used by tests and the benchmark). */
export interface AppliedDetail {
	seqs: number[];
	appliedAt: number;
}

export interface BoardUpdateParts {
	state: BoardState;
	view: BoardView;
	focus: BoardFocus;
	detail: DetailPane;
	toolbar: Toolbar;
	projectPicker: ProjectPicker;
	tagFilter: TagFilter;
	emptyBoard: EmptyBoard;
	firstLoad: FirstLoad;
	/** Made after this (they queue their changes here), so read when needed. */
	done(): DoneColumn;
	boardLoad(): BoardLoad;
}

export class BoardUpdates {
	private pending = emptyChange();
	private pendingSeqs: number[] = [];
	private flushQueued = false;
	/** The projects seen among the cards when the choices were last rebuilt. */
	private seenProjects: string[] = [];

	constructor(private readonly parts: BoardUpdateParts) {}

	/** An event's seq, reported in the `baton:applied` of the flush that draws its change. */
	arrived(seq: number): void {
		this.pendingSeqs.push(seq);
	}

	queue(change: Change): void {
		mergeChange(this.pending, change);
		if (!this.flushQueued) {
			this.flushQueued = true;
			// A microtask, not a frame: an event reaches the DOM in the same task it arrived in.
			queueMicrotask(() => this.flush());
		}
	}

	private flush(): void {
		const { state, view, focus: boardFocus, detail } = this.parts;
		this.flushQueued = false;
		const change = this.pending;
		const seqs = this.pendingSeqs;
		this.pending = emptyChange();
		this.pendingSeqs = [];
		if (!this.parts.boardLoad().loaded) {
			return;
		}
		const hadFocus = boardFocus.hasFocus();
		boardFocus.updateTabStop();
		for (const col of change.columns) {
			view.columns[col].setCards(state.column(col));
		}
		if (change.phases || change.columns.size > 0) {
			this.updatePhases(change.phases);
		}
		for (const id of change.cards) {
			detail.cardChanged(id);
		}
		this.updateSummary();
		this.updateLiveHeads();
		this.parts.done().update();
		if (hadFocus) {
			boardFocus.keep();
		}
		if (seqs.length > 0) {
			document.dispatchEvent(
				new CustomEvent<AppliedDetail>('baton:applied', { detail: { seqs, appliedAt: performance.now() } }),
			);
		}
	}

	renderAll(): void {
		const { state, view, focus: boardFocus, firstLoad } = this.parts;
		firstLoad.draw();
		boardFocus.updateTabStop();
		for (const col of columnIds) {
			view.columns[col].setCards(state.column(col));
		}
		this.updatePhases();
		this.updateSummary();
		this.updateLiveHeads();
		this.parts.done().update();
	}

	private isFiltered(): boolean {
		return isFiltering(this.parts.state.filter);
	}

	/** The live columns' counts and "loading…" hints while their remaining pages load. */
	updateLiveHeads(): void {
		const filtered = this.isFiltered();
		for (const status of liveStatuses) {
			const { count, more } = this.parts.boardLoad().pendingCount(status, filtered);
			const column = this.parts.view.columns[columnOf(status)];
			column.setTotal(count, more);
			column.setLoading(more);
		}
	}

	/**
	 * The phase and project choices, and the empty state of a project choice that hides every card.
	 * `choices`: the phases or projects may have changed (a scan of every card: not on every event at 50k).
	 */
	updatePhases(choices = true): void {
		const { state, toolbar, projectPicker, tagFilter } = this.parts;
		if (choices) {
			toolbar.updatePhases(state.phases(), state.filter.phase);
			this.seenProjects = projectsSeen(state);
		}
		const shown = columnIds.reduce((n, col) => n + state.column(col).length, 0);
		projectPicker.update(this.seenProjects, state.size, shown);
		tagFilter.update(state, shown);
	}

	updateSummary(): void {
		const { state, toolbar, emptyBoard } = this.parts;
		const done = this.parts.done();
		toolbar.updateSummary(state, done.totals.total);
		emptyBoard.update(
			this.parts.boardLoad().complete && state.size === 0 && done.totals.total === 0 && !this.isFiltered(),
		);
	}
}
