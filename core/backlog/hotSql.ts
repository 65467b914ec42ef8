/**
 * The SQL catalogue of the hot paths: the claim, the holder's complete (and complete {next}), the
 * holder's heartbeat and the ready page, each one prepared statement, in the form each store runs them
 * (docs/decisions/0060-hot-statements.md), built with the claim's pieces (claimSql.ts).
 * Text only: it runs nothing and decides nothing; the unit of work sends these (cardList.ts the ready
 * page) and the claim cycle reads their rows.
 */
import { claimableSql, effectivePrioritySql, hotGuardSql, ofProjectSql } from './claimableSql';
import { claimCtes, claimValue, pickWhere, take } from './claimSql';
import { afterInClaimOrder, claimOrder, pageOf, rowPageOf } from './paging';

/** A store's statements and seq expressions (PGlite: max(seq)+1 in the statement; PostgreSQL: a sequence). */
export interface SqlCatalogue {
	/** The next event seq inside a statement or transaction. */
	nextSeq: string;
	/** `$1` seqs for a transaction that appends several events. */
	seqBatch: string;
	sql: HotStatements;
}

/** The statements and seq expressions for a store of this mode (docs/decisions/0016-event-seqs.md). */
export function sqlCatalogue(mode: 'pglite' | 'postgres'): SqlCatalogue {
	/** PGlite has a single writer, so the next seq is max+1 in the transaction (docs/decisions/0016-event-seqs.md). */
	const nextSeq = mode === 'pglite' ? '(SELECT coalesce(max(seq), 0) + 1 FROM events)' : "nextval('event_seq')";
	const seqBatch =
		mode === 'pglite'
			? 'SELECT (SELECT coalesce(max(seq), 0) FROM events) + g AS seq FROM generate_series(1, $1::int) AS g'
			: "SELECT nextval('event_seq') AS seq FROM generate_series(1, $1::int)";
	// One statement that logs two events (complete with next) reads the same max(seq) twice in PGlite.
	const sql = hotStatements(
		nextSeq,
		mode === 'pglite' ? '(SELECT coalesce(max(seq), 0) + 2 FROM events)' : "nextval('event_seq')",
		mode !== 'pglite',
	);
	return { nextSeq, seqBatch, sql };
}

export type HotStatements = ReturnType<typeof hotStatements>;

/**
 * The dependents of card `id` that are parents (they have a child, open or done). A
 * completion with one of them is left to the general path (baton_hand_over restates it): when the
 * parent's last dependency is done its subtree may be freed, which `unblocked` must list, and a child
 * whose ancestor is such a dependent would be judged by this statement's snapshot on the ancestor's
 * wait as it was before. A dependent that is a child but no parent is judged right here: the only
 * things the completion changes are its dependents' unmet_deps (an ancestor among them has a child,
 * so it is caught above) and its own parent's open_children, which no child's claimability reads
 * (a child never depends on its ancestor or descendant: the backlog refuses that cycle).
 */
const treeDependents = (id: string): string =>
	`SELECT 1 FROM edges e WHERE e.dep_id = ${id} AND EXISTS (SELECT 1 FROM cards k WHERE k.parent = e.card_id)`;

/**
 * The card being completed (`cards`) has no parent, or is not its parent's last open child:
 * then its completion can neither free nor auto-close the parent, and migration 0023's trigger
 * (open_children - 1) is all the tree needs, so the one-statement complete may take it; the last open
 * child goes to the general path (tree.ts afterChildDone). `lock` (PostgreSQL) locks the parent's row
 * first: a lock waited for re-reads the row at its newest version, so of two children of one parent
 * completing at once on two connections the second sees the first done and takes the general path.
 * baton_hand_over restates it.
 */
const notLastChild = (lock: boolean): string =>
	`(parent IS NULL OR EXISTS (SELECT 1 FROM cards up WHERE up.id = cards.parent AND up.open_children > 1${lock ? ' FOR NO KEY UPDATE' : ''}))`;

/**
 * The hot complete writes its own count rows (migration 0027). A condition of its first
 * UPDATE marks the transaction, before any row is updated, so cards_count_moved's WHEN skips this
 * statement's rows; the statement is always a transaction of its own, so the mark ends with it.
 */
const countedHere = `set_config('baton.counted', 'on', true) = 'on'`;

