/**
 * Pure lease rules: who may act on a claimed card, and when a lease has run out. No I/O,
 * no clock reads: callers pass now. Every refusal names the card, the holder and both epochs, and says
 * what to do next, because the reader is usually an agent deciding its next call.
 * Platform-free and zod-free (types only from core/protocol/index.ts): the extension and the board import
 * `isLeaseExpired` from here rather than re-writing it (docs/decisions/0002-derived-rules.md).
 */
import { type Instant, instantMs } from '../clock';
import { BatonError } from '../errors';
import type { CardStatus, Lease } from '../protocol';

/** The part of a card the lease rules look at. */
export interface LeaseView {
	id: string;
	status: CardStatus;
	claimOwner: string | null;
	claimEpoch: number;
	leaseExpiresAt: Date | null;
	/**
	 * The session that claimed it; null or absent: a claim without a session, which is
	 * the agent id's. Core rows only: the wire never carries it.
	 */
	claimSession?: string | null | undefined;
}

/**
 * Held = someone has a lease on it: a claimed card, or a card in review that a reviewing agent took
 * (`claim {review: true}`; the status stays `review`). Takes a core row or a wire card alike.
 */
export function isHeld(card: { status: CardStatus; claimOwner: string | null }): boolean {
	return card.status === 'claimed' || (card.status === 'review' && card.claimOwner !== null);
}

export function leaseExpiry(now: Date, ttlSeconds: number): Date {
	return new Date(now.getTime() + ttlSeconds * 1000);
}

/**
 * Expired = claimed and the lease's end is at or before now: at the very instant it runs out the lease
 * is already over (the hub refuses the holder's writes, the reaper may take the card, every face shows
 * it expired). Takes a core row (Dates) or a wire card (ISO strings) alike.
 */
export function isLeaseExpired(
	card: { status: CardStatus; claimOwner: string | null; leaseExpiresAt: Instant | null },
	now: Instant,
): boolean {
	return isHeld(card) && card.leaseExpiresAt !== null && instantMs(card.leaseExpiresAt) <= instantMs(now);
}

export function leaseOf(card: LeaseView): Lease | null {
	if (!isHeld(card) || card.leaseExpiresAt === null) {
		return null;
	}
	return { cardId: card.id, epoch: card.claimEpoch, expiresAt: card.leaseExpiresAt.toISOString() };
}

const yourEpoch = (epoch: number | undefined): string =>
	epoch === undefined ? 'you hold no lease on it' : `your lease has epoch ${epoch}`;

/**
 * Whether a caller in `session` may act on a lease claimed in `card.claimSession`: a lease claimed
 * without a session is the agent id's (any of its connections); one claimed in a session is that
 * session's alone, whatever agent id another connection declares.
 */
export function sessionMayAct(card: Pick<LeaseView, 'claimSession'>, session: string | undefined): boolean {
	return card.claimSession === null || card.claimSession === undefined || card.claimSession === session;
}

/**
 * Throws unless `actor` holds a live lease on `card` (at `epoch`, when given) in `session` (see
 * sessionMayAct). `verb` names the refused action for the message ("complete", "heartbeat"…). Cards
 * that are not claimed at all give `lease_lost` when the caller presented an epoch (it believed it
 * held the card) and `invalid_transition` otherwise (a human acting on a card that nobody holds).
 */
export function checkLease(
	card: LeaseView,
	actor: string,
	epoch: number | undefined,
	now: Date,
	verb: string,
	session?: string,
): void {
	if (!isHeld(card)) {
		if (epoch !== undefined) {
			throw new BatonError(
				'lease_lost',
				`Card ${card.id} is ${card.status} and no longer leased (epoch ${card.claimEpoch}); your lease has epoch ${epoch}. Call claim for new work.`,
				{ cardId: card.id, status: card.status, epoch: card.claimEpoch, yourEpoch: epoch },
			);
		}
		throw new BatonError(
			'invalid_transition',
			`Card ${card.id} is ${card.status}, not claimed, so there is no lease to ${verb}. Claim it first.`,
			{ cardId: card.id, status: card.status },
		);
	}
	if (card.claimOwner !== actor) {
		throw new BatonError(
			'lease_lost',
			`Card ${card.id} is leased to agent ${card.claimOwner ?? '?'} (epoch ${card.claimEpoch}); ${yourEpoch(epoch)}. Call claim for new work.`,
			{ cardId: card.id, holder: card.claimOwner, epoch: card.claimEpoch, yourEpoch: epoch ?? null },
		);
	}
	if (!sessionMayAct(card, session)) {
		throw new BatonError(
			'lease_lost',
			`Card ${card.id} is leased to agent ${actor} (epoch ${card.claimEpoch}) in another session, not this one: only the session that claimed a card may heartbeat, complete, release or fail it, whatever agent id it uses. Call claim for new work; a person can take it over from VS Code, the board or their own terminal (baton ${verb === 'release' ? 'release' : 'complete'} ${card.id} --force).`,
			{ cardId: card.id, holder: actor, epoch: card.claimEpoch, yourEpoch: epoch ?? null, otherSession: true },
		);
	}
	if (epoch !== undefined && epoch !== card.claimEpoch) {
		throw new BatonError(
			'lease_lost',
			`Card ${card.id} is leased to you under epoch ${card.claimEpoch}; your lease has epoch ${epoch}, which was superseded. Use the lease from your latest claim.`,
			{ cardId: card.id, holder: actor, epoch: card.claimEpoch, yourEpoch: epoch },
		);
	}
	if (isLeaseExpired(card, now)) {
		throw new BatonError(
			'lease_lost',
			`Your lease on card ${card.id} (epoch ${card.claimEpoch}) expired at ${card.leaseExpiresAt?.toISOString() ?? '?'}; it is about to be reclaimed. Call claim for new work.`,
			{ cardId: card.id, holder: actor, epoch: card.claimEpoch, expiredAt: card.leaseExpiresAt?.toISOString() },
		);
	}
}
