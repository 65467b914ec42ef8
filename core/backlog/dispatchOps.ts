/**
 * Dispatch's store side: a card's assignee, a dispatched claim's checks and record (max-held,
 * the project's seat limits, `cards.dispatch`), the supervisor's updates of its agent (pid, log, last
 * output lines), its agents' exits and the supervisor runs (table `runs`). Reads and writes those
 * only; it starts and stops no process (mcp-server/dispatch/ does) and decides no card transition.
 */
import { hostname } from 'node:os';

import { BatonError } from '../errors';
import {
	type Card,
	type CardDispatch,
	type DispatchClaim,
	type ParsedParams,
	type Result,
	type RunInfo,
	RunStopping,
	runGoneSeconds,
} from '../protocol';
import type { Queryable } from '../store/db';
import { loadCard, loadCardRow } from './cardActions';
import type { OpContext, UnitOfWork } from './unitOfWork';
import { reportUsage } from './usage';
import { num, present, toIso } from './values';

/** The event's card id when a run's event names no card. */
export const runEventId = 'baton:run';

/** The backlog's maxHeld and agingHours settings, read inside a claim's transaction. */
export async function lineSettings(q: Queryable): Promise<{ maxHeld: number | null; agingHours: number | null }> {
	const rows = await q.query<{ key: string; value: unknown }>(
		`SELECT key, value FROM settings WHERE key IN ('maxHeld', 'agingHours')`,
		[],
		'baton_line_settings',
	);
	const get = (key: string): number | null => {
		const v = rows.find(r => r.key === key)?.value;
		return typeof v === 'number' ? v : null;
	};
	return { maxHeld: get('maxHeld'), agingHours: get('agingHours') };
}

/**
 * card/get's `effectivePriority`: a ready card's priority plus one per agingHours waited
 * since it was created or its last deferral ended, as the claim orders (claimableSql.ts
 * effectivePrioritySql); nothing when aging is off or the card is not ready.
 */
export async function agedPriority(q: Queryable, card: Card, now: Date): Promise<{ effectivePriority?: number }> {
	if (card.status !== 'ready') {
		return {};
	}
	const { agingHours } = await lineSettings(q);
	if (agingHours === null) {
		return {};
	}
	const since = Math.max(Date.parse(card.createdAt), card.deferUntil === null ? 0 : Date.parse(card.deferUntil));
	const waited = Math.max(now.getTime() - since, 0) / 3_600_000;
	return { effectivePriority: card.priority + Math.floor(waited / agingHours) };
}

/**
 * Refuses a claim by `actor` when it holds maxHeld cards already. Called inside the claim's
 * transaction: it first takes a transaction lock on the actor, so two claims by one agent through two
 * hubs on one PostgreSQL (each counting under its own snapshot) count one after the other, and the
 * second sees the first's card. Claims by other agents never wait on it.
 */
export async function checkMaxHeld(q: Queryable, actor: string, maxHeld: number | null): Promise<void> {
	if (maxHeld === null) {
		return;
	}
	await q.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`baton max-held ${actor}`]);
	const [row] = await q.query<{ n: unknown }>(
		`SELECT count(*) AS n FROM cards WHERE claim_owner = $1 AND status = 'claimed'`,
		[actor],
	);
	const held = num(row?.n);
	if (held >= maxHeld) {
		throw new BatonError(
			'invalid_transition',
			`agent ${actor} already holds ${held} card${held === 1 ? '' : 's'} (max-held ${maxHeld}): complete, release or fail one first.`,
			{ agentId: actor, held, maxHeld },
		);
	}
}

/**
 * Why a dispatched claim of a card of `project` would exceed the project's seat limits (settings
 * `seats`, `kindSeats`: dispatched agents holding its cards, all kinds and this kind), or undefined
 * when it would not. Inside the claim's transaction; the project's settings row is locked, so two
 * claims for the last seat on PostgreSQL take turns.
 */
