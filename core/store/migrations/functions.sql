-- Baton's stored functions as they are now: the one place they are written. Not a
-- migration (no number): core/store/migrate.ts applies this whole file after the pending migrations
-- whenever its text differs from the one last applied (a hash in baton_functions), so a function is
-- changed here, in place, instead of being restated by a new migration. Flyway calls such a file a
-- repeatable migration. Every statement must be safe to run again: CREATE OR REPLACE only. A change
-- that CREATE OR REPLACE cannot make (a new return type, a renamed parameter, a dropped overload) needs
-- a migration that drops the old function first. A change that older hubs of the same schema must not
-- undo on their next start comes with a migration (even an empty one): they then refuse the store.
--
-- Written for the newest schema; a store built only part of the way (a restore loading an older
-- backup) gets them once its last migration is applied. Functions that triggers or migrations run
-- (baton_count_bucket, baton_count_moved, baton_cards_inserted, baton_cards_deleted,
-- baton_card_text_changed) stay with the migrations that create them and their triggers (0012, 0016):
-- they must work at every schema a migration leaves behind.

-- ISO-8601 in UTC with milliseconds, exactly as JavaScript's Date.toISOString() prints it. STABLE, as
-- to_char is (migration 0002): PostgreSQL never inlines a SQL function whose body is more volatile than
-- its declaration, and inlined it costs nothing per card built (docs/benchmarks.md).
CREATE OR REPLACE FUNCTION baton_ts(t timestamptz) RETURNS text LANGUAGE sql STABLE AS $$
	SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- A card as it crosses the wire (protocol.ts Card), but for `workspace` and `checks`: baton_card adds them. Built in
-- SQL so a single statement can both change a card and log the event that carries it. json, not jsonb
-- (migration 0003): written once as text, never parsed into a binary tree. claim_session is never part
-- of it (migration 0019). json_build_object takes at most 100 arguments, 50 fields: 46 are used here,
-- so a card with more must build the rest separately (as baton_card adds `workspace`).
CREATE OR REPLACE FUNCTION baton_card_fields(c cards) RETURNS json LANGUAGE sql STABLE AS $$
	SELECT json_build_object(
		'id', c.id, 'title', c.title, 'body', c.body, 'phase', c.phase, 'priority', c.priority,
		'status', c.status, 'requires', c.requires, 'dependsOn', c.depends_on,
		'unmetDeps', c.unmet_deps, 'claimOwner', c.claim_owner, 'claimedAt', baton_ts(c.claimed_at),
		'leaseExpiresAt', baton_ts(c.lease_expires_at), 'leaseSeconds', c.lease_ttl_seconds,
		'claimEpoch', c.claim_epoch,
		'attempts', c.attempts, 'maxAttempts', c.max_attempts, 'deferUntil', baton_ts(c.defer_until),
		'progress', c.progress, 'progressNote', c.progress_note, 'progressAt', baton_ts(c.progress_at),
		'result', c.result, 'blockedReason', c.blocked_reason, 'failed', c.failed,
		'backoffSeconds', c.backoff_seconds, 'stallReleaseSeconds', c.stall_release_seconds,
		'idempotencyKey', c.idempotency_key,
		'review', c.review, 'completedBy', c.completed_by, 'handoff', c.handoff, 'needsInput', c.needs_input,
		'project', c.project, 'scope', c.scope, 'reserved', c.reserved,
		'labels', c.labels,
		'parent', c.parent, 'autoClose', c.auto_close,
		'related', c.related, 'duplicates', c.duplicates, 'discoveredFrom', c.discovered_from,
		'base', c.base,
		'assignee', c.assignee, 'dispatch', c.dispatch,
		'acceptance', c.acceptance, 'version', c.version,
		'createdAt', baton_ts(c.created_at), 'updatedAt', baton_ts(c.updated_at)
	)
$$;

