/**
 * The extension's one connection to the hub: finds or spawns `baton hub` with VS Code's
 * own runtime (hubLaunch.ts), keeps a live copy of the cards (every live one, Done by pages:
 * liveCards.ts, doneCache.ts) and agents (hubAgents.ts, which also keeps the human's claims alive with
 * `agent/ping` while the window is open) from the event feed, and the landing queue (`landing/queue` at
 * each hello, then the hub's landing notices), and reconnects by itself. Never loads
 * PGlite: the hub runs in its own process, so nothing heavy ever runs on the extension host.
 */
import * as vscode from 'vscode';
import { Backoff, firstConnectBackoff } from '../core/backoff';
import type { ConnectHubOptions } from '../core/client/connectHub';
import { type Clock, type Timer, sleep, systemClock } from '../core/clock';
import { BatonError } from '../core/errors';
import type {
	Agent,
	AgentHealth,
	BacklogEvent,
	Card,
	HealthThresholds,
	LandingEntry,
	Method,
	Params,
	Result,
	StoreHealth,
} from '../core/protocol';
import type { ConnectionState, RpcClient } from '../core/protocol/rpc';
import type { AgentView } from './agentHealth';
import { type BatonConfig, humanAgent } from './config';
import type { DoneCache } from './doneCache';
import { HubAgents } from './hubAgents';
import { hubConnectOptions } from './hubLaunch';
import { type CardsChange, LiveCards } from './liveCards';

export type { CardsChange } from './liveCards';

export type HubState = 'connecting' | 'connected' | 'offline';

/**
 * The client code (and zod with the protocol schemas, the bulk of the bundle's start-up cost) is
 * loaded on first connect, after activate() has returned: activation stays cheap (bench: activation).
 */
const loadClient = () => import('../core/client/connectHub');

export class HubConnection implements vscode.Disposable {
	private client: RpcClient | undefined;
	/** The live cards and Done's pages, kept from the snapshot and the events (liveCards.ts). */
	private readonly live: LiveCards;
	/** The agents, their derived health and the human's agent's ping (hubAgents.ts). */
	private readonly agentState: HubAgents;
	private stateValue: HubState = 'connecting';
	private lastErrorValue: string | undefined;
	private actor: string;
	private disposed = false;
	/** Bumped by restart(): a connect loop of an older generation stops and closes what it opened. */
	private generation = 0;
	private attached: { promise: Promise<RpcClient>; resolve: (c: RpcClient) => void };
	private readonly unsubscribe: (() => void)[] = [];

	private readonly cardsEmitter = new vscode.EventEmitter<CardsChange>();
	private readonly agentsEmitter = new vscode.EventEmitter<void>();
	private readonly stateEmitter = new vscode.EventEmitter<HubState>();
	private readonly eventEmitter = new vscode.EventEmitter<BacklogEvent>();
	private readonly landingEmitter = new vscode.EventEmitter<void>();
	private landingMap: ReadonlyMap<string, LandingEntry> = new Map();
	/** The landing queue changed (a card joined its base's line, took its turn or left it). */
	readonly onDidChangeLanding = this.landingEmitter.event;
	/** Cards were added, changed, removed or reloaded. */
	readonly onDidChangeCards = this.cardsEmitter.event;
	/** The agent list changed, or an agent's derived health or stalled flag did. */
	readonly onDidChangeAgents = this.agentsEmitter.event;
	readonly onDidChangeState = this.stateEmitter.event;
	/** Every event of the feed, after the cards took it (dispatchWatch.ts reads pauses and runs from it). */
	readonly onDidReceiveEvent = this.eventEmitter.event;

	constructor(
		private readonly extensionPath: string,
		private readonly log: vscode.LogOutputChannel,
		private config: BatonConfig,
		/** Time and timers (connect retries, pings, health ticks); the connection's client uses it too. */
		private readonly clock: Clock = systemClock,
	) {
		this.actor = humanAgent(config).id;
		this.attached = deferred();
		this.live = new LiveCards(log, change => this.cardsEmitter.fire(change));
		this.agentState = new HubAgents({
			clock,
			log,
			config: () => this.config,
			cards: () => this.live.map.values(),
			client: () => this.client,
			changed: () => this.agentsEmitter.fire(),
		});
	}

	get state(): HubState {
		return this.stateValue;
	}

	/** Why the hub is unreachable, when it is. */
	get lastError(): string | undefined {
		return this.lastErrorValue;
	}