/**
 * card_counts' delta rows for what `done` and `deps` moved, exactly the rows cards_count_moved would
 * have written (migrations 0012, 0016): the completed card leaves the bucket 'open' (it was claimed)
 * for 'done' with its other keys unchanged, and a dependent whose last unmet dependency this was
 * stops waiting in its own bucket. Whatever else these statements update moves no key.
 */
const countRows = `counted AS (
				INSERT INTO card_counts (bucket, waiting, needs_input, project, n)
				SELECT k.bucket, k.waiting, m.needs_input, m.project, k.n
				FROM (SELECT 'open' AS was, done.waiting AS was_waiting, 'done' AS now, done.waiting AS now_waiting,
						done.needs_input, done.project FROM done
					UNION ALL SELECT baton_count_bucket(deps.status), true, baton_count_bucket(deps.status), false,
						deps.needs_input, deps.project FROM deps WHERE deps.unmet_deps = 0) m
				CROSS JOIN LATERAL (VALUES (m.was, m.was_waiting, -1), (m.now, m.now_waiting, 1)) AS k(bucket, waiting, n)
			)`;

/**
 * The hot statements (claim, complete, complete with next, heartbeat): each one statement that changes
 * the card(s), frees dependents, appends the events and records the request key, so each is a single
 * round trip. `nextSeq` / `secondSeq` are the seq expressions of a statement's first and second event.
 * `lockPick` adds FOR UPDATE SKIP LOCKED to the pick: PostgreSQL needs it (several connections pick at
 * once); PGlite has a single backend that runs one transaction at a time, where the row lock only wrote
 * a lock record onto the tuple the same statement updates next (0.03–0.04 ms per claim+complete).
 */