-- A card as it crosses the wire: its fields, and `workspace` and `checks` only when it has them (migrations
-- 0020 and 0029; absent, not null, as protocol Card says). Both functions inline into the calling
-- statement, and a card without either (nearly all of them) costs two tests more than before.
CREATE OR REPLACE FUNCTION baton_card(c cards) RETURNS json LANGUAGE sql STABLE AS $$
	SELECT CASE WHEN c.workspace IS NULL AND c.checks IS NULL THEN baton_card_fields(c)
		ELSE (left(baton_card_fields(c)::text, -1)
			|| CASE WHEN c.workspace IS NULL THEN '' ELSE ', "workspace" : ' || c.workspace::text END
			|| CASE WHEN c.checks IS NULL THEN '' ELSE ', "checks" : ' || c.checks::text END
			|| '}')::json END
$$;
-- Whether an ancestor of a card (starting at its parent `p`) waits on a dependency: a child
-- waits while any ancestor does. "Claimable now" reads the stored answer, cards.tree_waits (migration
-- 0028); this walk is the rule written out, for checks of that column (tests, benches). Walks up by
-- primary key, one cached plan per step; parents never form a cycle (the backlog refuses one), and the
-- depth bound only guards against a store edited by hand.
CREATE OR REPLACE FUNCTION baton_ancestor_waits(p text) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
DECLARE
	cur text := p;
	unmet int;
	up text;
BEGIN
	FOR depth IN 1..64 LOOP
		EXIT WHEN cur IS NULL;
		SELECT c.unmet_deps, c.parent INTO unmet, up FROM cards c WHERE c.id = cur;
		IF NOT FOUND THEN
			RETURN false;
		END IF;
		IF unmet > 0 THEN
			RETURN true;
		END IF;
		cur := up;
	END LOOP;
	RETURN false;
END $$;

-- Folds card_counts' delta rows (migrations 0012, 0016) into one row per key, in one statement: a
-- reader's snapshot sees the rows either before or after, and a fold running at the same time on
-- another hub only folds the rows it deleted itself, so the sums never change.
CREATE OR REPLACE FUNCTION baton_fold_counts() RETURNS void LANGUAGE sql AS $$
	WITH gone AS (DELETE FROM card_counts RETURNING bucket, waiting, needs_input, project, n)
	INSERT INTO card_counts (bucket, waiting, needs_input, project, n)
		SELECT bucket, waiting, needs_input, project, sum(n) FROM gone GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0;
$$;

-- complete {next} on PostgreSQL as one PL/pgSQL function instead of one statement of CTEs (migration
-- 0007; docs/benchmarks.md): each step is a small cached plan, run only when needed, and each statement
-- takes its own snapshot, so the pick sees cards other workers claimed a moment ago. It does exactly
-- what core/backlog/hotSql.ts does on PGlite: the holder's complete (refused: no row, the caller's
-- general path explains why), the dependents' counters, the completed event, the pick (leaving out the
-- cards this completion unblocked, which the caller's follow-up claim takes), the claim and its event,
-- and the keyed result. Only cards without review complete here (0010); the pick takes only cards of
-- the wanted project (or none) without a scope (0011); every claim starts with no reservations (0018).
--
-- With the session (migration 0019): the holder's complete checks it and the next claim stores it.
-- With parents (0023): only a card without open children, that is no parent's last open child (its
-- parent's row locked first, hotSql.ts notLastChild), and none of whose dependents is a parent,
-- completes here (such a completion may free or auto-close a parent, or free a subtree: the caller's
-- general path does that, hotSql.ts treeDependents), and the pick restates claimableSql.ts.
-- With dispatch (0026): the claimer's agent kind; the pick restates lineOpenSql (no pause
-- covers the card, assigned to nobody, the claimer or its kind) and hotGuardSql (aging and maxHeld off:
-- else it picks nothing and the caller's claim takes the general path, which counts the held cards
-- under a lock on the claimer and says why); every end or start of a claim
-- clears the card's dispatch record. With counts in the statement (0027): it writes card_counts' rows
-- for the completion and the dependents it frees itself, and marks its transaction so the row trigger
-- does not write them again. Each statement here takes its snapshot after the first one locked
-- `cards`, so a pause/set that committed while this call waited for that lock is seen by the pick.
CREATE OR REPLACE FUNCTION baton_hand_over(at_time timestamptz, card text, who text, res text, ep int, req_key text,
	caps text[], want_phase text, expiry timestamptz, ttl int, want_project text, sess text, agent_kind text)
