/**
 * Test helpers for the hub: short temp data dirs (Unix socket paths max 107 bytes), the built bundle,
 * real `baton hub` processes, raw websocket clients for frame-level checks, and connectHub clients.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import WebSocket from 'ws';
import { type ConnectHubOptions, connectHub } from '../../core/client/connectHub';
import { type HubPaths, hubPaths } from '../../core/paths';
import { type AgentInfo, type ClientKind, protocolVersion } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { dropSchema, testDatabaseUrl } from './backlog';
import { batonJs, ensureBuilt } from './build';
import { testV8Flags } from './v8Flags';

export { batonJs, ensureBuilt, repoRoot } from './build';
export { waitFor } from './waitFor';

/** A fresh, short data dir path under /tmp (not created: the hub creates it, as in real use). */
export function tempDataDir(): string {
	return join(mkdtempSync('/tmp/bt-'), 'd');
}

export function removeDataDir(dataDir: string): void {
	rmSync(resolve(dataDir, '..'), { recursive: true, force: true });
}

/** The environment for a hub: PGlite mode unless the caller passes DATABASE_URL; the tests' V8 flags. */
export function hubEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = { ...process.env };
	delete env.DATABASE_URL;
	delete env.BATON_PG_SCHEMA;
	delete env.BATON_DATA_DIR;
	delete env.PGLITE_DATA_DIR;
	return { ...env, BATON_V8_FLAGS: testV8Flags, ...extra };
}

export interface HubProcess {
	readonly proc: ChildProcess;
	readonly paths: HubPaths;
	readonly pid: number;
	readonly port: number;
	readonly token: string;
	/** Everything the hub wrote to stderr so far. */
	stderr(): string;
	readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
	/** SIGTERM (default) and wait for the exit. */
	stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface StartHubOptions {
	dataDir: string;
	args?: string[];
	env?: NodeJS.ProcessEnv;
	/** Idle exit; default 120 s so a test's hub never outlives the run for long. */
	idleSeconds?: number;
	timeoutMs?: number;
}

/** The argv of a hub for this data dir (used for spawnHub too). */
export function hubCommand(
	dataDir: string,
	args: string[] = [],
	idleSeconds = 120,
): { command: string; args: string[] } {
	return {
		command: process.execPath,
		args: [batonJs, 'hub', '--data-dir', dataDir, '--idle-seconds', String(idleSeconds), ...args],
	};
}

/** Starts `node dist/baton.js hub` and resolves once it serves (hub.json names its pid). */
export async function startHub(options: StartHubOptions): Promise<HubProcess> {
	ensureBuilt();
	const { command, args } = hubCommand(options.dataDir, options.args ?? [], options.idleSeconds ?? 120);
	const proc = spawn(command, args, { env: options.env ?? hubEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
	let stderr = '';
	proc.stderr.setEncoding('utf8');
	proc.stderr.on('data', (chunk: string) => {
		stderr += chunk;
	});
	const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(resolve => {
		proc.on('exit', (code, signal) => resolve({ code, signal }));
	});
	const paths = hubPaths(options.dataDir);
	const state = { exited: false };
	void exited.then(() => {
		state.exited = true;
	});
	const deadline = Date.now() + (options.timeoutMs ?? 30_000);
	for (;;) {
		const info = readHubJson(paths);
		if (info !== undefined && info.pid === proc.pid) {
			const token = readFileSync(paths.token, 'utf8').trim();
			return {
				proc,
				paths,
				pid: info.pid,
				port: info.port,
				token,
				stderr: () => stderr,
				exited,
				stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
					if (!state.exited) {
						proc.kill(signal);
					}
					return exited;
				},
			};
		}
		if (state.exited) {
			throw new Error(`the hub exited before serving:\n${stderr}`);
		}
		if (Date.now() > deadline) {
			proc.kill('SIGKILL');
			throw new Error(`the hub did not serve within the timeout:\n${stderr}`);
		}
		await sleep(25);
	}
}

/** Hubs of their own data dirs sharing one PostgreSQL schema (team mode). */
export interface SharedHubs {
	dirs: string[];
	hubs: HubProcess[];
	/** Stops the hubs, removes their data dirs and drops the schema. */
	stop(): Promise<void>;
}

/** Starts `count` hubs on `schema` of the test database (DATABASE_URL_TEST). */
export async function startSharedHubs(count: number, schema: string): Promise<SharedHubs> {
	const dirs: string[] = [];
	const hubs: HubProcess[] = [];
	for (let i = 0; i < count; i++) {
		const dataDir = tempDataDir();
		dirs.push(dataDir);
		hubs.push(await startHub({ dataDir, env: hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema }) }));
	}
	return {
		dirs,
		hubs,
		async stop() {
			for (const h of hubs) {
				await h.stop();
			}
			for (const d of dirs) {
				removeDataDir(d);
			}
			await dropSchema(schema);
		},
	};
}

export function readHubJson(paths: HubPaths): { port: number; pid: number; protocol: number } | undefined {
	try {
		return JSON.parse(readFileSync(paths.hubJson, 'utf8')) as { port: number; pid: number; protocol: number };
	} catch {
		return undefined;
	}
}

/** A connectHub client that never spawns (the test started the hub). */
export function client(
	dataDir: string,
	options: Partial<ConnectHubOptions> & { client?: ClientKind; agent?: AgentInfo } = {},
): Promise<RpcClient> {
	return connectHub({ dataDir, client: 'test', spawnHub: false, requestTimeoutMs: 15_000, ...options });
}

