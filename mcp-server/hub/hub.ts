/**
 * The hub: builds its parts around one opened Backlog and runs their lifecycle:
 * start (event pump, PostgreSQL relay, listeners, reaper, housekeeping), the path of each pumped
 * batch (subscribers, waiting claims, MCP inboxes, reaper, housekeeping), the store's health and
 * its failure, and the stop in order. It owns the data dir already (run.ts won the election before
 * constructing it). It handles no frame and no request itself: connections.ts, requests.ts and
 * handlers.ts do.
 */
import type { Backlog } from '../../core/backlog';
import type { BackoffPolicy } from '../../core/backoff';
import { type Clock, systemClock } from '../../core/clock';
import { BatonError } from '../../core/errors';
import { createLogger, errorText } from '../../core/log';
import type { HubPaths } from '../../core/paths';
import {
	type BacklogEvent,
	type HealthThresholds,
	type Result,
	type StoreHealth,
	protocolVersion,
} from '../../core/protocol';
import { Backups } from './backups';
import { ClaimWorkspaces } from './claimWorkspace';
import { type Connection, Connections } from './connections';
import { EventPump } from './eventPump';
import { createHandlers } from './handlers';
import { Housekeeping } from './housekeeping';
import { HubChecks } from './checks';
import { Landing } from './landing';
import { LandingNotice } from './landingNotice';
import { finishInterruptedLandings } from './landingRecord';
import { WorkspaceGc } from './workspaceGc';
import { InboxPush } from './inbox';
import { HubMetrics } from './metrics';
import { handleMetrics } from './metricsRoute';
import { NotifyRelay } from './notifyRelay';
import { Reaper } from './reaper';
import { Requests } from './requests';
import { StoreGuard } from './storeGuard';
import { Subscriptions } from './subscriptions';
import { WaitingClaims } from './waitingClaims';
import { Webhooks } from './webhooks';
import { WipKeeper } from './wipKeeper';

const log = createLogger('hub');

export interface HubOptions {
	paths: HubPaths;
	backlog: Backlog;
	token: string;
	/** The read-only scrape token of `GET /metrics` (run/metrics.token). */
	metricsToken: string;
	thresholds: HealthThresholds;
	version: string;
	/** Exit after this long without any client. */
	idleMs: number;
	/** Periodic backup interval; 0 disables. */
	backupIntervalMs: number;
	/** PostgreSQL mode: LISTEN here for other hubs' commits. */
	databaseUrl?: string;
	/** Folder of the built board assets. */
	webviewDir: string;
	/** Write maintenance after this many events (about every 5,000 writes by default). */
	maintenanceEveryWrites?: number;
	/** Sentences from start-up for hub/status, besides the store's own (Backlog.notices). */
	notices?: readonly string[];
	/** PGlite mode: the store's directory, whose filesystem's free space gates writes. */
	pgliteDir?: string;
	/** The clock of the reaper, event pump and notify relay (default the system's; tests pass a ManualClock). */
	clock?: Clock;
	/** Outgoing webhooks: the request timeout and the retry backoff (tests shorten them; webhooks.ts has the defaults). */
	webhooks?: { timeoutMs?: number | undefined; backoff?: BackoffPolicy | undefined };
}

export class Hub {
	private readonly pump: EventPump;
	private readonly guard: StoreGuard;
	private readonly reaper: Reaper;
	private readonly connections: Connections;
	private readonly requests: Requests;
	private readonly subscriptions: Subscriptions;
	private readonly waitingClaims: WaitingClaims;
	private readonly inbox: InboxPush;
	private readonly housekeeping: Housekeeping;
	private readonly webhooks: Webhooks;
	private readonly metrics: HubMetrics;
	private readonly wip: WipKeeper;
	private readonly checks: HubChecks;
	private readonly landingNotice: LandingNotice;
	private readonly stopCounting: () => void;
	private readonly stopKeeping: () => void;
	private relay: NotifyRelay | undefined;
	private stopAnnouncing: (() => void) | undefined;
	private readonly startedAt = new Date();
	private stopping: Promise<void> | undefined;
	private stoppedResolve: (() => void) | undefined;
	readonly stopped: Promise<void>;
	/** Why the store failed, when it did: the hub stops without closing it, and run.ts exits 1. */
	failure: string | undefined;

