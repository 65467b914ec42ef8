-- Checks before review: a project's check command (`baton settings --check`), run by the hub in a card's
-- worktree after complete committed it (mcp-server/hub/checks.ts), and the outcome on the card.
--
-- `cards.checks`: protocol CardChecks (command, state, exitCode, tail, startedAt, endedAt, durationMs);
-- NULL = no check ran. baton_card carries it as `checks` only when set (functions.sql), so the stored
-- functions of older hubs must not be written back: this migration tells them the store is newer.
ALTER TABLE cards ADD COLUMN checks jsonb;

-- The command (NULL = none) and its time limit. `check` is an SQL keyword, hence check_command.
ALTER TABLE project_settings ADD COLUMN check_command text;
ALTER TABLE project_settings ADD COLUMN check_timeout_seconds integer NOT NULL DEFAULT 600;
