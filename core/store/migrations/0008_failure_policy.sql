-- Failure bookkeeping and the stall policy (issue 17):
-- * `failed` tells a card that used up its attempts (or that its agent gave up on) from one a human
--   parked: both are `blocked`, only the first is shown as failed.
-- * `backoff_seconds` / `stall_release_seconds` override the backlog's settings per card (NULL = use
--   the setting; a stall of 0 = never release).
-- * `settings` holds the backlog-wide policies in the backlog itself, so every hub of a PostgreSQL
--   backlog, and every backup, agree on them. One row per key; absent keys take the built-in default.
ALTER TABLE cards ADD COLUMN failed boolean NOT NULL DEFAULT false;
ALTER TABLE cards ADD COLUMN backoff_seconds integer;
ALTER TABLE cards ADD COLUMN stall_release_seconds integer;
CREATE TABLE settings (key text PRIMARY KEY, value json NOT NULL);
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
		'acceptance', c.acceptance, 'version', c.version,
		'createdAt', baton_ts(c.created_at), 'updatedAt', baton_ts(c.updated_at)
	)
$$;
