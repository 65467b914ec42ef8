/**
 * Transport-agnostic protocol client: hello handshake, request/response correlation,
 * timeouts, event subscription that resumes from the last seen seq after a reconnect (no gap, no
 * duplicate), and re-sending of in-flight requests with their idempotency keys after a failover.
 * Platform-free: no node, no DOM; transports live in core/client/ (node) and webview/ (browser).
 */
import { Backoff, type BackoffPolicy, reconnectBackoff } from '../backoff';
import { type Clock, type Timer, systemClock } from '../clock';
import { BatonError, describeIssues } from '../errors';
import { checkFrameSize } from './frameSize';
import {
	type Hello,
	type HelloOk,
	type Method,
	type Params,
	type Result,
	ServerFrame,
	methods,
	mutatingMethods,
	protocolVersion,
} from '.';
import { RpcFeed } from './rpcFeed';

export type { ConnectionState } from './rpcFeed';

/** One open, message-oriented connection to the hub (D's Transport shape). Frames are JSON text. */
export interface Transport {
	send(frame: string): void;
	close(): void;
	onmessage?: ((frame: string) => void) | undefined;
	onclose?: ((reason: string) => void) | undefined;
}

/** Opens a new connected transport; called again for every reconnect. */
export type Connector = () => Promise<Transport>;

export interface RpcClientOptions {
	connect: Connector;
	/** The hello fields besides the protocol version. */
	hello: Omit<Hello, 'hello' | 'protocol'>;
	/** A request not answered within this many ms fails with `timeout` (default 15 s). */
	requestTimeoutMs?: number;
	/**
	 * A connection whose hello is not answered within this many ms is closed and tried again (default
	 * 15 s): a hub that accepts but never answers (stalled at its store while registering the agent)
	 * must not hold the client, and every request queued behind its connection, forever.
	 */
	helloTimeoutMs?: number;
	/** A sentence on why the hub may not have answered (its process alive, busy?), added to a timeout. */
	explainTimeout?: () => Promise<string>;
	/** Reconnect after the transport closes (default true). */
	reconnect?: boolean;
	/** Backoff between reconnect attempts (default core/backoff.ts `reconnectBackoff`: 100 ms → 2 s). */
	backoff?: BackoffPolicy;
	/** Give up reconnecting after this long offline (default: never). */
	maxOfflineMs?: number;
	/** Time and timers (request timeouts, reconnects); tests pass a ManualClock. Default systemClock. */
	clock?: Clock;
	/** Source of randomness for idempotency keys (defaults to crypto.randomUUID). */
	randomId?: () => string;
	/**
	 * Methods whose results are taken as the hub sent them, not checked again against the protocol
	 *: `baton mcp`'s `card/listRows`, whose page of 50 (then whole) cards cost about a tenth
	 * of the process's CPU to re-validate, while the hub built every row in SQL (exactly CardRow's fields)
	 * and the hello already proved both sides speak the same protocol version. Default: none.
	 */
	unchecked?: readonly Method[];
}

export interface RequestOptions {
	timeoutMs?: number;
	/** Idempotency key; generated for mutating methods when omitted. */
	key?: string;
}

interface Pending {
	method: Method;
	frame: string;
	resolve: (value: unknown) => void;
	reject: (error: BatonError) => void;
	timer: Timer;
}

export class RpcClient extends RpcFeed {
	private transport: Transport | undefined;
	private nextId = 1;
	private readonly pending = new Map<number, Pending>();
	private helloOk: HelloOk | undefined;
	private subscribed = false;
	/** The id of the resubscribe sent after a reconnect, whose answer may say resync. */
	private resumeId: number | undefined;
	private connecting: Promise<HelloOk> | undefined;
	private offlineSince: number | undefined;
	private readonly backoff: Backoff;
	private reconnectTimer: Timer | undefined;
	private readonly keyPrefix: string;
	private keyCounter = 0;
	private readonly clock: Clock;

	constructor(private readonly options: RpcClientOptions) {
		super();
		this.clock = options.clock ?? systemClock;
		this.backoff = new Backoff(options.backoff ?? reconnectBackoff);
		this.keyPrefix = (options.randomId ?? (() => globalThis.crypto.randomUUID()))();
	}

	/** The hub's answer to our hello on the current connection. */
	get hello(): HelloOk | undefined {
		return this.helloOk;
	}

