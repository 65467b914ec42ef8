/**
 * Relays the board webview's hub frames (webview/transport.ts): a string message is one hub
 * frame, passed on unchanged; an object message is a ViewMessage. The extension holds the token, so
 * the webview's hello is answered here with the HelloOk of a dedicated connection that acts as the
 * human's agent; requests go to the hub over that connection with their idempotency keys, and its
 * events, agent notices and resyncs are pushed back. Every inbound message is validated before use. The
 * thresholds the board judges health and stalled by are the trees' (`baton.health.*` settings win
 * over the hub's, key by key), so the two faces apply core/rules/health.ts to the same numbers.
 */
import type * as vscode from 'vscode';
import { BatonError, describeIssues } from '../core/errors';
import { type BacklogEvent, Hello, RequestFrame, ViewMessage, isMethod, limits } from '../core/protocol';
import type { RpcClient } from '../core/protocol/rpc';
import type { HubConnection } from './hubConnection';

export class WebviewRelay implements vscode.Disposable {
	private client: Promise<RpcClient> | undefined;
	private readonly disposables: vscode.Disposable[] = [];
	private readonly unsubscribe: (() => void)[] = [];
	private disposed = false;

	constructor(
		private readonly webview: vscode.Webview,
		private readonly hub: HubConnection,
		private readonly log: vscode.LogOutputChannel,
		private readonly onViewMessage: (message: ViewMessage) => void,
	) {
		this.disposables.push(hub.onDidChangeState(() => this.postConnection()));
	}

	/** The backlog changed (another data dir): the next hello opens a new connection. */
	reconnect(): void {
		this.dropClient();
	}

	/** Host -> webview: select a card and open its detail pane. */
	openCard(cardId: string): void {
		this.post({ type: 'view/openCard', cardId });
	}

	dispose(): void {
		this.disposed = true;
		for (const d of this.disposables) {
			d.dispose();
		}
		this.dropClient();
	}

	private post(message: string | ViewMessage): void {
		if (!this.disposed) {
			// A hidden webview view drops messages (postMessage resolves false); the board resyncs on its next hello.
			void this.webview.postMessage(message);
		}
	}

	private postConnection(): void {
		this.post({ type: 'view/connection', state: this.hub.state });
	}

	/** One message from the webview (boardWebview.ts subscribes and buffers until this relay exists). */
	receive(message: unknown): void {
		if (typeof message === 'string') {
			if (message.length > limits.maxPayload) {
				this.log.warn(`Dropped a ${message.length}-byte frame from the board (limit ${limits.maxPayload}).`);
				return;
			}
			let json: unknown;
			try {
				json = JSON.parse(message);
			} catch {
				this.log.warn('Dropped a board frame that is not JSON.');
				return;
			}
			void this.onFrame(json);
			return;
		}
		const parsed = ViewMessage.safeParse(message);
		if (!parsed.success) {
			this.log.warn(`Dropped a board message: ${describeIssues(parsed.error.issues)}`);
			return;
		}
		if (parsed.data.type === 'view/ready') {
			this.postConnection();
		}
		this.onViewMessage(parsed.data);
	}

	private async onFrame(json: unknown): Promise<void> {
		if (Hello.safeParse(json).success) {
			await this.answerHello();
			return;
		}
		const frame = RequestFrame.safeParse(json);
		if (!frame.success) {
			const id = (json as { id?: unknown } | null)?.id;
			if (typeof id === 'number') {
				this.post(
					JSON.stringify({ id, error: { code: 'invalid_input', message: describeIssues(frame.error.issues) } }),
				);
			}
			return;
		}
		const { id, method, params, key } = frame.data;
		try {
			const client = await this.connection();
			if (!isMethod(method)) {
				throw new BatonError('invalid_input', `Unknown method "${method}".`);
			}
			let result: unknown;
			if (method === 'events/subscribe') {
				// Through subscribe() so the dedicated client resumes from the board's seq after a reconnect.
				const afterSeq = (params as { afterSeq?: unknown } | undefined)?.afterSeq;
				const seq = await client.subscribe(typeof afterSeq === 'number' ? afterSeq : undefined);
				result = { seq };
			} else if (method === 'agent/list') {
				result = { ...(await client.request(method, params as never)), thresholds: this.hub.thresholds };
			} else {
				result = await client.request(method, params as never, key === undefined ? {} : { key });
			}
			this.post(JSON.stringify({ id, result }));
		} catch (e) {
			const error = BatonError.is(e)
				? e.toBody()
				: { code: 'internal', message: 'The extension could not relay this request.' };
			if (!BatonError.is(e)) {
				this.log.error(`Relaying ${method} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
			}
			this.post(JSON.stringify({ id, error }));
		}
	}

	private async answerHello(): Promise<void> {
		try {
			const client = await this.connection();
			const hello = client.hello ?? (await client.start());
			this.post(JSON.stringify({ ...hello, thresholds: this.hub.thresholds }));
		} catch (e) {
			const error = BatonError.is(e) ? e.toBody() : { code: 'unavailable', message: String(e) };
			this.log.warn(`The board could not connect: ${error.message}`);
			this.post(JSON.stringify({ hello: 'error', error }));
			// Let the next hello try a fresh connection.
			this.dropClient();
		}
	}

	/** The dedicated connection, opened on the board's first hello and reused for later ones. */
	private connection(): Promise<RpcClient> {
		this.client ??= this.hub.openClient().then(client => {
			if (this.disposed) {
				client.close();
				throw new BatonError('unavailable', 'The board was closed.');
			}
			this.unsubscribe.push(
				client.onEvent((e: BacklogEvent) => this.post(JSON.stringify({ event: e.type, seq: e.seq, data: e }))),
				client.onAgents(agents => this.post(JSON.stringify({ notice: 'agents', agents }))),
				client.onStore(store => this.post(JSON.stringify({ notice: 'store', store }))),
				client.onLanding(entries => this.post(JSON.stringify({ notice: 'landing', entries }))),
				// The log was compacted past the board's seq: the board reloads.
				client.onResync(seq => this.post(JSON.stringify({ notice: 'resync', seq }))),
			);
			return client;
		});
		return this.client;
	}

	private dropClient(): void {
		for (const u of this.unsubscribe.splice(0)) {
			u();
		}
		const pending = this.client;
		this.client = undefined;
		void pending?.then(
			c => c.close(),
			() => undefined,
		);
	}
}
