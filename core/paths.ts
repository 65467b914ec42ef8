/**
 * Where a Baton data dir keeps its files (docs/decisions/0026-data-dir-layout.md). Path arithmetic plus the environment
 * lookup of the default data dir; creating and checking the folders is the hub's job.
 */
import { existsSync } from 'node:fs';
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
	/** The election socket: whoever has it bound owns the data dir (mcp-server/hub/ownership.ts). */
	ownerSocket: string;
	/** 32 random bytes as hex, mode 0600. */
	token: string;
	/** The scrape token, like `token` but it opens only `GET /metrics` (Prometheus reads it). */
	metricsToken: string;
	/** `{port, pid, protocol}` of the live hub's TCP listener. */
	hubJson: string;
	/** The live hub's /metrics as a Prometheus file_sd target list (its port changes at every start). */
	metricsTargets: string;
	/** Rolling JSONL backups. */
	backups: string;
	/** Where a spawned hub writes its stderr (clients spawn it detached). */
	hubLog: string;
	/** `{pid, code, message}` of a hub that refused to open the store, for the client that spawned it. */
	refusal: string;
}

/**
 * BATON_DATA_DIR, else ~/.config/baton/backlog; always absolute. PGLITE_DATA_DIR is not read: in the
 * backlog format it names a PGlite directory itself, while a Baton data dir holds one (pgdata/) beside
 * run/ and backups/ (docs/guide.md). stalePgliteDataDir says when it still points at a Baton data dir.
 */
export function resolveDataDir(env: NodeJS.ProcessEnv = process.env): string {
	const fromEnv = env.BATON_DATA_DIR;
	// An empty variable (e.g. `BATON_DATA_DIR= baton …`) means unset, not the current directory.
	if (fromEnv !== undefined && fromEnv.trim() !== '') {
		return resolve(fromEnv);
	}
	return join(homedir(), '.config', 'baton', 'backlog');
}

/**
 * Earlier Baton versions read PGLITE_DATA_DIR as the data dir. When it is set and names a different
 * folder that holds a Baton data dir's store, a sentence telling the user how to keep using it.
 */
export function stalePgliteDataDir(dataDir: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
	const legacy = env.PGLITE_DATA_DIR;
	if (legacy === undefined || legacy.trim() === '' || resolve(legacy) === resolve(dataDir)) {
		return undefined;
	}
	if (!existsSync(join(resolve(legacy), 'pgdata'))) {
		return undefined;
	}
	return `PGLITE_DATA_DIR is set to ${resolve(legacy)}, which holds a Baton backlog, but Baton no longer reads it: this hub serves ${resolve(dataDir)}. To keep using that backlog, set BATON_DATA_DIR=${resolve(legacy)}.`;
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
		metricsToken: join(runDir, 'metrics.token'),
		hubJson: join(root, 'hub.json'),
		metricsTargets: join(root, 'metrics-targets.json'),
		backups: join(root, 'backups'),
		hubLog: join(runDir, 'hub.log'),
		refusal: join(runDir, 'refusal.json'),
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
