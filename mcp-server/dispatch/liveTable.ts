/**
 * What `baton run` shows: on a terminal a live table (seat, card, agent, elapsed, last
 * progress) redrawn in place once a second with each event printed above it; with --json one JSON
 * object per line per event; otherwise (a pipe, a CI log) one plain line per event; after `hangUp()`
 * (the terminal closed) nothing. Formatting only: it starts, stops and asks nothing.
 */
import { formatDuration } from '../../core/duration';
import { jsonVisible, visibleText } from '../../core/visibleText';

export interface SeatRow {
	seat: number;
	cardId?: string | undefined;
	title?: string | undefined;
	agent?: string | undefined;
	startedAt?: number | undefined;
	progress?: string | undefined;
}

export interface RunStatus {
	name: string;
	seats: number;
	inUse: number;
	mode: 'running' | 'draining' | 'stopping';
	/** Why no card was claimed on the last try (the hub's reason), when seats are free. */
	idle?: string | undefined;
	coolingUntil?: number | undefined;
}

export type DisplayMode = 'table' | 'json' | 'lines';

export interface Screen {
	write(text: string): void;
	columns?: number | undefined;
}

/** The table's text (no trailing newline). */
export function renderTable(rows: readonly SeatRow[], status: RunStatus, now: number, width = 120): string {
	const head = ['SEAT', 'CARD', 'AGENT', 'ELAPSED', 'LAST PROGRESS'];
	const body = rows.map(r => [
		String(r.seat),
		r.cardId ?? '-',
		r.agent ?? (r.cardId === undefined ? 'free' : ''),
		r.startedAt === undefined ? '' : formatDuration(Math.max(0, now - r.startedAt)),
		r.progress ?? '',
	]);
	const widths = head.map((h, i) => Math.max(h.length, ...body.map(row => (row[i] ?? '').length)));
	const line = (cells: readonly string[]): string => {
		const text = cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
		return text.length > width ? `${text.slice(0, width - 1)}…` : text;
	};
	return [statusLine(status, now), line(head), ...body.map(line)].join('\n');
}

export function statusLine(status: RunStatus, now: number): string {
	const parts = [`baton run ${status.name}: ${status.inUse}/${status.seats} seats`];
	if (status.mode === 'draining') {
		parts.push('draining (Ctrl-C again to stop the agents)');
	} else if (status.mode === 'stopping') {
		parts.push('stopping the agents');
	}
	if (status.coolingUntil !== undefined && status.coolingUntil > now) {
		parts.push(`cooling down ${formatDuration(status.coolingUntil - now)} (rate limit)`);
	}
	if (status.idle !== undefined && status.inUse < status.seats && status.mode === 'running') {
		parts.push(`waiting: ${status.idle}`);
	}
	return parts.join(' · ');
}

/** One event as a plain line. */
export function eventText(e: Record<string, unknown>): string {
	const { event, ...rest } = e;
	// A sentence for a person (the advisory gate): printed as it is.
	if (event === 'advisory' && typeof rest.message === 'string') {
		return `advisory: ${rest.message}`;
	}
	const fields = Object.entries(rest)
		.filter(([, v]) => v !== undefined)
		.map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`);
	return [String(event), ...fields].join(' ');
}

export class Display {
	private drawnLines = 0;
	private hungUp = false;

	constructor(
		private readonly screen: Screen,
		readonly mode: DisplayMode,
	) {}

	/** The screen is gone (SIGHUP): write nothing more; the per-card logs under runs/ keep the output. */
	hangUp(): void {
		this.hungUp = true;
	}

	/** An event: a JSON line, a plain line, or a line printed above the table. */
	event(e: Record<string, unknown>): void {
		if (this.hungUp) {
			return;
		}
		const withTime = { at: new Date().toISOString(), ...e };
		if (this.mode === 'json') {
			this.screen.write(`${jsonVisible(JSON.stringify(withTime))}\n`);
			return;
		}
		const text = `${withTime.at.slice(11, 19)} ${eventText(e)}`;
		if (this.mode === 'lines') {
			// An event line carries agent-written text (a reason, a line): no control character goes out raw.
			this.screen.write(`${visibleText(text)}\n`);
			return;
		}
		this.clear();
		this.screen.write(`${visibleText(text)}\n`);
	}

	/** Redraws the table in place (table mode only). */
	draw(rows: readonly SeatRow[], status: RunStatus, now = Date.now()): void {
		if (this.mode !== 'table' || this.hungUp) {
			return;
		}
		// A pseudo-terminal may report 0 columns: then assume a usual width.
		const columns = this.screen.columns !== undefined && this.screen.columns >= 40 ? this.screen.columns : 120;
		const text = renderTable(rows, status, now, columns);
		this.clear();
		// Its cells carry agent-written text (last lines, progress notes): no control character reaches the terminal raw.
		this.screen.write(`${visibleText(text, { multiline: true })}\n`);
		this.drawnLines = text.split('\n').length;
	}

	private clear(): void {
		if (this.drawnLines > 0) {
			// Up over the last table, then erase to the end of the screen.
			this.screen.write(`\x1b[${this.drawnLines}A\x1b[J`);
			this.drawnLines = 0;
		}
	}
}
