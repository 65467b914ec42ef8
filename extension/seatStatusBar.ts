/**
 * The seats item of the status bar ("Watch it"): `3/4 seats` over every live run of this
 * backlog, hidden while no run is registered; warning colours while the line is paused or a run is
 * stopping; the tooltip lists each seat with its card, agent kind and elapsed time; a click picks a
 * seat and opens its live output (seatOutput.ts). Reads dispatchWatch.ts and the connection's cards;
 * sends nothing.
 */
import * as vscode from 'vscode';
import { pauseTarget, pauseText, seatText } from '../core/rules/dispatched';
import type { DispatchWatch } from './dispatchWatch';
import type { HubConnection } from './hubConnection';

export interface SeatSummary {
	text: string;
	tooltip: string;
	level: 'ok' | 'warning';
	inUse: number;
	seats: number;
}

/** What the item shows for the current state; undefined while no run is registered (hidden). */
export function seatSummary(watch: DispatchWatch, now = Date.now()): SeatSummary | undefined {
	const runs = watch.liveRuns(now);
	if (runs.length === 0) {
		return undefined;
	}
	const seats = watch.seats(now);
	const inUse = seats.filter(s => s.card !== undefined).length;
	const lines: string[] = [];
	for (const run of runs) {
		const stopping = run.stopping === null ? '' : run.stopping === 'drain' ? ' — draining' : ' — stopping';
		lines.push(`Run ${run.name} on ${run.host} (pid ${run.pid})${stopping}`);
		for (const s of seats.filter(x => x.run === run.name)) {
			const c = s.card;
			lines.push(
				c?.dispatch
					? `  ${seatText(c.dispatch, now)} — ${c.id} ${c.title} (${c.dispatch.kind})`
					: `  seat ${s.seat} — free`,
			);
		}
	}
	const pauses = watch.pauses;
	for (const p of pauses) {
		lines.push(`Paused ${pauseTarget(p)}: ${pauseText(p)}`);
	}
	lines.push('Click to open a seat’s output.');
	const total = seats.length;
	const paused = pauses.some(p => p.scope === 'all');
	return {
		text: `$(${paused ? 'debug-pause' : 'server-process'}) ${inUse}/${total} seats`,
		tooltip: lines.join('\n'),
		level: paused || runs.some(r => r.stopping !== null) ? 'warning' : 'ok',
		inUse,
		seats: total,
	};
}

export class SeatStatusBar implements vscode.Disposable {
	private readonly item: vscode.StatusBarItem;
	private readonly disposables: vscode.Disposable[] = [];
	private readonly tick: ReturnType<typeof setInterval>;
	private current: SeatSummary | undefined;

	constructor(
		private readonly hub: HubConnection,
		private readonly watch: DispatchWatch,
	) {
		this.item = vscode.window.createStatusBarItem('baton.seats', vscode.StatusBarAlignment.Left, 48);
		this.item.name = 'Baton Seats';
		this.item.command = 'baton.showSeatOutput';
		this.disposables.push(
			watch.onDidChange(() => this.update()),
			hub.onDidChangeCards(() => this.update()),
			hub.onDidChangeState(() => this.update()),
		);
		// Elapsed minutes and a run going silent move with the clock.
		this.tick = setInterval(() => this.update(), 15_000);
		this.update();
	}

	/** What the item shows now; undefined while hidden (the tests read it). */
	get summary(): SeatSummary | undefined {
		return this.current;
	}

	update(): void {
		const s = this.hub.state === 'connected' ? seatSummary(this.watch) : undefined;
		const c = this.current;
		if (c?.text === s?.text && c?.tooltip === s?.tooltip && c?.level === s?.level) {
			return;
		}
		this.current = s;
		if (s === undefined) {
			this.item.hide();
			return;
		}
		this.item.text = s.text;
		this.item.tooltip = s.tooltip;
		this.item.accessibilityInformation = { label: `Baton: ${s.inUse} of ${s.seats} agent seats in use` };
		this.item.backgroundColor =
			s.level === 'warning' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
		this.item.show();
	}

	dispose(): void {
		clearInterval(this.tick);
		for (const d of this.disposables) {
			d.dispose();
		}
		this.item.dispose();
	}
}
