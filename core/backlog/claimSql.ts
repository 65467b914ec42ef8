/**
 * The claim's SQL pieces, shared by every statement that claims a card (hotSql.ts: the hot claim,
 * complete {next}, the general path's candidates, claim by id, PGlite's scoped claim): which cards a
 * claimer may pick, the pick in claim order, the UPDATE that takes the card, the pick → took → `claimed`
 * CTEs, and a claim's result as request_log keeps it. Text only: it runs nothing and decides nothing,
 * and holds no whole statement (hotSql.ts assembles them).
 */
import { claimableSql, hotGuardSql, lineOpenSql, ofProjectSql } from './claimableSql';
import { claimOrder } from './paging';

/** A claim's result ({card, lease}) as stored in request_log, from the `took` CTE. */
export const claimValue = `json_build_object('card', took.card, 'lease',
	json_build_object('cardId', took.id, 'epoch', took.claim_epoch, 'expiresAt', took.card->'leaseExpiresAt'))`;

// Two variants, with and without a phase: a generic plan for "($3 IS NULL OR phase = $3)" expects
// one row and sorts the whole table instead of reading the claim index (measured 11 ms vs 0.5 ms).
// Placeholders are passed in, so the complete-and-claim statement can reuse the same text.
// Every pick also asks whether the line lets this claimer (actor, kind) take the card.
export const pickWhere = (now: string, caps: string, actor: string, kind: string): string =>
	`${claimableSql(now)} AND requires <@ ${caps}::text[] AND ${lineOpenSql(actor, kind)}`;

/** The pick's order and limit; `lockPick` as in hotSql.ts's hotStatements. */
const pickTail = (lockPick: boolean): string =>
	`ORDER BY ${claimOrder} LIMIT 1${lockPick ? ' FOR UPDATE SKIP LOCKED' : ''}`;

const pick = (
	now: string,
	caps: string,
	phase: string,
	withPhase: boolean,
	project: string,
	actor: string,
	kind: string,
	lockPick: boolean,
): string =>
	`SELECT id FROM cards WHERE ${pickWhere(now, caps, actor, kind)} AND ${withPhase ? `phase = ${phase}::text` : `${phase}::text IS NULL`}
			AND ${ofProjectSql(project)} AND ${hotGuardSql} ${pickTail(lockPick)}`;

// $ placeholders of the claim: now, actor, lease expiry, ttl, session.
export const take = (now: string, actor: string, expiry: string, ttl: string, session: string): string =>
	`UPDATE cards SET status = 'claimed', claim_owner = ${actor}, claim_session = ${session}::text,
			claimed_at = ${now}, lease_expires_at = ${expiry},
			lease_ttl_seconds = ${ttl}, claim_epoch = claim_epoch + 1, attempts = attempts + 1, progress = NULL,
			progress_note = NULL, progress_at = ${now}, defer_until = NULL, reserved = '{}', dispatch = NULL,
			version = version + 1, updated_at = ${now}
		FROM pick WHERE cards.id = pick.id`;

/**
 * pick → took (the claim) → the `claimed` event, as CTEs named pick, took and `event`, for the
 * placeholders given; `guard` is an extra condition on the claiming UPDATE. A picked card with a
 * scope is not taken: whether it overlaps a live claim is decided in TypeScript, by the general
 * path (claimCycle.ts), which then runs. `lockPick` as in hotSql.ts's hotStatements.
 */
export const claimCtes = (o: {
	now: string;
	caps: string;
	phase: string;
	withPhase: boolean;
	actor: string;
	expiry: string;
	ttl: string;
	seq: string;
	event: string;
	project: string;
	session: string;
	kind: string;
	guard?: string;
	lockPick: boolean;
}): string => `pick AS (${pick(o.now, o.caps, o.phase, o.withPhase, o.project, o.actor, o.kind, o.lockPick)}),
			took AS (${take(o.now, o.actor, o.expiry, o.ttl, o.session)} AND cards.scope = '{}' ${o.guard ?? ''}
				RETURNING cards.id, cards.claim_epoch, baton_card(cards) AS card),
			${o.event} AS (
				INSERT INTO events (seq, at, card_id, actor, type, data)
				SELECT ${o.seq}, ${o.now}, took.id, ${o.actor}, 'claimed', json_build_object('card', took.card, 'epoch', took.claim_epoch)
				FROM took RETURNING seq
			)`;
