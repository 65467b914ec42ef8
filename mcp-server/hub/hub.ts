/**
 * The hub server (DESIGN §1, §4, §7): serves the protocol as websocket frames on hub.sock and on
 * 127.0.0.1:<port>, validates every frame with the protocol's schemas, dispatches to the Backlog,
 * pushes events (replay then live, no gap, no duplicate), wakes waiting claims, runs the reaper,
 * tracks connected agents, backups and maintenance, and exits cleanly when idle or told to.
 * It owns the data dir already (run.ts won the election before constructing it).
 */
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import type { Backlog, OpContext } from '../../core/backlog';
import { BatonError, describeIssues } from '../../core/errors';
import { frameBytes, tooLargeAnswer } from '../../core/frameSize';
import type { HubPaths } from '../../core/paths';
import {
	type BacklogEvent,
	type ClientKind,
	type EventType,
	type HealthThresholds,
	Hello,
	type HelloOk,
	type Method,
	type ParsedParams,
	RequestFrame,
	type Result,
	type StoreHealth,
	isMethod,
	limits,
	methods,
	mutatingMethods,
	protocolVersion,
} from '../../core/protocol';
import { BoardSessions, bearerToken, hostAllowed, originAllowed, tokenMatches } from './auth';
import { Backups } from './backups';
import { handleHttp } from './boardRoute';
import { EventPump } from './eventPump';
import { NotifyRelay } from './notifyRelay';
import { Reaper } from './reaper';
import { StoreGuard, fatalReason } from './storeGuard';

export interface HubOptions {
	paths: HubPaths;
	backlog: Backlog;
	token: string;
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
	/** Write maintenance after this many events (DESIGN: every ~5,000 writes). */
	maintenanceEveryWrites?: number;
	/** Sentences from start-up for hub/status, besides the store's own (Backlog.notices). */
	notices?: readonly string[];
	/** PGlite mode: the store's directory, whose filesystem's free space gates writes. */
	pgliteDir?: string;
}

interface Subscription {
	/** Highest seq sent to this connection. */
	sent: number;
	/** False while the replay from the log runs; live events are then skipped (the replay covers them). */
	live: boolean;
}

interface Connection {
	readonly id: number;
	readonly ws: WebSocket;
	readonly via: 'unix' | 'tcp';
	/** TCP upgrades are authenticated by header or board cookie before any frame. */
	readonly preAuthenticated: boolean;
	hello: Hello | undefined;
	actor: string;
	agentId: string | undefined;
	client: ClientKind | undefined;
	subscription: Subscription | undefined;
	closed: boolean;
	helloTimer: NodeJS.Timeout | undefined;
}

/** Events that can make a card claimable; a waiting claim retries on them. */
const wakingEvents: ReadonlySet<EventType> = new Set<EventType>([
	'created',
	'updated',
	'released',
	'failed',
	'reclaimed',
	'completed',
	'unblocked',
	'reopened',
	'unlinked',
	'deleted',
]);

const replayPage = 500;
const helloTimeoutMs = 10_000;
const agentsNoticeMinMs = 250;
const idleMaintenanceMs = 60_000;

