/**
 * Names PostgreSQL being unreachable as what it is: a connection refused, reset or shut down becomes
 * `unavailable` "PostgreSQL at host:port refused the connection (retrying)" instead of an internal
 * error. Recognition only: the pool itself opens a new connection on the next query, so the hub
 * recovers as soon as the server is back. Never includes credentials from the URL.
 */
import { BatonError } from '../errors';

/** Node socket errors that mean the server cannot be reached. */
const socketCodes: Readonly<Record<string, string>> = {
	ECONNREFUSED: 'refused the connection',
	ECONNRESET: 'reset the connection',
	ETIMEDOUT: 'did not answer',
	EHOSTUNREACH: 'cannot be reached',
	ENOTFOUND: 'is an unknown host',
	EAI_AGAIN: 'is an unknown host',
	EPIPE: 'closed the connection',
};

/** SQLSTATEs of a server going away: admin/crash shutdown, cannot connect now, connection exceptions. */
function serverGone(state: string): boolean {
	return state === '57P01' || state === '57P02' || state === '57P03' || state.startsWith('08');
}

/** host:port of a postgres:// URL, without user or password. */
export function serverAddress(databaseUrl: string): string {
	try {
		const url = new URL(databaseUrl);
		return `${url.hostname || 'localhost'}:${url.port || '5432'}`;
	} catch {
		return 'the configured server';
	}
}

/** The `unavailable` error for an error that means PostgreSQL is unreachable; undefined for any other. */
export function postgresUnavailable(e: unknown, databaseUrl: string, retrying = true): BatonError | undefined {
	if (typeof e !== 'object' || e === null) {
		return undefined;
	}
	const code = 'code' in e && typeof e.code === 'string' ? e.code : '';
	const message = 'message' in e && typeof e.message === 'string' ? e.message : '';
	let what = socketCodes[code];
	if (what === undefined && serverGone(code)) {
		what = 'is shutting down or not accepting connections';
	}
	// The pool's connectionTimeoutMillis: nothing answered (host gone, packets dropped), not a refusal.
	if (what === undefined && /connection timeout|timeout expired/.test(message)) {
		what = 'did not answer';
	}
	if (what === undefined && /Connection terminated|Client has encountered a connection error/.test(message)) {
		what = 'closed the connection';
	}
	if (what === undefined) {
		return undefined;
	}
	const address = serverAddress(databaseUrl);
	return new BatonError(
		'unavailable',
		retrying
			? `PostgreSQL at ${address} ${what} (retrying). Baton goes on as soon as it is back.`
			: `PostgreSQL at ${address} ${what}. Start it (or fix DATABASE_URL) and run the command again.`,
		{ database: address },
	);
}
