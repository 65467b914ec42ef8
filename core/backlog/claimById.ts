/**
 * A claim of one card by id inside the general path's transaction (claimCycle.ts): resume when the
 * caller's session holds it already (no event, same epoch), else every refusal that names
 * why — held, done, waiting, deferred, capabilities, its tree, its project, a pause or an assignment
 *, max-held, a dispatched claim's seat limits, its scope — then the claim, with the seat's
 * dispatch record when the supervisor made it. Decides with the pure rules; never commits or waits.
 */
import { BatonError } from '../errors';
import type { ParsedParams, Result } from '../protocol';
import { checkClaimable } from '../rules/claim';
import { leaseOf } from '../rules/lease';
import type { Queryable } from '../store/db';
import { act, cardState, loadCardRow } from './cardActions';
import { checkMaxHeld, lineSettings, recordDispatch, seatsFull } from './dispatchOps';
import { checkLineOpen } from './pauses';
import { checkProject, checkScopeFree } from './scopes';
import { treeHold } from './tree';
import { liveScopeCache } from './liveScopeCache';
import type { Mutation, OpContext, UnitOfWork } from './unitOfWork';

/** What the claim cycle worked out for this claim: capabilities, lease length, the claimer's kind, now. */
export interface ClaimSetting {
	caps: string[];
	ttl: number;
	kind: string | null;
	now: Date;
}

export async function claimById(
	tx: Queryable,
	uow: UnitOfWork,
	ctx: OpContext,
	p: ParsedParams<'card/claim'> & { cardId: string },
	{ caps, ttl, kind, now }: ClaimSetting,
): Promise<Mutation<Result<'card/claim'>>> {
	const dispatch = p.dispatch;
	if (uow.db.mode === 'postgres') {
		// Wait for a pause/set in flight, so the pause check below reads it (pauses.ts).
		await tx.query('LOCK TABLE cards IN ROW EXCLUSIVE MODE');
	}
	const { card: before, claimSession } = await loadCardRow(tx, p.cardId, true);
	if (
		before.status === 'claimed' &&
		before.claimOwner === ctx.actor &&
		ctx.session !== undefined &&
		claimSession === ctx.session &&
		before.leaseExpiresAt !== null &&
		Date.parse(before.leaseExpiresAt) > now.getTime()
	) {
		// Resume: the session that holds the card claims it again (a dispatched agent's
		// first claim): the same card and lease, no event, the epoch unchanged.
		return { result: { card: before, lease: leaseOf(cardState(before)) }, events: [] };
	}
	const unmetIds =
		before.unmetDeps > 0
			? (
					await tx.query<{ id: string }>(
						`SELECT e.dep_id AS id FROM edges e LEFT JOIN cards d ON d.id = e.dep_id
						 WHERE e.card_id = $1 AND d.status IS DISTINCT FROM 'done' ORDER BY e.dep_id LIMIT 10`,
						[p.cardId],
					)
				).map(r => r.id)
			: [];
	checkClaimable(cardState(before), ctx.actor, caps, now, unmetIds);
	const held = await treeHold(tx, p.cardId, now);
	if (held !== undefined) {
		throw held;
	}
	checkProject(before, p.project);
	await checkLineOpen(tx, before, ctx.actor, kind);
	await checkMaxHeld(tx, ctx.actor, (await lineSettings(tx)).maxHeld);
	const full = dispatch === undefined ? undefined : await seatsFull(tx, before.project ?? null, dispatch);
	if (full !== undefined) {
		throw new BatonError('invalid_transition', `Card ${p.cardId} cannot be claimed now: ${full}.`, {
			cardId: p.cardId,
		});
	}
	await checkScopeFree(tx, before, liveScopeCache(uow));
	const claimed = await act(
		tx,
		p.cardId,
		{ type: 'claim', actor: ctx.actor, ttlSeconds: ttl, session: ctx.session },
		now,
	);
	const card = dispatch === undefined ? claimed.card : await recordDispatch(tx, p.cardId, dispatch, ctx.host, now);
	const events = claimed.events.map(e => (e.type === 'claimed' ? { ...e, data: { ...e.data, card } } : e));
	return { result: { card, lease: leaseOf(cardState(card)) }, events };
}
