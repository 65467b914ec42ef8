/**
 * Seat credentials: what an agent started by `baton run` holds instead of the hub token. The supervisor's
 * seat connection (a person's process, which read the token) asks for one for the card its session holds
 * (`dispatch/seat`); the credential names that card, claim epoch, agent id and session, signed with a key
 * derived from the hub token, so it survives a hub restart and needs no table. A connection that says
 * hello with it is that card's agent: its id and session are the credential's, and it may read anything,
 * create cards, and act on its own card only (claim it, heartbeat, complete, fail, release, comment,
 * reserve, review, update, block). The credential dies with the claim it was made for: once the card is
 * no longer held at that epoch by that agent, every request is refused.
 * Must not: return or log the hub token or a credential, or let a seat connection mint another credential.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

import type { Backlog } from '../../core/backlog';
import { BatonError } from '../../core/errors';
import { type AgentInfo, type Card, type Method, methods } from '../../core/protocol';
import { askPerson, humanVerbOf } from './humanVerbs';

/** What a seat credential says. */
export interface SeatGrant {
	cardId: string;
	epoch: number;
	agent: string;
	session: string;
	kind?: string | undefined;
}

/** The minting connection, as far as this module needs it. */
export interface SeatMinter {
	seat?: SeatGrant | undefined;
	hello: { agent?: AgentInfo | undefined; session?: string | undefined } | undefined;
}

const prefix = 'seat1';

/** Methods that only read: a seat connection may call them on anything. */
const reads: ReadonlySet<Method> = new Set<Method>([
	'card/get',
	'card/list',
	'card/listRows',
	'card/stats',
	'card/diff',
	'agent/list',
	'agent/ping',
	'events/list',
	'events/subscribe',
	'hub/status',
	'settings/get',
	'project/settings',
	'pause/list',
	'run/list',
	'landing/queue',
	'inbox/ack',
]);

/** Methods a seat connection may call on its own card only (params.cardId). */
const ownCard: ReadonlySet<Method> = new Set<Method>([
	'card/claim',
	'card/heartbeat',
	'card/complete',
	'card/release',
	'card/fail',
	'card/comment',
	'card/reserve',
	'card/review',
	'card/update',
	'card/block',
]);

export class SeatCredentials {
	private readonly key: Buffer;

	constructor(
		hubToken: string,
		private readonly backlog: Backlog,
	) {
		this.key = createHmac('sha256', hubToken).update('baton seat credential v1').digest();
	}

	/** `dispatch/seat`: a credential for the card `conn`'s session holds at `epoch`. */
	async mint(conn: SeatMinter, params: { cardId: string; epoch: number }): Promise<{ token: string }> {
		if (conn.seat !== undefined) {
			throw new BatonError(
				'unauthorized',
				'A seat credential cannot make another one: only the supervisor that claimed the card can.',
			);
		}
		const agent = conn.hello?.agent?.id;
		const session = conn.hello?.session;
		if (agent === undefined || session === undefined) {
			throw new BatonError(
				'invalid_input',
				'Only a connection with an agent and a session (the supervisor’s seat) can ask for a seat credential.',
			);
		}
		const { card, claimSession } = await this.backlog.claimOf(params.cardId);
		if (
			!holds(card, { agent, epoch: params.epoch }) ||
			claimSession !== session ||
			card.dispatch === null ||
			card.dispatch === undefined
		) {
			throw new BatonError(
				'lease_lost',
				`Card ${params.cardId} is not held by ${agent} at epoch ${params.epoch} for a dispatched agent: no seat credential for it.`,
			);
		}
		const grant: SeatGrant = {
			cardId: card.id,
			epoch: params.epoch,
			agent,
			session,
			...(conn.hello?.agent?.kind === undefined ? {} : { kind: conn.hello.agent.kind }),
		};
		const payload = Buffer.from(JSON.stringify(grant)).toString('base64url');
		return { token: `${prefix}.${payload}.${this.sign(payload)}` };
	}

