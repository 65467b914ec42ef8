/**
 * The board's client past its construction: the very first connection, retried spaced out as the
 * extension's first connection is (core/backoff.ts; the RpcClient reconnects by itself once
 * connected), and the agent's liveness ping while the board is open, so the hub renews the leases of
 * claims made here. Nothing else: what the board shows while offline is main.ts's and firstLoad.ts's.
 */
import { Backoff, firstConnectBackoff } from '../core/backoff';
import { BatonError } from '../core/errors';
import type { HelloOk } from '../core/protocol';
import type { RpcClient } from '../core/protocol/rpc';

/** Starts `client` until the hub answers its hello; `failed` hears each failed attempt. */
export async function connectFirst(client: RpcClient, failed: (e: unknown) => void): Promise<HelloOk> {
	let hello: HelloOk | undefined;
	const firstConnect = new Backoff(firstConnectBackoff);
	while (hello === undefined) {
		try {
			hello = await client.start();
		} catch (e) {
			failed(e);
			const delay = firstConnect.next();
			await new Promise(resolve => window.setTimeout(resolve, delay));
		}
	}
	return hello;
}

/** Liveness for this board's agent: pings every 10 s while connected; an outage is not an error. */
export function pingWhileOpen(client: RpcClient, showError: (e: unknown) => void): void {
	window.setInterval(() => {
		if (client.connectionState === 'connected') {
			client.request('agent/ping', {}).catch((e: unknown) => {
				if (!BatonError.is(e, 'unavailable') && !BatonError.is(e, 'timeout')) {
					showError(e);
				}
			});
		}
	}, 10_000);
}