export class Hub {
	private readonly wss: WebSocketServer;
	private readonly unixServer: Server;
	private readonly tcpServer: Server;
	private readonly connections = new Set<Connection>();
	private readonly agentConnections = new Map<string, Set<Connection>>();
	private readonly sessions = new BoardSessions();
	private readonly pump: EventPump;
	private readonly reaper: Reaper;
	private readonly backups: Backups;
	private relay: NotifyRelay | undefined;
	private stopAnnouncing: (() => void) | undefined;
	private nextConnectionId = 1;
	private port = 0;
	private readonly startedAt = new Date();
	private stopping: Promise<void> | undefined;
	private stoppedResolve: (() => void) | undefined;
	readonly stopped: Promise<void>;
	private idleTimer: NodeJS.Timeout | undefined;
	private backupTimer: NodeJS.Timeout | undefined;
	private idleMaintenanceTimer: NodeJS.Timeout | undefined;
	private writesSinceMaintenance = 0;
	private writesSinceBackup = 0;
	private maintaining = false;
	/** Bumped on each waking event; a claim that saw no card re-checks it before waiting. */
	private wakeGeneration = 0;
	private readonly wakeListeners = new Set<() => void>();
	private agentsNoticeTimer: NodeJS.Timeout | undefined;
	private lastAgentsNotice = 0;
	private readonly guard: StoreGuard;
	/** Requests dispatched and not answered yet: a store failure answers them all. */
	private readonly inFlight = new Set<{ conn: Connection; id: number }>();
	/** Why the store failed, when it did: the hub stops without closing it, and run.ts exits 1. */
	failure: string | undefined;
	/** PostgreSQL unreachable or disk full: when a refusal was last logged, and how many since were not. */
	private downLoggedAt = 0;
	private downUnlogged = 0;