RETURNS TABLE (seq bigint, data json, unblocked text[], next_card json, next_seq bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	done_card json;
	n bigint;
	list json;
	picked text;
	took_epoch int;
	done_waiting boolean;
	done_needs_input boolean;
	done_project text;
	counted text;
BEGIN
	-- This call writes its own count rows (migration 0027): the mark makes cards_count_moved skip the
	-- rows it updates. It ends with the call's transaction (the hot path's statement is its own).
	counted := set_config('baton.counted', 'on', true);
	-- The holder's complete; the holder's conditions sit inside IS TRUE so only the primary key can
	-- find the card (migration 0006).
	UPDATE cards c SET status = 'done', claim_owner = NULL, claim_session = NULL, claimed_at = NULL, lease_expires_at = NULL,
		lease_ttl_seconds = NULL, reserved = '{}', dispatch = NULL, result = res, blocked_reason = NULL, defer_until = NULL,
		version = c.version + 1, updated_at = at_time
	WHERE c.id = card AND (c.status = 'claimed' AND c.claim_owner = who AND (ep IS NULL OR c.claim_epoch = ep)
		AND (c.claim_session IS NULL OR c.claim_session = sess) AND c.lease_expires_at > at_time) IS TRUE AND c.review = 'none'
		AND (c.parent IS NULL OR EXISTS (SELECT 1 FROM cards up WHERE up.id = c.parent AND up.open_children > 1 FOR NO KEY UPDATE))
		AND c.open_children = 0
		AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.dep_id = card AND EXISTS (SELECT 1 FROM cards k WHERE k.parent = e.card_id))
	RETURNING baton_card(c), c.unmet_deps > 0, c.needs_input, c.project INTO done_card, done_waiting, done_needs_input, done_project;
	IF done_card IS NULL THEN
		RETURN; -- refused: no row
	END IF;
	WITH deps AS (
		UPDATE cards c SET unmet_deps = c.unmet_deps - 1 FROM edges e
		WHERE e.dep_id = card AND c.id = e.card_id
		RETURNING c.id, c.unmet_deps, c.status, c.needs_input, c.project,
			(c.status = 'ready' AND c.unmet_deps = 0 AND c.open_children = 0 AND (c.defer_until IS NULL OR c.defer_until <= at_time)
				AND NOT c.tree_waits) AS claimable
	),
	-- The count rows cards_count_moved would have written (hotSql.ts countRows): the card leaves 'open'
	-- (it was claimed) for 'done', a dependent whose last unmet dependency this was stops waiting.
	moved AS (
		INSERT INTO card_counts (bucket, waiting, needs_input, project, n)
		SELECT k.bucket, k.waiting, m.needs_input, m.project, k.n
		FROM (SELECT 'open' AS was, done_waiting AS was_waiting, 'done' AS now, done_waiting AS now_waiting,
				done_needs_input AS needs_input, done_project AS project
			UNION ALL SELECT baton_count_bucket(d.status), true, baton_count_bucket(d.status), false, d.needs_input, d.project
				FROM deps d WHERE d.unmet_deps = 0) m
		CROSS JOIN LATERAL (VALUES (m.was, m.was_waiting, -1), (m.now, m.now_waiting, 1)) AS k(bucket, waiting, n)
	)
	SELECT count(*), json_agg(json_build_object('id', d.id, 'unmetDeps', d.unmet_deps) ORDER BY d.id),
		coalesce(array_agg(d.id ORDER BY d.id) FILTER (WHERE d.claimable), '{}')
	INTO n, list, unblocked FROM deps d;
	seq := nextval('event_seq');
	data := CASE
		WHEN n > 0 AND res IS NOT NULL THEN json_build_object('card', done_card, 'readiness', list, 'result', res)
		WHEN n > 0 THEN json_build_object('card', done_card, 'readiness', list)
		WHEN res IS NOT NULL THEN json_build_object('card', done_card, 'result', res)
		ELSE json_build_object('card', done_card) END;
	INSERT INTO events (seq, at, card_id, actor, type, data) VALUES (seq, at_time, card, who, 'completed', data);
	-- The pick, in claim order (migration 0006), with this statement's own snapshot. Two queries, not
	-- "(want_phase IS NULL OR phase = want_phase)": each gets its own generic plan on its claim index.
	IF want_phase IS NULL THEN
		SELECT c.id INTO picked FROM cards c
		WHERE c.status = 'ready' AND c.unmet_deps = 0 AND c.open_children = 0 AND (c.defer_until IS NULL OR c.defer_until <= at_time)
			AND NOT c.tree_waits
			AND c.requires <@ caps AND (want_project = '*' OR c.project IS NULL OR c.project = want_project)
			AND c.id NOT IN (SELECT e.card_id FROM edges e WHERE e.dep_id = card)
			AND (NOT EXISTS (SELECT 1 FROM pauses) OR (NOT EXISTS (SELECT 1 FROM pauses WHERE scope = 'all' OR (scope = 'kind' AND target = agent_kind))
				AND NOT EXISTS (SELECT 1 FROM pauses pz WHERE
					(pz.scope = 'card' AND pz.target = c.id) OR (pz.scope = 'project' AND pz.target = c.project)
					OR (pz.scope = 'phase' AND pz.target = c.phase))))
			AND (c.assignee IS NULL OR c.assignee = who OR c.assignee = 'kind:' || agent_kind)
			AND NOT EXISTS (SELECT 1 FROM settings mh WHERE mh.key IN ('agingHours', 'maxHeld') AND json_typeof(mh.value) = 'number')
		ORDER BY -c.priority, c.created_at, c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED;
	ELSE
		SELECT c.id INTO picked FROM cards c
		WHERE c.status = 'ready' AND c.unmet_deps = 0 AND c.open_children = 0 AND (c.defer_until IS NULL OR c.defer_until <= at_time)
			AND NOT c.tree_waits
			AND c.requires <@ caps AND c.phase = want_phase
			AND (want_project = '*' OR c.project IS NULL OR c.project = want_project)
			AND c.id NOT IN (SELECT e.card_id FROM edges e WHERE e.dep_id = card)
			AND (NOT EXISTS (SELECT 1 FROM pauses) OR (NOT EXISTS (SELECT 1 FROM pauses WHERE scope = 'all' OR (scope = 'kind' AND target = agent_kind))
				AND NOT EXISTS (SELECT 1 FROM pauses pz WHERE
					(pz.scope = 'card' AND pz.target = c.id) OR (pz.scope = 'project' AND pz.target = c.project)
					OR (pz.scope = 'phase' AND pz.target = c.phase))))
			AND (c.assignee IS NULL OR c.assignee = who OR c.assignee = 'kind:' || agent_kind)
			AND NOT EXISTS (SELECT 1 FROM settings mh WHERE mh.key IN ('agingHours', 'maxHeld') AND json_typeof(mh.value) = 'number')
		ORDER BY -c.priority, c.created_at, c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED;
	END IF;
	IF picked IS NOT NULL THEN
		UPDATE cards c SET status = 'claimed', claim_owner = who, claim_session = sess, claimed_at = at_time, lease_expires_at = expiry,
			lease_ttl_seconds = ttl, claim_epoch = c.claim_epoch + 1, attempts = c.attempts + 1, progress = NULL,
			progress_note = NULL, progress_at = at_time, defer_until = NULL, reserved = '{}', dispatch = NULL,
			version = c.version + 1, updated_at = at_time
		WHERE c.id = picked AND c.scope = '{}' RETURNING baton_card(c), c.claim_epoch INTO next_card, took_epoch;
	END IF;
	IF next_card IS NOT NULL THEN
		next_seq := nextval('event_seq');
		INSERT INTO events (seq, at, card_id, actor, type, data)
		VALUES (next_seq, at_time, picked, who, 'claimed', json_build_object('card', next_card, 'epoch', took_epoch));
	END IF;
	IF req_key IS NOT NULL THEN
		INSERT INTO request_log (key, method, result, at) VALUES (req_key, 'card/complete', json_build_object('value',
			CASE WHEN next_card IS NULL THEN json_build_object('card', done_card, 'unblocked', unblocked)
			ELSE json_build_object('card', done_card, 'unblocked', unblocked, 'next', json_build_object('card', next_card,
				'lease', json_build_object('cardId', picked, 'epoch', took_epoch, 'expiresAt', next_card->'leaseExpiresAt'))) END),
			at_time);
	END IF;
	RETURN NEXT;
