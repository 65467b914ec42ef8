/**
 * The single-owner guarantee of a data dir: whoever has `run/owner.sock` bound owns the
 * store. The kernel decides: only one process can bind the path, and the binding dies with the
 * process even on kill -9. A leftover socket file that refuses connections is removed under a short
 * mkdir lock and the bind retried. Never pid files or mtime/TTL locks: pids are reused and a stalled
 * owner must not lose its data dir (RELIABILITY 13, 16).
 */
import { chmodSync, mkdirSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { type Server, createServer } from 'node:net';
import { join } from 'node:path';
import { Backlog } from '../../core/backlog';
import { type OwnerAnnouncement, probeOwner } from '../../core/client/ownerProbe';
import { BatonError } from '../../core/errors';
import { type Logger, createLogger } from '../../core/log';
import { type HubPaths, hubPaths, socketPathProblem } from '../../core/paths';

export interface Ownership {
	readonly paths: HubPaths;
	readonly pid: number;
	/** Unbinds the owner socket; the next opener can take over. Idempotent. */
	release(): Promise<void>;
}

export interface AcquireOptions {
	/** How a refused opener should call us, e.g. "baton hub". */
	role?: string;
	/** The owner's logger, for faults of the owner socket while held; default an `ownership` logger. */
	log?: Logger | undefined;
}

const lockWaitMs = 3_000;

/**
 * Binds the owner socket of `dataDir` or throws a `conflict` BatonError naming the live owner's pid.
 * A refused open creates and changes nothing in the data dir (RELIABILITY 1).
 */
export async function acquireOwnership(dataDir: string, options: AcquireOptions = {}): Promise<Ownership> {
	const paths = hubPaths(dataDir);
	const role = options.role ?? 'baton hub';
	const log = options.log ?? createLogger('ownership');
	const tooLong = socketPathProblem(paths);
	if (tooLong !== undefined) {
		throw new BatonError('invalid_input', tooLong);
	}
	ensurePrivateDir(paths.dataDir, 0o700, false);
	ensurePrivateDir(paths.runDir, 0o700, true);
	for (let attempt = 0; attempt < 10; attempt++) {
		const announcement: OwnerAnnouncement = { baton: 'owner', pid: process.pid, role };
		const server = await tryBind(paths.ownerSocket, `${JSON.stringify(announcement)}\n`, log);
		if (server) {
			return makeOwnership(paths, server);
		}
		const probe = await probeOwner(paths.ownerSocket);
		if (probe.state === 'alive') {
			throw ownedError(paths.dataDir, probe);
		}
		if (probe.state === 'refused') {
			await removeStaleSocket(paths);
		}
		// 'gone': the file vanished between bind and probe (another opener cleaned up); bind again.
	}
	throw new BatonError(
		'unavailable',
		`Could not take ownership of the Baton data dir ${paths.dataDir}: other processes keep racing for it. Try again.`,
	);
}

export interface OwnedBacklog {
	readonly backlog: Backlog;
	readonly ownership: Ownership;
	/** Closes the store cleanly, then gives up ownership. */
	close(): Promise<void>;
}

/** Acquires the data dir, then opens PGlite in its pgdata/ folder. Nothing is opened on refusal. */
export async function openOwnedBacklog(
	dataDir: string,
	options: Omit<Parameters<typeof Backlog.open>[0], 'pgliteDir'> & AcquireOptions = {},
): Promise<OwnedBacklog> {
	const { role, ...openOptions } = options;
	const ownership = await acquireOwnership(dataDir, { ...(role === undefined ? {} : { role }), log: openOptions.log });
	let backlog: Backlog;
	try {
		backlog = await Backlog.open({ ...openOptions, pgliteDir: ownership.paths.pgdata });
	} catch (e) {
		await ownership.release();
		throw e;
	}
	return {
		backlog,
		ownership,
		close: async () => {
			try {
				await backlog.close();
			} finally {
				await ownership.release();
			}
		},
	};
}

function ownedError(dataDir: string, probe: { pid: number | undefined; role: string | undefined }): BatonError {
	const who =
		probe.pid === undefined
			? 'a process that does not answer (stopped or busy)'
			: `pid ${probe.pid} (${probe.role ?? 'baton hub'})`;
	return new BatonError(
		'conflict',
		`Baton data dir ${dataDir} is owned by ${who}. Use the hub (baton …) instead of opening it directly.`,
		{ ownerPid: probe.pid ?? null },
	);
}

function tryBind(path: string, announcement: string, log: Logger): Promise<Server | undefined> {
	return new Promise((resolve, reject) => {
		const server = createServer(socket => {
			// A prober may hang up at once; its reset must not crash the owner.
			socket.on('error', () => undefined);
			socket.end(announcement);
		});
		const onError = (e: NodeJS.ErrnoException): void => {
			server.close();
			if (e.code === 'EADDRINUSE') {
				resolve(undefined);
			} else {
				reject(new BatonError('unavailable', `Cannot bind the Baton owner socket ${path}: ${e.code ?? e.message}.`));
			}
		};
		server.once('error', onError);
		server.listen(path, () => {
			server.off('error', onError);
			server.on('error', e => log.error(`owner socket error: ${e.message}`));
			resolve(server);
		});
	});
}

/**
 * Removes a socket file nobody listens on. The mkdir lock serialises the re-probe + unlink so two
 * openers cannot both clear the path and one unlink the other's fresh socket. The lock is held for
 * microseconds; one older than lockWaitMs belongs to an opener killed inside that window.
 */
async function removeStaleSocket(paths: HubPaths): Promise<void> {
	const lock = join(paths.runDir, 'owner.lock');
	const started = Date.now();
	for (;;) {
		try {
			mkdirSync(lock, { mode: 0o700 });
			break;
		} catch (e) {
			if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
				throw e;
			}
			if (Date.now() - started > lockWaitMs) {
				rmdirQuiet(lock);
				continue;
			}
			await sleep(10 + Math.random() * 20);
		}
	}
	try {
		const again = await probeOwner(paths.ownerSocket);
		if (again.state === 'refused') {
			try {
				unlinkSync(paths.ownerSocket);
			} catch (e) {
				if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
					throw e;
				}
			}
		}
	} finally {
		rmdirQuiet(lock);
	}
}

function makeOwnership(paths: HubPaths, server: Server): Ownership {
	let released: Promise<void> | undefined;
	return {
		paths,
		pid: process.pid,
		release: () =>
			(released ??= new Promise<void>(resolve => {
				// libuv unlinks the socket file when the listening handle closes.
				server.close(() => resolve());
			})),
	};
}

/** Creates `dir` when missing (mode applied despite the umask). Never touches an existing one. */
function ensurePrivateDir(dir: string, mode: number, exact: boolean): void {
	try {
		statSync(dir);
		return;
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
			throw e;
		}
	}
	mkdirSync(dir, { recursive: true, mode });
	if (exact) {
		// mkdir's mode is masked by the umask; the run dir must be exactly 0700.
		chmodSync(dir, mode);
	}
}

function rmdirQuiet(path: string): void {
	try {
		rmdirSync(path);
	} catch {
		// Already gone: another opener released or broke it.
	}
}

function sleep(ms: number): Promise<void> {
	return new Promise(resolve => setTimeout(resolve, ms));
}