function hotStatements(nextSeq: string, secondSeq: string, lockPick: boolean) {
	/**
	 * The holder's conditions for card `id`, wrapped in IS TRUE so no index can serve them and the
	 * card is found by its primary key alone. Statistics taken while no card was held say claim_owner is
	 * always NULL, which made "claim_owner = $n" look as selective as the id: the plan then read
	 * cards_owner_idx, walking the dead entry of every card that agent had held before (a 1-worker
	 * hand-over on PostgreSQL ran at half speed after ANALYZE; docs/benchmarks.md).
	 */
	const holds = (actor: string, epoch: string, now: string, session: string): string =>
		`(status = 'claimed' AND claim_owner = ${actor} AND (${epoch}::int IS NULL OR claim_epoch = ${epoch})
			AND (claim_session IS NULL OR claim_session = ${session}::text) AND lease_expires_at > ${now}) IS TRUE`;
	const ofProject = ofProjectSql;
	const claimWith = (withPhase: boolean): string => `WITH ${claimCtes({
		now: '$1',
		caps: '$2',
		phase: '$3',
		withPhase,
		actor: '$4',
		expiry: '$5',
		ttl: '$6',
		seq: nextSeq,
		event: 'ev',
		project: '$8',
		session: '$9',
		kind: '$10',
		lockPick,
	})},
			log AS (
				INSERT INTO request_log (key, method, result, at)
				SELECT $7, 'card/claim', json_build_object('value', ${claimValue}), $1
				FROM took WHERE $7::text IS NOT NULL
			)
			SELECT took.card, ev.seq FROM took, ev`;
	// The holder's complete: $1 now, $2 card id, $3 actor, $4 result, $5 epoch (null = the holder's),
	// and `session` the placeholder of the caller's session (complete: $7, complete {next}: $12).
	// A card that needs review goes to `review` instead: no row here, the general path decides; so does a
	// parent's last open child, whose completion may free or auto-close its parent, and a card
	// with a dependent that is a parent (treeDependents), whose subtree the completion may free. It
	// writes card_counts' rows for what it moves itself (countRows).
	const completeCtes = (session: string): string => `done AS (
				UPDATE cards SET status = 'done', claim_owner = NULL, claim_session = NULL, claimed_at = NULL,
					lease_expires_at = NULL, lease_ttl_seconds = NULL, reserved = '{}', dispatch = NULL, result = $4, blocked_reason = NULL,
					defer_until = NULL, version = version + 1, updated_at = $1
				WHERE id = $2 AND ${holds('$3', '$5', '$1', session)} AND review = 'none' AND ${notLastChild(lockPick)}
					AND open_children = 0 AND NOT EXISTS (${treeDependents('$2')}) AND ${countedHere}
				RETURNING cards.id, baton_card(cards) AS card, cards.unmet_deps > 0 AS waiting, cards.needs_input, cards.project
			),
			deps AS (
				UPDATE cards SET unmet_deps = cards.unmet_deps - 1 FROM edges e, done
				WHERE e.dep_id = done.id AND cards.id = e.card_id
				RETURNING cards.id, cards.unmet_deps, cards.status, cards.needs_input, cards.project,
					(${claimableSql('$1', 'cards.')}) AS claimable
			),
			${countRows},
			readiness AS (
				SELECT count(*) AS n,
					json_agg(json_build_object('id', id, 'unmetDeps', unmet_deps) ORDER BY id) AS list,
					coalesce(array_agg(id ORDER BY id) FILTER (WHERE claimable), '{}') AS unblocked
				FROM deps
			),
			ev AS (
				INSERT INTO events (seq, at, card_id, actor, type, data)
				SELECT ${nextSeq}, $1, done.id, $3, 'completed', CASE
						WHEN readiness.n > 0 AND $4::text IS NOT NULL
							THEN json_build_object('card', done.card, 'readiness', readiness.list, 'result', $4::text)
						WHEN readiness.n > 0 THEN json_build_object('card', done.card, 'readiness', readiness.list)
						WHEN $4::text IS NOT NULL THEN json_build_object('card', done.card, 'result', $4::text)
						ELSE json_build_object('card', done.card) END
				FROM done, readiness RETURNING seq, data
			)`;
	// Read by the claim index in its order; the cursor is a second text so it stays an index condition.
	// `last` is the variant's last placeholder: the claimer's actor and kind follow it.
	const candidates = (
		after: string,
		last: number,
		labeled = '',
	): string => `SELECT id, project, array_to_string(scope, E'\n') AS scope,
				priority, baton_ts(created_at) AS at
			FROM cards WHERE ${pickWhere('$1', '$2', `$${last + 1}`, `$${last + 2}`)} AND ($3::text IS NULL OR phase = $3) AND ${ofProject('$4')}
				AND NOT id = ANY($5::text[]) ${labeled} ${after}
			ORDER BY ${claimOrder} LIMIT $6`;
	const completeValue = `'card', done.card, 'unblocked', readiness.unblocked`;
	/**
	 * Complete, then claim the next card for the same actor, in one statement: $1–$5 as complete, $6
	 * request key, $7 caps, $8 phase, $9 lease expiry, $10 ttl, $11 project ('*' any), $12 session, $13 kind. A card this completion unblocks is not
	 * among the pick's choices (the pick reads the statement's snapshot, from before the completion; the
	 * caller claims again when nothing was picked). It claims only when the completion happened.
	 * PostgreSQL runs the same steps as the function baton_hand_over (migrations/functions.sql): one cached plan per
	 * step instead of one big plan set up afresh on every call, and a snapshot of its own for the pick,
	 * so it cannot lock cards other workers claimed meanwhile.
	 */
	const completeNextWith = (withPhase: boolean): string =>
		lockPick
			? `SELECT * FROM baton_hand_over($1::timestamptz, $2::text, $3::text, $4::text, $5::int, $6::text,
				$7::text[], $8::text, $9::timestamptz, $10::int, $11::text, $12::text, $13::text)`
			: `WITH ${completeCtes('$12')},
			${claimCtes({
				now: '$1',
				caps: '$7',
				phase: '$8',
				withPhase,
				actor: '$3',
				expiry: '$9',
				ttl: '$10',
				seq: secondSeq,
				event: 'ev2',
				project: '$11',
				session: '$12',
				kind: '$13',
				guard: 'AND EXISTS (SELECT 1 FROM done)',
				lockPick,
			})},
			log AS (
				INSERT INTO request_log (key, method, result, at)
				SELECT $6, 'card/complete', json_build_object('value', CASE WHEN took.id IS NULL
					THEN json_build_object(${completeValue})
					ELSE json_build_object(${completeValue}, 'next', ${claimValue}) END), $1
				FROM done CROSS JOIN readiness LEFT JOIN took ON true WHERE $6::text IS NOT NULL
			)
			SELECT ev.seq, ev.data, readiness.unblocked, took.card AS next_card, ev2.seq AS next_seq
			FROM ev CROSS JOIN readiness LEFT JOIN took ON true LEFT JOIN ev2 ON true`;
	return {
		/** Ready cards claimable now, in claim order: $1 now, $2 limit. */
		readyPage: pageOf(claimableSql('$1'), '$2', true),
		/** The next page after ($3 priority, $4 createdAt, $5 id). */
		readyPageAfter: pageOf(`${claimableSql('$1')} AND ${afterInClaimOrder('$3', '$4', '$5')}`, '$2', true),
		/** The ready page's rows (card/listRows): $1 now, $2 limit. */
		readyRows: rowPageOf(claimableSql('$1'), '$2', true),
		/** Their next page after ($3 priority, $4 createdAt, $5 id). */
		readyRowsAfter: rowPageOf(`${claimableSql('$1')} AND ${afterInClaimOrder('$3', '$4', '$5')}`, '$2', true),
		/**
		 * The general path's candidates, in claim order (scopes.ts checks each one's scope): $1 now, $2
		 * caps, $3 phase (null = any), $4 project, $5 ids not to pick, $6 limit; then the claimer's actor
		 * and kind after the variant's own placeholders: $7, $8 here.
		 */
		claimCandidates: candidates('', 6),
		/** The next batch, after the last candidate of the previous one ($7 priority, $8 createdAt, $9 id; $10, $11). */
		claimCandidatesAfter: candidates(`AND ${afterInClaimOrder('$7', '$8', '$9')}`, 9),
		/** The candidates of a claim {labels}: $7 the labels, one of which a card must have ($8, $9). */
		claimCandidatesLabeled: candidates('', 7, 'AND labels && $7::text[]'),
		/** Its next batch ($8 priority, $9 createdAt, $10 id; $11, $12). */
		claimCandidatesLabeledAfter: candidates(
			`AND ${afterInClaimOrder('$8', '$9', '$10')}`,
			10,
			'AND labels && $7::text[]',
		),
		/**
		 * With aging on, the candidates by effective priority, then the claim order, in one
		 * batch: $1–$6 as claimCandidates, $7 actor, $8 kind, $9 agingHours, $10 labels (null = any).
		 */
		claimCandidatesAged: `SELECT id, project, array_to_string(scope, E'\n') AS scope, priority, baton_ts(created_at) AS at
			FROM cards WHERE ${pickWhere('$1', '$2', '$7', '$8')} AND ($3::text IS NULL OR phase = $3) AND ${ofProject('$4')}
				AND NOT id = ANY($5::text[]) AND ($10::text[] IS NULL OR labels && $10::text[])
			ORDER BY ${effectivePrioritySql('$1', '$9')} DESC, ${claimOrder} LIMIT $6`,
		/**
		 * Claim card $7 inside the general path's transaction if it is still claimable (no event: the
		 * caller logs it): $1–$6 as claim, $8 session, $9 the claimer's kind. A card another transaction is
		 * taking is skipped, not waited on.
		 */
		claimById: `WITH pick AS (SELECT id FROM cards WHERE id = $7
				AND (${pickWhere('$1', '$2', '$4', '$9')} AND ($3::text IS NULL OR phase = $3)) IS TRUE
				${lockPick ? 'FOR UPDATE SKIP LOCKED' : ''})
			${take('$1', '$4', '$5', '$6', '$8')} RETURNING baton_card(cards) AS card`,
		/**
		 * PGlite's scoped claim (scopedClaim.ts): claim card $7, which TypeScript checked against
		 * the live scopes as of event seq $11, in one statement with its event and request key, but only
		 * while that seq is still the newest (nothing changed since; else nothing, and the general path
		 * runs). $1–$6 as claim, $8 session, $9 the claimer's kind, $10 request key. The hot claims'
		 * guard (aging and maxHeld off) holds here too.
		 */
		claimScoped: `WITH pick AS (SELECT id FROM cards WHERE id = $7
				AND (${pickWhere('$1', '$2', '$4', '$9')} AND ($3::text IS NULL OR phase = $3) AND ${hotGuardSql}) IS TRUE
				AND (SELECT coalesce(max(seq), 0) FROM events) = $11::bigint),
			took AS (${take('$1', '$4', '$5', '$6', '$8')} RETURNING cards.id, cards.claim_epoch, baton_card(cards) AS card),
			ev AS (
				INSERT INTO events (seq, at, card_id, actor, type, data)
				SELECT ${nextSeq}, $1, took.id, $4, 'claimed', json_build_object('card', took.card, 'epoch', took.claim_epoch)
				FROM took RETURNING seq
			),
			log AS (
				INSERT INTO request_log (key, method, result, at)
				SELECT $10, 'card/claim', json_build_object('value', ${claimValue}), $1
				FROM took WHERE $10::text IS NOT NULL
			)
			SELECT took.card, ev.seq FROM took, ev`,
		/**
		 * $1 now, $2 caps, $3 phase (null here), $4 actor, $5 lease expiry, $6 ttl, $7 request key, $8 project,
		 * $9 session, $10 the claimer's agent kind (null = none).
		 */
		claim: claimWith(false),
		/** The same with $3 a phase. */
		claimPhase: claimWith(true),
		/** complete + claim next (see completeNextWith), phase $8 null. */
		completeNext: completeNextWith(false),
		/** The same with $8 a phase. */
		completeNextPhase: completeNextWith(true),
		/**
		 * $1 now, $2 card id, $3 actor, $4 epoch (null = the holder's), $5 progress, $6 note, $7 ttl (null =
		 * the lease's own), $8 default ttl, $9 request key, $10 session. Logs an event only when progress or
		 * note changed.
		 */
		heartbeat: `WITH cur AS (
				SELECT id, progress, progress_note FROM cards
				WHERE id = $2 AND ${holds('$3', '$4', '$1', '$10')}
				FOR UPDATE
			),
			flags AS (
				SELECT cur.id,
					($5::int IS NOT NULL AND $5::int IS DISTINCT FROM cur.progress)
						OR ($6::text IS NOT NULL AND $6::text IS DISTINCT FROM cur.progress_note) AS changed,
					$5::int IS NOT NULL AND $5::int IS DISTINCT FROM cur.progress AS progress_changed,
					$6::text IS NOT NULL AND $6::text IS DISTINCT FROM cur.progress_note AS note_changed
				FROM cur
			),
			hb AS (
				UPDATE cards SET
					lease_ttl_seconds = coalesce($7::int, cards.lease_ttl_seconds, $8::int),
					lease_expires_at = $1::timestamptz + make_interval(secs => coalesce($7::int, cards.lease_ttl_seconds, $8::int)),
					progress = CASE WHEN flags.progress_changed THEN $5::int ELSE cards.progress END,
					progress_note = CASE WHEN flags.note_changed THEN $6::text ELSE cards.progress_note END,
					progress_at = CASE WHEN $5::int IS NOT NULL OR $6::text IS NOT NULL THEN $1 ELSE cards.progress_at END,
					version = cards.version + CASE WHEN flags.changed THEN 1 ELSE 0 END,
					updated_at = $1
				FROM flags WHERE cards.id = flags.id
				RETURNING cards.id, cards.claim_epoch, baton_card(cards) AS card, flags.changed
			),
			ev AS (
				INSERT INTO events (seq, at, card_id, actor, type, data)
				SELECT ${nextSeq}, $1, hb.id, $3, 'heartbeat', json_build_object('card', hb.card) FROM hb WHERE hb.changed
				RETURNING seq
			),
			log AS (
				INSERT INTO request_log (key, method, result, at)
				SELECT $9, 'card/heartbeat', json_build_object('value', json_build_object('card', hb.card, 'lease',
					json_build_object('cardId', hb.id, 'epoch', hb.claim_epoch, 'expiresAt', hb.card->'leaseExpiresAt'))), $1
				FROM hb WHERE $9::text IS NOT NULL
			)
			SELECT hb.card, ev.seq FROM hb LEFT JOIN ev ON true`,
		/** $1 now, $2 card id, $3 actor, $4 result, $5 epoch (null = the holder's), $6 request key, $7 session. */
		complete: `WITH ${completeCtes('$7')},
			log AS (
				INSERT INTO request_log (key, method, result, at)
				SELECT $6, 'card/complete', json_build_object('value', json_build_object(${completeValue})), $1
				FROM done, readiness WHERE $6::text IS NOT NULL
			)
			SELECT ev.seq, ev.data, readiness.unblocked FROM ev, readiness`,
	};
}

export type HotKey = 'claim' | 'claimPhase' | 'complete' | 'completeNext' | 'completeNextPhase' | 'heartbeat';

/** The prepared-statement name of each hot statement. */
export const hotNames: Record<HotKey, string> = {
	claim: 'baton_claim',
	claimPhase: 'baton_claim_phase',
	complete: 'baton_complete',
	completeNext: 'baton_complete_next',
	completeNextPhase: 'baton_complete_next_phase',
	heartbeat: 'baton_heartbeat',
};
