-- Cards cross the wire as JSON text, and event data and request results are only ever stored and read
-- back whole: nothing queries inside them. So they are json, not jsonb. A card built as jsonb was
-- assembled into a binary tree, sorted by key and printed back to text on every claim and complete;
-- as json it is written once as text (docs/benchmarks.md: ~0.05 ms of a PGlite claim+complete).
ALTER TABLE events ALTER COLUMN data TYPE json USING data::json;
ALTER TABLE request_log ALTER COLUMN result TYPE json USING result::json;
DROP FUNCTION baton_card(cards);
CREATE FUNCTION baton_card(c cards) RETURNS json LANGUAGE sql STABLE AS $$
	SELECT json_build_object(
		'id', c.id, 'title', c.title, 'body', c.body, 'phase', c.phase, 'priority', c.priority,
		'status', c.status, 'requires', c.requires, 'dependsOn', c.depends_on,
		'unmetDeps', c.unmet_deps, 'claimOwner', c.claim_owner, 'claimedAt', baton_ts(c.claimed_at),
		'leaseExpiresAt', baton_ts(c.lease_expires_at), 'leaseSeconds', c.lease_ttl_seconds,
		'claimEpoch', c.claim_epoch,
		'attempts', c.attempts, 'maxAttempts', c.max_attempts, 'deferUntil', baton_ts(c.defer_until),
		'progress', c.progress, 'progressNote', c.progress_note, 'progressAt', baton_ts(c.progress_at),
		'result', c.result, 'blockedReason', c.blocked_reason, 'idempotencyKey', c.idempotency_key,
		'acceptance', c.acceptance, 'version', c.version,
		'createdAt', baton_ts(c.created_at), 'updatedAt', baton_ts(c.updated_at)
	)
$$;