	constructor(private readonly options: HubOptions) {
		this.stopped = new Promise(resolve => {
			this.stoppedResolve = resolve;
		});
		const backlog = options.backlog;
		const stopping = (): boolean => this.stopping !== undefined;
		const stop = (reason: string): void => void this.stop(reason);
		const clock = options.clock ?? systemClock;
		this.pump = new EventPump(backlog, events => this.onEvents(events), {
			holeWaitMs: backlog.mode === 'postgres' ? 1_000 : 100,
			clock,
		});
		this.guard = new StoreGuard({
			pgliteDir: options.pgliteDir,
			databaseUrl: options.databaseUrl,
			probe: () => backlog.lastSeq(),
			onChange: health => this.onStoreHealth(health),
		});
		this.reaper = new Reaper(backlog, undefined, () => this.guard.smallWritesOk, clock);
		this.webhooks = new Webhooks({
			backlog,
			seq: () => this.pump.seq,
			userAgent: `baton/${options.version}`,
			timeoutMs: options.webhooks?.timeoutMs,
			backoff: options.webhooks?.backoff,
			soleHub: backlog.mode === 'pglite',
			mayWrite: () => this.guard.smallWritesOk,
		});
		const backups = new Backups(options.paths.backups, () => backlog.dump());
		this.subscriptions = new Subscriptions(backlog, this.pump);
		this.metrics = new HubMetrics({
			version: options.version,
			mode: backlog.mode,
			stats: () => backlog.stats({ actor: 'hub:metrics' }),
			countsByProject: () => backlog.countsByProject(),
			countsByLabel: () => backlog.countsByLabel(),
			seatsInUse: () => backlog.dispatch.seatsInUse(),
			storeHealth: () => this.guard.health,
			onScrapeError: e => log.warn(`/metrics could not read the store: ${errorText(e)}`),
		});
		// This hub's own commits, each once (on PostgreSQL the pump also sees other hubs' events).
		this.stopCounting = backlog.onCommitted(events => this.metrics.countEvents(events));
		// A claim that ends here (expiry, reclaim, an agent's death) has its worktree snapshotted at once.
		this.wip = new WipKeeper({ backlog });
		this.stopKeeping = backlog.onCommitted(events => this.wip.noticeEvents(events));
		this.waitingClaims = new WaitingClaims(
			backlog,
			stopping,
			(seconds, gotCard) => this.metrics.observeClaim(seconds, gotCard),
			clock,
		);
		this.connections = new Connections({
			backlog,
			guard: this.guard,
			beforeRelease: agentId => this.wip.beforeAgentEnds(agentId),
			token: options.token,
			thresholds: options.thresholds,
			webviewDir: options.webviewDir,
			seq: () => this.pump.seq,
			stopping,
			onRequest: (conn, frame, bytes) => this.requests.handle(conn, frame, bytes),
			toError: (e, method) => this.requests.toBatonError(e, method),
			onCountChanged: () => this.housekeeping.clientsChanged(),
			onHello: conn => this.inbox.onHello(conn),
			serveMetrics: (req, res) => {
				const route = { port: () => this.connections.port, token: options.token, scrapeToken: options.metricsToken };
				handleMetrics(req, res, { ...route, metrics: this.metrics }).catch((e: unknown) => {
					log.error('/metrics failed', e);
					if (!res.headersSent) {
						res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
					}
					res.end();
				});
			},
		});
		// The landing queue's notice, to the faces that show the backlog; on PostgreSQL other hubs land too.
		const showsBacklog = (conn: Connection): boolean => conn.client !== 'mcp';
		this.landingNotice = new LandingNotice({
			backlog,
			stopping,
			broadcast: frame => this.connections.broadcast(frame, showsBacklog),
			hasWatchers: () => [...this.connections].some(conn => conn.hello !== undefined && showsBacklog(conn)),
			...(backlog.mode === 'postgres' ? { pollMs: 2_000 } : {}),
		});
		this.inbox = new InboxPush({ backlog, connectionsOf: agent => this.connections.agents.connectionsOf(agent) });
		const workspaceGc = new WorkspaceGc(backlog);
		const workspaces = new ClaimWorkspaces(backlog, undefined, options.paths.dataDir);
		this.checks = new HubChecks({ backlog, settingsOf: project => workspaces.settingsOf(project) });
		this.requests = new Requests({
			seats: this.connections.seats,
			handlers: createHandlers({
				backlog,
				guard: this.guard,
				reaper: this.reaper,
				backups,
				connections: this.connections,
				subscriptions: this.subscriptions,
				waitingClaims: this.waitingClaims,
				wip: this.wip,
				landing: new Landing(backlog, undefined, () => this.landingNotice.changed()),
				workspaceGc,
				workspaces,
				checks: this.checks,
				seq: () => this.pump.seq,
				status: () => this.status(),
				stop,
				hooksChanged: () => this.webhooks.changed(),
			}),
			guard: this.guard,
			mode: backlog.mode,
			onFatal: reason => this.failStore(reason),
			// Measured here, not in the MCP sessions: the hub's share of an agent's tool call, by method.
			onServed: (conn, method, seconds) => {
				if (conn.client === 'mcp') {
					this.metrics.observeMcpCall(method, seconds);
				}
			},
		});
		this.housekeeping = new Housekeeping({
			backlog,
			gcWorkspaces: () => workspaceGc.maintain(),
			backups,
			guard: this.guard,
			idleMs: options.idleMs,
			backupIntervalMs: options.backupIntervalMs,
			maintenanceEveryWrites: options.maintenanceEveryWrites,
			clients: () => this.connections.size,
			stopping,
			stop,
		});
	}

