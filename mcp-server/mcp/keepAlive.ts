/**
 * Liveness for one MCP session: an `agent/ping` every ~10 s while stdio is open, so a
 * long model call never makes a live agent look dead (each ping renews the agent's leases). Failed
 * pings are logged and retried on the next tick; the client itself reconnects.
 */
import { createLogger } from '../../core/log';
import type { RpcClient } from '../../core/protocol/rpc';

const log = createLogger('mcp').child('keepAlive');

export const pingIntervalMs = 10_000;

export function startKeepAlive(hub: RpcClient, intervalMs = pingIntervalMs): () => void {
	let inFlight = false;
	const timer = setInterval(() => {
		// A ping still waiting (hub restarting) must not pile up more behind it.
		if (inFlight) {
			return;
		}
		inFlight = true;
		hub
			.request('agent/ping', {})
			.catch((error: unknown) => {
				log.warn(`liveness ping failed: ${error instanceof Error ? error.message : String(error)}`);
			})
			.finally(() => {
				inFlight = false;
			});
	}, intervalMs);
	return () => clearInterval(timer);
}
