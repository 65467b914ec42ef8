/**
 * The one retry policy of every connection lifecycle (docs/decisions/0042-backoff.md): wait
 * `minMs` after the first failure, multiply by `factor` after each further one, never wait more
 * than `maxMs`, start over after a success. Pure arithmetic and a failure counter: callers arm their
 * own timers on their Clock. Platform-free and zod-free (the webview imports rpc.ts, which uses it).
 */

export interface BackoffPolicy {
	/** The wait after the first failure. */
	readonly minMs: number;
	/** The longest wait: bounds how late a retry notices that the other side is back. */
	readonly maxMs: number;
	/** Growth per failure (default 2). */
	readonly factor?: number;
}

/**
 * Reconnecting to something that went away and comes back by itself (the hub restarting, PostgreSQL
 * restarting): the client's socket (rpc.ts), the hub's LISTEN connection (notifyRelay.ts), the event
 * pump's and the reaper's reads. The 2 s cap is how late such a link may resume after the outage.
 */
export const reconnectBackoff: BackoffPolicy = { minMs: 100, maxMs: 2_000 };

/**
 * Waiting for a hub this client just spawned to listen (connectHub.ts): a probe of a local socket
 * is cheap, and a CLI call waits on it, so the cap is short: at 250 ms a first command waited ~125 ms
 * on average after the hub was up.
 */
export const hubStartBackoff: BackoffPolicy = { minMs: 25, maxMs: 100 };

/**
 * The extension's first connection (hubConnection.ts): each attempt is a whole connectHub, which
 * may spawn a hub process and has already waited for it, so attempts are spaced out further. The
 * board's first connection and its retries of a live page while offline (webview/main.ts,
 * boardLoad.ts) wait the same.
 */
export const firstConnectBackoff: BackoffPolicy = { minMs: 500, maxMs: 10_000 };

/**
 * A webhook receiver that failed (mcp-server/hub/webhooks.ts): someone else's server, maybe down for
 * hours, so retries space out to one per 5 minutes; the hook's events wait in the log meanwhile.
 */
export const webhookBackoff: BackoffPolicy = { minMs: 1_000, maxMs: 300_000 };

/** The wait before retry number `failures` (1 = after the first failure) under `policy`. */
export function backoffDelay(policy: BackoffPolicy, failures: number): number {
	const grown = policy.minMs * (policy.factor ?? 2) ** Math.max(0, failures - 1);
	return Math.min(grown, policy.maxMs);
}

/** Failures in a row under one policy: `next()` after each failure, `reset()` after a success. */
export class Backoff {
	private count = 0;

	constructor(readonly policy: BackoffPolicy = reconnectBackoff) {}

	/** Failures since the last success. */
	get failures(): number {
		return this.count;
	}

	/** Records a failure and returns how long to wait before the next attempt. */
	next(): number {
		this.count++;
		return backoffDelay(this.policy, this.count);
	}

	reset(): void {
		this.count = 0;
	}
}