	/** Connects (once) and resolves with the hub's hello. Safe to call repeatedly. */
	start(): Promise<HelloOk> {
		if (this.state === 'connected' && this.helloOk) {
			return Promise.resolve(this.helloOk);
		}
		this.connecting ??= this.connectOnce().finally(() => {
			this.connecting = undefined;
		});
		return this.connecting;
	}

	/** Sends one request and resolves with its validated result, or rejects with a BatonError. */
	async request<M extends Method>(method: M, params: Params<M>, options: RequestOptions = {}): Promise<Result<M>> {
		if (this.state === 'closed') {
			throw new BatonError('unavailable', 'This Baton client was closed.');
		}
		const id = this.nextId++;
		const key = options.key ?? (mutatingMethods.has(method) ? `${this.keyPrefix}:${++this.keyCounter}` : undefined);
		const frame = JSON.stringify(key === undefined ? { id, method, params } : { id, method, params, key });
		checkFrameSize(method, params, frame);
		const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs ?? 15_000;
		const raw = await new Promise<unknown>((resolve, reject) => {
			const timer = this.clock.setTimeout(() => {
				this.pending.delete(id);
				const base = `The Baton hub did not answer ${method} within ${Math.round(timeoutMs / 1000)} s.`;
				const explain = this.options.explainTimeout;
				if (explain === undefined) {
					reject(new BatonError('timeout', `${base} It may be busy or unresponsive; try again.`));
					return;
				}
				explain().then(
					why => reject(new BatonError('timeout', `${base} ${why}`)),
					() => reject(new BatonError('timeout', `${base} It may be busy or unresponsive; try again.`)),
				);
			}, timeoutMs);
			this.pending.set(id, { method, frame, resolve, reject, timer });
			if (this.state === 'connected') {
				this.transport?.send(frame);
			} else {
				// Sent by flushPending() once the (re)connection's hello is answered.
				void this.start().catch(() => undefined);
			}
		});
		if (this.options.unchecked?.includes(method) === true) {
			return raw as Result<M>;
		}
		const parsed = methods[method].result.safeParse(raw);
		if (!parsed.success) {
			throw new BatonError(
				'internal',
				`The hub sent an unexpected ${method} result: ${describeIssues(parsed.error.issues)}`,
			);
		}
		return parsed.data as Result<M>;
	}

	/**
	 * Subscribes to the event log after `afterSeq` (default: everything after what this client has
	 * already seen). Survives reconnects: the client resubscribes from its last delivered seq.
	 */
	async subscribe(afterSeq?: number): Promise<number> {
		if (afterSeq !== undefined) {
			this.lastSeq = afterSeq;
		}
		this.subscribed = true;
		const answer = await this.request('events/subscribe', { afterSeq: this.lastSeq });
		this.subscribedAt(answer);
		return answer.seq;
	}

	close(): void {
		this.setState('closed');
		// A closed client neither reconnects nor keeps a node process alive with a pending attempt.
		this.clock.clearTimer(this.reconnectTimer);
		this.reconnectTimer = undefined;
		for (const [id, p] of this.pending) {
			this.clock.clearTimer(p.timer);
			p.reject(new BatonError('unavailable', 'The Baton client was closed before the hub answered.'));
			this.pending.delete(id);
		}
		const t = this.transport;
		this.transport = undefined;
		t?.close();
	}