export async function seatsFull(q: Queryable, project: string | null, d: DispatchClaim): Promise<string | undefined> {
	if (project === null) {
		return undefined;
	}
	const rows = await q.query<{ seats: number | null; kind_seats: Record<string, number> | string }>(
		'SELECT seats, kind_seats FROM project_settings WHERE project = $1 FOR UPDATE',
		[project],
	);
	const row = rows[0];
	if (row === undefined) {
		return undefined;
	}
	const kindSeats =
		typeof row.kind_seats === 'string' ? (JSON.parse(row.kind_seats) as Record<string, number>) : row.kind_seats;
	const kindLimit = kindSeats[d.kind];
	if (row.seats === null && kindLimit === undefined) {
		return undefined;
	}
	const [used] = await q.query<{ n_all: unknown; n_kind: unknown }>(
		`SELECT count(*) AS n_all, count(*) FILTER (WHERE dispatch->>'kind' = $2) AS n_kind FROM cards
		 WHERE project = $1 AND dispatch IS NOT NULL AND status = 'claimed'`,
		[project, d.kind],
	);
	const all = num(used?.n_all);
	const ofKind = num(used?.n_kind);
	if (row.seats !== null && all >= row.seats) {
		return `project ${project} has ${all} of ${row.seats} seats in use`;
	}
	if (kindLimit !== undefined && ofKind >= kindLimit) {
		return `project ${project} has ${ofKind} of ${kindLimit} ${d.kind} seats in use`;
	}
	return undefined;
}

/** Writes a dispatched claim's record on the card it just took (same transaction); returns the card. */
export async function recordDispatch(
	tx: Queryable,
	cardId: string,
	d: DispatchClaim,
	host: string | undefined,
	now: Date,
): Promise<Card> {
	const record: CardDispatch = {
		run: d.run,
		seat: d.seat,
		kind: d.kind,
		host: host ?? hostname(),
		startedAt: now.toISOString(),
	};
	const rows = await tx.query<{ card: Card }>(
		'UPDATE cards SET dispatch = $2::jsonb WHERE id = $1 RETURNING baton_card(cards) AS card',
		[cardId, JSON.stringify(record)],
	);
	return (rows[0] as { card: Card }).card;
}

interface RunRow {
	name: string;
	host: string;
	pid: number;
	seats: number;
	kinds: string[];
	project: string | null;
	started_at: Date | string;
	last_seen_at: Date | string;
	stopping: string | null;
	in_use: unknown;
}

const runsSql = `SELECT r.*, (SELECT count(*) FROM cards c WHERE c.dispatch IS NOT NULL AND c.status = 'claimed'
	AND c.dispatch->>'run' = r.name) AS in_use FROM runs r`;

function runOf(r: RunRow, now: Date): RunInfo {
	const lastSeenAt = toIso(r.last_seen_at);
	return {
		name: r.name,
		host: r.host,
		pid: r.pid,
		seats: r.seats,
		kinds: r.kinds,
		project: r.project,
		inUse: num(r.in_use),
		startedAt: toIso(r.started_at),
		lastSeenAt,
		gone: now.getTime() - Date.parse(lastSeenAt) > runGoneSeconds * 1000,
		stopping: RunStopping.safeParse(r.stopping).data ?? null,
	};
}

export class DispatchOps {
	constructor(private readonly uow: UnitOfWork) {}

	/** Sets or clears who may claim a card; logs `assigned` when it changed. */
	assign(ctx: OpContext, p: ParsedParams<'card/assign'>): Promise<Result<'card/assign'>> {
		return this.uow.mutate(ctx, 'card/assign', async (tx, now) => {
			const before = await loadCard(tx, p.cardId, true);
			if ((before.assignee ?? null) === p.assignee) {
				return { result: { card: before }, events: [] };
			}
			const rows = await tx.query<{ card: Card }>(
				`UPDATE cards SET assignee = $2, version = version + 1, updated_at = $3 WHERE id = $1
				 RETURNING baton_card(cards) AS card`,
				[p.cardId, p.assignee, now],
			);
			const card = (rows[0] as { card: Card }).card;
			return {
				result: { card },
				events: [{ cardId: card.id, type: 'assigned', data: { card, previous: before.assignee ?? null } }],
			};
		});
	}

