/**
 * The run's hub relay: a unix socket the supervisor serves in a folder of its own
 * (`<data dir>/runs/<run>/hub/hub.sock`), each connection to it piped, both ways, to whatever listens
 * at the hub's socket path at that moment. Sandboxed agents reach the hub through it: bubblewrap binds
 * the relay's FOLDER (read-only: a socket is connected to, not written, and an agent must not swap in
 * a listener of its own that other seats would send their credentials to), so a relay socket made again
 * by a supervisor restarted to adopt its agents is seen inside, while the hub's own socket, made again
 * (a new file) at every hub start, is reached afresh by every new connection. A bind of the hub's socket
 * file showed the sandbox the old file forever: ECONNREFUSED after a hub restart.
 * Agents without a sandbox connect to the hub's socket directly: nothing hides its path from them, so
 * a restarted hub is found where it was, and a hop through the supervisor would only make their calls
 * depend on the supervisor's life.
 * The folder is 0700 like the data dir's run/ (whoever can connect here could already reach the hub's
 * socket). When its path is too long for a unix socket it is a folder named by a hash of the data dir
 * and run under $XDG_RUNTIME_DIR or the temp dir, in a 0700 folder of this user's.
 * Must not: read, log or alter the bytes (a pipe), listen anywhere but its own folder, or outlive the
 * run (close() ends every connection and removes the socket and the folder).
 */
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, rmSync, rmdirSync } from 'node:fs';
import { type Server, type Socket, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';

import { BatonError } from '../../core/errors';
import { createLogger, errorText } from '../../core/log';
import { maxSocketPathBytes } from '../../core/paths';

const log = createLogger('run').child('relay');

export interface RelayPaths {
	/** The relay's own folder (0700): what the sandbox shows. */
	dir: string;
	/** The relay's socket in it: the agents' BATON_HUB_SOCKET. */
	socket: string;
	/** A folder of this user's holding `dir` when the path under the data dir was too long, else undefined. */
	parent?: string;
}

/** Where run `run` of `dataDir` keeps its relay (the same at every start of the run, so adopted agents find it). */
export function relayPaths(
	dataDir: string,
	run: string,
	env: NodeJS.ProcessEnv = process.env,
	maxBytes = maxSocketPathBytes,
): RelayPaths {
	const dir = join(dataDir, 'runs', run, 'hub');
	if (Buffer.byteLength(join(dir, 'hub.sock')) <= maxBytes) {
		return { dir, socket: join(dir, 'hub.sock') };
	}
	const runtime = env.XDG_RUNTIME_DIR;
	const base = runtime !== undefined && isAbsolute(runtime) ? runtime : tmpdir();
	const parent = join(base, `baton-relay-${process.getuid?.() ?? 'user'}`);
	const hash = createHash('sha256').update(`${dataDir}\0${run}`).digest('hex').slice(0, 16);
	const short = join(parent, hash);
	if (Buffer.byteLength(join(short, 'hub.sock')) > maxBytes) {
		throw new BatonError(
			'invalid_input',
			`The relay socket of run "${run}" fits neither under the data dir nor under ${base} (${maxBytes} bytes at most). Use a shorter BATON_DATA_DIR or run name.`,
		);
	}
	return { dir: short, socket: join(short, 'hub.sock'), parent };
}

/** A private folder: made (or set) 0700; refused when it is a link or another user's. */
function privateDir(dir: string): void {
	mkdirSync(dir, { recursive: true, mode: 0o700 });
	const st = lstatSync(dir);
	const uid = process.getuid?.();
	if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) {
		throw new BatonError(
			'invalid_input',
			`${dir} is not a folder of this user's: the run's hub relay cannot live there.`,
		);
	}
	chmodSync(dir, 0o700);
}

export class HubRelay {
	private readonly pairs = new Set<Socket>();
	private closed = false;

	private constructor(
		readonly paths: RelayPaths,
		private readonly server: Server,
	) {}

	/** Listens at `paths.socket` (a file left there by an earlier supervisor of the run is replaced). */
	static async open(paths: RelayPaths, hubSocket: string): Promise<HubRelay> {
		if (paths.parent !== undefined) {
			privateDir(paths.parent);
		}
		privateDir(paths.dir);
		rmSync(paths.socket, { force: true });
		const server = createServer({ allowHalfOpen: true });
		const relay = new HubRelay(paths, server);
		server.on('connection', down => relay.pipe(down, hubSocket));
		server.on('error', e => log.warn(`the hub relay ${paths.socket}: ${errorText(e)}`));
		await new Promise<void>((resolve, reject) => {
			server.once('error', reject);
			server.listen(paths.socket, () => {
				server.off('error', reject);
				resolve();
			});
		});
		chmodSync(paths.socket, 0o600);
		return relay;
	}

	get socket(): string {
		return this.paths.socket;
	}

	private pipe(down: Socket, hubSocket: string): void {
		if (this.closed) {
			down.destroy();
			return;
		}
		const up = connect({ path: hubSocket, allowHalfOpen: true });
		this.pairs.add(down).add(up);
		// Either end's end is passed on (pipe ends the other side); an error or a close ends both.
		down.pipe(up);
		up.pipe(down);
		const end = (): void => {
			down.destroy();
			up.destroy();
			this.pairs.delete(down);
			this.pairs.delete(up);
		};
		for (const s of [down, up]) {
			s.on('error', end);
			s.on('close', end);
		}
	}

	/** Ends every connection, stops listening, removes the socket and the folder. */
	async close(): Promise<void> {
		if (this.closed) {
			return;
		}
		this.closed = true;
		for (const s of this.pairs) {
			s.destroy();
		}
		this.pairs.clear();
		await new Promise<void>(resolve => this.server.close(() => resolve()));
		rmSync(this.paths.socket, { force: true });
		try {
			rmdirSync(this.paths.dir);
		} catch {
			// Something else was put in it: left alone.
		}
	}
}
