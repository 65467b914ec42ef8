/**
 * PGlite's claim of a card with a scope in two statements (the general path's transaction
 * took eight). The first reads the best few claimable cards, skipping those the cache knows a live
 * claim keeps back, with the newest event seq; TypeScript checks each scoped one against the live
 * scopes kept between claims (liveScopeCache.ts), as of that seq; the second claims the first free one
 * by id, appends its event and records the request key, only while that seq is still the newest.
 * Anything else in between (another call's event) makes it claim nothing, and the caller runs the
 * general path, which decides again in a transaction: an answer is never acted on after the state it
 * was decided on moved. Never used on PostgreSQL (other hubs change the live set) and never explains a
 * refusal (the general path does). Sends SQL and decides nothing but "this card, if nothing moved".
 */
import { leaseOf } from '../rules/lease';
import type { Card, Result } from '../protocol';
import { cardState } from './cardActions';
import { liveScopeCache } from './liveScopeCache';
import { splitEntries } from './scopes';
import type { OpContext, UnitOfWork } from './unitOfWork';
import { num } from './values';

/** Candidates read at once: the best card is usually free once the kept-back ones are skipped. */
const batch = 4;
/** Reads before giving the claim to the general path (each finds the kept-back cards it meets). */
const rounds = 3;

interface Candidate {
	id: string;
	project: string | null;
	scope: string;
	seq: unknown;
}

export interface ScopedClaim {
	/** $1–$6 of the claim (now, caps, phase, actor, expiry, ttl). */
	claimParams: (now: Date) => unknown[];
	/** The claimer's project as the statements take it ('*' any). */
	project: string | null;
	kind: string | null;
}

/**
 * Claims the best claimable card whose scope meets no live claim, or undefined when the general path
 * must (nothing claimable, all the read ones kept back, a race lost, aging or maxHeld in force).
 * Resolves to the result and whether the card taken has a scope.
 */
export async function claimScoped(
	uow: UnitOfWork,
	ctx: OpContext,
	o: ScopedClaim,
): Promise<{ result: Result<'card/claim'>; scoped: boolean } | undefined> {
	const cache = liveScopeCache(uow);
	if (cache === undefined) {
		return undefined;
	}
	let scoped = false;
	const result = await uow.fast(ctx, async (now, key) => {
		const params = o.claimParams(now);
		const [, caps, phase, actor] = params;
		for (let round = 0; round < rounds; round++) {
			const rows = await uow.db.query<Candidate>(
				`SELECT c.*, (SELECT coalesce(max(seq), 0) FROM events) AS seq FROM (${uow.catalogue.sql.claimCandidates}) c`,
				[now, caps, phase, o.project, cache.keptBackIds(), batch, actor, o.kind],
				'baton_scoped_candidates',
			);
			const first = rows[0];
			if (first === undefined) {
				return undefined;
			}
			const asOf = num(first.seq);
			const live = await cache.current(uow.db, asOf);
			if (cache.asOf !== asOf) {
				return undefined; // the store moved on while the set caught up: decide in a transaction
			}
			const free = rows.find(row => {
				if (row.scope === '') {
					return true;
				}
				const conflict = live.conflict(row.project, splitEntries(row.scope));
				if (conflict !== undefined) {
					cache.keptBack(row.id, conflict.cardId);
				}
				return conflict === undefined;
			});
			if (free === undefined) {
				if (rows.length < batch) {
					return undefined; // every claimable card waits: the general path says on whom
				}
				continue;
			}
			const taken = await uow.db.query<{ card: Card; seq: unknown }>(
				uow.catalogue.sql.claimScoped,
				[...params, free.id, ctx.session ?? null, o.kind, key, asOf],
				'baton_claim_scoped',
			);
			const row = taken[0];
			if (row === undefined) {
				return undefined; // something moved since the candidates: decide again in a transaction
			}
			const card = row.card;
			scoped = free.scope !== '';
			return {
				result: { card, lease: leaseOf(cardState(card)) },
				events: [uow.event(row.seq, now, card.id, ctx.actor, 'claimed', { card, epoch: card.claimEpoch })],
			};
		}
		return undefined;
	});
	return result === undefined ? undefined : { result, scoped };
}
