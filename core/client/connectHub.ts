/**
 * Finds the hub of a data dir, or starts one, and returns a connected RpcClient. Only
 * "nobody listens" (ENOENT/ECONNREFUSED on hub.sock) spawns a hub; a hub that accepts but does not
 * answer (SIGSTOP, long query) is waited for, never replaced. Racing spawns are safe: the hubs
 * elect one owner through mcp-server/hub/ownership.ts and the losers exit.
 */
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync } from 'node:fs';
import { Backoff, hubStartBackoff } from '../backoff';
import { type Clock, sleep, systemClock } from '../clock';
import { BatonError } from '../errors';
import { diskFullError, freeBytes, startReserveBytes } from '../files/diskSpace';
import { type AgentInfo, type ClientKind, type Hello, type Method, protocolVersion } from '../protocol';
import { type Connector, RpcClient, type Transport } from '../protocol/rpc';
import { createLogger } from '../log';
import { type HubPaths, hubPaths, resolveDataDir, socketPathProblem } from '../paths';
import { diagnoseHub } from './hubDiagnosis';
import { probeOwner } from './ownerProbe';
import { connectFailure, openWsTransport, unixSocketUrl } from './wsTransport';

/** Diagnostics only: whoever called connectHub reports its failures to the user. */
const clientLog = createLogger('client');

/** Hubs one connect attempt may start (each exits at once when another owns the data dir). */
const maxSpawns = 5;

export interface SpawnHubCommand {
	command: string;
	args: string[];
	env?: NodeJS.ProcessEnv;
}

export interface ConnectHubOptions {
	/** Default resolveDataDir(). */
	dataDir?: string;
	client: ClientKind;
	agent?: AgentInfo;
	/** The hello's `session` (the same at every reconnect): leases claimed through it are its own. */
	session?: string;
	/** The hello's `insideAgent`: this client runs inside a coding agent (what says so). */
	insideAgent?: string;
	/**
	 * How to start `baton hub` when none answers; false = never spawn. Default: process.execPath +
	 * the running baton.js (process.argv[1]) + ['hub', '--data-dir', dataDir]. The extension passes
	 * its own (Electron as node).
	 */
	spawnHub?: false | SpawnHubCommand;
	requestTimeoutMs?: number;
	reconnect?: boolean;
	/** How long to wait for a spawned hub to start listening (default 30 s: first init of PGlite). */
	startTimeoutMs?: number;
	/**
	 * How long to keep waiting, past startTimeoutMs, while a hub holds the data dir but is still opening
	 * its store: migrations on a big store take a while (an events rewrite: 29 s at 1M events). Default
	 * 10 min.
	 */
	openTimeoutMs?: number;
	/** Give up an upgrade the hub does not answer within this many ms (default 5 s). */
	handshakeTimeoutMs?: number;
	/** Time and timers of the client and of the wait for a spawned hub. Default systemClock. */
	clock?: Clock;
	/** Methods whose results the client takes unchecked (RpcClientOptions.unchecked). */
	unchecked?: readonly Method[];
}

/** Connects (hello done) or throws a BatonError saying what to do. Reconnects and respawns later. */
export async function connectHub(options: ConnectHubOptions): Promise<RpcClient> {
	const paths = hubPaths(options.dataDir ?? resolveDataDir());
	const tooLong = socketPathProblem(paths);
	if (tooLong !== undefined) {
		throw new BatonError('invalid_input', tooLong);
	}
	const hello: Omit<Hello, 'hello' | 'protocol'> = { client: options.client };
	if (options.agent) {
		hello.agent = options.agent;
	}
	if (options.session !== undefined) {
		hello.session = options.session;
	}
	if (options.insideAgent !== undefined) {
		hello.insideAgent = options.insideAgent;
	}
	const connect: Connector = async () => {
		const transport = await findOrSpawnHub(paths, options);
		// RpcClient spreads `hello` at each connect: refresh the token in case the data dir was reset.
		try {
			hello.token = readToken(paths);
		} catch (e) {
			transport.close();
			throw e;
		}
		return transport;
	};
	const client = new RpcClient({
		connect,
		hello,
		explainTimeout: async () => (await diagnoseHub(paths)).sentence,
		...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
		...(options.reconnect === undefined ? {} : { reconnect: options.reconnect }),
		...(options.clock === undefined ? {} : { clock: options.clock }),
		...(options.unchecked === undefined ? {} : { unchecked: options.unchecked }),
	});
	try {
		await client.start();
	} catch (e) {
		client.close();
		throw e;
	}
	return client;
}

/** The command a person starts a hub for `dataDir` with: `baton up`, naming the dir unless it is the one baton finds. */
export function startHint(dataDir: string): string {
	if (dataDir === resolveDataDir(process.env)) {
		return 'baton up';
	}
	return `baton up --data-dir ${/^[\w./:@+-]+$/.test(dataDir) ? dataDir : `'${dataDir.replace(/'/g, `'\\''`)}'`}`;
}

