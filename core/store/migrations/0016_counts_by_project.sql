-- /metrics: `card_counts` (0012) keeps each row's project too, so `baton_cards{status,
-- project}` is a sum over a few dozen delta rows at scrape time, never a scan of every card. The key
-- grows by the project; everything else stays as 0012 made it: ready and claimed share the bucket
-- 'open' (a claim fires no trigger, the claim path is untouched), rows are only inserted, and
-- baton_fold_counts() (functions.sql) folds them. A card that changes project (card/update) moves between keys.
ALTER TABLE card_counts ADD COLUMN project text;

-- The existing rows have no project: rebuild them from the cards (once, at the upgrade).
DELETE FROM card_counts;
INSERT INTO card_counts (bucket, waiting, needs_input, project, n)
	SELECT baton_count_bucket(status), unmet_deps > 0, needs_input, project, count(*) FROM cards GROUP BY 1, 2, 3, 4;

CREATE OR REPLACE FUNCTION baton_count_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO card_counts (bucket, waiting, needs_input, project, n)
		VALUES (baton_count_bucket(OLD.status), OLD.unmet_deps > 0, OLD.needs_input, OLD.project, -1),
			(baton_count_bucket(NEW.status), NEW.unmet_deps > 0, NEW.needs_input, NEW.project, 1);
	RETURN NULL;
END $$;
DROP TRIGGER cards_count_moved ON cards;
CREATE TRIGGER cards_count_moved AFTER UPDATE ON cards FOR EACH ROW
	WHEN ((OLD.status IS DISTINCT FROM NEW.status
			AND NOT (OLD.status IN ('ready', 'claimed') AND NEW.status IN ('ready', 'claimed')))
		OR (OLD.unmet_deps > 0) IS DISTINCT FROM (NEW.unmet_deps > 0)
		OR OLD.needs_input IS DISTINCT FROM NEW.needs_input
		OR OLD.project IS DISTINCT FROM NEW.project)
	EXECUTE FUNCTION baton_count_moved();

CREATE OR REPLACE FUNCTION baton_cards_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO card_counts (bucket, waiting, needs_input, project, n)
		SELECT baton_count_bucket(status), unmet_deps > 0, needs_input, project, count(*) FROM new_cards GROUP BY 1, 2, 3, 4;
	INSERT INTO card_text (id, doc) SELECT id, id || E'\n' || title || E'\n' || body FROM new_cards;
	RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION baton_cards_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO card_counts (bucket, waiting, needs_input, project, n)
		SELECT baton_count_bucket(status), unmet_deps > 0, needs_input, project, -count(*) FROM old_cards GROUP BY 1, 2, 3, 4;
	DELETE FROM card_text t USING old_cards o WHERE t.id = o.id;
	RETURN NULL;
END $$;