	/** Listens on hub.sock and 127.0.0.1:0, writes hub.json. The caller removed any stale hub.sock. */
	async start(): Promise<void> {
		await this.pump.start();
		if (this.options.databaseUrl !== undefined) {
			const relay = new NotifyRelay(this.options.databaseUrl, () => this.pump.kick(), {
				clock: this.options.clock ?? systemClock,
			});
			this.relay = relay;
			await relay.start();
			// The backlog does not NOTIFY inside its transactions (that serialises commits): we announce
			// this hub's commits to the other hubs after they are committed.
			this.stopAnnouncing = this.options.backlog.onCommitted(events => {
				const last = events[events.length - 1];
				if (last !== undefined) {
					relay.announce(last.seq);
				}
			});
			// Commits that landed between lastSeq() and LISTEN are read now.
			this.pump.kick();
		}
		// Before any agent connects and the reaper runs: the cards that hold a worktree on this machine.
		await this.wip.seed().catch((e: unknown) => log.error(`reading the cards' worktrees failed: ${errorText(e)}`));
		// Before any agent connects: rows a dead hub left connected leave the agents list.
		await this.options.backlog.endAbandonedAgents(this.options.backlog.mode === 'pglite');
		// After the pump started and before any agent can connect (InboxPush.start says why).
		await this.inbox.start();
		// Landings the last hub left between moving a base and writing their record are finished, and its
		// places in the landing queue given up, before anyone can approve.
		await finishInterruptedLandings(this.options.backlog).catch((e: unknown) =>
			log.error(`finishing interrupted landings failed: ${errorText(e)}`),
		);
		await this.connections.listen(this.options.paths.socket);
		this.reaper.rearm();
		this.housekeeping.start();
		this.landingNotice.start();
		// Checks that were running when the last hub stopped run again (in the background).
		void this.checks
			.resume()
			.catch((e: unknown) => log.error(`rerunning the checks under way failed: ${errorText(e)}`));
		// Last: delivery runs in the background and never holds up the start.
		void this.webhooks.start().catch((e: unknown) => log.error(`starting the webhooks failed: ${errorText(e)}`));
	}