	private async connectOnce(): Promise<HelloOk> {
		// 'connecting' is the first connection only. A reconnect attempt stays 'offline' until it
		// succeeds, so views showing the state do not flicker on every retry.
		if (this.offlineSince === undefined) {
			this.setState('connecting');
		}
		const transport = await this.options.connect();
		if (this.state === 'closed') {
			transport.close();
			throw new BatonError('unavailable', 'The Baton client was closed while connecting.');
		}
		this.transport = transport;
		const helloMs = this.options.helloTimeoutMs ?? 15_000;
		let helloTimer: Timer | undefined;
		const hello = await new Promise<HelloOk>((resolve, reject) => {
			transport.onmessage = raw => {
				const frame = parseFrame(raw);
				if (frame === undefined) {
					return;
				}
				if ('hello' in frame) {
					if (frame.hello === 'ok') {
						resolve(frame);
					} else {
						reject(BatonError.fromBody(frame.error));
					}
					return;
				}
				this.handleFrame(frame);
			};
			transport.onclose = reason => {
				reject(new BatonError('unavailable', `The Baton hub closed the connection: ${reason || 'no reason given'}.`));
				this.handleClose(transport);
			};
			helloTimer = this.clock.setTimeout(() => {
				reject(
					new BatonError('timeout', `The Baton hub did not answer the hello within ${Math.round(helloMs / 1000)} s.`),
				);
				// Closed as if the hub had closed it: offline, and the next attempt is armed.
				transport.onclose = undefined;
				transport.close();
				this.handleClose(transport);
			}, helloMs);
			const hello: Hello = { hello: 'baton', protocol: protocolVersion, ...this.options.hello };
			transport.send(JSON.stringify(hello));
		}).finally(() => this.clock.clearTimer(helloTimer));
		if (hello.protocol !== protocolVersion) {
			transport.close();
			throw new BatonError(
				'protocol_mismatch',
				`The Baton hub speaks protocol ${hello.protocol} but this client speaks ${protocolVersion}. Stop the old hub ("baton hub stop") or update Baton.`,
			);
		}
		this.helloOk = hello;
		this.backoff.reset();
		this.offlineSince = undefined;
		this.setStore(hello.store ?? { state: 'ok' });
		this.setState('connected');
		for (const l of this.helloListeners) {
			l(hello);
		}
		if (this.subscribed) {
			// Resume the feed first, so events missed while offline arrive before new responses. Not a
			// pending request: a connection that drops again is resumed by the next one, never re-sent.
			this.resumeId = this.nextId++;
			transport.send(
				JSON.stringify({ id: this.resumeId, method: 'events/subscribe', params: { afterSeq: this.lastSeq } }),
			);
		}
		for (const p of this.pending.values()) {
			transport.send(p.frame);
		}
		return hello;
	}

	private handleFrame(frame: ServerFrame): void {
		if ('event' in frame || 'notice' in frame) {
			this.deliver(frame);
			return;
		}
		if ('id' in frame) {
			if (frame.id === this.resumeId) {
				this.resumeId = undefined;
				const answer = 'result' in frame ? methods['events/subscribe'].result.safeParse(frame.result) : undefined;
				if (answer?.success === true) {
					this.subscribedAt(answer.data);
				}
				return;
			}
			const p = this.pending.get(frame.id);
			if (!p) {
				return;
			}
			this.pending.delete(frame.id);
			this.clock.clearTimer(p.timer);
			if ('error' in frame) {
				p.reject(BatonError.fromBody(frame.error));
			} else {
				p.resolve(frame.result);
			}
		}
	}

	private handleClose(transport: Transport): void {
		if (this.transport !== transport) {
			return;
		}
		this.transport = undefined;
		this.helloOk = undefined;
		if (this.state === 'closed') {
			return;
		}
		this.setState('offline');
		this.offlineSince ??= this.clock.now().getTime();
		if (this.options.reconnect === false) {
			this.failPending('unavailable', 'The connection to the Baton hub was lost.');
			return;
		}
		this.scheduleReconnect();
	}

	private scheduleReconnect(): void {
		if (this.state === 'closed' || this.reconnectTimer !== undefined) {
			return;
		}
		const max = this.options.maxOfflineMs;
		if (max !== undefined && this.offlineSince !== undefined && this.clock.now().getTime() - this.offlineSince > max) {
			this.failPending('unavailable', `The Baton hub has been unreachable for ${Math.round(max / 1000)} s.`);
			this.setState('offline');
			return;
		}
		this.reconnectTimer = this.clock.setTimeout(() => {
			this.reconnectTimer = undefined;
			this.start().catch(() => {
				if (this.state !== 'connected') {
					this.setState('offline');
					this.scheduleReconnect();
				}
			});
		}, this.backoff.next());
	}

	private failPending(code: 'unavailable', message: string): void {
		for (const [id, p] of this.pending) {
			this.clock.clearTimer(p.timer);
			p.reject(new BatonError(code, message));
			this.pending.delete(id);
		}
	}
}

function parseFrame(raw: string): ServerFrame | undefined {
	let json: unknown;
	try {
		json = JSON.parse(raw);
	} catch {
		return undefined;
	}
	const parsed = ServerFrame.safeParse(json);
	return parsed.success ? parsed.data : undefined;
}
