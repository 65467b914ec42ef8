-- Failure bookkeeping and the stall policy:
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
-- baton_card carries the three (functions.sql).
