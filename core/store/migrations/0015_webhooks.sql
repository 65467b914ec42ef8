-- Outgoing webhooks: the backlog's events POSTed to receivers outside Baton, delivered by
-- a hub in the background (mcp-server/hub/webhooks.ts; SQL in core/backlog/hookStore.ts).
-- * `cursor`: the highest seq this hook is done with (delivered, filtered out or reported skipped).
--   A new hook starts at the log's end; a restarted hub resumes after it.
-- * `secret`: the HMAC-SHA256 key. Never returned by any list or get (they show a fingerprint).
-- * `events`: the event types it wants; empty = all.
-- * `lease_owner` / `lease_until`: which hub delivers it (team mode: one hub at a time); taken and
--   renewed with the database's clock before each attempt, so hubs' clocks need not agree.
-- * `failures`, `failing_since`, `last_error`, `next_attempt_at`: the current delivery's retry state,
--   shown by `baton hooks` on any hub. `log_no` numbers the hook's delivery log rows.
CREATE TABLE webhooks (
	id text PRIMARY KEY,
	url text NOT NULL,
	secret text NOT NULL,
	events text[] NOT NULL DEFAULT '{}',
	created_at timestamptz NOT NULL,
	created_by text NOT NULL,
	cursor bigint NOT NULL DEFAULT 0,
	delivered bigint NOT NULL DEFAULT 0,
	last_delivered_at timestamptz,
	failures integer NOT NULL DEFAULT 0,
	failing_since timestamptz,
	last_error text,
	next_attempt_at timestamptz,
	log_no bigint NOT NULL DEFAULT 0,
	lease_owner text,
	lease_until timestamptz
);
-- The recent attempts per hook (delivered, failed, skipped), newest `n` last; the writer deletes rows
-- beyond the newest 50 of a hook in the same statement, so the table cannot grow forever. Not in backups.
CREATE TABLE webhook_deliveries (
	hook_id text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
	n bigint NOT NULL,
	seq bigint NOT NULL,
	attempt integer NOT NULL,
	at timestamptz NOT NULL,
	outcome text NOT NULL CHECK (outcome IN ('delivered', 'failed', 'skipped')),
	status integer,
	error text,
	ms integer,
	PRIMARY KEY (hook_id, n)
);