END $$;

-- The same without the agent kind (before 0026): a claimer without a kind, as every claim then was.
CREATE OR REPLACE FUNCTION baton_hand_over(at_time timestamptz, card text, who text, res text, ep int, req_key text,
	caps text[], want_phase text, expiry timestamptz, ttl int, want_project text, sess text)
RETURNS TABLE (seq bigint, data json, unblocked text[], next_card json, next_seq bigint)
LANGUAGE sql VOLATILE AS $$
	SELECT * FROM baton_hand_over(at_time, card, who, res, ep, req_key, caps, want_phase, expiry, ttl, want_project, sess,
		NULL::text)
$$;

-- The same without the session: hubs of the previous version sharing this PostgreSQL database call it
-- until they upgrade. It is the session form with no session (their claims never have one), so the rule
-- it applies is the one above, parents and children included, not a copy that could fall behind.
CREATE OR REPLACE FUNCTION baton_hand_over(at_time timestamptz, card text, who text, res text, ep int, req_key text,
	caps text[], want_phase text, expiry timestamptz, ttl int, want_project text)
RETURNS TABLE (seq bigint, data json, unblocked text[], next_card json, next_seq bigint)
LANGUAGE sql VOLATILE AS $$
	SELECT * FROM baton_hand_over(at_time, card, who, res, ep, req_key, caps, want_phase, expiry, ttl, want_project, NULL::text)
