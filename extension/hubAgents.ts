/**
 * The agents as the extension's connection knows them: the hub's list and thresholds (from
 * its hello, agent frames and `agent/list`), health and stalled re-derived every second from
 * `lastSeenAt` with the `baton.health.*` settings over the hub's thresholds, told to the views only when
 * some derived health or stalled flag changed; and the human's own agent kept alive by `agent/ping`
 * every 10 s, which renews its leases while the window is open. Must not: connect, reconnect or hold
 * the connection (hubConnection.ts does and lends it the client), keep cards (liveCards.ts), or
 * re-write a health rule (core/rules/health.ts, through agentHealth.ts).
 */
import type { LogOutputChannel } from 'vscode';
import type { Clock, Timer } from '../core/clock';
import { agentHealth } from '../core/rules/health';
import type { Agent, AgentHealth, Card, HealthThresholds } from '../core/protocol';
import type { RpcClient } from '../core/protocol/rpc';
import { type AgentView, agentViewsOf } from './agentHealth';
import { type BatonConfig, effectiveThresholds } from './config';

/** The default health thresholds, used until the hub's hello brings its own. */
const designThresholds: HealthThresholds = {
	healthySeconds: 30,
	lateSeconds: 100,
	staleSeconds: 300,
	stallSeconds: 900,
};

/** How often the human's agent pings, renewing its leases (~10 s, well inside the lease TTL). */
const pingIntervalMs = 10_000;
/** How often agent health is re-derived: a silent agent changes health with no message at all. */
const healthTickMs = 1_000;

/** What the agents need of the connection: its settings, cards and client, and whom to tell. */
export interface HubAgentsHost {
	readonly clock: Clock;
	readonly log: LogOutputChannel;
	config(): BatonConfig;
	/** The cards this window holds (the views count each agent's claims among them). */
	cards(): Iterable<Card>;
	/** The connection's client while attached. */
	client(): RpcClient | undefined;
	/** The agent list changed, or an agent's derived health or stalled flag did. */
	changed(): void;
}

export class HubAgents {
	private agentList: Agent[] = [];
	private agentById = new Map<string, Agent>();
	/** The hub's thresholds (its hello or `agent/list`); the settings override them key by key. */
	hubThresholds: HealthThresholds = designThresholds;
	private readonly timers: Timer[] = [];
	private healthSignature = '';

	constructor(private readonly host: HubAgentsHost) {}

	get agents(): readonly Agent[] {
		return this.agentList;
	}

	get thresholds(): HealthThresholds {
		return effectiveThresholds(this.hubThresholds, this.host.config());
	}

	/** Health of agent `id` at `now` (core/rules/health.ts), or undefined when this window does not know it. */
	healthOf(id: string | null, now: number): AgentHealth | undefined {
		const agent = id === null ? undefined : this.agentById.get(id);
		return agent === undefined ? undefined : agentHealth(agent.lastSeenAt, now, this.thresholds);
	}

	/** Agents with health and stalled derived for `now`, most recently seen first. */
	agentViews(now = this.host.clock.now().getTime()): AgentView[] {
		return agentViewsOf(this.agentList, this.host.cards(), this.thresholds, now);
	}

	/** Arms the human's agent's ping and the health tick. */
	start(): void {
		const clock = this.host.clock;
		this.timers.push(
			clock.setInterval(() => {
				void this.ping();
			}, pingIntervalMs),
			clock.setInterval(() => this.checkHealth(), healthTickMs),
		);
	}

	/** Disarms them (the connection is disposed). */
	stop(): void {
		for (const t of this.timers) {
			this.host.clock.clearTimer(t);
		}
	}

	/** Forgets the list (the connection restarts). */
	clear(): void {
		this.agentList = [];
		this.agentById = new Map();
	}

	/** The settings changed: derive health again and tell the views even if nothing else did. */
	recheck(): void {
		this.healthSignature = '';
		this.checkHealth();
	}

	setAgents(agents: Agent[]): void {
		this.agentList = agents;
		this.agentById = new Map(agents.map(a => [a.id, a]));
		this.healthSignature = '';
		this.checkHealth();
	}

	async refreshAgents(): Promise<void> {
		const client = this.host.client();
		if (!client) {
			return;
		}
		try {
			const { agents, thresholds } = await client.request('agent/list', {});
			this.hubThresholds = thresholds;
			this.setAgents(agents);
		} catch (e) {
			this.host.log.warn(`Could not list agents: ${e instanceof Error ? e.message : String(e)}`);
		}
	}

	private async ping(): Promise<void> {
		const client = this.host.client();
		if (client?.connectionState !== 'connected') {
			return;
		}
		try {
			await client.request('agent/ping', {});
		} catch (e) {
			// A missed ping is retried in 10 s; the lease TTL is far longer than one interval.
			this.host.log.debug(`agent/ping failed: ${e instanceof Error ? e.message : String(e)}`);
		}
	}

	/** Tells the views only when some derived health or stalled flag actually changed. */
	private checkHealth(): void {
		const signature = this.agentViews()
			.map(v => `${v.agent.id}:${v.health}:${v.stalled}:${v.agent.lastSeenAt}:${v.cards.length}`)
			.join('|');
		if (signature !== this.healthSignature) {
			this.healthSignature = signature;
			this.host.changed();
		}
	}
}