	/** The grant of a well-signed credential whose claim is still live; else `unauthorized`. */
	async verify(token: string): Promise<SeatGrant> {
		const grant = this.decode(token);
		if (grant === undefined) {
			throw new BatonError('unauthorized', 'Wrong seat credential (not one this hub made).');
		}
		await this.checkLive(grant);
		return grant;
	}

	/** Refuses every request once the card left the seat (its claim ended or changed hands). */
	async checkLive(grant: SeatGrant): Promise<void> {
		const held = await this.backlog.claimOf(grant.cardId).catch((e: unknown) => {
			if (BatonError.is(e) && e.code === 'not_found') {
				return undefined;
			}
			throw e;
		});
		if (held === undefined || !holds(held.card, grant) || held.claimSession !== grant.session) {
			throw new BatonError(
				'unauthorized',
				`This seat credential was for card ${grant.cardId}'s claim at epoch ${grant.epoch}, which has ended: it no longer opens the hub.`,
			);
		}
	}

	/** A request of a seat connection outside its card: `unauthorized`, saying what it may do. */
	checkScope(grant: SeatGrant, method: Method, params: unknown): void {
		if (reads.has(method) || method === 'card/create') {
			return;
		}
		const p = (typeof params === 'object' && params !== null ? params : {}) as Record<string, unknown>;
		if (ownCard.has(method)) {
			if (p.cardId !== grant.cardId) {
				throw new BatonError(
					'unauthorized',
					`This agent was started by baton run for card ${grant.cardId} and acts on that card only: ${method} on ${typeof p.cardId === 'string' ? `card ${p.cardId}` : 'another card'} is refused.`,
					{ seatCard: grant.cardId },
				);
			}
			if (method === 'card/complete' && p.next !== undefined) {
				throw new BatonError(
					'unauthorized',
					`This agent was started by baton run for card ${grant.cardId}: complete it without \`next\`; its supervisor gives the next card to another agent.`,
				);
			}
			return;
		}
		// A person's verb says which command the person runs instead (the params as sent, when they parse).
		const parsed = methods[method].params.safeParse(params ?? {});
		const verb = parsed.success ? humanVerbOf(method, parsed.data) : undefined;
		const ask =
			verb === undefined || !parsed.success
				? 'A person can do this from their own terminal, VS Code or the board.'
				: `Only a person can ${verb.what(parsed.data)}. ${askPerson(verb, parsed.data)}`;
		throw new BatonError(
			'unauthorized',
			`${method} is not open to an agent started by baton run (card ${grant.cardId}): it reads, creates cards and acts on its own card. ${ask}`,
			{ seatCard: grant.cardId },
		);
	}

	private decode(token: string): SeatGrant | undefined {
		const parts = token.split('.');
		if (parts.length !== 3 || parts[0] !== prefix) {
			return undefined;
		}
		const [, payload = '', signature = ''] = parts;
		const want = Buffer.from(this.sign(payload));
		const got = Buffer.from(signature);
		if (want.length !== got.length || !timingSafeEqual(want, got)) {
			return undefined;
		}
		try {
			const value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<SeatGrant>;
			if (
				typeof value.cardId === 'string' &&
				typeof value.epoch === 'number' &&
				typeof value.agent === 'string' &&
				typeof value.session === 'string'
			) {
				return {
					cardId: value.cardId,
					epoch: value.epoch,
					agent: value.agent,
					session: value.session,
					kind: typeof value.kind === 'string' ? value.kind : undefined,
				};
			}
		} catch {
			// Signed by us yet unreadable cannot happen; treat it as foreign.
		}
		return undefined;
	}

	private sign(payload: string): string {
		return createHmac('sha256', this.key).update(payload).digest('base64url');
	}
}

function holds(card: Card, grant: { agent: string; epoch: number }): boolean {
	return card.status === 'claimed' && card.claimOwner === grant.agent && card.claimEpoch === grant.epoch;
}
