-- The review gate and the inbox (issue 12):
-- * status `review`: a card whose `review` is not 'none' goes there on complete instead of done; its
--   dependents keep waiting until it is approved. `completed_by` is the agent whose work is under
--   review (it may never approve it); an agent reviewer holds the card under a lease like a claim
--   (claim_owner, lease, epoch) while the status stays `review`.
-- * `handoff`: the reviewer's note from "request changes", handed to the next claimer.
-- * `needs_input`: an agent asked a question (a message with question = true) nobody answered yet.
-- * messages.delivered_at: when the card's holder got the message in a tool result (its inbox).
-- The holder's one-statement complete (and baton_hand_over) now applies only to cards without review.
ALTER TABLE cards DROP CONSTRAINT cards_status_check;
ALTER TABLE cards ADD CONSTRAINT cards_status_check CHECK (status IN ('ready', 'claimed', 'review', 'blocked', 'done'));
ALTER TABLE cards ADD COLUMN review text NOT NULL DEFAULT 'none';
ALTER TABLE cards ADD CONSTRAINT cards_review_check CHECK (review IN ('none', 'human', 'agent'));
ALTER TABLE cards ADD COLUMN completed_by text;
ALTER TABLE cards ADD COLUMN handoff text;
ALTER TABLE cards ADD COLUMN needs_input boolean NOT NULL DEFAULT false;
CREATE INDEX cards_review_idx ON cards (priority DESC, created_at, id) WHERE status = 'review';
ALTER TABLE messages ADD COLUMN delivered_at timestamptz;
CREATE INDEX messages_undelivered_idx ON messages (card_id) WHERE delivered_at IS NULL;
CREATE OR REPLACE FUNCTION baton_card(c cards) RETURNS json LANGUAGE sql STABLE AS $$
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
		'acceptance', c.acceptance, 'version', c.version,
		'createdAt', baton_ts(c.created_at), 'updatedAt', baton_ts(c.updated_at)
	)
$$;
CREATE OR REPLACE FUNCTION baton_hand_over(at_time timestamptz, card text, who text, res text, ep int, req_key text,
	caps text[], want_phase text, expiry timestamptz, ttl int)
RETURNS TABLE (seq bigint, data json, unblocked text[], next_card json, next_seq bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	done_card json;
	n bigint;
	list json;
	picked text;
	took_epoch int;
BEGIN
	-- The holder's complete; the holder's conditions sit inside IS TRUE so only the primary key can
	-- find the card (migration 0006).
	UPDATE cards c SET status = 'done', claim_owner = NULL, claimed_at = NULL, lease_expires_at = NULL,
		lease_ttl_seconds = NULL, result = res, blocked_reason = NULL, defer_until = NULL,
		version = c.version + 1, updated_at = at_time
	WHERE c.id = card AND (c.status = 'claimed' AND c.claim_owner = who AND (ep IS NULL OR c.claim_epoch = ep)
		AND c.lease_expires_at > at_time) IS TRUE AND c.review = 'none'
	RETURNING baton_card(c) INTO done_card;
	IF done_card IS NULL THEN
		RETURN; -- refused: no row
	END IF;
	WITH deps AS (
		UPDATE cards c SET unmet_deps = c.unmet_deps - 1 FROM edges e
		WHERE e.dep_id = card AND c.id = e.card_id
		RETURNING c.id, c.unmet_deps,
			(c.status = 'ready' AND c.unmet_deps = 0 AND (c.defer_until IS NULL OR c.defer_until <= at_time)) AS claimable
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
		WHERE c.status = 'ready' AND c.unmet_deps = 0 AND (c.defer_until IS NULL OR c.defer_until <= at_time)
			AND c.requires <@ caps AND c.id NOT IN (SELECT e.card_id FROM edges e WHERE e.dep_id = card)
		ORDER BY -c.priority, c.created_at, c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED;
	ELSE
		SELECT c.id INTO picked FROM cards c
		WHERE c.status = 'ready' AND c.unmet_deps = 0 AND (c.defer_until IS NULL OR c.defer_until <= at_time)
			AND c.requires <@ caps AND c.phase = want_phase
			AND c.id NOT IN (SELECT e.card_id FROM edges e WHERE e.dep_id = card)
		ORDER BY -c.priority, c.created_at, c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED;
	END IF;
	IF picked IS NOT NULL THEN
		UPDATE cards c SET status = 'claimed', claim_owner = who, claimed_at = at_time, lease_expires_at = expiry,
			lease_ttl_seconds = ttl, claim_epoch = c.claim_epoch + 1, attempts = c.attempts + 1, progress = NULL,
			progress_note = NULL, progress_at = at_time, defer_until = NULL, version = c.version + 1, updated_at = at_time
		WHERE c.id = picked RETURNING baton_card(c), c.claim_epoch INTO next_card, took_epoch;
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
