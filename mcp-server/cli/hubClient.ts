/**
 * How every face of the `baton` program (CLI, MCP server, up, demo) reaches the hub: core/client's
 * connectHub, which spawns this same program as `baton hub --data-dir D` when no hub answers. No store
 * access here: the hub is the only owner of the data dir (one process writes the store, so no two can corrupt it). Inside a `baton run` seat it
 * connects with the seat's credential instead (core/client/seatHub.ts).
 */
import { resolve } from 'node:path';

import { connectHub } from '../../core/client/connectHub';
import { connectSeat, seatFromEnv } from '../../core/client/seatHub';
import { resolveDataDir } from '../../core/paths';
import type { AgentInfo, ClientKind, Method } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';

/**
 * With workspaces on, the hub answers a claim sent with a `root` once the card's worktree is
 * made and its setup command ran (a project's limit, 10 minutes by default): the claimer waits that
 * much longer for the answer.
 */
export const workspaceAllowanceMs = 11 * 60_000;

export interface OpenHubOptions {
	/** Data dir; when omitted, BATON_DATA_DIR, else ~/.config/baton/backlog. */
	dataDir?: string | undefined;
	client: ClientKind;
	agent?: AgentInfo | undefined;
	requestTimeoutMs?: number | undefined;
	reconnect?: boolean | undefined;
	/** false: fail with `unavailable` instead of starting a hub (hub status / stop). */
	spawn?: boolean | undefined;
	/** The hello's session: `baton mcp`'s, made once per process. */
	session?: string | undefined;
	/** The hello's insideAgent: what says this CLI runs inside a coding agent. */
	insideAgent?: string | undefined;
	/** Methods whose results are taken unchecked (RpcClientOptions.unchecked). */
	unchecked?: readonly Method[] | undefined;
}

export function openHub(options: OpenHubOptions): Promise<RpcClient> {
	// An agent `baton run` started: its seat credential and hub socket, never the token file.
	const seat = seatFromEnv(process.env);
	if (seat !== undefined) {
		return connectSeat(
			{
				client: options.client,
				...(options.agent === undefined ? {} : { agent: options.agent }),
				...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
				...(options.reconnect === undefined ? {} : { reconnect: options.reconnect }),
				...(options.session === undefined ? {} : { session: options.session }),
				...(options.insideAgent === undefined ? {} : { insideAgent: options.insideAgent }),
				...(options.unchecked === undefined ? {} : { unchecked: options.unchecked }),
				handshakeTimeoutMs: 15_000,
			},
			seat,
		);
	}
	return connectHub({
		dataDir: options.dataDir ?? resolveDataDir(process.env),
		client: options.client,
		...(options.agent === undefined ? {} : { agent: options.agent }),
		...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
		...(options.reconnect === undefined ? {} : { reconnect: options.reconnect }),
		...(options.spawn === false ? { spawnHub: false as const } : {}),
		...(options.session === undefined ? {} : { session: options.session }),
		...(options.insideAgent === undefined ? {} : { insideAgent: options.insideAgent }),
		...(options.unchecked === undefined ? {} : { unchecked: options.unchecked }),
		// A hub spawned a moment ago may still be opening PGlite when it accepts the socket; on a
		// loaded machine that took longer than connectHub's default 5 s (measured: a flaky `baton up`).
		handshakeTimeoutMs: 15_000,
	});
}

/** Absolute path of the running dist/baton.js, for printing MCP configs and spawning `baton mcp`. */
export function batonScript(): string {
	const script = process.argv[1];
	if (script === undefined) {
		throw new Error('Cannot tell where baton.js is: run it as "node dist/baton.js".');
	}
	return resolve(script);
}