	constructor(private readonly options: HubOptions) {
		this.stopped = new Promise(resolve => {
			this.stoppedResolve = resolve;
		});
		this.wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxPayload, perMessageDeflate: false });
		this.wss.on('error', e => console.error(`baton hub: websocket server error: ${e.message}`));
		this.unixServer = createServer((_req, res) => {
			res.writeHead(404).end();
		});
		this.tcpServer = createServer((req, res) => {
			handleHttp(req, res, { port: () => this.port, sessions: this.sessions, webviewDir: options.webviewDir });
		});
		for (const server of [this.unixServer, this.tcpServer]) {
			server.on('clientError', (_e, socket) => {
				socket.destroy();
			});
			server.on('error', e => console.error(`baton hub: server error: ${e.message}`));
		}
		this.unixServer.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
			socket.on('error', () => undefined);
			this.wss.handleUpgrade(req, socket, head, ws => this.accept(ws, 'unix', false));
		});
		this.tcpServer.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
			socket.on('error', () => undefined);
			this.upgradeTcp(req, socket, head);
		});
		this.pump = new EventPump(options.backlog, events => this.onEvents(events), {
			holeWaitMs: options.backlog.mode === 'postgres' ? 1_000 : 100,
		});
		this.guard = new StoreGuard({
			pgliteDir: options.pgliteDir,
			databaseUrl: options.databaseUrl,
			probe: () => options.backlog.lastSeq(),
			onChange: health => this.onStoreHealth(health),
		});
		this.reaper = new Reaper(options.backlog, undefined, () => this.guard.smallWritesOk);
		this.backups = new Backups(options.paths.backups, () => options.backlog.dump());
	}

	/** Listens on hub.sock and 127.0.0.1:0, writes hub.json. The caller removed any stale hub.sock. */
	async start(): Promise<void> {
		await this.pump.start();
		if (this.options.databaseUrl !== undefined) {
			const relay = new NotifyRelay(this.options.databaseUrl, () => this.pump.kick());
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
		await listen(this.unixServer, this.options.paths.socket);
		await listen(this.tcpServer, 0, '127.0.0.1');
		this.port = (this.tcpServer.address() as AddressInfo).port;
		this.reaper.rearm();
		this.runMaintenance();
		if (this.options.backupIntervalMs > 0) {
			this.backupTimer = setInterval(() => void this.periodicBackup(), this.options.backupIntervalMs);
		}
		this.armIdle();
	}

	get tcpPort(): number {
		return this.port;
	}

	/** Graceful stop: close clients, stop timers, close the store cleanly. Idempotent. */
	stop(reason: string): Promise<void> {
		this.stopping ??= this.shutdown(reason);
		return this.stopping;
	}

	// ---------------------------------------------------------------------------------------------
	// Connections

	private upgradeTcp(req: IncomingMessage, socket: Socket, head: Buffer): void {
		const url = new URL(req.url ?? '/', 'http://127.0.0.1');
		// Host and Origin first: a valid token must not help a rebinding or cross-site page (403).
		if (!hostAllowed(req, this.port) || !originAllowed(req, this.port)) {
			rejectUpgrade(socket, 403, 'Forbidden');
			return;
		}
		if (url.pathname !== '/ws' && url.pathname !== '/') {
			rejectUpgrade(socket, 404, 'Not Found');
			return;
		}
		const byToken = tokenMatches(bearerToken(req), this.options.token);
		if (!byToken && !this.sessions.validCookie(req)) {
			rejectUpgrade(socket, 401, 'Unauthorized');
			return;
		}
		this.wss.handleUpgrade(req, socket, head, ws => this.accept(ws, 'tcp', true));
	}

	private accept(ws: WebSocket, via: 'unix' | 'tcp', preAuthenticated: boolean): void {
		if (this.stopping) {
			ws.close(1001, 'hub stopping');
			return;
		}
		const conn: Connection = {
			id: this.nextConnectionId++,
			ws,
			via,
			preAuthenticated,
			hello: undefined,
			actor: '',
			agentId: undefined,
			client: undefined,
			subscription: undefined,
			closed: false,
			helloTimer: undefined,
		};
		this.connections.add(conn);
		this.disarmIdle();
		conn.helloTimer = setTimeout(() => {
			if (!conn.hello) {
				ws.close(1008, 'no hello');
			}
		}, helloTimeoutMs);
		// Without an error handler one oversized frame would crash the hub (RELIABILITY 23); ws
		// itself closes such a connection with 1009.
		ws.on('error', e => {
			console.error(`baton hub: connection ${conn.id}: ${e.message}`);
		});
		ws.on('message', (data, isBinary) => {
			if (isBinary) {
				this.sendError(conn, 0, new BatonError('invalid_input', 'Frames must be JSON text, not binary.'));
				return;
			}
			this.onFrame(conn, rawToString(data));
		});
		ws.on('close', () => this.onClose(conn));
	}

	private onFrame(conn: Connection, raw: string): void {
		let json: unknown;
		try {
			json = JSON.parse(raw);
		} catch {
			if (!conn.hello) {
				this.refuseHello(conn, new BatonError('invalid_input', 'The first frame must be a JSON hello.'));
				return;
			}
			this.sendError(conn, 0, new BatonError('invalid_input', 'The frame is not valid JSON.'));
			return;
		}
		if (!conn.hello) {
			void this.onHello(conn, json);
			return;
		}
		const frame = RequestFrame.safeParse(json);
		if (!frame.success) {
			const id =
				typeof json === 'object' && json !== null && 'id' in json && Number.isInteger(json.id) ? Number(json.id) : 0;
			this.sendError(
				conn,
				id,
				new BatonError('invalid_input', `Malformed request: ${describeIssues(frame.error.issues)}`, {
					issues: frame.error.issues.map(i => ({ path: i.path.map(String), message: i.message })),
				}),
			);
			return;
		}
		void this.onRequest(conn, frame.data, raw.length);
	}

	private async onHello(conn: Connection, json: unknown): Promise<void> {
		const parsed = Hello.safeParse(json);
		if (!parsed.success) {
			this.refuseHello(conn, new BatonError('invalid_input', `Bad hello: ${describeIssues(parsed.error.issues)}`));
			return;
		}
		const hello = parsed.data;
		if (hello.protocol !== protocolVersion) {
			this.refuseHello(
				conn,
				new BatonError(
					'protocol_mismatch',
					`This Baton hub (pid ${process.pid}) speaks protocol ${protocolVersion} but the client speaks ${hello.protocol}. Stop the hub ("baton hub stop") or use the same Baton version.`,
					{ hubProtocol: protocolVersion, clientProtocol: hello.protocol },
				),
			);
			return;
		}
		const tokenOk = tokenMatches(hello.token, this.options.token);
		if (!tokenOk && !(conn.preAuthenticated && hello.token === undefined)) {
			this.refuseHello(conn, new BatonError('unauthorized', 'Wrong or missing Baton hub token.'));
			return;
		}
		// Reserve the hello at once: frames arriving while we register the agent are requests.
		conn.hello = hello;
		conn.client = hello.client;
		clearTimeout(conn.helloTimer);
		conn.actor = hello.agent?.id ?? `${hello.client}:${conn.id}`;
		// A full disk must not lock readers out: the registration (a small write) waits for space.
		if (hello.agent && this.guard.smallWritesOk) {
			try {
				await this.options.backlog.registerAgent(hello.agent);
			} catch (e) {
				this.refuseHello(conn, this.toBatonError(e, 'hello'));
				return;
			}
		}
		if (hello.agent) {
			conn.agentId = hello.agent.id;
			let set = this.agentConnections.get(hello.agent.id);
			if (!set) {
				set = new Set();
				this.agentConnections.set(hello.agent.id, set);
			}
			set.add(conn);
		}
		if (conn.closed) {
			// Closed while the agent was being registered: onClose ran before agentId was set.
			this.detachAgent(conn);
			return;
		}
		const ok: HelloOk = {
			hello: 'ok',
			protocol: protocolVersion,
			hubPid: process.pid,
			seq: this.pump.seq,
			actor: conn.actor,
			thresholds: this.options.thresholds,
			store: this.guard.health,
		};
		this.send(conn, ok);
		if (hello.agent) {
			this.scheduleAgentsNotice();
		}
	}

	private refuseHello(conn: Connection, error: BatonError): void {
		this.send(conn, { hello: 'error', error: error.toBody() });
		conn.ws.close(error.code === 'unauthorized' ? 1008 : 1002, error.code);
	}

	private onClose(conn: Connection): void {
		if (!this.connections.delete(conn)) {
			return;
		}
		conn.closed = true;
		clearTimeout(conn.helloTimer);
		this.detachAgent(conn);
		this.armIdle();
	}

	/** Forgets a closed connection's agent; the last connection of an MCP agent releases its claims. */
	private detachAgent(conn: Connection): void {
		const agentId = conn.agentId;
		if (agentId === undefined) {
			return;
		}
		conn.agentId = undefined;
		const set = this.agentConnections.get(agentId);
		set?.delete(conn);
		if (set?.size === 0) {
			this.agentConnections.delete(agentId);
			// DESIGN §5: an MCP session that ends releases its claims at once, not after the TTL.
			if (conn.client === 'mcp' && !this.stopping && this.guard.smallWritesOk) {
				this.options.backlog
					.releaseAgent({ actor: agentId }, agentId, 'agent disconnected')
					.catch((e: unknown) => console.error(`baton hub: releasing ${agentId}'s claims failed: ${errorText(e)}`));
			}
		}
		this.scheduleAgentsNotice();
	}

	// ---------------------------------------------------------------------------------------------
	// Requests

	private async onRequest(conn: Connection, frame: RequestFrame, requestBytes: number): Promise<void> {
		const { id, method } = frame;
		if (!isMethod(method)) {
			this.sendError(conn, id, new BatonError('invalid_input', `Unknown method "${method}".`));
			return;
		}
		const parsed = methods[method].params.safeParse(frame.params ?? {});
		if (!parsed.success) {
			this.sendError(
				conn,
				id,
				new BatonError('invalid_input', `Invalid ${method} params: ${describeIssues(parsed.error.issues)}`, {
					issues: parsed.error.issues.map(i => ({ path: i.path.map(String), message: i.message })),
				}),
			);
			return;
		}
		const ctx: OpContext =
			frame.key === undefined ? { actor: conn.actor } : { actor: conn.actor, requestKey: frame.key };
		const entry = { conn, id };
		this.inFlight.add(entry);
		try {
			if (mutatingMethods.has(method) || method === 'hub/backup') {
				this.guard.beforeWrite(requestBytes);
			}
			const result = await this.dispatch(conn, method, parsed.data, ctx);
			this.guard.succeeded();
			if (!this.inFlight.delete(entry)) {
				return; // already answered: the store failed while this ran
			}
			const answer = JSON.stringify({ id, result });
			const bytes = frameBytes(answer, limits.maxResponse);
			if (bytes > limits.maxResponse) {
				console.error(`baton hub: answer to ${method} from ${conn.actor} not sent: ${bytes} bytes`);
				this.sendError(conn, id, tooLargeAnswer(method, bytes));
			} else if (conn.ws.readyState === WebSocket.OPEN) {
				conn.ws.send(answer);
			}
			// A renewal without progress logs no event, yet may shorten the lease (a smaller ttl).
			if (method === 'card/heartbeat') {
				this.reaper.consider((result as Result<'card/heartbeat'>).lease.expiresAt);
			}
		} catch (e) {
			const error = this.toBatonError(e, method);
			if (this.inFlight.delete(entry)) {
				this.sendError(conn, id, error);
			}
		}
	}

	private async dispatch(conn: Connection, method: Method, params: unknown, ctx: OpContext): Promise<unknown> {
		const b = this.options.backlog;
		const p = <M extends Method>(_m: M): ParsedParams<M> => params as ParsedParams<M>;
		switch (method) {
			case 'card/create':
				return b.create(ctx, p('card/create'));
			case 'card/update':
				return b.update(ctx, p('card/update'));
			case 'card/get':
				return b.get(ctx, p('card/get'));
			case 'card/list':
				return b.list(ctx, p('card/list'));
			case 'card/stats':
				return b.stats(ctx, p('card/stats'));
			case 'card/claim':
				return this.claim(conn, ctx, p('card/claim'));
			case 'card/heartbeat':
				return b.heartbeat(ctx, p('card/heartbeat'));
			case 'card/complete':
				return b.complete(ctx, p('card/complete'));
			case 'card/release':
				return b.release(ctx, p('card/release'));
			case 'card/fail':
				return b.fail(ctx, p('card/fail'));
			case 'card/reclaim':
				return b.reclaim(ctx, p('card/reclaim'));
			case 'card/block':
				return b.block(ctx, p('card/block'));
			case 'card/unblock':
				return b.unblock(ctx, p('card/unblock'));
			case 'card/reopen':
				return b.reopen(ctx, p('card/reopen'));
			case 'card/link':
				return b.link(ctx, p('card/link'));
			case 'card/unlink':
				return b.unlink(ctx, p('card/unlink'));
			case 'card/delete':
				return b.delete(ctx, p('card/delete'));
			case 'agent/list':
				return b.listAgents(new Set(this.agentConnections.keys()));
			case 'agent/ping': {
				this.guard.beforeSmallWrite();
				const result = await b.ping(ctx);
				this.scheduleAgentsNotice();
				return result;
			}
			case 'agent/reclaim':
				return b.reclaimAgent(ctx, p('agent/reclaim'));
			case 'events/list':
				return b.listEvents(p('events/list'));
			case 'events/subscribe':
				return this.subscribe(conn, p('events/subscribe').afterSeq ?? this.pump.seq);
			case 'hub/status':
				return this.status();
			case 'hub/stop':
				// Answer first, then stop: the caller learns the stop was accepted.
				setImmediate(() => void this.stop(`hub/stop from ${conn.actor}`));
				return { ok: true };
			case 'hub/backup':
				return this.backups.run();
			case 'hub/boardTicket':
				return { url: `http://127.0.0.1:${this.port}/board?ticket=${this.sessions.issueTicket()}` };
			case 'data/export':
				return b.exportCards(p('data/export'));
			case 'data/import':
				return b.importCards(ctx, p('data/import'));
			case 'settings/get':
				return b.settings();
			case 'settings/update': {
				const settings = await b.updateSettings(ctx, p('settings/update'));
				this.reaper.rearm(); // the stall policy may now be due sooner (or never)
				return settings;
			}
		}
	}

	/**
	 * card/claim with waitSeconds: retry when an event could have made a card claimable, or when the
	 * next deferred card comes due, up to the deadline. Woken by events, never by polling.
	 */
	private async claim(
		conn: Connection,
		ctx: OpContext,
		params: ParsedParams<'card/claim'>,
	): Promise<Result<'card/claim'>> {
		const deadline = Date.now() + (params.waitSeconds ?? 0) * 1000;
		for (;;) {
			const generation = this.wakeGeneration;
			// Only the final answer says why nothing is claimable: the explanation counts the whole table.
			const final = Date.now() >= deadline;
			// Every try uses the request's own key: the backlog does not remember "nothing claimable", so a
			// retry claims afresh, and a re-send after a failover replays the card a try already took.
			const result = await this.options.backlog.claim(ctx, params, { explain: final });
			if (result.card !== null || final || conn.closed || this.stopping) {
				return result;
			}
			if (Date.now() >= deadline) {
				continue; // the wait ran out during this try: one more, which explains
			}
			if (generation !== this.wakeGeneration) {
				continue;
			}
			const deferredAt = await this.options.backlog.nextDeferredAt();
			if (generation !== this.wakeGeneration) {
				continue;
			}
			await this.waitForWake(deadline, deferredAt);
		}
	}

	private waitForWake(deadline: number, deferredAt: Date | null): Promise<void> {
		return new Promise(resolve => {
			const until = deferredAt === null ? deadline : Math.min(deadline, deferredAt.getTime() + 5);
			const done = (): void => {
				clearTimeout(timer);
				this.wakeListeners.delete(done);
				resolve();
			};
			const timer = setTimeout(done, Math.max(0, until - Date.now()));
			this.wakeListeners.add(done);
		});
	}

	/** Replays the log after `afterSeq` in pages, then switches the connection to live pushes. */
	private async subscribe(conn: Connection, afterSeq: number): Promise<Result<'events/subscribe'>> {
		const sub: Subscription = { sent: afterSeq, live: false };
		conn.subscription = sub;
		for (;;) {
			const target = this.pump.seq;
			if (sub.sent >= target) {
				break;
			}
			const page = await this.options.backlog.eventsAfter(sub.sent, replayPage);
			if (conn.subscription !== sub || conn.closed) {
				return { seq: sub.sent };
			}
			let progressed = false;
			for (const event of page) {
				if (event.seq > sub.sent && event.seq <= this.pump.seq) {
					this.sendEvent(conn, event);
					sub.sent = event.seq;
					progressed = true;
				}
			}
			if (!progressed || page.length < replayPage) {
				// Nothing more in the log up to what the pump has delivered (holes are rolled-back seqs).
				if (sub.sent < target) {
					sub.sent = Math.max(sub.sent, Math.min(target, this.pump.seq));
				}
			}
		}
		// Synchronous from the last check to here: no pump delivery can slip between replay and live.
		sub.live = true;
		return { seq: sub.sent };
	}

	private noticesField(): { notices?: string[] } {
		const notices = [...this.options.backlog.notices, ...(this.options.notices ?? [])];
		return notices.length > 0 ? { notices } : {};
	}

	private status(): Result<'hub/status'> {
		return {
			pid: process.pid,
			protocol: protocolVersion,
			version: this.options.version,
			mode: this.options.backlog.mode,
			dataDir: this.options.paths.dataDir,
			startedAt: this.startedAt.toISOString(),
			clients: this.connections.size,
			port: this.port,
			thresholds: this.options.thresholds,
			lastSeq: this.pump.seq,
			...this.noticesField(),
			store: this.guard.health,
		};
	}

	private toBatonError(e: unknown, method: string): BatonError {
		if (BatonError.is(e)) {
			return e;
		}
		const fatal = fatalReason(e, this.options.backlog.mode);
		if (fatal !== undefined) {
			this.failStore(fatal);
			return new BatonError('unavailable', this.guard.health.message ?? `The Baton store failed (${fatal}).`);
		}
		const known = this.guard.classify(e);
		if (known !== undefined) {
			// Every request meets an outage while it lasts: one line per 10 s, with how many it stands for.
			const now = Date.now();
			if (now - this.downLoggedAt >= 10_000) {
				const more = this.downUnlogged > 0 ? ` (and ${this.downUnlogged} more requests refused)` : '';
				console.error(`baton hub: ${method}: ${known.message}${more}`);
				this.downLoggedAt = now;
				this.downUnlogged = 0;
			} else {
				this.downUnlogged++;
			}
			return known;
		}
		// Never leak SQL, paths or stacks to clients; the stack goes to the hub's stderr.
		const ref = randomUUID().slice(0, 8);
		console.error(`baton hub: internal error ${ref} in ${method}:`, e);
		return new BatonError(
			'internal',
			`The Baton hub hit an internal error handling ${method} (ref ${ref}); see the hub log.`,
		);
	}

	// ---------------------------------------------------------------------------------------------
	// Events, agents

	private onEvents(events: BacklogEvent[]): void {
		for (const conn of this.connections) {
			const sub = conn.subscription;
			if (!sub?.live) {
				continue;
			}
			for (const event of events) {
				if (event.seq > sub.sent) {
					this.sendEvent(conn, event);
					sub.sent = event.seq;
				}
			}
		}
		if (events.some(e => wakingEvents.has(e.type))) {
			this.wakeGeneration++;
			for (const wake of [...this.wakeListeners]) {
				wake();
			}
		}
		// Every lease handed out (here or, on PostgreSQL, by another hub) arrives as an event's card.
		for (const event of events) {
			this.reaper.consider(event.data.card?.leaseExpiresAt);
			this.reaper.consider(this.options.backlog.stallDueAt(event.data.card));
		}
		this.writesSinceBackup += events.length;
		this.writesSinceMaintenance += events.length;
		if (this.writesSinceMaintenance >= (this.options.maintenanceEveryWrites ?? 5_000)) {
			this.runMaintenance();
		}
		clearTimeout(this.idleMaintenanceTimer);
		this.idleMaintenanceTimer = setTimeout(() => this.runMaintenance(), idleMaintenanceMs);
		this.idleMaintenanceTimer.unref();
	}

	private onStoreHealth(health: StoreHealth): void {
		console.error(`baton hub: store ${health.state}${health.message === undefined ? '' : `: ${health.message}`}`);
		for (const conn of this.connections) {
			if (conn.hello) {
				this.send(conn, { notice: 'store', store: health });
			}
		}
	}

	/**
	 * The store failed beyond what this process can recover (issue 16: no wedged hub): tell every
	 * client, answer every request in flight with `unavailable` and the reason, and stop without
	 * touching the store again. The next client starts a fresh hub, which recovers from the WAL.
	 */
	private failStore(reason: string): void {
		if (this.failure !== undefined) {
			return;
		}
		this.failure = reason;
		console.error(`baton hub: the store failed: ${reason}; stopping`);
		this.guard.failed(reason);
		const error = new BatonError('unavailable', this.guard.health.message ?? reason);
		for (const entry of this.inFlight) {
			this.sendError(entry.conn, entry.id, error);
		}
		this.inFlight.clear();
		setImmediate(() => void this.stop(`the store failed: ${reason}`));
	}

	private scheduleAgentsNotice(): void {
		if (this.agentsNoticeTimer !== undefined || this.stopping) {
			return;
		}
		// At most 4 notices a second however many agents ping.
		const wait = Math.max(0, this.lastAgentsNotice + agentsNoticeMinMs - Date.now());
		this.agentsNoticeTimer = setTimeout(() => {
			this.agentsNoticeTimer = undefined;
			this.lastAgentsNotice = Date.now();
			this.options.backlog.listAgents(new Set(this.agentConnections.keys())).then(
				({ agents }) => {
					for (const conn of this.connections) {
						if (conn.hello) {
							this.send(conn, { notice: 'agents', agents });
						}
					}
				},
				(e: unknown) => console.error(`baton hub: listing agents failed: ${errorText(e)}`),
			);
		}, wait);
	}

	private sendEvent(conn: Connection, event: BacklogEvent): void {
		this.send(conn, { event: event.type, seq: event.seq, data: event });
	}

	private sendError(conn: Connection, id: number, error: BatonError): void {
		this.send(conn, { id, error: error.toBody() });
	}

	private send(conn: Connection, frame: object): void {
		if (conn.ws.readyState === WebSocket.OPEN) {
			conn.ws.send(JSON.stringify(frame));
		}
	}

	// ---------------------------------------------------------------------------------------------
	// Housekeeping

	private runMaintenance(): void {
		if (this.maintaining || this.stopping || !this.guard.smallWritesOk) {
			return;
		}
		this.maintaining = true;
		this.writesSinceMaintenance = 0;
		this.options.backlog
			.maintenance()
			.catch((e: unknown) => console.error(`baton hub: maintenance failed: ${errorText(e)}`))
			.finally(() => {
				this.maintaining = false;
			});
	}

	private async periodicBackup(): Promise<void> {
		if (this.writesSinceBackup === 0 && this.backups.list().length > 0) {
			return;
		}
		try {
			this.guard.beforeWrite(0);
		} catch {
			console.error('baton hub: backup skipped: the disk is full');
			return;
		}
		this.writesSinceBackup = 0;
		try {
			const info = await this.backups.run();
			console.error(`baton hub: backup ${info.path} (${info.cards} cards, ${info.events} events)`);
		} catch (e) {
			console.error(`baton hub: backup failed: ${errorText(e)}`);
		}
	}

	private armIdle(): void {
		if (this.connections.size > 0 || this.stopping || this.idleTimer !== undefined) {
			return;
		}
		this.idleTimer = setTimeout(() => {
			this.idleTimer = undefined;
			if (this.connections.size === 0) {
				void this.stop(`no clients for ${Math.round(this.options.idleMs / 1000)} s`);
			}
		}, this.options.idleMs);
	}

	private disarmIdle(): void {
		clearTimeout(this.idleTimer);
		this.idleTimer = undefined;
	}

	private async shutdown(reason: string): Promise<void> {
		console.error(`baton hub: stopping (${reason})`);
		this.disarmIdle();
		clearInterval(this.backupTimer);
		clearTimeout(this.idleMaintenanceTimer);
		clearTimeout(this.agentsNoticeTimer);
		this.reaper.stop();
		this.guard.stop();
		for (const wake of [...this.wakeListeners]) {
			wake();
		}
		for (const conn of this.connections) {
			conn.ws.close(1001, 'hub stopping');
		}
		const closing = [closeServer(this.unixServer), closeServer(this.tcpServer)];
		// Clients that do not finish the close handshake (stopped processes) are cut off.
		const kill = setTimeout(() => {
			for (const conn of this.connections) {
				conn.ws.terminate();
			}
		}, 1_000);
		await Promise.all(closing);
		clearTimeout(kill);
		this.pump.stop();
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
			console.error(`baton hub: closing the store failed: ${errorText(e)}`);
		}
		this.stoppedResolve?.();
	}
}

function listen(server: Server, pathOrPort: string | number, host?: string): Promise<void> {
	return new Promise((resolve, reject) => {
		server.once('error', reject);
		const done = (): void => {
			server.off('error', reject);
			resolve();
		};
		if (typeof pathOrPort === 'string') {
			server.listen(pathOrPort, done);
		} else {
			server.listen(pathOrPort, host, done);
		}
	});
}

function closeServer(server: Server): Promise<void> {
	return new Promise(resolve => {
		if (!server.listening) {
			resolve();
			return;
		}
		server.close(() => resolve());
		server.closeAllConnections();
	});
}

function rejectUpgrade(socket: Socket, status: number, text: string): void {
	socket.end(
		`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${text.length + 1}\r\n\r\n${text}\n`,
	);
}

function rawToString(data: RawData): string {
	if (Array.isArray(data)) {
		return Buffer.concat(data).toString('utf8');
	}
	if (data instanceof ArrayBuffer) {
		return Buffer.from(data).toString('utf8');
	}
	return data.toString('utf8');
}

function errorText(e: unknown): string {
	return e instanceof Error ? e.message : String(e);
}
