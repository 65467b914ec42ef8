/**
 * The hub's Prometheus metrics (served by metricsRoute.ts): one prom-client Registry per
 * hub, never the global one. Counters count the events this hub committed (the backlog's onCommitted,
 * so each commit once, whichever face or timer caused it); histograms time the claims and the MCP
 * sessions' requests this hub served; the card and agent gauges are read at scrape time from the
 * maintained counts (card_counts by project, card/stats, small partial indexes; never a scan of every
 * card).
 * Counting and observing are synchronous and touch no store: nothing here may slow a claim down.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { LabelCount, ProjectCount } from '../../core/backlog/counts';
import {
	type AgentHealth,
	type BacklogEvent,
	type CardStatus,
	type StatsResult,
	type StoreHealth,
	AgentExitReason,
} from '../../core/protocol';

/** Seconds; the hub's requests take a few milliseconds, a slow store or a long scan up to seconds. */
export const latencyBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

const statuses: readonly CardStatus[] = ['ready', 'claimed', 'review', 'blocked', 'done'];
const healths: readonly AgentHealth[] = ['healthy', 'late', 'stale', 'dead'];

export interface HubMetricsOptions {
	version: string;
	mode: 'pglite' | 'postgres';
	/** The scrape's reads of the store: card/stats and the cards by project. */
	stats: () => Promise<StatsResult>;
	countsByProject: () => Promise<ProjectCount[]>;
	/** Open cards per label: a count by label only, never a series per card. */
	countsByLabel?: () => Promise<LabelCount[]>;
	/** Claimed cards held by dispatched agents, by agent kind. */
	seatsInUse?: () => Promise<{ kind: string; n: number }[]>;
	/** The store guard's view (a full disk or an unreachable PostgreSQL). */
	storeHealth: () => StoreHealth;
	/** Called when the scrape's read fails (the hub logs it). */
	onScrapeError?: (e: unknown) => void;
}

export class HubMetrics {
	readonly registry = new Registry();
	private readonly claims: Counter;
	private readonly completions: Counter;
	private readonly failures: Counter;
	private readonly leaseExpiries: Counter;
	private readonly reviews: Counter<'outcome'>;
	private readonly claimDuration: Histogram<'result'>;
	private readonly mcpCallDuration: Histogram<'method'>;
	private readonly cards: Gauge<'status' | 'project'>;
	private readonly labeled: Gauge<'label'>;
	private readonly claimable: Gauge;
	private readonly needsInput: Gauge;
	private readonly oldestReadyAge: Gauge;
	private readonly agents: Gauge<'health'>;
	private readonly lastSeq: Gauge;
	private readonly storeUp: Gauge;
	private readonly agentExits: Counter<'reason'>;
	private readonly seats: Gauge<'kind'>;
	private readonly tokens: Counter<'kind' | 'direction'>;
	private readonly cost: Counter<'kind'>;

	constructor(private readonly options: HubMetricsOptions) {
		const registers = [this.registry];
		collectDefaultMetrics({ register: this.registry });
		new Gauge({
			name: 'baton_build_info',
			help: 'Always 1; the labels say which Baton serves and on which store.',
			labelNames: ['version', 'mode'],
			registers,
		}).set({ version: options.version, mode: options.mode }, 1);
		this.claims = new Counter({
			name: 'baton_claims_total',
			help: 'Cards (and reviews) claimed in commits of this hub.',
			registers,
		});
		this.completions = new Counter({
			name: 'baton_completions_total',
			help: 'Claims completed in commits of this hub (done, or handed to review).',
			registers,
		});
		this.failures = new Counter({
			name: 'baton_failures_total',
			help: 'Claims failed by their agent in commits of this hub (retried or parked).',
			registers,
		});
		this.leaseExpiries = new Counter({
			name: 'baton_lease_expiries_total',
			help: 'Leases that ran out and were reclaimed in commits of this hub.',
			registers,
		});
		this.reviews = new Counter({
			name: 'baton_reviews_total',
			help: 'Reviews decided in commits of this hub, by outcome.',
			labelNames: ['outcome'],
			registers,
		});
		this.reviews.inc({ outcome: 'approved' }, 0);
		this.reviews.inc({ outcome: 'changes_requested' }, 0);
		this.claimDuration = new Histogram({
			name: 'baton_claim_duration_seconds',
			help: 'Time this hub spent on card/claim requests, without the time a waiting claim slept; result is card or none.',
			labelNames: ['result'],
			buckets: latencyBuckets,
			registers,
		});
		this.mcpCallDuration = new Histogram({
			name: 'baton_mcp_call_duration_seconds',
			help: 'Time this hub took to answer the requests of MCP sessions (baton mcp), by protocol method.',
			labelNames: ['method'],
			buckets: latencyBuckets,
			registers,
		});
		this.cards = new Gauge({
			name: 'baton_cards',
			help: 'Cards by status and project (project="" for cards with none); the whole backlog, read at scrape time.',
			labelNames: ['status', 'project'],
			registers,
		});
		this.labeled = new Gauge({
			name: 'baton_open_cards_by_label',
			help: 'Cards not done, by label (the 200 most used labels); a card with two labels counts under each.',
			labelNames: ['label'],
			registers,
		});
		this.claimable = new Gauge({
			name: 'baton_cards_claimable',
			help: 'Ready cards claimable now (dependencies done, not deferred).',
			registers,
		});
		this.needsInput = new Gauge({
			name: 'baton_cards_needing_input',
			help: 'Cards whose agent asked a question nobody answered yet.',
			registers,
		});
		this.oldestReadyAge = new Gauge({
			name: 'baton_oldest_ready_card_age_seconds',
			help: 'Age of the oldest ready card; 0 when none is ready.',
			registers,
		});
		this.agents = new Gauge({
			name: 'baton_agents',
			help: 'Known agents by health (core/rules/health.ts: from their last heartbeat or ping).',
			labelNames: ['health'],
			registers,
		});
		this.lastSeq = new Gauge({
			name: 'baton_event_seq',
			help: 'The last seq of the event log (grows by one per event).',
			registers,
		});
		this.agentExits = new Counter({
			name: 'baton_agent_exits_total',
			help: 'Dispatched agents (baton run) whose process ended, recorded in commits of this hub, by reason.',
			labelNames: ['reason'],
			registers,
		});
		for (const reason of AgentExitReason.options) {
			this.agentExits.inc({ reason }, 0);
		}
		this.seats = new Gauge({
			name: 'baton_seats_in_use',
			help: 'Cards held by dispatched agents (baton run) now, by agent kind; read at scrape time.',
			labelNames: ['kind'],
			registers,
		});
		// Read from the store at scrape time (the attempts' reported usage summed by kind), not counted from
		// commits: a report replaces the attempt's earlier one, so only the store knows the total. The whole
		// backlog's, the same from every hub: max() over hubs in team mode. No card id is ever a label.
		this.tokens = new Counter({
			name: 'baton_tokens_total',
			help: "Tokens the attempts' agents reported, by agent kind ('none': not dispatched) and direction (input, output).",
			labelNames: ['kind', 'direction'],
			registers,
		});
		this.cost = new Counter({
			name: 'baton_cost_usd_total',
			help: "Dollars the attempts' agents reported, by agent kind; attempts that reported no cost add nothing.",
			labelNames: ['kind'],
			registers,
		});
		this.storeUp = new Gauge({
			name: 'baton_store_up',
			help: '1 when the scrape read the store and the store takes writes, else 0.',
			registers,
		});
	}

