-- Fleet scale: card/stats and the text filter stop scanning every card.
--
-- * `card_counts`: how many cards are in each (bucket, waiting, needs_input), kept as delta rows. The
--   bucket is the status, except that ready and claimed cards share the bucket 'open': a claim or a
--   release then changes no key and fires no trigger (the claim path stays as fast as before), and
--   stats counts the claimed cards, one per working agent, from their partial index. A trigger adds a
--   -1 and a +1 row when a card moves between keys (a complete, a dependency met, a question asked),
--   and the statement triggers below add one row per key for a whole create or delete. Rows are only ever inserted, never updated, so claims on several PostgreSQL hubs do
--   not queue behind one counter row (a row lock held to commit); stats sums them, and
--   baton_fold_counts() folds them back into one row per key (upkeep, and stats when many piled up).
--   card/stats at 100k cards: a sum over a few dozen rows instead of a scan of every card.
-- * `card_text`: each card's id, title and body as one text, under a trigram index (pg_trgm), for
--   card/list {text}. A table of its own, not a column of cards: every claim and complete writes a new
--   version of the card's row, and each version would insert ~60 trigrams into a GIN index over cards;
--   card_text changes only when a title or a body does. Where pg_trgm cannot be created (a PostgreSQL
--   server without contrib, or a role that may not create it) the migration still succeeds, without
--   the index: the filter then scans card_text, as slow as before, never wrong.
-- * `cards_ready_age_idx`: stats' oldest ready card. Partial, so claims and completes (whose new row
--   is not ready) never write to it.
DO $$
BEGIN
	CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
EXCEPTION WHEN others THEN
	RAISE NOTICE 'pg_trgm is not available (%): card/list {text} will scan card_text without an index', SQLERRM;
END $$;

CREATE TABLE card_counts (
	bucket text NOT NULL,
	waiting boolean NOT NULL,
	needs_input boolean NOT NULL,
	n bigint NOT NULL
);
CREATE FUNCTION baton_count_bucket(status text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN status IN ('ready', 'claimed') THEN 'open' ELSE status END
$$;
INSERT INTO card_counts (bucket, waiting, needs_input, n)
	SELECT baton_count_bucket(status), unmet_deps > 0, needs_input, count(*) FROM cards GROUP BY 1, 2, 3;

CREATE TABLE card_text (
	id text PRIMARY KEY,
	doc text NOT NULL
);
INSERT INTO card_text (id, doc) SELECT id, id || E'\n' || title || E'\n' || body FROM cards;

DO $$
DECLARE
	trgm_schema name := (SELECT extnamespace::regnamespace::name FROM pg_extension WHERE extname = 'pg_trgm');
BEGIN
	IF trgm_schema IS NOT NULL THEN
		EXECUTE format('CREATE INDEX card_text_trgm_idx ON card_text USING gin (doc %I.gin_trgm_ops)', trgm_schema);
	END IF;
END $$;

CREATE INDEX cards_ready_age_idx ON cards (created_at) WHERE status = 'ready';

-- One card moved between keys (fires only then: see the trigger's WHEN).
CREATE FUNCTION baton_count_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO card_counts (bucket, waiting, needs_input, n)
		VALUES (baton_count_bucket(OLD.status), OLD.unmet_deps > 0, OLD.needs_input, -1),
			(baton_count_bucket(NEW.status), NEW.unmet_deps > 0, NEW.needs_input, 1);
	RETURN NULL;
END $$;
CREATE TRIGGER cards_count_moved AFTER UPDATE ON cards FOR EACH ROW
	WHEN ((OLD.status IS DISTINCT FROM NEW.status
			AND NOT (OLD.status IN ('ready', 'claimed') AND NEW.status IN ('ready', 'claimed')))
		OR (OLD.unmet_deps > 0) IS DISTINCT FROM (NEW.unmet_deps > 0)
		OR OLD.needs_input IS DISTINCT FROM NEW.needs_input)
	EXECUTE FUNCTION baton_count_moved();

-- A create or an import: one count row per key and the cards' texts, once per statement.
CREATE FUNCTION baton_cards_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO card_counts (bucket, waiting, needs_input, n)
		SELECT baton_count_bucket(status), unmet_deps > 0, needs_input, count(*) FROM new_cards GROUP BY 1, 2, 3;
	INSERT INTO card_text (id, doc) SELECT id, id || E'\n' || title || E'\n' || body FROM new_cards;
	RETURN NULL;
END $$;
CREATE TRIGGER cards_inserted AFTER INSERT ON cards REFERENCING NEW TABLE AS new_cards
	FOR EACH STATEMENT EXECUTE FUNCTION baton_cards_inserted();

CREATE FUNCTION baton_cards_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO card_counts (bucket, waiting, needs_input, n)
		SELECT baton_count_bucket(status), unmet_deps > 0, needs_input, -count(*) FROM old_cards GROUP BY 1, 2, 3;
	DELETE FROM card_text t USING old_cards o WHERE t.id = o.id;
	RETURN NULL;
END $$;
CREATE TRIGGER cards_deleted AFTER DELETE ON cards REFERENCING OLD TABLE AS old_cards
	FOR EACH STATEMENT EXECUTE FUNCTION baton_cards_deleted();

-- card/update of a title or a body (UPDATE OF: claims and completes, which set neither, skip it).
CREATE FUNCTION baton_card_text_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE card_text SET doc = NEW.id || E'\n' || NEW.title || E'\n' || NEW.body WHERE id = NEW.id;
	RETURN NULL;
END $$;
CREATE TRIGGER cards_text_changed AFTER UPDATE OF title, body ON cards FOR EACH ROW
	WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.body IS DISTINCT FROM NEW.body)
	EXECUTE FUNCTION baton_card_text_changed();

-- baton_fold_counts(), which folds the delta rows: functions.sql.
