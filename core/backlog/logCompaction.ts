/**
 * The bounded event log. Progress events (`heartbeat`: a heartbeat that changed a card's
 * progress or note) are most of the log; compaction keeps the newest `progressEventsPerCard` of each
 * card (and the last one of every attempt, which its summary shows) and none older than
 * `progressEventDays`. Every other event — each state change — is kept forever.
 *
 * It works in short transactions, each sized to hold the store about `budgetMs`, pausing between them,
 * so claims and the rest of the backlog's work interleave (PGlite runs one transaction at a time). It never deletes
 * the newest event of the log (PGlite numbers the next one max(seq)+1, so a seq is never reused) nor
 * one younger than `settleMs` (live subscribers and the other hubs' pumps have read it by then). The
 * highest seq it deleted is the log's horizon: a client resuming after a seq below it is told to resync.
 * Must not: delete anything but progress events, or hold one transaction across batches.
 */
import type { Queryable } from '../store/db';
import type { BacklogSettings } from './settings';
import type { UnitOfWork } from './unitOfWork';
import { num } from './values';

export interface CompactionOptions {
	/** Events read by the first transaction (default 500); later ones are sized to `budgetMs`. */
	batch?: number;
	/** How long one transaction should hold the store (default 10 ms): about the longest a claim waits. */
	budgetMs?: number;
	/** Events younger than this are never deleted (default 60 s; 0 in tests: anything but the newest). */
	settleMs?: number;
	/** Awaited between batches (default: one macrotask), so queued work runs first. */
	pause?: () => Promise<void>;
}

export interface CompactionReport {
	/** Progress events deleted by this pass. */
	deleted: number;
	/** Transactions run. */
	batches: number;
	/** The log's horizon after the pass. */
	horizon: number;
	ms: number;
}

interface LogState {
	horizon: number;
	cursor: number;
}

interface Step {
	deleted: number;
	/** The rule has caught up with what may be compacted now. */
	done: boolean;
}

const defaultBatch = 500;
const defaultBudgetMs = 10;
/** Bounds of the batch size as it adapts to the budget. */
const minBatch = 50;
const maxBatch = 20_000;
const defaultSettleMs = 60_000;

export class LogCompaction {
	private running: Promise<CompactionReport> | undefined;

	constructor(
		private readonly uow: UnitOfWork,
		private readonly settings: BacklogSettings,
	) {}

	/** One pass of both rules until each has caught up; a second call while one runs joins it. */
	compact(options: CompactionOptions = {}): Promise<CompactionReport> {
		this.running ??= this.pass(options).finally(() => {
			this.running = undefined;
		});
		return this.running;
	}

	private async pass(options: CompactionOptions): Promise<CompactionReport> {
		const clock = this.uow.clock;
		const started = clock.now().getTime();
		let batch = options.batch ?? defaultBatch;
		const budgetMs = options.budgetMs ?? defaultBudgetMs;
		// A real macrotask, not the clock's timer: pacing, not time (a ManualClock would never fire it).
		const pause = options.pause ?? (() => new Promise<void>(resolve => setTimeout(resolve, 0)));
		if (await caughtUp(this.uow.db)) {
			// Nothing logged since the last pass (an idle hub's maintenance): no transaction at all.
			return { deleted: 0, batches: 0, horizon: await logHorizon(this.uow.db), ms: 0 };
		}
		const policy = await this.settings.read();
		const settleBefore = new Date(started - (options.settleMs ?? defaultSettleMs));
		const agedBefore = new Date(Math.min(settleBefore.getTime(), started - policy.progressEventDays * 86_400_000));
		let deleted = 0;
		let batches = 0;
		for (const step of [
			(n: number) => this.uow.db.transaction(tx => this.ageStep(tx, agedBefore, n)),
			(n: number) => this.uow.db.transaction(tx => this.countStep(tx, settleBefore, policy.progressEventsPerCard, n)),
		]) {
			for (let done = false; !done;) {
				const t = performance.now();
				const r = await step(batch);
				// Size the next transaction to hold the store about budgetMs (at most halving at once).
				const took = Math.max(performance.now() - t, 0.1);
				batch = Math.round(Math.min(maxBatch, Math.max(minBatch, batch / 2, (batch * budgetMs) / took)));
				batches++;
				deleted += r.deleted;
				done = r.done;
				await pause();
			}
		}
		return { deleted, batches, horizon: await logHorizon(this.uow.db), ms: clock.now().getTime() - started };
	}

