/**
 * Agents: registration on hello, liveness pings (which renew the agent's leases, unlogged), an agent's
 * end (its last connection closed) and the pruning of ended rows, the list with health, and ending
 * every claim of one agent (a human's reclaim, or its session closing). Health is the pure health.ts;
 * claims end through the rules like any other. An ended agent that holds nothing is in no list and
 * no count but `all`; events keep naming it, they do not refer to the row.
 */
import { type StallView, agentHealth, isAgentStalled } from '../rules/health';
import type { AgentInfo, Card, HealthThresholds, ParsedParams, Result } from '../protocol';
import type { Queryable } from '../store/db';
import { actOnEach } from './cardActions';
import type { OpContext, UnitOfWork } from './unitOfWork';
import { num } from './values';

export class Agents {
	constructor(
		private readonly uow: UnitOfWork,
		private readonly thresholds: HealthThresholds,
		private readonly defaultTtl: number,
	) {}

	/** Registers or refreshes an agent (the hub calls it on hello); lastSeen = now. */
	async registerAgent(info: AgentInfo): Promise<void> {
		const now = this.uow.clock.now();
		await this.uow.db.query(
			`INSERT INTO agents (id, name, client, capabilities, host, pid, last_seen_at, registered_at)
			 VALUES ($1, $2, $3, $4::text[], $5, $6, $7, $7)
			 ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, client = EXCLUDED.client,
				capabilities = EXCLUDED.capabilities, host = EXCLUDED.host, pid = EXCLUDED.pid, last_seen_at = EXCLUDED.last_seen_at,
				ended_at = NULL`,
			[
				info.id,
				info.name ?? info.id,
				info.client ?? 'unknown',
				[...new Set(info.capabilities ?? [])].sort(),
				info.host ?? null,
				info.pid ?? null,
				now,
			],
		);
	}

	/**
	 * Liveness: lastSeen = now (an ended agent pinging is back) and every live lease of ctx.actor that
	 * its session may act on renewed by its own TTL: another session's pings never keep a lease alive.
	 * Not logged.
	 */
	async ping(ctx: OpContext): Promise<Result<'agent/ping'>> {
		const now = this.uow.clock.now();
		await this.uow.db.query(
			`INSERT INTO agents (id, name, client, last_seen_at, registered_at) VALUES ($1, $1, 'unknown', $2, $2)
			 ON CONFLICT (id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at, ended_at = NULL`,
			[ctx.actor, now],
		);
		const rows = await this.uow.db.query<{ id: string }>(
			`UPDATE cards SET lease_expires_at = $2::timestamptz + make_interval(secs => coalesce(lease_ttl_seconds, $3))
			 WHERE claim_owner = $1 AND status IN ('claimed', 'review') AND lease_expires_at > $2
				AND (claim_session IS NULL OR claim_session = $4::text) RETURNING id`,
			[ctx.actor, now, this.defaultTtl, ctx.session ?? null],
		);
		return { renewed: rows.length };
	}

	/** The agent's last connection closed: it leaves the list and the counts unless it holds cards. */
	async endAgent(agentId: string): Promise<void> {
		await this.uow.db.query('UPDATE agents SET ended_at = $2 WHERE id = $1 AND ended_at IS NULL', [
			agentId,
			this.uow.clock.now(),
		]);
	}

	/**
	 * At a hub's start: agents whose hub went away without closing their connections (a crash, a kill)
	 * ended when they were last seen. `sole`: this hub is the store's only one (PGlite), so none is
	 * connected now; otherwise (PostgreSQL, hubs share the store) only those not seen for the stale
	 * threshold, since agents connected to another hub ping every few seconds.
	 */
	async endAbandoned(sole: boolean): Promise<void> {
		const staleBefore = new Date(this.uow.clock.now().getTime() - this.thresholds.staleSeconds * 1000);
		await this.uow.db.query(
			`UPDATE agents SET ended_at = last_seen_at WHERE ended_at IS NULL AND ($1 OR last_seen_at < $2)`,
			[sole, staleBefore],
		);
	}

	/**
	 * Forgets agents ended (or, never ended, not seen) more than `days` ago that hold nothing: the
	 * setting agentRetentionDays, run by the hub's maintenance. Returns how many rows went.
	 */
	async prune(days: number): Promise<number> {
		const cutoff = new Date(this.uow.clock.now().getTime() - days * 86_400_000);
		const rows = await this.uow.db.query<{ id: string }>(
			`DELETE FROM agents a WHERE coalesce(a.ended_at, a.last_seen_at) < $1 AND NOT ${holdsCards('a')} RETURNING a.id`,
			[cutoff],
		);
		return rows.length;
	}

