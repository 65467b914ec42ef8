/**
 * The node `ws` implementation of core/protocol/rpc.ts's Transport: one websocket to the hub, over hub.sock
 * (`ws+unix:`) or the TCP listener. Resolves once open; a failed or hung handshake rejects with the
 * errno so connectHub can tell "no hub" (spawn one) from "hub unresponsive" (wait, never replace).
 */
import WebSocket from 'ws';
import { BatonError } from '../errors';
import { limits } from '../protocol';
import type { Transport } from '../protocol/rpc';

export interface WsTransportOptions {
	/** Extra upgrade headers (TCP clients send `Authorization: Bearer <token>`). */
	headers?: Record<string, string>;
	/** Give up an upgrade the hub does not answer within this many ms (default 5 s). */
	handshakeTimeoutMs?: number;
}

/** Why a connection attempt failed: `absent` (nobody listens), `unresponsive` (accepted, no answer), `refused` (HTTP error). */
export type ConnectFailure = 'absent' | 'unresponsive' | 'refused';

/** `ws+unix:` URL of a hub socket path. */
export function unixSocketUrl(socketPath: string): string {
	return `ws+unix://${socketPath}:/`;
}

export function openWsTransport(url: string, options: WsTransportOptions = {}): Promise<Transport> {
	return new Promise((resolve, reject) => {
		const ws = new WebSocket(url, {
			headers: options.headers ?? {},
			handshakeTimeout: options.handshakeTimeoutMs ?? 5_000,
			maxPayload: limits.maxResponse,
			perMessageDeflate: false,
		});
		let opened = false;
		const transport: Transport = {
			send: frame => {
				if (ws.readyState === WebSocket.OPEN) {
					ws.send(frame);
				}
			},
			close: () => {
				ws.close(1000);
				// A hub that is stopped never completes the closing handshake; do not hang on it.
				setTimeout(() => ws.terminate(), 1_000).unref();
			},
		};
		ws.on('open', () => {
			opened = true;
			resolve(transport);
		});
		ws.on('message', (data, isBinary) => {
			if (!isBinary) {
				transport.onmessage?.(rawToString(data));
			}
		});
		ws.on('unexpected-response', (_req, res) => {
			const status = res.statusCode ?? 0;
			res.resume();
			ws.terminate();
			reject(
				new BatonError('unauthorized', `The Baton hub refused the connection (HTTP ${status}).`, {
					failure: 'refused' satisfies ConnectFailure,
					status,
				}),
			);
		});
		ws.on('error', (e: NodeJS.ErrnoException) => {
			if (opened) {
				// 'close' follows and reports the loss to the rpc client.
				return;
			}
			// ECONNRESET during the upgrade: a hub that is shutting down; treat it as gone.
			const absent = e.code === 'ENOENT' || e.code === 'ECONNREFUSED' || e.code === 'ECONNRESET';
			const failure: ConnectFailure = absent ? 'absent' : 'unresponsive';
			reject(
				new BatonError(
					'unavailable',
					absent
						? 'No Baton hub is listening.'
						: `The Baton hub did not complete the connection (${e.code ?? e.message}); it may be stopped or busy (hub unresponsive).`,
					{ failure, errno: e.code ?? null },
				),
			);
		});
		ws.on('close', (code, reason) => {
			if (opened) {
				transport.onclose?.(reason.length > 0 ? `${code} ${reason.toString()}` : String(code));
			}
		});
	});
}

/** The failure kind a rejected openWsTransport carried, if any. */
export function connectFailure(e: unknown): ConnectFailure | undefined {
	if (!BatonError.is(e) || typeof e.data !== 'object' || e.data === null) {
		return undefined;
	}
	const failure = (e.data as { failure?: unknown }).failure;
	return failure === 'absent' || failure === 'unresponsive' || failure === 'refused' ? failure : undefined;
}

function rawToString(data: WebSocket.RawData): string {
	if (Array.isArray(data)) {
		return Buffer.concat(data).toString('utf8');
	}
	if (data instanceof ArrayBuffer) {
		return Buffer.from(data).toString('utf8');
	}
	return data.toString('utf8');
}