	/** The supervisor records its agent's pid, log or output on the card its seat holds (that lease only). */
	update(ctx: OpContext, p: ParsedParams<'dispatch/update'>): Promise<Result<'dispatch/update'>> {
		return this.uow.mutate(ctx, 'dispatch/update', async (tx, now) => {
			const { card: before, claimSession } = await loadCardRow(tx, p.cardId, true);
			const holds =
				before.status === 'claimed' &&
				before.claimOwner === ctx.actor &&
				before.claimEpoch === p.epoch &&
				(claimSession === null || claimSession === (ctx.session ?? null));
			if (!holds || before.dispatch === null || before.dispatch === undefined) {
				throw new BatonError(
					'lease_lost',
					`Card ${p.cardId} is not held by this seat's lease (epoch ${p.epoch}) with a dispatch record; it is ${before.status}${before.claimOwner === null ? '' : ` by ${before.claimOwner} (epoch ${before.claimEpoch})`}.`,
					{ cardId: p.cardId, yourEpoch: p.epoch },
				);
			}
			const next: CardDispatch = {
				...before.dispatch,
				...(p.pid === undefined ? {} : { pid: p.pid }),
				...(p.log === undefined ? {} : { log: p.log }),
				...(p.output === undefined ? {} : { output: p.output }),
			};
			const rows = await tx.query<{ card: Card }>(
				`UPDATE cards SET dispatch = $2::jsonb, updated_at = $3 WHERE id = $1 RETURNING baton_card(cards) AS card`,
				[p.cardId, JSON.stringify(next), now],
			);
			const card = (rows[0] as { card: Card }).card;
			return { result: { card }, events: [{ cardId: card.id, type: 'dispatch_updated', data: { card } }] };
		});
	}

	/** The attempt's usage as the seat's agent reported it (usage.ts). */
	usage(ctx: OpContext, p: ParsedParams<'dispatch/usage'>): Promise<Result<'dispatch/usage'>> {
		return reportUsage(this.uow, ctx, p);
	}

	/** Logs a dispatched agent's exit (`agent_exited`): the /metrics counter by reason and the proofs' record. */
	exited(ctx: OpContext, p: ParsedParams<'dispatch/exited'>): Promise<Result<'dispatch/exited'>> {
		return this.uow.mutate(ctx, 'dispatch/exited', async tx => {
			const card = p.cardId === undefined ? null : await loadCard(tx, p.cardId, false).catch(() => null);
			const exit = { run: p.run, seat: p.seat, kind: p.kind, reason: p.reason, code: p.code };
			return {
				result: {},
				events: [{ cardId: card?.id ?? p.cardId ?? runEventId, type: 'agent_exited', data: { card, exit } }],
			};
		});
	}

