/**
 * The hub's guards: the token file and its folder (refuse to start when loose, a
 * symlink or foreign-owned), constant-time token checks, Host/Origin checks against DNS rebinding
 * and cross-site websocket hijacking, and the board's one-time tickets and session cookies.
 * Never logs or returns the token.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, fsyncSync, lstatSync, openSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { BatonError } from '../../core/errors';
import { writeAll } from '../../core/files/wholeFile';

const tokenBytes = 32;

/**
 * Returns the hub token, creating it (0600, 32 random bytes as hex) on first start. Refuses with
 * a clear message when the run dir or the file is looser than that, a symlink, or not ours.
 */
export function ensureToken(runDir: string, tokenPath: string): string {
	checkPrivate(runDir, 'directory');
	try {
		const fd = openSync(tokenPath, 'wx', 0o600);
		try {
			// Every byte or no file: a cut-short token would refuse every start after this one.
			writeAll(fd, Buffer.from(randomBytes(tokenBytes).toString('hex')));
			fsyncSync(fd);
		} catch (e) {
			closeSync(fd);
			rmSync(tokenPath, { force: true });
			throw e;
		}
		closeSync(fd);
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
			throw e;
		}
	}
	checkPrivate(tokenPath, 'file');
	const token = readFileSync(tokenPath, 'utf8').trim();
	if (!/^[0-9a-f]{64}$/.test(token)) {
		throw new BatonError(
			'unauthorized',
			`The Baton token file ${tokenPath} is malformed. Delete it and start the hub again.`,
		);
	}
	return token;
}

function checkPrivate(path: string, kind: 'file' | 'directory'): void {
	const st = lstatSync(path);
	const fix = kind === 'file' ? `chmod 600 ${path}` : `chmod 700 ${path}`;
	if (st.isSymbolicLink()) {
		throw new BatonError('unauthorized', `Refusing to start: ${path} is a symlink. Remove it; the hub recreates it.`);
	}
	if (kind === 'file' ? !st.isFile() : !st.isDirectory()) {
		throw new BatonError('unauthorized', `Refusing to start: ${path} is not a ${kind}.`);
	}
	const uid = process.getuid?.();
	if (uid !== undefined && st.uid !== uid) {
		throw new BatonError(
			'unauthorized',
			`Refusing to start: ${path} is owned by uid ${st.uid}, not by this user (uid ${uid}).`,
		);
	}
	if ((st.mode & 0o077) !== 0) {
		throw new BatonError(
			'unauthorized',
			`Refusing to start: ${path} has mode ${(st.mode & 0o777).toString(8)}; other users could read it. Run: ${fix}`,
		);
	}
}

/** Constant-time comparison (hashing first makes lengths equal, so length leaks nothing either). */
export function tokenMatches(given: string | undefined, token: string): boolean {
	if (given === undefined) {
		return false;
	}
	const a = createHash('sha256').update(given).digest();
	const b = createHash('sha256').update(token).digest();
	return timingSafeEqual(a, b);
}

/** The bearer token of an `Authorization` header, if any. */
export function bearerToken(req: IncomingMessage): string | undefined {
	const header = req.headers.authorization;
	const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
	return match?.[1];
}

const loopbackHosts = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** True when the Host header names a loopback address (any port): defeats DNS rebinding. */
export function hostAllowed(req: IncomingMessage, port: number): boolean {
	const host = req.headers.host;
	if (host === undefined) {
		return false;
	}
	const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host.toLowerCase());
	if (!match?.[1] || !loopbackHosts.has(match[1])) {
		return false;
	}
	return match[2] === undefined || Number(match[2]) === port;
}

/** No Origin (non-browser clients) or exactly the hub's own page. `null` and other ports are refused. */
export function originAllowed(req: IncomingMessage, port: number): boolean {
	const origin = req.headers.origin;
	if (origin === undefined) {
		return true;
	}
	return origin === `http://127.0.0.1:${port}` || origin === `http://localhost:${port}`;
}

export const sessionCookieName = 'baton_session';

/** One-time board tickets (60 s) and the session cookies they are swapped for. Memory only. */
export class BoardSessions {
	private readonly tickets = new Map<string, number>();
	private readonly sessions = new Set<string>();

	constructor(private readonly ticketTtlMs = 60_000) {}

	issueTicket(): string {
		const ticket = randomBytes(24).toString('hex');
		this.tickets.set(ticket, Date.now() + this.ticketTtlMs);
		return ticket;
	}

	/** Consumes a ticket; returns a new session id, or undefined if unknown, used or expired. */
	redeem(ticket: string): string | undefined {
		const now = Date.now();
		for (const [t, expires] of this.tickets) {
			if (expires < now) {
				this.tickets.delete(t);
			}
		}
		let found: string | undefined;
		for (const t of this.tickets.keys()) {
			if (tokenMatches(ticket, t)) {
				found = t;
			}
		}
		if (found === undefined) {
			return undefined;
		}
		this.tickets.delete(found);
		const session = randomBytes(32).toString('hex');
		this.sessions.add(session);
		return session;
	}

	/** True when the request carries a valid session cookie. */
	validCookie(req: IncomingMessage): boolean {
		const value = readCookie(req, sessionCookieName);
		if (value === undefined) {
			return false;
		}
		let ok = false;
		for (const s of this.sessions) {
			if (tokenMatches(value, s)) {
				ok = true;
			}
		}
		return ok;
	}
}

function readCookie(req: IncomingMessage, name: string): string | undefined {
	const header = req.headers.cookie;
	if (header === undefined) {
		return undefined;
	}
	for (const part of header.split(';')) {
		const eq = part.indexOf('=');
		if (eq > 0 && part.slice(0, eq).trim() === name) {
			return part.slice(eq + 1).trim();
		}
	}
	return undefined;
}