	/** The backlog's onCommitted listener: counts this hub's committed events. */
	countEvents(events: readonly BacklogEvent[]): void {
		for (const event of events) {
			switch (event.type) {
				case 'claimed':
					this.claims.inc();
					break;
				case 'completed':
				case 'review_requested':
					this.completions.inc();
					break;
				case 'failed':
					this.failures.inc();
					break;
				case 'reclaimed':
					// A forced reclaim (a human's) and the stall policy's release are not expiries.
					if (event.data.forced !== true && event.data.stalled !== true) {
						this.leaseExpiries.inc();
					}
					break;
				case 'approved':
				case 'changes_requested':
					this.reviews.inc({ outcome: event.type });
					break;
				case 'agent_exited': {
					const exit = event.data.exit as { reason?: unknown } | undefined;
					this.agentExits.inc({ reason: typeof exit?.reason === 'string' ? exit.reason : 'unknown' });
					break;
				}
				default:
					break;
			}
		}
	}

	observeClaim(seconds: number, gotCard: boolean): void {
		this.claimDuration.observe({ result: gotCard ? 'card' : 'none' }, seconds);
	}

	observeMcpCall(method: string, seconds: number): void {
		this.mcpCallDuration.observe({ method }, seconds);
	}

	get contentType(): string {
		return this.registry.contentType;
	}

	/**
	 * The text exposition; reads card/stats once. After a failed read the labelled store gauges are
	 * left out and the others are NaN, never the last scrape's numbers passed off as current.
	 */
	async render(): Promise<string> {
		this.cards.reset();
		this.agents.reset();
		this.labeled.reset();
		this.seats.reset();
		this.tokens.reset();
		this.cost.reset();
		let read = false;
		try {
			const [s, byProject, byLabel, seats] = await Promise.all([
				this.options.stats(),
				this.options.countsByProject(),
				this.options.countsByLabel?.() ?? [],
				this.options.seatsInUse?.() ?? [],
			]);
			// The sum is always there (kind="" when none is in use), so a dashboard never loses the series.
			this.seats.set({ kind: '' }, 0);
			for (const { kind, n } of seats) {
				this.seats.set({ kind }, n);
			}
			for (const [kind, u] of Object.entries(s.usage?.byKind ?? {})) {
				this.tokens.inc({ kind, direction: 'input' }, u.inputTokens);
				this.tokens.inc({ kind, direction: 'output' }, u.outputTokens);
				this.cost.inc({ kind }, u.knownCostUsd);
			}
			for (const { label, n } of byLabel) {
				this.labeled.set({ label }, n);
			}
			// Every status has a sample even in an empty backlog, so sum by (status) never loses one.
			const seen = new Set<CardStatus>();
			for (const { project, status, n } of byProject) {
				this.cards.set({ status, project: project ?? '' }, n);
				seen.add(status);
			}
			for (const status of statuses) {
				if (!seen.has(status)) {
					this.cards.set({ status, project: '' }, 0);
				}
			}
			for (const health of healths) {
				this.agents.set({ health }, s.agents[health]);
			}
			this.claimable.set(s.claimable);
			this.needsInput.set(s.needsInput);
			this.oldestReadyAge.set(s.oldestReadyAgeSeconds ?? 0);
			this.lastSeq.set(s.lastSeq);
			read = true;
		} catch (e) {
			for (const gauge of [this.claimable, this.needsInput, this.oldestReadyAge, this.lastSeq]) {
				gauge.set(Number.NaN);
			}
			this.options.onScrapeError?.(e);
		}
		this.storeUp.set(read && this.options.storeHealth().state === 'ok' ? 1 : 0);
		return this.registry.metrics();
	}
}
