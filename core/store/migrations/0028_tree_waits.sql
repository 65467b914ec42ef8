-- "An ancestor waits" as a column (so the claim stays fast at 100k cards): `tree_waits` is true when some
-- ancestor of the card (its parent, the parent's parent, …) has an unmet dependency. A child held back
-- that way used to sit in the claim indexes (its own unmet_deps is 0), so every claim stepped over all
-- of them at the head of the claim order, walking up each one's parents in PL/pgSQL
-- (baton_ancestor_waits): 7× the claim without parents at 100k cards (docs/benchmarks.md, "Epics'
-- cost"). Now the claim indexes leave such cards out, as they leave out epics with open children.
--
-- Kept by the triggers below on every path (creates, imports, restores, the one-statement completes):
-- * a card whose unmet_deps crosses 0 (it starts or stops waiting) rewrites its subtree;
-- * a card inserted with a parent, or whose parent changes, takes its value from the new parent and
--   rewrites its own subtree; a card inserted with unmet_deps > 0 rewrites the subtree it may already
--   have (a restore or an import loads children before their parent as often as after).
-- AFTER row triggers run at the end of the statement, so a batch sees all its own rows. The triggers
-- write only tree_waits, which fires none of them again (UPDATE OF lists other columns).
ALTER TABLE cards ADD COLUMN tree_waits boolean NOT NULL DEFAULT false;

-- The subtree below `root` (not root itself), from root's current row down: a child waits when its
-- parent waits on a dependency or has a waiting ancestor. Parents never form a cycle (the backlog
-- refuses one); the depth bound only guards a store edited by hand. Writes only rows that change, and
-- only while the row still has the parent it was reached through.
CREATE FUNCTION baton_tree_rewrite(root text) RETURNS void LANGUAGE sql AS $$
	WITH RECURSIVE sub(id, parent, waits, unmet, depth) AS (
		SELECT c.id, c.parent, (r.unmet_deps > 0 OR r.tree_waits), c.unmet_deps, 1
		FROM cards r JOIN cards c ON c.parent = r.id WHERE r.id = root
		UNION ALL
		SELECT c.id, c.parent, (s.waits OR s.unmet > 0), c.unmet_deps, s.depth + 1
		FROM sub s JOIN cards c ON c.parent = s.id WHERE s.depth < 64
	)
	UPDATE cards SET tree_waits = sub.waits FROM sub
	WHERE cards.id = sub.id AND cards.parent = sub.parent AND cards.tree_waits <> sub.waits
$$;

CREATE FUNCTION baton_tree_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	waits boolean;
BEGIN
	IF TG_OP = 'INSERT' OR OLD.parent IS DISTINCT FROM NEW.parent THEN
		SELECT p.unmet_deps > 0 OR p.tree_waits INTO waits FROM cards p WHERE p.id = NEW.parent;
		UPDATE cards SET tree_waits = coalesce(waits, false)
		WHERE id = NEW.id AND tree_waits <> coalesce(waits, false);
	END IF;
	PERFORM baton_tree_rewrite(NEW.id);
	RETURN NULL;
END $$;

CREATE TRIGGER cards_tree_inserted AFTER INSERT ON cards FOR EACH ROW
	WHEN (NEW.parent IS NOT NULL OR NEW.unmet_deps > 0) EXECUTE FUNCTION baton_tree_changed();
CREATE TRIGGER cards_tree_moved AFTER UPDATE OF unmet_deps, parent ON cards FOR EACH ROW
	WHEN ((OLD.unmet_deps > 0) <> (NEW.unmet_deps > 0) OR OLD.parent IS DISTINCT FROM NEW.parent)
	EXECUTE FUNCTION baton_tree_changed();

-- The cards there are: every subtree from its roots (cards without a parent, or whose parent is gone).
WITH RECURSIVE t(id, waits, unmet, depth) AS (
	SELECT c.id, false, c.unmet_deps, 0 FROM cards c
	WHERE c.parent IS NULL OR NOT EXISTS (SELECT 1 FROM cards p WHERE p.id = c.parent)
	UNION ALL
	SELECT c.id, (t.waits OR t.unmet > 0), c.unmet_deps, t.depth + 1
	FROM t JOIN cards c ON c.parent = t.id WHERE t.depth < 64
)
UPDATE cards SET tree_waits = true FROM t WHERE cards.id = t.id AND t.waits;

DROP INDEX cards_claim_idx;
CREATE INDEX cards_claim_idx ON cards ((-priority), created_at, id)
	WHERE status = 'ready' AND unmet_deps = 0 AND open_children = 0 AND NOT tree_waits;
DROP INDEX cards_claim_phase_idx;
CREATE INDEX cards_claim_phase_idx ON cards (phase, (-priority), created_at, id)
	WHERE status = 'ready' AND unmet_deps = 0 AND open_children = 0 AND NOT tree_waits AND phase IS NOT NULL;
