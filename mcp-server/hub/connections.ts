/**
 * The hub's connections: the two listeners (hub.sock and 127.0.0.1:<port>), the TCP
 * upgrade's checks (Host, Origin, then token or board cookie), each websocket's hello (protocol,
 * token, agent registration), its frames up to a well-formed request, and its close; which agents
 * are connected is agentPresence.ts's. It never runs a request (requests.ts does) and never pushes
 * events (subscriptions.ts does).
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Backlog } from '../../core/backlog';
import { BatonError, describeIssues } from '../../core/errors';
import { createLogger } from '../../core/log';
import {
	type ClientKind,
	type HealthThresholds,
	Hello,
	type HelloOk,
	RequestFrame,
	limits,
	protocolVersion,
} from '../../core/protocol';
import { AgentPresence } from './agentPresence';
import { BoardSessions, bearerToken, hostAllowed, originAllowed, tokenMatches } from './auth';
import { handleHttp } from './boardRoute';
import { closeServer, listen, rawToString, rejectUpgrade } from './listeners';
import { ConnectionFlow } from './flow';
import { metricsPath } from './metricsRoute';
import { type SeatGrant, SeatCredentials } from './seatCredentials';
import type { StoreGuard } from './storeGuard';
import type { Subscription } from './subscriptions';

const log = createLogger('hub').child('connections');

export interface Connection {
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
	/** Its requests' slots and what is queued to it (flow.ts): every frame to it goes through `send`. */
	readonly flow: ConnectionFlow;
	/** Said hello with a seat credential: the agent of this one card (seatCredentials.ts). */
	seat?: SeatGrant | undefined;
}

export interface ConnectionsOptions {
	backlog: Backlog;
	guard: StoreGuard;
	/** Before an ended MCP session's claims are released (AgentPresenceOptions.beforeRelease). */
	beforeRelease?: (agentId: string) => Promise<void>;
	token: string;
	thresholds: HealthThresholds;
	/** Folder of the built board assets. */
	webviewDir: string;
	/** The last seq the event pump delivered (the hello's `seq`). */
	seq: () => number;
	stopping: () => boolean;
	/** A well-formed request frame from a connection that said hello; `bytes` is its length. */
	onRequest: (conn: Connection, frame: RequestFrame, bytes: number) => void;
	/** Maps a failure (here: an agent's registration) to what the client is told. */
	toError: (e: unknown, method: string) => BatonError;
	/** A connection opened or closed (the idle exit counts them). */
	onCountChanged: () => void;
	/** A connection said hello and was answered (an MCP agent's inbox is pushed then). */
	onHello: (conn: Connection) => void;
	/** Serves `GET /metrics` on the TCP listener (metricsRoute.ts); every other path is boardRoute's. */
	serveMetrics: (req: IncomingMessage, res: ServerResponse) => void;
}

const helloTimeoutMs = 10_000;

/** The agents notice is for faces that show agents; an MCP session never reads it. */
function showsAgents(conn: Connection): boolean {
	return conn.client !== 'mcp';
}

export class Connections {
	private readonly wss: WebSocketServer;
	private readonly unixServer: Server;
	private readonly tcpServer: Server;
	private readonly all = new Set<Connection>();
	private readonly sessions = new BoardSessions();
	private nextConnectionId = 1;
	private tcpPort = 0;
	/** Which agents are connected; the agents notice. */
	readonly agents: AgentPresence;
	/** The seat credentials of agents `baton run` starts. */
	readonly seats: SeatCredentials;

