/**
 * Dispatch as people read it, for every face alike (the tree, the status bar, the board):
 * which pause holds a card back, "seat 2 · 4 min", "running in seat 2, 4 min", who paused and why, and
 * a run's seats. Pure, platform-free and zod-free (types only from core/protocol/); callers pass now.
 * It words what the hub said and decides nothing the hub enforces: the claim's own transaction checks
 * pauses, assignments and seats.
 */
import { type Instant, instantMs } from '../clock';
import type { BacklogEvent, Card, CardDispatch, Pause, RunInfo } from '../protocol';

/** A run not re-registered for this long is gone (DISPATCH.md: re-registers every 10 s). */
export const runGoneMs = 30_000;

/** "under a minute", "4 min", "2 h 05 min": a seat's elapsed time in whole minutes, cut down. */
export function minutesText(ms: number): string {
	const m = Math.floor(Math.max(0, ms) / 60_000);
	if (m < 1) {
		return 'under a minute';
	}
	return m < 60 ? `${m} min` : `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

/**
 * An event about the line, not a card's state (a pause, a resume, a run registering or ending, an
 * agent exiting without a card, a change of settings or hooks, a forced gc): `data.card` is null there without the card being deleted, so card
 * caches and Done's counts must pass it by (DISPATCH.md: cardId `baton:pause` / `baton:run`).
 */
export function isCardless(e: Pick<BacklogEvent, 'type' | 'data'>): boolean {
	return e.data.card === null && lineEvents.has(e.type);
}

const lineEvents: ReadonlySet<string> = new Set([
	'paused',
	'resumed',
	'run_updated',
	'run_ended',
	'agent_exited',
	// A person's settings, hooks and gc --force (cardId baton:settings, baton:hooks, baton:gc).
	'settings_changed',
	'hook_changed',
	'workspace_gc',
]);

/** "seat 2 · 4 min" (the tree). */
export function seatText(d: CardDispatch, now: Instant): string {
	return `seat ${d.seat} · ${minutesText(instantMs(now) - instantMs(d.startedAt))}`;
}

/** "running in seat 2, 4 min" (the board). */
export function runningText(d: CardDispatch, now: Instant): string {
	return `running in seat ${d.seat}, ${minutesText(instantMs(now) - instantMs(d.startedAt))}`;
}

/**
 * The pause that holds `card` back from every claim, if any: everything, its project, its phase or the
 * card itself. A kind's pause stops that kind's dispatch only, so it holds no card by itself.
 */
export function pauseOf(card: Pick<Card, 'id' | 'phase' | 'project'>, pauses: readonly Pause[]): Pause | undefined {
	return pauses.find(
		p =>
			p.scope === 'all' ||
			(p.scope === 'card' && p.target === card.id) ||
			(p.scope === 'project' && p.target === (card.project ?? null)) ||
			(p.scope === 'phase' && p.target === card.phase),
	);
}

/** "everything", "project acme/web", "phase api", "card A4", "kind claude". */
export function pauseTarget(p: Pause): string {
	return p.scope === 'all' ? 'everything' : `${p.scope} ${p.target ?? ''}`;
}

/** "paused by vscode:ann: deploy freeze" — the claim's refusal words (DISPATCH.md). */
export function pauseText(p: Pause): string {
	return `paused by ${p.by}${p.reason === null || p.reason === '' ? '' : `: ${p.reason}`}`;
}

/** Whether a run still re-registers: not gone when listed, nor since (the clock moves on between lists). */
export function isRunLive(run: RunInfo, now: Instant): boolean {
	return !run.gone && instantMs(now) - instantMs(run.lastSeenAt) < runGoneMs;
}

/** One seat of a live run: the card it holds, if any. */
export interface SeatView {
	run: string;
	seat: number;
	card: Card | undefined;
}

/**
 * Every seat of the live runs, each with the claimed card that sits in it (cards carry `dispatch`
 * from the claim that put them there, so a seat fills the moment its claim event arrives).
 */
export function seatsOf(runs: readonly RunInfo[], cards: Iterable<Card>, now: Instant): SeatView[] {
	const held = new Map<string, Card>();
	for (const c of cards) {
		if (c.status === 'claimed' && c.dispatch) {
			held.set(`${c.dispatch.run}/${c.dispatch.seat}`, c);
		}
	}
	const out: SeatView[] = [];
	for (const run of runs) {
		if (!isRunLive(run, now)) {
			continue;
		}
		for (let seat = 1; seat <= run.seats; seat++) {
			out.push({ run: run.name, seat, card: held.get(`${run.name}/${seat}`) });
		}
	}
	return out;
}
