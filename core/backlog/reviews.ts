/**
 * The review gate's operations: approve or request changes on a card in review
 * (`card/review`), and a reviewing agent's claim of review work (`card/claim {review: true}`). The
 * decisions are core/rules/review.ts's; this module finds the card, applies them in one transaction and
 * lists the dependents an approval freed. It never decides who the reviewer is (the hub says: a human
 * or an agent) and never waits.
 */
import { leaseOf } from '../rules/lease';
import type { Card, CardWorkspace, ParsedParams, ReadinessChange, Result } from '../protocol';
import { type Reviewer, checkReviewCapability } from '../rules/review';
import { decide } from '../rules/stateMachine';
import type { Queryable } from '../store/db';
import { act, cardState, loadCardRow } from './cardActions';
import { claimableSql } from './claimableSql';
import { afterChildDone } from './tree';
import type { Mutation, OpContext, UnitOfWork } from './unitOfWork';
import { num, present } from './values';

export class Reviews {
	constructor(
		private readonly uow: UnitOfWork,
		private readonly defaultTtl: number,
	) {}

	/**
	 * Approve (→ done, dependents freed) or request changes (→ ready with the note as hand-over). An
	 * approval whose branch the hub just landed records `landed` (the card's workspace with `landed`)
	 * in the same transaction.
	 */
	async review(
		ctx: OpContext,
		p: ParsedParams<'card/review'>,
		reviewer: Reviewer,
		landed?: CardWorkspace,
	): Promise<Result<'card/review'>> {
		return this.uow.mutate(ctx, 'card/review', async (tx, now) => {
			const acted = await act(
				tx,
				p.cardId,
				{
					type: p.approve ? 'approve' : 'requestChanges',
					actor: ctx.actor,
					reviewer,
					ownWork: p.ownWork,
					note: p.note,
					version: p.version,
					epoch: p.epoch,
					session: ctx.session,
				},
				now,
			);
			const { readiness, events } = acted;
			let card = acted.card;
			if (landed !== undefined && p.approve) {
				const rows = await tx.query<{ card: Card }>(
					'UPDATE cards SET workspace = $2::jsonb WHERE id = $1 RETURNING baton_card(cards) AS card',
					[p.cardId, JSON.stringify(landed)],
				);
				card = (rows[0] as { card: Card }).card;
				// The approved event carries the card as it is after the change: with its landing.
				for (const e of events) {
					e.data.card = card;
				}
			}
			const unblocked = await nowClaimable(tx, readiness, now);
			// An approved child may free or auto-close its parent.
			const tree = card.status === 'done' ? await afterChildDone(tx, card, ctx.actor, now) : undefined;
			return {
				result: { card, unblocked: [...unblocked, ...(tree?.unblocked ?? [])] },
				events: [...events, ...(tree?.events ?? [])],
			};
		});
	}

	/**
	 * Whether `p` (an approval) would be allowed now, by the same rules and without writing anything:
	 * the hub asks before it lands the card's branch. `replay`: the request key already has
	 * its answer (a re-sent approval), which review() returns as stored.
	 */
	async checkApproval(
		ctx: OpContext,
		p: ParsedParams<'card/review'>,
		reviewer: Reviewer,
	): Promise<{ card: Card; replay: false } | { replay: true }> {
		const db = this.uow.db;
		if (ctx.requestKey !== undefined) {
			const stored = await db.query('SELECT 1 FROM request_log WHERE key = $1', [ctx.requestKey]);
			if (stored.length > 0) {
				return { replay: true };
			}
		}
		const { card, claimSession } = await loadCardRow(db, p.cardId, false);
		decide(
			cardState(card, claimSession),
			{
				type: 'approve',
				actor: ctx.actor,
				reviewer,
				ownWork: p.ownWork,
				note: p.note,
				version: p.version,
				epoch: p.epoch,
				session: ctx.session,
			},
			this.uow.clock.now(),
		);
		return { card, replay: false };
	}

	/**
	 * The approval `p` was allowed but landing the card's branch conflicted: the card goes
	 * back to ready with `handoff` (the conflict) as the next attempt's hand-over, event `land_conflicted`.
	 */
	async landConflict(
		ctx: OpContext,
		p: ParsedParams<'card/review'>,
		reviewer: Reviewer,
		conflict: { handoff: string; files: readonly string[] },
	): Promise<Card> {
		return this.uow.mutate(ctx, 'card/review', async (tx, now) => {
			const { card, events } = await act(
				tx,
				p.cardId,
				{
					type: 'landConflict',
					actor: ctx.actor,
					reviewer,
					ownWork: p.ownWork,
					version: p.version,
					epoch: p.epoch,
					session: ctx.session,
					handoff: conflict.handoff,
					files: conflict.files,
				},
				now,
			);
			return { result: card, events };
		});
	}