	get tcpPort(): number {
		return this.connections.port;
	}

	/** Graceful stop: close clients, stop timers, close the store cleanly. Idempotent. */
	stop(reason: string): Promise<void> {
		this.stopping ??= this.shutdown(reason);
		return this.stopping;
	}

	private onEvents(events: BacklogEvent[]): void {
		this.subscriptions.deliver(this.connections, events);
		this.waitingClaims.onEvents(events);
		this.inbox.onEvents(events);
		// On PostgreSQL also other hubs' events: a claim of this machine's worktree that another hub ended.
		this.wip.noticeEvents(events);
		// Every lease handed out (here or, on PostgreSQL, by another hub) arrives as an event's card.
		for (const event of events) {
			this.reaper.consider(event.data.card?.leaseExpiresAt);
			this.reaper.consider(this.options.backlog.stallDueAt(event.data.card));
		}
		this.housekeeping.onEvents(events.length);
		this.webhooks.onEvents();
	}

	private onStoreHealth(health: StoreHealth): void {
		const line = `store ${health.state}${health.message === undefined ? '' : `: ${health.message}`}`;
		if (health.state === 'ok') {
			log.info(line);
		} else {
			log.warn(line);
		}
		this.connections.broadcast({ notice: 'store', store: health });
	}

	/**
	 * The store failed beyond what this process can recover (a wedged hub would answer nobody): tell every
	 * client, answer every request in flight with `unavailable` and the reason, and stop without
	 * touching the store again. The next client starts a fresh hub, which recovers from the WAL.
	 */
	private failStore(reason: string): void {
		if (this.failure !== undefined) {
			return;
		}
		this.failure = reason;
		log.error(`the store failed: ${reason}; stopping`);
		this.guard.failed(reason);
		this.requests.failAll(new BatonError('unavailable', this.guard.health.message ?? reason));
		setImmediate(() => void this.stop(`the store failed: ${reason}`));
	}

	private status(): Result<'hub/status'> {
		const notices = [...this.options.backlog.notices, ...(this.options.notices ?? [])];
		return {
			pid: process.pid,
			protocol: protocolVersion,
			version: this.options.version,
			mode: this.options.backlog.mode,
			dataDir: this.options.paths.dataDir,
			startedAt: this.startedAt.toISOString(),
			clients: this.connections.size,
			port: this.connections.port,
			thresholds: this.options.thresholds,
			lastSeq: this.pump.seq,
			...(notices.length > 0 ? { notices } : {}),
			store: this.guard.health,
			metrics: {
				url: this.connections.port === 0 ? null : `http://127.0.0.1:${this.connections.port}/metrics`,
				tokenFile: this.options.paths.metricsToken,
			},
		};
	}

	private async shutdown(reason: string): Promise<void> {
		log.info(`stopping (${reason})`);
		this.housekeeping.stop();
		this.reaper.stop();
		this.guard.stop();
		this.landingNotice.stop();
		this.waitingClaims.wakeAll();
		await this.connections.close();
		// A failed store is not touched again: the leases then run out by themselves.
		await this.webhooks.stop(this.failure === undefined);
		// Snapshots under way finish (their notes need the store); nothing new starts once the pump stops.
		await this.wip.idle();
		// Checks under way are killed, not recorded: the next hub's start runs them again.
		await this.checks.stop();
		this.pump.stop();
		this.stopCounting();
		this.stopKeeping();
		this.stopAnnouncing?.();
		await this.relay?.close();
		if (this.failure !== undefined) {
			// A failed store is not closed: PGlite may be stuck or poisoned, and the WAL has every commit.
			this.stoppedResolve?.();
			return;
		}
		try {
			// A store that never finishes closing must not keep the data dir owned forever.
			await Promise.race([
				this.options.backlog.close(),
				new Promise((_, reject) => setTimeout(() => reject(new Error('timed out after 30 s')), 30_000).unref()),
			]);
		} catch (e) {
			log.error(`closing the store failed: ${errorText(e)}`);
		}
		this.stoppedResolve?.();
	}
}