$$;

-- The hand-over's pick of Batons before baton_hand_over (migration 0005, in claim order since 0006),
-- run with a snapshot of its own. No Baton calls it now; kept for a hub that old, with today's rule
-- (parents and children), so such a hub cannot take a card its tree holds back.
CREATE OR REPLACE FUNCTION baton_pick_next(at_time timestamptz, caps text[], want_phase text, completed_id text)
RETURNS SETOF text LANGUAGE plpgsql VOLATILE ROWS 1 AS $$
BEGIN
	-- Two queries, not "(want_phase IS NULL OR phase = want_phase)": each gets its own generic plan
	-- reading the claim index (see hotStatements in core/backlog.ts).
	IF want_phase IS NULL THEN
		RETURN QUERY SELECT c.id FROM cards c
			WHERE c.status = 'ready' AND c.unmet_deps = 0 AND c.open_children = 0 AND (c.defer_until IS NULL OR c.defer_until <= at_time)
				AND NOT c.tree_waits
				AND c.requires <@ caps AND c.id NOT IN (SELECT e.card_id FROM edges e WHERE e.dep_id = completed_id)
			ORDER BY -c.priority, c.created_at, c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED;
	ELSE
		RETURN QUERY SELECT c.id FROM cards c
			WHERE c.status = 'ready' AND c.unmet_deps = 0 AND c.open_children = 0 AND (c.defer_until IS NULL OR c.defer_until <= at_time)
				AND NOT c.tree_waits
				AND c.requires <@ caps AND c.phase = want_phase
				AND c.id NOT IN (SELECT e.card_id FROM edges e WHERE e.dep_id = completed_id)
			ORDER BY -c.priority, c.created_at, c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED;
	END IF;
END $$;