	/** Agents, with health: without `all`, only those not ended and those that still hold cards. */
	async listAgents(connected: ReadonlySet<string> = new Set(), all = false): Promise<Result<'agent/list'>> {
		const now = this.uow.clock.now();
		const rows = await this.uow.db.query<{
			id: string;
			name: string;
			client: string;
			capabilities: string[];
			host: string | null;
			pid: number | null;
			last_seen_at: Date;
			ended_at: Date | null;
			cards: string[];
			held: StallView[];
		}>(
			`SELECT a.id, a.name, a.client, a.capabilities, a.host, a.pid, a.last_seen_at, a.ended_at,
				coalesce(array_agg(c.id ORDER BY c.id) FILTER (WHERE c.id IS NOT NULL), '{}') AS cards,
				coalesce(json_agg(json_build_object('status', c.status, 'claimOwner', c.claim_owner,
					'progressAt', baton_ts(c.progress_at), 'claimedAt', baton_ts(c.claimed_at),
					'leaseExpiresAt', baton_ts(c.lease_expires_at))) FILTER (WHERE c.id IS NOT NULL), '[]') AS held
			 FROM agents a LEFT JOIN cards c ON c.claim_owner = a.id AND c.status IN ('claimed', 'review')
			 WHERE $1 OR ${listedWhere('a')}
			 GROUP BY a.id ORDER BY a.id`,
			[all],
		);
		return {
			agents: rows.map(r => {
				const lastSeen = new Date(r.last_seen_at);
				const health = agentHealth(lastSeen, now, this.thresholds);
				return {
					id: r.id,
					name: r.name,
					client: r.client,
					capabilities: r.capabilities,
					host: r.host,
					pid: r.pid === null ? null : num(r.pid),
					lastSeenAt: lastSeen.toISOString(),
					status: r.cards.length > 0 ? ('working' as const) : ('idle' as const),
					cards: r.cards,
					health,
					// health.ts decides (lease running, holder alive, quiet since progress or claim).
					stalled: isAgentStalled(health, r.held, now, this.thresholds),
					connected: connected.has(r.id),
					endedAt: r.ended_at === null ? null : new Date(r.ended_at).toISOString(),
				};
			}),
			thresholds: this.thresholds,
		};
	}

	/** Force-reclaims every card an agent holds (a human giving up on it). */
	async reclaimAgent(ctx: OpContext, p: ParsedParams<'agent/reclaim'>): Promise<Result<'agent/reclaim'>> {
		return this.uow.mutate(ctx, 'agent/reclaim', async (tx, now) => {
			const held = await tx.query<{ id: string }>(
				`SELECT id FROM cards WHERE claim_owner = $1 AND status IN ('claimed', 'review') ORDER BY id FOR UPDATE`,
				[p.agentId],
			);
			return actOnEach(
				tx,
				held.map(r => r.id),
				{ type: 'reclaim', reason: p.reason ?? `agent ${p.agentId} reclaimed by ${ctx.actor}` },
				now,
			);
		});
	}

	/**
	 * Releases every claim of an agent that went away (its session closed): event `released`. With
	 * `session`, only the leases that session claimed (one of two sessions under one agent id closed).
	 */
	async releaseAgent(ctx: OpContext, agentId: string, reason: string, session?: string): Promise<Card[]> {
		const out = await this.uow.mutate(ctx, 'agent/release', async (tx, now) => {
			const held = await tx.query<{ id: string }>(
				`SELECT id FROM cards WHERE claim_owner = $1 AND status IN ('claimed', 'review')
					AND ($2::text IS NULL OR claim_session = $2) ORDER BY id FOR UPDATE`,
				[agentId, session ?? null],
			);
			return actOnEach(
				tx,
				held.map(r => r.id),
				{ type: 'disconnect', reason },
				now,
			);
		});
		return out.cards;
	}
}

/** SQL: agent row `a` holds a card (claimed, or a review it took). */
function holdsCards(a: string): string {
	return `EXISTS (SELECT 1 FROM cards c WHERE c.claim_owner = ${a}.id AND c.status IN ('claimed', 'review'))`;
}

/** SQL: agent row `a` is listed and counted: not ended, or still holding cards (their health matters). */
export function listedWhere(a: string): string {
	return `(${a}.ended_at IS NULL OR ${holdsCards(a)})`;
}

/** The health of every listed agent's last-seen time (card/stats' agent counts). */
export async function listedLastSeen(q: Queryable): Promise<{ id: string; lastSeen: Date }[]> {
	const rows = await q.query<{ id: string; last_seen_at: Date }>(
		`SELECT a.id, a.last_seen_at FROM agents a WHERE ${listedWhere('a')}`,
	);
	return rows.map(r => ({ id: r.id, lastSeen: new Date(r.last_seen_at) }));
}