	constructor(private readonly options: ConnectionsOptions) {
		this.seats = new SeatCredentials(options.token, options.backlog);
		this.agents = new AgentPresence({
			backlog: options.backlog,
			guard: options.guard,
			stopping: options.stopping,
			...(options.beforeRelease === undefined ? {} : { beforeRelease: options.beforeRelease }),
			broadcast: frame => this.broadcast(frame, showsAgents),
			hasWatchers: () => {
				for (const conn of this.all) {
					if (conn.hello !== undefined && showsAgents(conn)) {
						return true;
					}
				}
				return false;
			},
		});
		this.wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxPayload, perMessageDeflate: false });
		this.wss.on('error', e => log.error(`websocket server error: ${e.message}`));
		this.unixServer = createServer((_req, res) => {
			res.writeHead(404).end();
		});
		this.tcpServer = createServer((req, res) => {
			if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname === metricsPath) {
				options.serveMetrics(req, res);
				return;
			}
			handleHttp(req, res, { port: () => this.tcpPort, sessions: this.sessions, webviewDir: options.webviewDir });
		});
		for (const server of [this.unixServer, this.tcpServer]) {
			server.on('clientError', (_e, socket) => {
				socket.destroy();
			});
			server.on('error', e => log.error(`server error: ${e.message}`));
		}
		this.unixServer.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
			socket.on('error', () => undefined);
			this.wss.handleUpgrade(req, socket, head, ws => this.accept(ws, 'unix', false));
		});
		this.tcpServer.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
			socket.on('error', () => undefined);
			this.upgradeTcp(req, socket, head);
		});
	}

	/** Listens on hub.sock (the caller removed any stale one) and on 127.0.0.1:0. */
	async listen(socketPath: string): Promise<void> {
		await listen(this.unixServer, socketPath);
		await listen(this.tcpServer, 0, '127.0.0.1');
		this.tcpPort = (this.tcpServer.address() as AddressInfo).port;
	}

	get port(): number {
		return this.tcpPort;
	}

	get size(): number {
		return this.all.size;
	}

	[Symbol.iterator](): Iterator<Connection> {
		return this.all[Symbol.iterator]();
	}

	/** A one-time link to the board for `baton board` (the token never appears in it). */
	boardTicketUrl(): string {
		return `http://127.0.0.1:${this.tcpPort}/board?ticket=${this.sessions.issueTicket()}`;
	}

	/** Sends `frame` to every connection that said hello (and passes `to`, when given). */
	broadcast(frame: object, to?: (conn: Connection) => boolean): void {
		for (const conn of this.all) {
			if (conn.hello && (to === undefined || to(conn))) {
				send(conn, frame);
			}
		}
	}

	/** Closes every connection and both listeners; clients that do not finish the close are cut off. */
	async close(): Promise<void> {
		this.agents.stop();
		for (const conn of this.all) {
			conn.ws.close(1001, 'hub stopping');
		}
		const closing = [closeServer(this.unixServer), closeServer(this.tcpServer)];
		// Clients that do not finish the close handshake (stopped processes) are cut off.
		const kill = setTimeout(() => {
			for (const conn of this.all) {
				conn.ws.terminate();
			}
		}, 1_000);
		await Promise.all(closing);
		clearTimeout(kill);
	}

	private upgradeTcp(req: IncomingMessage, socket: Socket, head: Buffer): void {
		const url = new URL(req.url ?? '/', 'http://127.0.0.1');
		// Host and Origin first: a valid token must not help a rebinding or cross-site page (403).
		if (!hostAllowed(req, this.tcpPort) || !originAllowed(req, this.tcpPort)) {
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
		if (this.options.stopping()) {
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
			flow: new ConnectionFlow(ws, () => `connection ${conn.id} (${conn.actor || via})`),
		};
		this.all.add(conn);
		this.options.onCountChanged();
		conn.helloTimer = setTimeout(() => {
			if (!conn.hello) {
				ws.close(1008, 'no hello');
			}
		}, helloTimeoutMs);
		// Without an error handler one oversized frame would crash the hub (RELIABILITY 23); ws
		// itself closes such a connection with 1009.
		ws.on('error', e => {
			log.warn(`connection ${conn.id}: ${e.message}`);
		});
		ws.on('message', (data, isBinary) => {
			if (isBinary) {
				sendError(conn, 0, new BatonError('invalid_input', 'Frames must be JSON text, not binary.'));
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
				refuseHello(conn, new BatonError('invalid_input', 'The first frame must be a JSON hello.'));
				return;
			}
			sendError(conn, 0, new BatonError('invalid_input', 'The frame is not valid JSON.'));
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
			sendError(
				conn,
				id,
				new BatonError('invalid_input', `Malformed request: ${describeIssues(frame.error.issues)}`, {
					issues: frame.error.issues.map(i => ({ path: i.path.map(String), message: i.message })),
				}),
			);
			return;
		}
		this.options.onRequest(conn, frame.data, raw.length);
	}

	private async onHello(conn: Connection, json: unknown): Promise<void> {
		const parsed = Hello.safeParse(json);
		if (!parsed.success) {
			refuseHello(conn, new BatonError('invalid_input', `Bad hello: ${describeIssues(parsed.error.issues)}`));
			return;
		}
		const hello = parsed.data;
		if (hello.protocol !== protocolVersion) {
			refuseHello(
				conn,
				new BatonError(
					'protocol_mismatch',
					`This Baton hub (pid ${process.pid}) speaks protocol ${protocolVersion} but the client speaks ${hello.protocol}. Stop the hub ("baton hub stop") or use the same Baton version.`,
					{ hubProtocol: protocolVersion, clientProtocol: hello.protocol },
				),
			);
			return;
		}
		if (hello.seat !== undefined) {
			// conn.hello stays unset until the credential is checked: no frame before that runs as a request.
			try {
				conn.seat = await this.seats.verify(hello.seat);
			} catch (e) {
				refuseHello(conn, this.options.toError(e, 'hello'));
				return;
			}
			seatHello(hello, conn.seat);
		} else {
			const tokenOk = tokenMatches(hello.token, this.options.token);
			if (!tokenOk && !(conn.preAuthenticated && hello.token === undefined)) {
				refuseHello(conn, new BatonError('unauthorized', 'Wrong or missing Baton hub token.'));
				return;
			}
		}
		// Reserve the hello at once: frames arriving while we register the agent are requests.
		conn.hello = hello;
		conn.client = hello.client;
		clearTimeout(conn.helloTimer);
		conn.actor = hello.agent?.id ?? `${hello.client}:${conn.id}`;
		// A full disk must not lock readers out: the registration (a small write) waits for space.
		if (hello.agent && this.options.guard.smallWritesOk) {
			try {
				await this.options.backlog.registerAgent(hello.agent);
			} catch (e) {
				refuseHello(conn, this.options.toError(e, 'hello'));
				return;
			}
		}
		if (hello.agent) {
			this.agents.attach(conn, hello.agent.id);
		}
		if (conn.closed) {
			// Closed while the agent was being registered: onClose ran before agentId was set.
			this.agents.detach(conn);
			return;
		}
		const ok: HelloOk = {
			hello: 'ok',
			protocol: protocolVersion,
			hubPid: process.pid,
			seq: this.options.seq(),
			actor: conn.actor,
			thresholds: this.options.thresholds,
			store: this.options.guard.health,
		};
		send(conn, ok);
		if (hello.agent) {
			this.agents.scheduleNotice();
		}
		this.options.onHello(conn);
	}

	private onClose(conn: Connection): void {
		if (!this.all.delete(conn)) {
			return;
		}
		conn.closed = true;
		conn.flow.close();
		clearTimeout(conn.helloTimer);
		this.agents.detach(conn);
		this.options.onCountChanged();
	}
}

/** A seat connection is its credential's agent and session, whatever its hello said. */
function seatHello(hello: Hello, grant: SeatGrant): void {
	hello.session = grant.session;
	hello.agent = {
		...hello.agent,
		id: grant.agent,
		name: hello.agent?.name ?? grant.agent,
		...(grant.kind === undefined ? {} : { kind: grant.kind }),
	};
	delete hello.token;
}

export function send(conn: Connection, frame: object): void {
	conn.flow.send(JSON.stringify(frame));
}

export function sendError(conn: Connection, id: number, error: BatonError): void {
	send(conn, { id, error: error.toBody() });
}

function refuseHello(conn: Connection, error: BatonError): void {
	send(conn, { hello: 'error', error: error.toBody() });
	conn.ws.close(error.code === 'unauthorized' ? 1008 : 1002, error.code);
}