/**
 * The default way to start a hub: this same program (`node --v8-pool-size=1 baton.js hub --data-dir D`).
 * Node gives V8 four threads for its background work by default. A new hub tiers PGlite's hot WASM
 * functions up to optimised code in the background during its first minute; four jobs at once hold
 * four compilers' memory, and much of it stays resident after: a ten-card hub idled at 235–241 MB with
 * four threads and 184–212 MB with one, at the same CPU per call with 64 agents, and started faster on
 * two cores (docs/benchmarks.md). The extension passes its own command (VS Code's runtime).
 */
export function defaultSpawnCommand(dataDir: string): SpawnHubCommand {
	const script = process.argv[1];
	if (script === undefined) {
		throw new BatonError('unavailable', 'Cannot tell which program to start as the Baton hub; pass spawnHub.');
	}
	return { command: process.execPath, args: ['--v8-pool-size=1', script, 'hub', '--data-dir', dataDir] };
}

async function findOrSpawnHub(paths: HubPaths, options: ConnectHubOptions): Promise<Transport> {
	const startTimeoutMs = options.startTimeoutMs ?? 30_000;
	const handshakeTimeoutMs = options.handshakeTimeoutMs ?? 5_000;
	const clock = options.clock ?? systemClock;
	const elapsed = (since: number): number => clock.now().getTime() - since;
	const poll = new Backoff(hubStartBackoff);
	let spawnedAt: number | undefined;
	let child: SpawnedHub | undefined;
	let spawns = 0;
	for (;;) {
		checkHubProtocol(paths);
		try {
			return await openWsTransport(unixSocketUrl(paths.socket), { handshakeTimeoutMs });
		} catch (e) {
			if (connectFailure(e) === 'unresponsive' && BatonError.is(e)) {
				throw new BatonError('unavailable', `${e.message} ${(await diagnoseHub(paths)).sentence}`, e.data);
			}
			if (connectFailure(e) !== 'absent') {
				throw e;
			}
			if (options.spawnHub === false) {
				throw new BatonError(
					'unavailable',
					`No Baton hub is running for ${paths.dataDir}. Start one with "${startHint(paths.dataDir)}" (the hub keeps running after Ctrl-C; any other baton command starts one too).`,
				);
			}
			if (spawnedAt === undefined) {
				spawnedAt = clock.now().getTime();
			} else if (elapsed(spawnedAt) > startTimeoutMs) {
				await stillOpening(paths, elapsed(spawnedAt), startTimeoutMs, options.openTimeoutMs ?? 10 * 60_000);
			}
			if (child?.exited === true) {
				throwRefusal(paths, child.pid);
				throwIfDiskFull(paths);
			}
			// Spawn again only when our hub exited and nobody owns the data dir: it lost the election to
			// a hub that was starting (wait for that one) or stopping (gone now, so try again).
			if (child === undefined) {
				child = spawnHubProcess(paths, options.spawnHub ?? defaultSpawnCommand(paths.dataDir));
				spawns++;
			} else if (child.exited && spawns < maxSpawns) {
				const owner = await probeOwner(paths.ownerSocket, 200);
				if (owner.state !== 'alive') {
					child = spawnHubProcess(paths, options.spawnHub ?? defaultSpawnCommand(paths.dataDir));
					spawns++;
				}
			}
			await sleep(clock, poll.next());
		}
	}
}

/**
 * Past the start timeout, a hub that holds the data dir (its owner socket answers) but does not
 * listen yet is opening its store: keep waiting for it, up to openTimeoutMs. Anything else throws.
 */
async function stillOpening(
	paths: HubPaths,
	waitedMs: number,
	startTimeoutMs: number,
	openTimeoutMs: number,
): Promise<void> {
	const owner = await probeOwner(paths.ownerSocket, 200);
	if (owner.state !== 'alive') {
		throwIfDiskFull(paths);
		throw new BatonError(
			'unavailable',
			`The Baton hub for ${paths.dataDir} did not start within ${Math.round(startTimeoutMs / 1000)} s. See ${paths.hubLog}.`,
		);
	}
	if (waitedMs > openTimeoutMs) {
		const who = `${owner.role ?? 'a process'}${owner.pid === undefined ? '' : ` (pid ${owner.pid})`}`;
		throw new BatonError(
			'unavailable',
			`${who} holds ${paths.dataDir} but has not opened its store within ${Math.round(waitedMs / 1000)} s. See ${paths.hubLog}; stop it if it is stuck.`,
		);
	}
}

