/**
 * The seats of a run: seat n's identity (a fresh agent id `<kind>-<run>-s<n>-<random>` and
 * session per card, so a card is held by exactly one session from claim to end), its connection to the
 * hub opened ahead of need (a claim does not wait for a websocket handshake), and the job running in
 * it. Must not: reuse an identity after its card's claim ended, or open a connection per claim attempt.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

import { createLogger, errorText } from '../../core/log';
import type { AgentInfo } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import type { AgentJob } from './agentJob';

const log = createLogger('run').child('seat');

export interface SeatIdentity {
	agent: string;
	session: string;
}

export function newIdentity(kind: string, run: string, seat: number): SeatIdentity {
	return {
		agent: `${kind}-${run}-s${seat}-${randomBytes(2).toString('hex')}`,
		session: randomBytes(16).toString('hex'),
	};
}

/** Opens a connection whose hello is this identity (core/client connectHub, a `cli` client). */
export type SeatConnector = (info: AgentInfo, session: string) => Promise<RpcClient>;

export class Seat {
	job: AgentJob | undefined;
	/** Set while a claim or a start is in flight: the seat counts as taken. */
	claiming = false;
	/**
	 * A card of this run that a previous supervisor left claimed with no agent this one can watch (no
	 * seat record, or one it could not act on): the seat stays taken until that claim ends, by its lease
	 * or otherwise, so a restart never has more cards held than seats (the chaos proof found 11 on 8).
	 */
	lingering: { cardId: string; epoch: number } | undefined;
	private identity: SeatIdentity | undefined;
	private conn: Promise<RpcClient> | undefined;

	constructor(
		readonly n: number,
		private readonly kind: string,
		private readonly run: string,
		private readonly connector: SeatConnector,
	) {}

	get free(): boolean {
		return this.job === undefined && !this.claiming && this.lingering === undefined;
	}

	/** This seat's next identity and its open connection (made once, kept until a card uses it). */
	async connection(): Promise<{ identity: SeatIdentity; conn: RpcClient }> {
		this.identity ??= newIdentity(this.kind, this.run, this.n);
		const identity = this.identity;
		this.conn ??= this.connector(
			{
				id: identity.agent,
				name: identity.agent,
				client: 'baton run',
				host: hostname(),
				pid: process.pid,
				kind: this.kind,
			},
			identity.session,
		);
		try {
			return { identity, conn: await this.conn };
		} catch (e) {
			this.conn = undefined;
			throw e;
		}
	}

	/** Warms the next identity's connection in the background (the seat is free again). */
	warm(): void {
		this.connection().catch((e: unknown) => log.warn(`seat ${this.n}: connecting failed: ${errorText(e)}`));
	}

	/** The identity now belongs to the card just claimed: the next claim gets a fresh one. */
	handOver(): void {
		this.identity = undefined;
		this.conn = undefined;
	}

	/** Closes the warm connection (the run is ending). */
	close(): void {
		void this.conn?.then(
			c => c.close(),
			() => undefined,
		);
		this.conn = undefined;
		this.identity = undefined;
	}
}
