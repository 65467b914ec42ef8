/**
 * How an agent started by `baton run` reaches the hub: `baton run` gives it a seat credential and the
 * hub's socket in its environment (BATON_SEAT_TOKEN, BATON_HUB_SOCKET), and every Baton client inside the
 * seat (`baton mcp`, the `baton` CLI) connects with them. Must not: read the data dir's token file or
 * start a hub (in a sandboxed seat the data dir is not even visible; the seat's hub is the supervisor's).
 */
import { BatonError } from '../errors';
import type { Hello } from '../protocol';
import { type Connector, RpcClient } from '../protocol/rpc';
import type { ConnectHubOptions } from './connectHub';
import { connectFailure, openWsTransport, unixSocketUrl } from './wsTransport';

/** The variables `baton run` gives its agents: the seat credential and the hub socket. */
export const seatTokenVar = 'BATON_SEAT_TOKEN';
export const hubSocketVar = 'BATON_HUB_SOCKET';

export interface SeatAccess {
	token: string;
	socket: string;
}

/** The seat of this environment, when `baton run` started the process (both variables set). */
export function seatFromEnv(env: NodeJS.ProcessEnv): SeatAccess | undefined {
	const token = env[seatTokenVar];
	const socket = env[hubSocketVar];
	if (token === undefined || token === '' || socket === undefined || socket === '') {
		return undefined;
	}
	return { token, socket };
}

/** Connects through the seat's socket with its credential (hello done); never spawns a hub. */
export async function connectSeat(
	options: Omit<ConnectHubOptions, 'dataDir' | 'spawnHub'>,
	seat: SeatAccess,
): Promise<RpcClient> {
	const hello: Omit<Hello, 'hello' | 'protocol'> = { client: options.client, seat: seat.token };
	if (options.agent) {
		hello.agent = options.agent;
	}
	if (options.session !== undefined) {
		hello.session = options.session;
	}
	if (options.insideAgent !== undefined) {
		hello.insideAgent = options.insideAgent;
	}
	const handshakeTimeoutMs = options.handshakeTimeoutMs ?? 5_000;
	const connect: Connector = async () => {
		try {
			return await openWsTransport(unixSocketUrl(seat.socket), { handshakeTimeoutMs });
		} catch (e) {
			if (connectFailure(e) === 'absent') {
				throw new BatonError(
					'unavailable',
					`The Baton hub of this agent's seat (${seat.socket}) does not answer; an agent started by baton run never starts a hub itself.`,
				);
			}
			throw e;
		}
	};
	const client = new RpcClient({
		connect,
		hello,
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
