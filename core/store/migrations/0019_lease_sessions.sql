-- Issue 27: who may act on a lease, and agents that ended.
--
-- `cards.claim_session`: the session (a random id the client process made once, sent in its hello)
-- whose connection claimed the card. Heartbeat, complete, release and fail from another session are
-- refused, whatever agent id it declares; NULL (a claim without a session: the CLI, VS Code, the
-- board, or a claim from before this migration) leaves the lease to the agent id, as before. Never
-- part of baton_card(): other clients must not learn it.
-- `agents.ended_at`: when the agent's last connection closed. An ended agent that holds nothing is
-- left out of the agents list and the health counts; the row stays (for `agents --all`) until the
-- retention setting prunes it.
ALTER TABLE cards ADD COLUMN claim_session text;
ALTER TABLE agents ADD COLUMN ended_at timestamptz;

-- baton_hand_over with the session: the holder's complete checks it and the next claim stores it.
-- The 11-argument version (0011, reserved cleared since 0018) stays for hubs of the previous version sharing this database.
CREATE FUNCTION baton_hand_over(at_time timestamptz, card text, who text, res text, ep int, req_key text,
	caps text[], want_phase text, expiry timestamptz, ttl int, want_project text, sess text)
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
	UPDATE cards c SET status = 'done', claim_owner = NULL, claim_session = NULL, claimed_at = NULL, lease_expires_at = NULL,
		lease_ttl_seconds = NULL, reserved = '{}', result = res, blocked_reason = NULL, defer_until = NULL,
		version = c.version + 1, updated_at = at_time
	WHERE c.id = card AND (c.status = 'claimed' AND c.claim_owner = who AND (ep IS NULL OR c.claim_epoch = ep)
		AND (c.claim_session IS NULL OR c.claim_session = sess) AND c.lease_expires_at > at_time) IS TRUE AND c.review = 'none'
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
			AND c.requires <@ caps AND (want_project = '*' OR c.project IS NULL OR c.project = want_project)
			AND c.id NOT IN (SELECT e.card_id FROM edges e WHERE e.dep_id = card)
		ORDER BY -c.priority, c.created_at, c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED;
	ELSE
		SELECT c.id INTO picked FROM cards c
		WHERE c.status = 'ready' AND c.unmet_deps = 0 AND (c.defer_until IS NULL OR c.defer_until <= at_time)
			AND c.requires <@ caps AND c.phase = want_phase
			AND (want_project = '*' OR c.project IS NULL OR c.project = want_project)
			AND c.id NOT IN (SELECT e.card_id FROM edges e WHERE e.dep_id = card)
		ORDER BY -c.priority, c.created_at, c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED;
	END IF;
	IF picked IS NOT NULL THEN
		UPDATE cards c SET status = 'claimed', claim_owner = who, claim_session = sess, claimed_at = at_time, lease_expires_at = expiry,
			lease_ttl_seconds = ttl, claim_epoch = c.claim_epoch + 1, attempts = c.attempts + 1, progress = NULL,
			progress_note = NULL, progress_at = at_time, defer_until = NULL, reserved = '{}', version = c.version + 1,
			updated_at = at_time
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
