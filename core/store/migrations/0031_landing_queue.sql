-- The landing queue: one line per project and base branch, held in the store so every hub on one
-- PostgreSQL lands through the same line (mcp-server/hub/landingLine.ts). An approval or a completion
-- that lands joins the line as `waiting`; the oldest waiting entry of a line, when no entry of it is
-- `landing`, becomes `landing` (core/backlog/landingQueue.ts takes the turn under a transaction lock of
-- that line) and leaves once the landing ended either way. `holder` is the hub process whose request
-- waits or lands; it refreshes `beat_at` while it does, and an entry whose holder stopped beating (a hub
-- that died) is dropped by the next turn-taker, so a dead hub never blocks a line. Live work, not
-- history: a backup leaves it out, a deleted card leaves its line.
CREATE TABLE landing_queue (
	card_id text PRIMARY KEY REFERENCES cards (id) ON DELETE CASCADE,
	project text NOT NULL,
	base text NOT NULL,
	state text NOT NULL CHECK (state IN ('waiting', 'landing')),
	holder text NOT NULL,
	actor text NOT NULL,
	queued_at timestamptz NOT NULL,
	started_at timestamptz,
	beat_at timestamptz NOT NULL
);
CREATE INDEX landing_queue_line_idx ON landing_queue (project, base, queued_at, card_id);
