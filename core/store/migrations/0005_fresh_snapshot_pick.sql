-- The hand-over's pick (complete {next}) on PostgreSQL, run with a snapshot of its own.
--
-- Inside the one complete-and-claim statement, the pick saw the statement's snapshot, taken before
-- the completion ran. A card another worker claimed and committed after that snapshot still looked
-- ready; FOR UPDATE then followed it to its newest version, locked it, failed the recheck and kept
-- the lock until this statement committed, so that card's owner, completing it, waited for our
-- commit (Lock:transactionid 34-39 % of samples at 16 workers, docs/benchmarks.md). A VOLATILE
-- function's query takes a fresh snapshot when it runs, so the window shrinks from the whole
-- statement to the pick itself. The cards this completion unblocks are left out, as the statement's
-- own snapshot left them out before (the caller claims again when nothing was picked).
--
-- PGlite never calls it: one connection, nothing to lock against.
CREATE FUNCTION baton_pick_next(at_time timestamptz, caps text[], want_phase text, completed_id text)
RETURNS SETOF text LANGUAGE plpgsql VOLATILE ROWS 1 AS $$
BEGIN
	-- Two queries, not "(want_phase IS NULL OR phase = want_phase)": each gets its own generic plan
	-- reading the claim index (see hotStatements in core/backlog.ts).
	IF want_phase IS NULL THEN
		RETURN QUERY SELECT c.id FROM cards c
			WHERE c.status = 'ready' AND c.unmet_deps = 0 AND (c.defer_until IS NULL OR c.defer_until <= at_time)
				AND c.requires <@ caps AND c.id NOT IN (SELECT e.card_id FROM edges e WHERE e.dep_id = completed_id)
			ORDER BY c.priority DESC, c.created_at, c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED;
	ELSE
		RETURN QUERY SELECT c.id FROM cards c
			WHERE c.status = 'ready' AND c.unmet_deps = 0 AND (c.defer_until IS NULL OR c.defer_until <= at_time)
				AND c.requires <@ caps AND c.phase = want_phase
				AND c.id NOT IN (SELECT e.card_id FROM edges e WHERE e.dep_id = completed_id)
			ORDER BY c.priority DESC, c.created_at, c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED;
	END IF;
END $$;
