/**
 * The extension's copy of dispatch's shared state: the registered runs (`run/list`) and the
 * pauses (`pause/list`), read on connect, again on each `paused` / `resumed` / `run_updated` /
 * `run_ended` event, and every 10 s while a run is registered (a supervisor killed with -9 sends no
 * event: it only stops re-registering, and is gone 30 s later). Which card sits in which seat comes
 * from the cards themselves (`card.dispatch`, the connection's cache). Reads only; never changes the
 * backlog.
 */
import * as vscode from 'vscode';
import { type SeatView, isRunLive, seatsOf } from '../core/rules/dispatched';
import type { EventType, Pause, RunInfo } from '../core/protocol';
import type { HubConnection } from './hubConnection';

/** The events after which runs or pauses are read again. */
const dispatchEvents: ReadonlySet<EventType> = new Set(['paused', 'resumed', 'run_updated', 'run_ended']);
/** How often runs are read again while one is registered (its lastSeenAt, a silent supervisor). */
const pollMs = 10_000;

export class DispatchWatch implements vscode.Disposable {
	private runList: RunInfo[] = [];
	private pauseList: Pause[] = [];
	private loadedValue = false;
	private reading: Promise<void> | undefined;
	private again = false;
	private readonly timer: ReturnType<typeof setInterval>;
	private readonly emitter = new vscode.EventEmitter<void>();
	private readonly disposables: vscode.Disposable[] = [];
	/** Runs or pauses changed (or were read for the first time). */
	readonly onDidChange = this.emitter.event;

	constructor(private readonly hub: HubConnection) {
		this.disposables.push(
			hub.onDidChangeState(s => {
				if (s === 'connected') {
					void this.refresh();
				}
			}),
			hub.onDidReceiveEvent(e => {
				if (dispatchEvents.has(e.type)) {
					void this.refresh();
				}
			}),
		);
		this.timer = setInterval(() => {
			if (this.runList.length > 0 && hub.state === 'connected') {
				void this.refresh();
			}
		}, pollMs);
		if (hub.state === 'connected') {
			void this.refresh();
		}
	}

	/** Runs as the hub last listed them, gone ones included (see `liveRuns`). */
	get runs(): readonly RunInfo[] {
		return this.runList;
	}

	get pauses(): readonly Pause[] {
		return this.pauseList;
	}

	/** Whether runs and pauses were read at least once. */
	get loaded(): boolean {
		return this.loadedValue;
	}

	/** Runs that still re-register. */
	liveRuns(now = Date.now()): RunInfo[] {
		return this.runList.filter(r => isRunLive(r, now));
	}

	/** Every seat of the live runs with the card it holds. */
	seats(now = Date.now()): SeatView[] {
		return seatsOf(this.runList, this.hub.cards.values(), now);
	}

	/**
	 * Reads runs and pauses now (one read at a time; a request during a read reads once more after it).
	 * Resolves when the state is current, so a command can act on it right after.
	 */
	async refresh(): Promise<void> {
		if (this.reading !== undefined) {
			this.again = true;
			return this.reading;
		}
		this.reading = this.read().finally(() => {
			this.reading = undefined;
		});
		await this.reading;
		if (this.again) {
			this.again = false;
			await this.refresh();
		}
	}

	private async read(): Promise<void> {
		try {
			const [runs, pauses] = await Promise.all([
				this.hub.request('run/list', {}, 5_000),
				this.hub.request('pause/list', {}, 5_000),
			]);
			this.runList = runs.runs;
			this.pauseList = pauses.pauses;
			this.loadedValue = true;
			this.emitter.fire();
		} catch {
			// Offline or an older hub without dispatch: the last lists stay; the next connect reads again.
		}
	}

	dispose(): void {
		clearInterval(this.timer);
		for (const d of this.disposables) {
			d.dispose();
		}
		this.emitter.dispose();
	}
}