/** A raw websocket with a frame queue, for frame-level checks (auth, malformed input, events). */
export class RawClient {
	readonly frames: unknown[] = [];
	private waiters: (() => void)[] = [];
	closed: { code: number; reason: string } | undefined;
	private nextId = 1;

	private constructor(readonly ws: WebSocket) {
		ws.on('message', (data: Buffer) => {
			this.frames.push(JSON.parse(data.toString('utf8')) as unknown);
			this.notify();
		});
		ws.on('close', (code, reason) => {
			this.closed = { code, reason: reason.toString() };
			this.notify();
		});
		ws.on('error', () => undefined);
	}

	/** Opens a socket; rejects with the HTTP status on a refused upgrade. */
	static open(url: string, options: WebSocket.ClientOptions = {}): Promise<RawClient> {
		return new Promise((resolve, reject) => {
			const ws = new WebSocket(url, { perMessageDeflate: false, ...options });
			ws.once('open', () => resolve(new RawClient(ws)));
			ws.once('unexpected-response', (_req, res) => {
				const headers = res.headers;
				res.resume();
				reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, headers }));
			});
			ws.once('error', reject);
		});
	}

	static unix(paths: HubPaths): Promise<RawClient> {
		return RawClient.open(`ws+unix://${paths.socket}:/`);
	}

	/** Sends a hello and waits for the hub's answer. */
	async hello(fields: Record<string, unknown>): Promise<Record<string, unknown>> {
		this.send({ hello: 'baton', protocol: protocolVersion, client: 'test', ...fields });
		return (await this.next(f => 'hello' in f)) as Record<string, unknown>;
	}

	send(frame: unknown): void {
		this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
	}

	/** Sends a request and waits for its response frame. */
	async request(method: string, params: unknown, key?: string): Promise<Record<string, unknown>> {
		const id = this.nextId++;
		this.send(key === undefined ? { id, method, params } : { id, method, params, key });
		return (await this.next(f => f.id === id)) as Record<string, unknown>;
	}

	/** Removes and returns the first frame matching `match`, waiting for it. */
	async next(match: (frame: Record<string, unknown>) => boolean, timeoutMs = 10_000): Promise<unknown> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const index = this.frames.findIndex(
				f => typeof f === 'object' && f !== null && match(f as Record<string, unknown>),
			);
			if (index >= 0) {
				return this.frames.splice(index, 1)[0];
			}
			if (this.closed) {
				throw new Error(`socket closed (${this.closed.code} ${this.closed.reason}) before the frame came`);
			}
			const left = deadline - Date.now();
			if (left <= 0) {
				throw new Error('timed out waiting for a frame');
			}
			await new Promise<void>(resolve => {
				const timer = setTimeout(resolve, left);
				this.waiters.push(() => {
					clearTimeout(timer);
					resolve();
				});
			});
		}
	}

	/** Resolves when the hub closes the socket. */
	async waitClosed(timeoutMs = 10_000): Promise<{ code: number; reason: string }> {
		const deadline = Date.now() + timeoutMs;
		while (!this.closed) {
			if (Date.now() > deadline) {
				throw new Error('socket not closed in time');
			}
			await new Promise<void>(resolve => {
				const timer = setTimeout(resolve, 50);
				this.waiters.push(() => {
					clearTimeout(timer);
					resolve();
				});
			});
		}
		return this.closed;
	}

	close(): void {
		this.ws.terminate();
	}

	private notify(): void {
		const waiters = this.waiters;
		this.waiters = [];
		for (const w of waiters) {
			w();
		}
	}
}

export function sleep(ms: number): Promise<void> {
	return new Promise(resolve => setTimeout(resolve, ms));
}

/**
 * Opens a stopped hub's PGlite store read-only in spirit and runs amcheck's bt_index_check (with
 * heapallindexed) on every btree index. Returns how many indexes were checked; throws on corruption.
 */
export async function amcheckIndexes(pgdata: string): Promise<number> {
	const { PGlite } = await import('@electric-sql/pglite');
	const { amcheck } = await import('@electric-sql/pglite/contrib/amcheck');
	const db = await PGlite.create({ dataDir: pgdata, extensions: { amcheck } });
	try {
		await db.exec('CREATE EXTENSION IF NOT EXISTS amcheck');
		const { rows } = await db.query<{ oid: number; name: string }>(
			`SELECT c.oid::int AS oid, c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			 JOIN pg_am a ON a.oid = c.relam JOIN pg_namespace n ON n.oid = c.relnamespace
			 WHERE a.amname = 'btree' AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')`,
		);
		for (const row of rows) {
			await db.query('SELECT bt_index_check($1::regclass, true)', [row.oid]);
		}
		return rows.length;
	} finally {
		await db.close();
	}
}

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

export interface HttpAnswer {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	body: string;
}

/** One plain HTTP request to a hub's 127.0.0.1 listener (a `Host` header in `headers` overrides the name). */
export function hubHttp(
	port: number,
	path: string,
	options: { method?: string; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
	return new Promise((resolve, reject) => {
		const req = request(
			{ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers ?? {} },
			res => {
				let body = '';
				res.setEncoding('utf8');
				res.on('data', (c: string) => (body += c));
				res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
			},
		);
		req.on('error', reject);
		req.end();
	});
}
