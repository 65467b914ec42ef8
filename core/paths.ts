/**
 * Where a Baton data dir keeps its files (DESIGN §1). Pure path arithmetic plus the environment
 * lookup of the default data dir; creating and checking the folders is the hub's job.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export interface HubPaths {
	/** The data dir itself (BATON_DATA_DIR, …). */
	dataDir: string;
	/** PGlite's own directory, beside run/ and backups/ so those never mix with database files. */
	pgdata: string;
	/** 0700 folder for the sockets and the token: the first guard against other users. */
	runDir: string;
	/** The hub's websocket listener (ws+unix:). */
	socket: string;
	/** The election socket: whoever has it bound owns the data dir (core/ownership.ts). */
	ownerSocket: string;
	/** 32 random bytes as hex, mode 0600. */
	token: string;
	/** `{port, pid, protocol}` of the live hub's TCP listener. */
	hubJson: string;
	/** Rolling JSONL backups. */
	backups: string;
	/** Where a spawned hub writes its stderr (clients spawn it detached). */
	hubLog: string;
}

/** BATON_DATA_DIR, else PGLITE_DATA_DIR, else ~/.config/baton/backlog; always absolute. */
export function resolveDataDir(env: NodeJS.ProcessEnv = process.env): string {
	for (const fromEnv of [env.BATON_DATA_DIR, env.PGLITE_DATA_DIR]) {
		// An empty variable (e.g. `BATON_DATA_DIR= baton …`) means unset, not the current directory.
		if (fromEnv !== undefined && fromEnv.trim() !== '') {
			return resolve(fromEnv);
		}
	}
	return join(homedir(), '.config', 'baton', 'backlog');
}

export function hubPaths(dataDir: string): HubPaths {
	const root = resolve(dataDir);
	const runDir = join(root, 'run');
	return {
		dataDir: root,
		pgdata: join(root, 'pgdata'),
		runDir,
		socket: join(runDir, 'hub.sock'),
		ownerSocket: join(runDir, 'owner.sock'),
		token: join(runDir, 'token'),
		hubJson: join(root, 'hub.json'),
		backups: join(root, 'backups'),
		hubLog: join(runDir, 'hub.log'),
	};
}

/** sun_path holds 108 bytes including the terminating NUL on Linux (104 on macOS). */
export const maxSocketPathBytes = process.platform === 'linux' ? 107 : 103;

/** A sentence saying why this data dir cannot host the hub's sockets, or undefined when it can. */
export function socketPathProblem(paths: HubPaths): string | undefined {
	const longest =
		Buffer.byteLength(paths.ownerSocket) > Buffer.byteLength(paths.socket) ? paths.ownerSocket : paths.socket;
	if (Buffer.byteLength(longest) <= maxSocketPathBytes) {
		return undefined;
	}
	return `The Baton data dir path ${paths.dataDir} is too long for its Unix sockets (${maxSocketPathBytes} bytes at most for ${longest}). Use a shorter BATON_DATA_DIR.`;
}
