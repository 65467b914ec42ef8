/**
 * Acting on one card by the rules: load it under lock, decide with the pure rules (core/rules/stateMachine.ts), write the
 * patch, shift its dependents' readiness and describe the event. Used inside a unit of work's
 * transaction; it never commits, appends events or decides a transition itself.
 */
import { BatonError } from '../errors';
import type { Card, ReadinessChange } from '../protocol';
import { type Action, type CardPatch, type CardState, decide } from '../rules/stateMachine';
import type { Queryable } from '../store/db';
import type { Mutation, PendingEvent } from './unitOfWork';
import { num, toDate } from './values';

/** Columns a CardPatch may set (camelCase -> snake_case). */
const patchColumns: Record<keyof CardPatch, string> = {
	status: 'status',
	claimOwner: 'claim_owner',
	claimSession: 'claim_session',
	claimedAt: 'claimed_at',
	leaseExpiresAt: 'lease_expires_at',
	leaseTtlSeconds: 'lease_ttl_seconds',
	claimEpoch: 'claim_epoch',
	attempts: 'attempts',
	deferUntil: 'defer_until',
	progress: 'progress',
	progressNote: 'progress_note',
	progressAt: 'progress_at',
	result: 'result',
	blockedReason: 'blocked_reason',
	failed: 'failed',
	completedBy: 'completed_by',
	handoff: 'handoff',
	checks: 'checks',
};

/** The rule-facing view of a wire card (with its lease's session, which only the store knows). */
export function cardState(card: Card, claimSession: string | null = null): CardState {
	return {
		id: card.id,
		status: card.status,
		claimOwner: card.claimOwner,
		claimSession,
		claimEpoch: card.claimEpoch,
		leaseExpiresAt: toDate(card.leaseExpiresAt),
		attempts: card.attempts,
		maxAttempts: card.maxAttempts,
		unmetDeps: card.unmetDeps,
		deferUntil: toDate(card.deferUntil),
		requires: card.requires,
		progress: card.progress,
		progressNote: card.progressNote,
		blockedReason: card.blockedReason,
		failed: card.failed === true,
		version: card.version,
		review: card.review ?? 'none',
		completedBy: card.completedBy ?? null,
		checks: card.checks ?? null,
	};
}

function notFound(cardId: string): BatonError {
	return new BatonError('not_found', `Card ${cardId} does not exist. List cards to find the right id.`, { cardId });
}

export async function loadCard(q: Queryable, cardId: string, lock: boolean): Promise<Card> {
	return (await loadCardRow(q, cardId, lock)).card;
}