	/**
	 * Registers (or re-registers, every 10 s) a supervisor run; keeps its start and its stop request. A
	 * second supervisor under the name of a live one is refused with who holds it, instead of taking its
	 * agents over: live is seen within runGoneSeconds and, on the hub's own host, a pid `alive` confirms
	 * (a supervisor killed and restarted at once adopts its agents).
	 */
	register(
		ctx: OpContext,
		p: ParsedParams<'run/register'>,
		alive: (pid: number) => boolean = () => true,
	): Promise<Result<'run/register'>> {
		return this.uow.mutate(ctx, 'run/register', async (tx, now) => {
			const [had] = await tx.query<{ pid: number; host: string; last_seen_at: Date | string }>(
				'SELECT pid, host, last_seen_at FROM runs WHERE name = $1 FOR UPDATE',
				[p.name],
			);
			// A new process under the same name is a new run: its start is now and no stop request carries over.
			const fresh = had?.pid !== p.pid || had.host !== p.host;
			if (had !== undefined && fresh) {
				const seenMs = now.getTime() - Date.parse(toIso(had.last_seen_at));
				const live = seenMs < runGoneSeconds * 1000 && (had.host !== hostname() || alive(had.pid));
				if (live) {
					throw new BatonError(
						'conflict',
						`A supervisor named ${p.name} is running: pid ${had.pid} on ${had.host}, seen ${Math.max(0, Math.round(seenMs / 1000))} s ago. Stop it first (Ctrl-C in its terminal, or Stop Agents in VS Code), or start this one with another --name.`,
						{ run: p.name, pid: had.pid, host: had.host },
					);
				}
			}
			await tx.query(
				`INSERT INTO runs (name, host, pid, seats, kinds, project, started_at, last_seen_at, stopping)
				 VALUES ($1, $2, $3, $4, $5, $6, $7, $7, NULL)
				 ON CONFLICT (name) DO UPDATE SET host = excluded.host, pid = excluded.pid, seats = excluded.seats,
					kinds = excluded.kinds, project = excluded.project, last_seen_at = excluded.last_seen_at
					${fresh ? ', started_at = excluded.started_at, stopping = NULL' : ''}`,
				[p.name, p.host, p.pid, p.seats, p.kinds, p.project, now],
			);
			const run = await this.read(tx, p.name, now);
			// Only a new run or a changed one is news: the 10-second re-registration logs nothing.
			const events = fresh ? [{ cardId: runEventId, type: 'run_updated' as const, data: { card: null, run } }] : [];
			return { result: { run }, events };
		});
	}

	/** Seats in use by agent kind: claimed cards with a dispatch record (/metrics; the partial index). */
	async seatsInUse(): Promise<{ kind: string; n: number }[]> {
		const rows = await this.uow.db.query<{ kind: string; n: unknown }>(
			`SELECT dispatch->>'kind' AS kind, count(*) AS n FROM cards WHERE dispatch IS NOT NULL AND status = 'claimed'
			 GROUP BY 1 ORDER BY 1`,
		);
		return rows.map(r => ({ kind: r.kind, n: num(r.n) }));
	}

	async list(): Promise<Result<'run/list'>> {
		const now = this.uow.clock.now();
		const rows = await this.uow.db.query<RunRow>(`${runsSql} ORDER BY r.name`);
		return { runs: rows.map(r => runOf(r, now)) };
	}

	/** Asks a run (or every run) to drain, or with `stop` to stop its agents now. */
	stop(ctx: OpContext, p: ParsedParams<'run/stop'>): Promise<Result<'run/stop'>> {
		return this.uow.mutate(ctx, 'run/stop', async (tx, now) => {
			const rows = await tx.query<{ name: string }>(
				`UPDATE runs SET stopping = $2 WHERE ($1::text IS NULL OR name = $1) RETURNING name`,
				[p.name ?? null, p.stop === true ? 'stop' : 'drain'],
			);
			if (p.name !== undefined && rows.length === 0) {
				throw new BatonError('not_found', `No run is named ${p.name}. baton run --list shows the runs.`, {
					run: p.name,
				});
			}
			const runs = await Promise.all(rows.map(r => this.read(tx, r.name, now)));
			return {
				result: { runs },
				events: runs.map(run => ({ cardId: runEventId, type: 'run_updated' as const, data: { card: null, run } })),
			};
		});
	}

	/** A supervisor that ends removes its run. */
	end(ctx: OpContext, p: ParsedParams<'run/end'>): Promise<Result<'run/end'>> {
		return this.uow.mutate(ctx, 'run/end', async tx => {
			const rows = await tx.query<{ name: string }>('DELETE FROM runs WHERE name = $1 RETURNING name', [p.name]);
			return {
				result: {},
				events:
					rows.length === 0 ? [] : [{ cardId: runEventId, type: 'run_ended', data: { card: null, name: p.name } }],
			};
		});
	}

	private async read(tx: Queryable, name: string, now: Date): Promise<RunInfo> {
		const rows = await tx.query<RunRow>(`${runsSql} WHERE r.name = $1`, [name]);
		return runOf(present(rows[0]), now);
	}
}