	/**
	 * The holder completed a card that lands by itself (review none) and the hub could not land its
	 * branch: the card goes back to ready with `handoff` (blocked past maxAttempts), event `land_conflicted`.
	 */
	async landFailed(
		ctx: OpContext,
		cardId: string,
		failure: { epoch?: number | undefined; handoff: string; files: readonly string[] },
	): Promise<Card> {
		return this.uow.mutate(ctx, 'card/complete', async (tx, now) => {
			const { card, events } = await act(
				tx,
				cardId,
				{
					type: 'landFailed',
					actor: ctx.actor,
					epoch: failure.epoch,
					session: ctx.session,
					handoff: failure.handoff,
					files: failure.files,
				},
				now,
			);
			return { result: card, events };
		});
	}

	/**
	 * A reviewing agent takes review work: the card by id, or the oldest of the highest priority among
	 * cards in review for an agent that nobody reviews now and that the claimer did not complete itself.
	 * The card stays `review`; the claimer holds it under a lease (heartbeat, release, then `review`).
	 */
	async claim(ctx: OpContext, p: ParsedParams<'card/claim'>): Promise<Result<'card/claim'>> {
		const capabilities = p.capabilities ?? [];
		checkReviewCapability(capabilities);
		const ttl = p.ttlSeconds ?? this.defaultTtl;
		return this.uow.mutate(ctx, 'card/claim', async (tx, now): Promise<Mutation<Result<'card/claim'>>> => {
			let cardId = p.cardId;
			if (cardId === undefined) {
				const rows = await tx.query<{ id: string }>(
					`SELECT id FROM cards
					 WHERE status = 'review' AND review = 'agent' AND (claim_owner IS NULL OR lease_expires_at <= $1)
						AND completed_by IS DISTINCT FROM $2 AND ($3::text IS NULL OR phase = $3)
						AND (checks IS NULL OR checks->>'state' = 'passed')
					 ORDER BY priority DESC, created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`,
					[now, ctx.actor, p.phase ?? null],
				);
				cardId = rows[0]?.id;
			}
			if (cardId === undefined) {
				return { result: { card: null, lease: null, reason: await nothingToReview(tx, ctx.actor) }, events: [] };
			}
			const { card, events } = await act(
				tx,
				cardId,
				{ type: 'claimReview', actor: ctx.actor, ttlSeconds: ttl, capabilities, session: ctx.session },
				now,
			);
			return { result: { card, lease: leaseOf(cardState(card)) }, events };
		});
	}
}

/** Why a review claim found nothing, in the words an agent reads. */
async function nothingToReview(tx: Queryable, actor: string): Promise<string> {
	const [row] = await tx.query<Record<string, unknown>>(
		`SELECT
			count(*) FILTER (WHERE review = 'agent' AND claim_owner IS NOT NULL) AS taken,
			count(*) FILTER (WHERE review = 'agent' AND completed_by = $1) AS own,
			count(*) FILTER (WHERE review = 'human') AS human
		 FROM cards WHERE status = 'review'`,
		[actor],
	);
	const r = present(row);
	const parts = [
		num(r.taken) > 0 ? `${num(r.taken)} being reviewed by other agents` : '',
		num(r.own) > 0
			? `${num(r.own)} completed by you (another reviewer must take ${num(r.own) === 1 ? 'it' : 'them'})`
			: '',
		num(r.human) > 0 ? `${num(r.human)} waiting for a human's review` : '',
	].filter(s => s !== '');
	return parts.length === 0
		? 'No card waits for an agent review.'
		: `No card waits for an agent review: ${parts.join(', ')}.`;
}

/**
 * Of the cards whose unmet_deps just changed, those that are claimable now, and the descendants they
 * freed (a child waits while an ancestor waits, so the last dependency of an epic frees its
 * children too). One rule with the claim: claimableSql, open children and waiting ancestors included.
 */
export async function nowClaimable(tx: Queryable, readiness: readonly ReadinessChange[], now: Date): Promise<string[]> {
	const zero = readiness.filter(r => r.unmetDeps === 0).map(r => r.id);
	if (zero.length === 0) {
		return [];
	}
	const rows = await tx.query<{ id: string }>(
		`WITH RECURSIVE freed AS (
			SELECT id FROM cards WHERE id = ANY($1::text[])
			UNION SELECT c.id FROM cards c JOIN freed f ON c.parent = f.id
		)
		SELECT id FROM cards WHERE id IN (SELECT id FROM freed) AND ${claimableSql('$2')} ORDER BY id`,
		[zero, now],
	);
	return rows.map(r => r.id);
}

/** A claim result with the card's pending hand-over note (a reviewer's request for changes), if any. */
export function withHandoff(result: Result<'card/claim'>): Result<'card/claim'> {
	const handoff = result.card?.handoff;
	return handoff === null || handoff === undefined || result.card?.status !== 'claimed'
		? result
		: { ...result, handoff };
}
