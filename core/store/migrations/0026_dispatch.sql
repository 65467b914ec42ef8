-- Dispatch: Baton starts the agents. The pauses of the line and the supervisor runs, each a
-- table of their own; a card's assignee (who may claim it) and its dispatch record (the seat and agent
-- program holding it, cleared whenever the claim ends); the seat limits of a project. The global
-- settings maxHeld and agingHours are rows of `settings` (no schema change). baton_card carries
-- assignee and dispatch (functions.sql), and the claim paths there exclude paused and assigned cards,
-- so the stored functions of older hubs must not be written back: this migration tells them the store
-- is newer.

-- One row per paused scope. target is '' for scope 'all' (a primary key column cannot be null); the
-- wire says null. Every claim reads this table in its own statement (the hot claims through one
-- NOT EXISTS that an empty table answers at once).
CREATE TABLE pauses (
	scope text NOT NULL CHECK (scope IN ('all', 'project', 'phase', 'card', 'kind')),
	target text NOT NULL DEFAULT '',
	reason text,
	paused_by text NOT NULL,
	at timestamptz NOT NULL,
	stop boolean NOT NULL DEFAULT false,
	PRIMARY KEY (scope, target)
);

-- Supervisors (`baton run`): each re-registers every 10 s; one not seen for 30 s is shown as gone.
CREATE TABLE runs (
	name text PRIMARY KEY,
	host text NOT NULL,
	pid integer NOT NULL,
	seats integer NOT NULL,
	kinds text[] NOT NULL DEFAULT '{}',
	project text,
	started_at timestamptz NOT NULL,
	last_seen_at timestamptz NOT NULL,
	stopping text CHECK (stopping IN ('drain', 'stop'))
);

ALTER TABLE cards ADD COLUMN assignee text;
ALTER TABLE cards ADD COLUMN dispatch jsonb;
-- Seats in use: claimed cards with a dispatch record (the seat limits, /metrics, run/list).
CREATE INDEX cards_dispatch_idx ON cards (project) WHERE dispatch IS NOT NULL;

ALTER TABLE project_settings ADD COLUMN seats integer;
ALTER TABLE project_settings ADD COLUMN kind_seats jsonb NOT NULL DEFAULT '{}';