/** The card and the session its lease was claimed in (not part of the wire card). */
export async function loadCardRow(
	q: Queryable,
	cardId: string,
	lock: boolean,
): Promise<{ card: Card; claimSession: string | null }> {
	const rows = await q.query<{ card: Card; claim_session: string | null }>(
		`SELECT baton_card(cards) AS card, claim_session FROM cards WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
		[cardId],
		lock ? 'baton_card_row_locked' : 'baton_card_row',
	);
	const row = rows[0];
	if (row === undefined) {
		throw notFound(cardId);
	}
	return { card: row.card, claimSession: row.claim_session };
}

/** Writes a rule decision's patch; bumps version when the change is visible (logged). */
async function applyPatch(tx: Queryable, cardId: string, patch: CardPatch, now: Date, visible: boolean): Promise<Card> {
	const sets: string[] = [];
	const params: unknown[] = [cardId, now];
	for (const [key, value] of Object.entries(patch) as [keyof CardPatch, unknown][]) {
		// The one json column a rule sets (checks): sent as its text, stored as jsonb.
		const json = key === 'checks';
		params.push(json && value !== null ? JSON.stringify(value) : value);
		sets.push(`${patchColumns[key]} = $${params.length}${json ? '::jsonb' : ''}`);
	}
	if (patch.status !== undefined || patch.claimEpoch !== undefined) {
		// Reservations live as long as the claim that made them: any end or new epoch drops them,
		// and so does the dispatch record (a dispatched claim writes its own after this).
		sets.push(`reserved = '{}'`, 'dispatch = NULL');
	}
	sets.push('updated_at = $2');
	if (visible) {
		sets.push('version = version + 1');
	}
	const rows = await tx.query<{ card: Card }>(
		`UPDATE cards SET ${sets.join(', ')} WHERE id = $1 RETURNING baton_card(cards) AS card`,
		params,
	);
	return (rows[0] as { card: Card }).card;
}

/** Adds `delta` to the unmet_deps of every card that depends on `cardId`; returns the changes. */
async function shiftDependents(tx: Queryable, cardId: string, delta: 1 | -1): Promise<ReadinessChange[]> {
	// Locking dependents in id order keeps two completes on PostgreSQL from deadlocking each other.
	const rows = await tx.query<{ id: string; unmet_deps: number }>(
		`WITH locked AS (
				SELECT c.id FROM cards c JOIN edges e ON e.card_id = c.id WHERE e.dep_id = $1 ORDER BY c.id FOR UPDATE OF c
			)
			UPDATE cards SET unmet_deps = unmet_deps + $2 FROM locked WHERE cards.id = locked.id
			RETURNING cards.id, cards.unmet_deps`,
		[cardId, delta],
	);
	return rows.map(r => ({ id: r.id, unmetDeps: num(r.unmet_deps) })).sort((a, b) => (a.id < b.id ? -1 : 1));
}

/**
 * Runs a rule decision on one card: load under lock, decide, patch, readiness, event. `action` may be
 * computed from the locked card (fail reads its backoff policy and earlier reasons that way).
 */
export async function act(
	tx: Queryable,
	cardId: string,
	action: Action | ((before: Card) => Promise<Action>),
	now: Date,
	extra: Record<string, unknown> = {},
) {
	const { card: before, claimSession } = await loadCardRow(tx, cardId, true);
	let decision: ReturnType<typeof decide>;
	try {
		decision = decide(
			cardState(before, claimSession),
			typeof action === 'function' ? await action(before) : action,
			now,
		);
	} catch (e) {
		throw BatonError.is(e) && e.code === 'lease_lost' ? await explainLostLease(tx, cardId, e) : e;
	}
	const card = await applyPatch(tx, cardId, decision.patch, now, decision.event !== null);
	let readiness: ReadinessChange[] = [];
	if (before.status !== 'done' && card.status === 'done') {
		readiness = await shiftDependents(tx, cardId, -1);
	} else if (before.status === 'done' && card.status !== 'done') {
		readiness = await shiftDependents(tx, cardId, 1);
	}
	const events: PendingEvent[] =
		decision.event === null
			? []
			: [
					{
						cardId,
						type: decision.event,
						data: {
							card,
							...(readiness.length > 0 ? { readiness } : {}),
							...stripUndefined(decision.data),
							...extra,
						},
					},
				];
	return { before, card, readiness, events };
}

/**
 * A holder told "lease_lost" also learns what ended its claim (reclaimed by whom and why, released
 * because a dependency was reopened, …): the event that recorded its epoch as the previous one.
 */
async function explainLostLease(tx: Queryable, cardId: string, e: BatonError): Promise<BatonError> {
	const data = (e.data ?? {}) as Record<string, unknown>;
	const epoch = data.yourEpoch;
	if (typeof epoch !== 'number') {
		return e;
	}
	const rows = await tx.query<{ type: string; actor: string; reason: string | null }>(
		`SELECT type, actor, data->>'reason' AS reason FROM events
			 WHERE card_id = $1 AND data->>'previousEpoch' = $2 ORDER BY seq DESC LIMIT 1`,
		[cardId, String(epoch)],
	);
	const ended = rows[0];
	if (ended === undefined) {
		return e;
	}
	const why = ended.reason === null ? '' : `: ${ended.reason}`;
	return new BatonError('lease_lost', `${e.message} Your claim ended (${ended.type} by ${ended.actor}${why}).`, {
		...data,
		endedBy: { type: ended.type, actor: ended.actor, reason: ended.reason },
	});
}

export async function actOnEach(
	tx: Queryable,
	ids: string[],
	action: Action,
	now: Date,
): Promise<Mutation<{ cards: Card[] }>> {
	const cards: Card[] = [];
	const events: PendingEvent[] = [];
	for (const id of ids) {
		const out = await act(tx, id, action, now);
		cards.push(out.card);
		events.push(...out.events);
	}
	return { result: { cards }, events };
}

function stripUndefined(data: Record<string, unknown>): Record<string, unknown> {
	return Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined));
}