/** Refuses a hub that announced another protocol in hub.json, before any frame is exchanged. */
function checkHubProtocol(paths: HubPaths): void {
	let text: string;
	try {
		text = readFileSync(paths.hubJson, 'utf8');
	} catch {
		return;
	}
	let info: { pid?: unknown; protocol?: unknown };
	try {
		info = JSON.parse(text) as { pid?: unknown; protocol?: unknown };
	} catch {
		return;
	}
	if (typeof info.protocol === 'number' && info.protocol !== protocolVersion) {
		const pid = typeof info.pid === 'number' ? ` (pid ${info.pid})` : '';
		throw new BatonError(
			'protocol_mismatch',
			`The Baton hub for ${paths.dataDir}${pid} speaks protocol ${info.protocol} but this client speaks ${protocolVersion}. Stop the old hub ("baton hub stop") or use the same Baton version.`,
			{ hubProtocol: info.protocol, clientProtocol: protocolVersion },
		);
	}
}

function readToken(paths: HubPaths): string {
	try {
		return readFileSync(paths.token, 'utf8').trim();
	} catch (e) {
		throw new BatonError(
			'unauthorized',
			`Cannot read the Baton hub token ${paths.token} (${(e as NodeJS.ErrnoException).code ?? 'error'}); is this data dir yours?`,
		);
	}
}

interface SpawnedHub {
	exited: boolean;
	pid: number | undefined;
}

/**
 * A hub we spawned that refused the store (newer schema, not a backlog) or could not reach PostgreSQL
 * left run/refusal.json with its pid: spawning again would fail the same way, so its sentence is the answer.
 */
function throwRefusal(paths: HubPaths, pid: number | undefined): void {
	let refusal: { pid?: unknown; code?: unknown; message?: unknown };
	try {
		refusal = JSON.parse(readFileSync(paths.refusal, 'utf8')) as typeof refusal;
	} catch {
		return;
	}
	if (pid !== undefined && refusal.pid === pid && typeof refusal.message === 'string') {
		const code =
			refusal.code === 'store_too_new' || refusal.code === 'unavailable' || refusal.code === 'disk_full'
				? refusal.code
				: 'store_refused';
		throw new BatonError(code, refusal.message, { dataDir: paths.dataDir });
	}
}

/**
 * A hub we started exited without a refusal we could read: on a full disk it may not have been able
 * to write one, nor its log. Then the client names the full disk itself.
 */
function throwIfDiskFull(paths: HubPaths): void {
	let free: number;
	try {
		free = freeBytes(paths.pgdata);
	} catch {
		return;
	}
	if (free < startReserveBytes) {
		throw diskFullError(paths.pgdata, free, startReserveBytes, true);
	}
}

function spawnHubProcess(paths: HubPaths, command: SpawnHubCommand): SpawnedHub {
	ensureDir(paths.dataDir);
	ensureDir(paths.runDir);
	const state: SpawnedHub = { exited: false, pid: undefined };
	rotateLog(paths.hubLog);
	// Detached with stderr to a log file: the hub outlives this client and must not write to its stdio.
	const log = openSync(paths.hubLog, 'a', 0o600);
	try {
		const child = spawn(command.command, command.args, {
			detached: true,
			stdio: ['ignore', 'ignore', log],
			env: withLeanMalloc(command.env ?? hubEnvFrom(process.env)),
		});
		child.on('error', e => {
			state.exited = true;
			clientLog.error(`could not start the hub: ${e.message}`);
		});
		child.on('exit', () => {
			state.exited = true;
		});
		state.pid = child.pid;
		child.unref();
	} finally {
		closeSync(log);
	}
	return state;
}

/** Keeps hub.log bounded: past 5 MB it becomes hub.log.1 (replacing the previous one). */
function rotateLog(path: string): void {
	try {
		if (statSync(path).size > 5 * 1024 * 1024) {
			renameSync(path, `${path}.1`);
		}
	} catch {
		// No log yet.
	}
}

function ensureDir(dir: string): void {
	try {
		statSync(dir);
	} catch {
		mkdirSync(dir, { recursive: true, mode: 0o700 });
		chmodSync(dir, 0o700);
	}
}

/**
 * glibc's malloc keeps freed blocks below its mmap threshold in the heap, which rarely shrinks; PGlite's
 * start-up allocations (the template, MEMFS) made ~30–40 MB of a hub's idle RSS that way. 128 KB
 * blocks and up are mmapped and returned whole (measured idle with ten cards 265 → 232 MB).
 * An explicit setting of the user's wins.
 */
function withLeanMalloc(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
	return { MALLOC_MMAP_THRESHOLD_: '131072', ...env };
}

/**
 * A spawned hub's environment: this process's without `baton mcp`'s marker (BATON_INSIDE_MCP;
 * docs/decisions/0029-sessions.md), which it passes to nothing but what runs inside the agent's session; the hub serves everyone.
 */
function hubEnvFrom(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
	const { BATON_INSIDE_MCP: _marker, ...rest } = env;
	return rest;
}
