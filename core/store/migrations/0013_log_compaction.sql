-- A bounded event log. Compaction (core/backlog/logCompaction.ts) deletes progress events
-- (`heartbeat`) beyond the newest N per card and older than D days; every other event is kept forever.
-- One row of bookkeeping, shared by every hub on a PostgreSQL backlog:
-- * `horizon`: the highest seq compaction ever deleted. A client that resumes the feed after a seq
--   below it may have missed a deleted event: it is told to resync (reload) instead.
-- * `aged_through`: every progress event up to this seq that is older than D days is gone (the age
--   rule's cursor: each pass reads only what came after it).
-- * `counted_through`: the count rule has looked at every card with progress events up to this seq.
-- Each compaction batch locks this row (SELECT … FOR UPDATE), so hubs compacting at once take turns.
CREATE TABLE log_state (
	id boolean PRIMARY KEY DEFAULT true CHECK (id),
	horizon bigint NOT NULL DEFAULT 0,
	aged_through bigint NOT NULL DEFAULT 0,
	counted_through bigint NOT NULL DEFAULT 0
);
INSERT INTO log_state DEFAULT VALUES;