	/** The age rule: progress events older than `before`, read in seq order from its cursor. */
	private async ageStep(tx: Queryable, before: Date, batch: number): Promise<Step> {
		const state = await lockState(tx, 'aged_through');
		const rows = await tx.query<{ seq: unknown; progress: boolean; old: boolean }>(
			`SELECT seq, type = 'heartbeat' AS progress, at <= $2 AS old FROM events WHERE seq > $1 ORDER BY seq LIMIT $3`,
			[state.cursor, before, batch],
		);
		const { end, full } = settledPrefix(
			rows.map(r => ({ seq: num(r.seq), settled: r.old })),
			await lastSeq(tx),
		);
		const doomed = rows.filter(r => r.progress && num(r.seq) <= end).map(r => num(r.seq));
		const deleted = await deleteEvents(tx, doomed);
		await saveState(tx, 'aged_through', end, doomed);
		return { deleted, done: !full || rows.length < batch };
	}

	/**
	 * The count rule: cards with progress events after its cursor keep their newest `keep` and the last
	 * of each attempt (its claim epoch); older ones up to the settled end of the page go.
	 */
	private async countStep(tx: Queryable, settleBefore: Date, keep: number, batch: number): Promise<Step> {
		const state = await lockState(tx, 'counted_through');
		const rows = await tx.query<{ seq: unknown; card_id: string; progress: boolean; settled: boolean }>(
			`SELECT seq, card_id, type = 'heartbeat' AS progress, at <= $2 AS settled FROM events
			 WHERE seq > $1 ORDER BY seq LIMIT $3`,
			[state.cursor, settleBefore, batch],
		);
		const { end, full } = settledPrefix(
			rows.map(r => ({ seq: num(r.seq), settled: r.settled })),
			await lastSeq(tx),
		);
		const cards = [...new Set(rows.filter(r => r.progress && num(r.seq) <= end).map(r => r.card_id))];
		let doomed: number[] = [];
		if (cards.length > 0) {
			const found = await tx.query<{ seq: unknown }>(
				`SELECT seq FROM (
					SELECT seq,
						row_number() OVER (PARTITION BY card_id ORDER BY seq DESC) AS newest,
						row_number() OVER (PARTITION BY card_id, data -> 'card' ->> 'claimEpoch' ORDER BY seq DESC) AS of_attempt
					FROM events WHERE card_id = ANY($1::text[]) AND type = 'heartbeat'
				) h WHERE newest > $2 AND of_attempt > 1 AND seq <= $3`,
				[cards, keep, end],
			);
			doomed = found.map(r => num(r.seq));
		}
		const deleted = await deleteEvents(tx, doomed);
		await saveState(tx, 'counted_through', end, doomed);
		return { deleted, done: !full || rows.length < batch };
	}
}

/** The highest seq compaction deleted (0: nothing yet): resuming after an older seq needs a resync. */
export async function logHorizon(q: Queryable): Promise<number> {
	const rows = await q.query<{ horizon: unknown }>('SELECT horizon FROM log_state', [], 'baton_log_horizon');
	return num(rows[0]?.horizon ?? 0);
}

/** Both rules' cursors stand just before the newest event (they never pass it): nothing to read. */
async function caughtUp(q: Queryable): Promise<boolean> {
	const rows = await q.query<{ behind: boolean }>(
		`SELECT least(aged_through, counted_through) < (SELECT coalesce(max(seq), 0) FROM events) - 1 AS behind
		 FROM log_state`,
	);
	return rows[0]?.behind === false;
}

type Cursor = 'aged_through' | 'counted_through';

async function lockState(tx: Queryable, cursor: Cursor): Promise<LogState> {
	const rows = await tx.query<{ horizon: unknown; cursor: unknown }>(
		`SELECT horizon, ${cursor} AS cursor FROM log_state FOR UPDATE`,
	);
	return { horizon: num(rows[0]?.horizon ?? 0), cursor: num(rows[0]?.cursor ?? 0) };
}

async function saveState(tx: Queryable, cursor: Cursor, end: number, deleted: readonly number[]): Promise<void> {
	await tx.query(`UPDATE log_state SET ${cursor} = greatest(${cursor}, $1), horizon = greatest(horizon, $2)`, [
		end,
		deleted.length === 0 ? 0 : Math.max(...deleted),
	]);
}

async function lastSeq(tx: Queryable): Promise<number> {
	const rows = await tx.query<{ s: unknown }>('SELECT coalesce(max(seq), 0) AS s FROM events');
	return num(rows[0]?.s ?? 0);
}

async function deleteEvents(tx: Queryable, seqs: readonly number[]): Promise<number> {
	if (seqs.length === 0) {
		return 0;
	}
	const rows = await tx.query('DELETE FROM events WHERE seq = ANY($1::bigint[]) RETURNING seq', [seqs]);
	return rows.length;
}

/**
 * How far a page of the log may be compacted: through the last of its leading settled rows, never
 * the newest event of the log. `full`: the whole page was settled (there may be more to read).
 */
export function settledPrefix(
	rows: readonly { seq: number; settled: boolean }[],
	newest: number,
): { end: number; full: boolean } {
	let end = -1;
	for (const r of rows) {
		if (!r.settled || r.seq >= newest) {
			return { end, full: false };
		}
		end = r.seq;
	}
	return { end, full: true };
}