	/** Whether the hub's store takes writes (disk full, PostgreSQL away); ok while unknown. */
	get store(): StoreHealth {
		return this.client?.store ?? { state: 'ok' };
	}

	/** The agent id this window acts as (`vscode:<user>`), as the hub records it. */
	get me(): string {
		return this.actor;
	}

	get dataDir(): string {
		return this.config.dataDir;
	}

	get settings(): BatonConfig {
		return this.config;
	}

	get thresholds(): HealthThresholds {
		return this.agentState.thresholds;
	}

	get cards(): ReadonlyMap<string, Card> {
		return this.live.map;
	}

	/** Done's pages and counts: the cache holds only the newest done cards. */
	get done(): DoneCache {
		return this.live.done;
	}

	/** Loads the next page of Done into the cache (the tree's "Load more…"). */
	async loadMoreDone(): Promise<void> {
		const client = await this.whenAttached();
		await this.done.loadMore(p => client.request('card/list', p));
		this.cardsEmitter.fire({ ids: new Set(), reset: true });
	}

	/** The landing queue's entries by card: an approved card landing now or waiting its turn. */
	get landing(): ReadonlyMap<string, LandingEntry> {
		return this.landingMap;
	}

	private setLanding(entries: readonly LandingEntry[]): void {
		this.landingMap = new Map(entries.map(e => [e.cardId, e]));
		this.landingEmitter.fire();
	}

	get agents(): readonly Agent[] {
		return this.agentState.agents;
	}

	/**
	 * Health of agent `id` at `now` (core/rules/health.ts), or undefined when this window does not know the
	 * agent: what the tree passes to the card rules, so a dead agent's card is not called stalled.
	 */
	healthOf(id: string | null, now = this.clock.now().getTime()): AgentHealth | undefined {
		return this.agentState.healthOf(id, now);
	}

	/** Starts connecting in the background; activation never waits for the hub. */
	start(): void {
		const gen = this.generation;
		void this.connectLoop(gen);
		this.agentState.start();
	}

	/** Applies new settings; a new data dir, database or identity means a new connection. */
	updateConfig(config: BatonConfig): void {
		const reconnect =
			config.dataDir !== this.config.dataDir ||
			config.databaseUrl !== this.config.databaseUrl ||
			config.agentName !== this.config.agentName;
		this.config = config;
		if (reconnect) {
			this.restart();
		} else {
			this.agentState.recheck();
		}
	}

	/** Drops the connection and the cached state and connects again (settings changed, user asked). */
	restart(): void {
		this.generation++;
		this.detach();
		this.actor = humanAgent(this.config).id;
		this.live.map.clear();
		this.agentState.clear();
		this.cardsEmitter.fire({ ids: new Set(), reset: true });
		this.agentsEmitter.fire();
		this.attached = deferred();
		this.setState('connecting');
		void this.connectLoop(this.generation);
	}

	/**
	 * Sends one request as the human's agent. Waits for the first connection up to `waitMs`; after
	 * that the RpcClient queues requests across reconnects until its own timeout.
	 */
	async request<M extends Method>(method: M, params: Params<M>, waitMs = 20_000): Promise<Result<M>> {
		const client = this.client ?? (await this.whenAttached(waitMs));
		return client.request(method, params);
	}

	/** Resolves once connected and loaded (or rejects after `waitMs`). */
	async whenAttached(waitMs = 20_000): Promise<RpcClient> {
		if (this.client) {
			return this.client;
		}
		let timer: Timer | undefined;
		try {
			return await Promise.race([
				this.attached.promise,
				new Promise<never>((_resolve, reject) => {
					timer = this.clock.setTimeout(() => {
						reject(
							new BatonError(
								'unavailable',
								`The Baton hub for ${this.config.dataDir} is not reachable${this.lastErrorValue ? `: ${this.lastErrorValue}` : ''}. See "Baton: Show Log".`,
							),
						);
					}, waitMs);
				}),
			]);
		} finally {
			this.clock.clearTimer(timer);
		}
	}

	/**
	 * A second, dedicated connection with the same identity, for a board webview: it subscribes with
	 * its own seq, so its replay never disturbs this connection's feed.
	 */
	async openClient(): Promise<RpcClient> {
		const { connectHub } = await loadClient();
		return connectHub(this.connectOptions());
	}

	/** Agents with health and stalled derived for `now`, most recently seen first. */
	agentViews(now = this.clock.now().getTime()): AgentView[] {
		return this.agentState.agentViews(now);
	}

