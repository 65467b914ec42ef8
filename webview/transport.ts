/**
 * The board's two transports for core/protocol/rpc.ts (one per host, chosen by <body data-host>):
 * - browser: a WebSocket to ws(s)://<location.host>/ws; the hub authenticates the upgrade by the
 *   session cookie set when the user opened /board?ticket=…, so the hello carries no token.
 * - vscode: postMessage through the extension. Wire shape between webview and extension host:
 *   a **string** message is one hub frame (JSON text), relayed unchanged in both directions; an
 *   **object** message is a ViewMessage (core/protocol/index.ts). The webview posts `view/ready` once, the
 *   host answers with `view/connection`; the webview then sends its hello frame and the extension
 *   relays it to the hub (adding the token), so the board's code is identical in both hosts.
 * `acquireVsCodeApi()` is reached only through a factory, so tests and other hosts can inject one.
 */
import { BatonError } from '../core/errors';
import { ViewMessage } from '../core/protocol';
import type { Connector, Transport } from '../core/protocol/rpc';

/** What the board needs from VS Code's webview API. */
export interface HostApi {
	postMessage(message: unknown): void;
	getState(): unknown;
	setState(state: unknown): void;
}

declare function acquireVsCodeApi(): HostApi;

let hostApiFactory: (() => HostApi) | undefined;
let hostApi: HostApi | undefined;

/** Replaces `acquireVsCodeApi()` (e.g. when hosting the board somewhere else, or in tests). */
export function setHostApiFactory(factory: () => HostApi): void {
	hostApiFactory = factory;
	hostApi = undefined;
}

/** The host API, acquired once: VS Code refuses a second acquireVsCodeApi() call. */
export function getHostApi(): HostApi {
	hostApi ??= hostApiFactory !== undefined ? hostApiFactory() : acquireVsCodeApi();
	return hostApi;
}

/** ws(s)://host/ws for a page served by the hub. */
export function hubSocketUrl(location: { protocol: string; host: string }): string {
	return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
}

/** Connector for the browser tab: one WebSocket per (re)connection. */
export function browserConnector(url: string): Connector {
	return () =>
		new Promise<Transport>((resolve, reject) => {
			let opened = false;
			const ws = new WebSocket(url);
			const transport: Transport = {
				send: frame => ws.send(frame),
				close: () => ws.close(1000, 'board closed'),
			};
			ws.onopen = () => {
				opened = true;
				resolve(transport);
			};
			ws.onmessage = e => {
				if (typeof e.data === 'string') {
					transport.onmessage?.(e.data);
				}
			};
			ws.onclose = e => {
				if (!opened) {
					// Browsers hide the HTTP status of a refused upgrade (401 looks like 1006).
					reject(
						new BatonError(
							'unavailable',
							`Cannot connect to the Baton hub at ${url}. If the hub restarted, run "baton board" for a fresh link.`,
						),
					);
					return;
				}
				transport.onclose?.(e.reason !== '' ? e.reason : `socket closed (code ${e.code})`);
			};
		});
}

export type HostConnection = 'connected' | 'connecting' | 'offline';

/**
 * The VS Code side: listens to the window's messages, turns hub frames into transport messages and
 * ViewMessages into callbacks, and offers a Connector that yields a transport whenever the extension
 * reports the hub connected.
 */
export class VsCodeHost {
	private state: HostConnection | undefined;
	private current: Transport | undefined;
	private waiters: (() => void)[] = [];
	private readyPosted = false;
	private readonly viewListeners = new Set<(m: ViewMessage) => void>();

	constructor(
		private readonly api: HostApi,
		target: Pick<Window, 'addEventListener'>,
		/** How long to wait for a view/connection answer before trying the hello anyway. */
		private readonly assumeConnectedAfterMs = 1500,
	) {
		target.addEventListener('message', (e: MessageEvent<unknown>) => this.receive(e.data));
	}

	/** Host-only messages (view/openCard, view/connection, …). */
	onView(listener: (m: ViewMessage) => void): () => void {
		this.viewListeners.add(listener);
		return () => this.viewListeners.delete(listener);
	}

	post(message: ViewMessage): void {
		this.api.postMessage(message);
	}

	readonly connect: Connector = async () => {
		if (!this.readyPosted) {
			this.readyPosted = true;
			this.post({ type: 'view/ready' });
		}
		if (this.state !== 'connected') {
			await new Promise<void>(resolve => {
				this.waiters.push(resolve);
				if (this.state === undefined) {
					// An extension that relays without announcing its state still gets our hello.
					setTimeout(resolve, this.assumeConnectedAfterMs);
				}
			});
		}
		const transport: Transport = {
			send: frame => this.api.postMessage(frame),
			close: () => {
				if (this.current === transport) {
					this.current = undefined;
				}
			},
		};
		this.current = transport;
		return transport;
	};

	private receive(data: unknown): void {
		if (typeof data === 'string') {
			this.current?.onmessage?.(data);
			return;
		}
		const parsed = ViewMessage.safeParse(data);
		if (!parsed.success) {
			return;
		}
		const message = parsed.data;
		if (message.type === 'view/connection') {
			this.state = message.state;
			if (message.state === 'connected') {
				const waiters = this.waiters;
				this.waiters = [];
				for (const w of waiters) {
					w();
				}
			} else if (this.current !== undefined) {
				// The extension lost the hub: close our side so the RpcClient reconnects and resubscribes.
				const t = this.current;
				this.current = undefined;
				t.onclose?.(`the extension reports the hub ${message.state}`);
			}
		}
		for (const l of this.viewListeners) {
			l(message);
		}
	}
}
