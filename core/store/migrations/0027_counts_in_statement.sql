-- The hot complete writes its own count rows: the one-statement complete and complete {next}
-- (core/backlog/hotSql.ts) and PostgreSQL's baton_hand_over (functions.sql) insert card_counts' delta rows
-- for the card they complete and the dependents they free in the statement itself, instead of having
-- cards_count_moved queue a row event for each and run a PL/pgSQL call at the statement's end (the
-- trigger cost the hot complete +0.26 ms, +31 %, when 0012 added it: docs/benchmarks.md).
--
-- Such a statement marks its transaction with set_config('baton.counted', 'on', true) before it
-- updates a row (a condition of its first UPDATE), and the trigger's WHEN skips every row of a
-- transaction so marked. The mark is transaction-local and the hot statements always run as a
-- transaction of their own, so no other statement ever runs under it; every other path (the general
-- complete, reviews, releases, edits, imports) is counted by the trigger as before.
--
-- UPDATE OF: an update that sets none of the key's columns (a heartbeat, a progress note, a comment)
-- no longer evaluates the trigger's WHEN at all.
--
-- baton_hand_over (functions.sql) changes with it; this migration also tells older hubs the store is
-- newer, so they refuse it instead of writing their functions back.
DROP TRIGGER cards_count_moved ON cards;
CREATE TRIGGER cards_count_moved AFTER UPDATE OF status, unmet_deps, needs_input, project ON cards FOR EACH ROW
	WHEN (((OLD.status IS DISTINCT FROM NEW.status
			AND NOT (OLD.status IN ('ready', 'claimed') AND NEW.status IN ('ready', 'claimed')))
		OR (OLD.unmet_deps > 0) IS DISTINCT FROM (NEW.unmet_deps > 0)
		OR OLD.needs_input IS DISTINCT FROM NEW.needs_input
		OR OLD.project IS DISTINCT FROM NEW.project)
		AND current_setting('baton.counted', true) IS DISTINCT FROM 'on')
	EXECUTE FUNCTION baton_count_moved();
