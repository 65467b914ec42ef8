/**
 * Agents: registration on hello, liveness pings (which renew the agent's leases, unlogged), the list
 * with health, and ending every claim of one agent (a human's reclaim, or its session closing). Health
 * is the pure health.ts; claims end through the rules like any other.
 */
import { type StallView, agentHealth, isAgentStalled } from '../health';
import type { AgentInfo, Card, HealthThresholds, ParsedParams, Result } from '../protocol';
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
				capabilities = EXCLUDED.capabilities, host = EXCLUDED.host, pid = EXCLUDED.pid, last_seen_at = EXCLUDED.last_seen_at`,
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

	/** Liveness: lastSeen = now and every live lease of ctx.actor renewed by its own TTL. Not logged. */
	async ping(ctx: OpContext): Promise<Result<'agent/ping'>> {
		const now = this.uow.clock.now();
		await this.uow.db.query(
			`INSERT INTO agents (id, name, client, last_seen_at, registered_at) VALUES ($1, $1, 'unknown', $2, $2)
			 ON CONFLICT (id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at`,
			[ctx.actor, now],
		);
		const rows = await this.uow.db.query<{ id: string }>(
			`UPDATE cards SET lease_expires_at = $2::timestamptz + make_interval(secs => coalesce(lease_ttl_seconds, $3))
			 WHERE claim_owner = $1 AND status IN ('claimed', 'review') AND lease_expires_at > $2 RETURNING id`,
			[ctx.actor, now, this.defaultTtl],
		);
		return { renewed: rows.length };
	}

	async listAgents(connected: ReadonlySet<string> = new Set()): Promise<Result<'agent/list'>> {
		const now = this.uow.clock.now();
		const rows = await this.uow.db.query<{
			id: string;
			name: string;
			client: string;
			capabilities: string[];
			host: string | null;
			pid: number | null;
			last_seen_at: Date;
			cards: string[];
			held: StallView[];
		}>(
			`SELECT a.id, a.name, a.client, a.capabilities, a.host, a.pid, a.last_seen_at,
				coalesce(array_agg(c.id ORDER BY c.id) FILTER (WHERE c.id IS NOT NULL), '{}') AS cards,
				coalesce(json_agg(json_build_object('status', c.status, 'claimOwner', c.claim_owner,
					'progressAt', baton_ts(c.progress_at), 'claimedAt', baton_ts(c.claimed_at),
					'leaseExpiresAt', baton_ts(c.lease_expires_at))) FILTER (WHERE c.id IS NOT NULL), '[]') AS held
			 FROM agents a LEFT JOIN cards c ON c.claim_owner = a.id AND c.status IN ('claimed', 'review')
			 GROUP BY a.id ORDER BY a.id`,
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

	/** Releases every claim of an agent that went away (its session closed): event `released`. */
	async releaseAgent(ctx: OpContext, agentId: string, reason: string): Promise<Card[]> {
		const out = await this.uow.mutate(ctx, 'agent/release', async (tx, now) => {
			const held = await tx.query<{ id: string }>(
				`SELECT id FROM cards WHERE claim_owner = $1 AND status IN ('claimed', 'review') ORDER BY id FOR UPDATE`,
				[agentId],
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