	dispose(): void {
		this.disposed = true;
		this.generation++;
		this.agentState.stop();
		this.detach();
		this.cardsEmitter.dispose();
		this.agentsEmitter.dispose();
		this.stateEmitter.dispose();
		this.eventEmitter.dispose();
		this.landingEmitter.dispose();
	}

	private connectOptions(): ConnectHubOptions {
		return hubConnectOptions(this.config, this.extensionPath, this.clock);
	}

	private async connectLoop(gen: number): Promise<void> {
		const retry = new Backoff(firstConnectBackoff);
		// 'connecting' until the first attempt fails; retries then stay 'offline' until one succeeds,
		// so the status bar does not flicker on every attempt.
		while (!this.isStale(gen)) {
			let client: RpcClient | undefined;
			try {
				const t0 = this.clock.now().getTime();
				const { connectHub } = await loadClient();
				client = await connectHub(this.connectOptions());
				if (this.isStale(gen)) {
					client.close();
					return;
				}
				await this.attach(client);
				const took = this.clock.now().getTime() - t0;
				this.log.info(`Connected to the Baton hub for ${this.config.dataDir} in ${took} ms.`);
				return;
			} catch (e) {
				client?.close();
				this.detach();
				if (this.isStale(gen)) {
					return;
				}
				this.lastErrorValue = e instanceof Error ? e.message : String(e);
				const delay = retry.next();
				this.log.warn(`Cannot reach the Baton hub (retrying in ${delay} ms): ${this.lastErrorValue}`);
				this.setState('offline');
				await sleep(this.clock, delay);
			}
		}
	}

	/** True once restart() or dispose() superseded the connect loop of generation `gen`. */
	private isStale(gen: number): boolean {
		return gen !== this.generation || this.disposed;
	}

	/** Loads the snapshot, then subscribes after the hello's seq so no change falls in between. */
	private async attach(client: RpcClient): Promise<void> {
		this.client = client;
		const hello = client.hello;
		if (hello) {
			this.actor = hello.actor;
			this.agentState.hubThresholds = hello.thresholds;
		}
		this.unsubscribe.push(
			client.onEvent(e => {
				this.live.onEvent(e);
				this.eventEmitter.fire(e);
			}),
			// The log was compacted past what this window saw while away: load it again.
			client.onResync(() => void this.live.resync(client, this.config.doneLimit)),
			client.onAgents(agents => this.agentState.setAgents(agents)),
			client.onLanding(entries => this.setLanding(entries)),
			client.onState(s => this.onClientState(s)),
			client.onStore(store => {
				this.log.warn(`Baton store: ${store.state}${store.message === undefined ? '' : ` — ${store.message}`}`);
				this.stateEmitter.fire(this.stateValue);
			}),
			client.onHello(h => {
				this.actor = h.actor;
				this.agentState.hubThresholds = h.thresholds;
				// Agent frames carry no seq, so those missed while offline are fetched again.
				void this.agentState.refreshAgents();
				this.loadLanding(client);
			}),
		);
		const afterSeq = hello?.seq ?? 0;
		await this.live.load(client, this.config.doneLimit);
		await client.subscribe(afterSeq);
		await this.agentState.refreshAgents();
		this.loadLanding(client);
		this.lastErrorValue = undefined;
		this.setState('connected');
		this.attached.resolve(client);
	}

	/** Reads the landing queue (its notices missed while offline never come); a hub without it shows none. */
	private loadLanding(client: RpcClient): void {
		client.request('landing/queue', {}).then(
			q => this.setLanding(q.entries),
			() => undefined,
		);
	}

	private detach(): void {
		for (const u of this.unsubscribe.splice(0)) {
			u();
		}
		const client = this.client;
		this.client = undefined;
		client?.close();
	}

	private onClientState(s: ConnectionState): void {
		if (s === 'connected') {
			this.lastErrorValue = undefined;
			this.setState('connected');
		} else if (s === 'connecting') {
			this.setState('connecting');
		} else if (s === 'offline') {
			this.lastErrorValue ??= 'the connection to the hub was lost; reconnecting';
			this.setState('offline');
		}
	}

	private setState(state: HubState): void {
		if (this.stateValue === state) {
			return;
		}
		this.stateValue = state;
		void vscode.commands.executeCommand('setContext', 'baton.hubConnected', state === 'connected');
		this.stateEmitter.fire(state);
	}
}

function deferred(): { promise: Promise<RpcClient>; resolve: (c: RpcClient) => void } {
	let resolve!: (c: RpcClient) => void;
	const promise = new Promise<RpcClient>(r => (resolve = r));
	return { promise, resolve };
}
