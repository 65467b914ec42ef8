-- Baton schema v1 (docs/decisions/0046-schema.md). Readiness is maintained, not computed: edges live in
-- their own table and each card keeps an unmet_deps counter, so a claim touches one row.
CREATE TABLE cards (
	id text PRIMARY KEY,
	title text NOT NULL,
	body text NOT NULL DEFAULT '',
	phase text,
	priority integer NOT NULL DEFAULT 0,
	status text NOT NULL DEFAULT 'ready' CHECK (status IN ('ready', 'claimed', 'blocked', 'done')),
	requires text[] NOT NULL DEFAULT '{}',
	-- Denormalised copy of this card's edges, sorted, for cheap reads; edges is the source of truth.
	depends_on text[] NOT NULL DEFAULT '{}',
	unmet_deps integer NOT NULL DEFAULT 0,
	claim_owner text,
	claimed_at timestamptz,
	lease_expires_at timestamptz,
	-- The TTL of the current lease, so liveness pings renew it by the length the claimer asked for.
	lease_ttl_seconds integer,
	claim_epoch integer NOT NULL DEFAULT 0,
	attempts integer NOT NULL DEFAULT 0,
	max_attempts integer NOT NULL DEFAULT 3,
	defer_until timestamptz,
	progress integer,
	progress_note text,
	progress_at timestamptz,
	result text,
	blocked_reason text,
	idempotency_key text UNIQUE,
	acceptance text[] NOT NULL DEFAULT '{}',
	version integer NOT NULL DEFAULT 1,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
-- The claim order exactly (max priority, then oldest, then id): a claim reads the first entry.
CREATE INDEX cards_claim_idx ON cards (priority DESC, created_at, id) WHERE status = 'ready' AND unmet_deps = 0;
-- Listing pages use the same order over every card.
CREATE INDEX cards_order_idx ON cards (priority DESC, created_at, id);
CREATE INDEX cards_status_idx ON cards (status);
CREATE INDEX cards_lease_idx ON cards (lease_expires_at) WHERE status = 'claimed';
CREATE INDEX cards_owner_idx ON cards (claim_owner) WHERE claim_owner IS NOT NULL;
CREATE INDEX cards_defer_idx ON cards (defer_until) WHERE status = 'ready' AND defer_until IS NOT NULL;

-- card_id depends on dep_id. dep_id has no foreign key: an import may bring a card before the card it
-- depends on; create and link check existence themselves.
CREATE TABLE edges (
	card_id text NOT NULL REFERENCES cards (id) ON DELETE CASCADE,
	dep_id text NOT NULL,
	PRIMARY KEY (card_id, dep_id)
);
CREATE INDEX edges_dep_idx ON edges (dep_id);

CREATE TABLE events (
	seq bigint PRIMARY KEY,
	at timestamptz NOT NULL,
	card_id text NOT NULL,
	actor text NOT NULL,
	type text NOT NULL,
	data jsonb NOT NULL
);
CREATE INDEX events_card_idx ON events (card_id, seq);
-- PostgreSQL mode draws seqs from here (several hubs write at once); PGlite uses max(seq)+1.
CREATE SEQUENCE event_seq;

CREATE TABLE agents (
	id text PRIMARY KEY,
	name text NOT NULL,
	client text NOT NULL,
	capabilities text[] NOT NULL DEFAULT '{}',
	host text,
	pid integer,
	last_seen_at timestamptz NOT NULL,
	registered_at timestamptz NOT NULL
);

-- Results of mutating requests by idempotency key, written in the same transaction as the change.
CREATE TABLE request_log (
	key text PRIMARY KEY,
	method text NOT NULL,
	result jsonb NOT NULL,
	at timestamptz NOT NULL
);
CREATE INDEX request_log_at_idx ON request_log (at);

-- baton_ts (a time as Date.toISOString() prints it), baton_card (a card on the wire): functions.sql.
