-- Parents and children: containment, not a dependency.
--
-- * `parent`: the card this one is part of (an epic); null = none. Checked by the backlog (exists, same
--   project, no cycle through parents or parents and dependencies: core/backlog/tree.ts), not by a
--   foreign key: deleting a parent with children is refused with the children named.
-- * `auto_close`: when its last open child is done, the card completes by itself (or goes to review).
-- * `open_children`: how many of its children are not done, kept by the triggers below on every path
--   (the one-statement claims and completes included), so "has open children" is a column, not a scan.
--
-- A card is claimable only with open_children = 0 and no ancestor waiting on a dependency
-- (core/backlog/claimableSql.ts, baton_ancestor_waits in functions.sql). The claim indexes leave out
-- cards with open children (an epic is never a candidate while its children are open).
ALTER TABLE cards ADD COLUMN parent text;
ALTER TABLE cards ADD COLUMN auto_close boolean NOT NULL DEFAULT false;
ALTER TABLE cards ADD COLUMN open_children integer NOT NULL DEFAULT 0;
CREATE INDEX cards_parent_idx ON cards (parent) WHERE parent IS NOT NULL;

DROP INDEX cards_claim_idx;
CREATE INDEX cards_claim_idx ON cards ((-priority), created_at, id) WHERE status = 'ready' AND unmet_deps = 0 AND open_children = 0;
DROP INDEX cards_claim_phase_idx;
CREATE INDEX cards_claim_phase_idx ON cards (phase, (-priority), created_at, id)
	WHERE status = 'ready' AND unmet_deps = 0 AND open_children = 0 AND phase IS NOT NULL;

-- A child counts as open while it is not done. Only rows with a parent fire (WHEN), and the parent's
-- own update lists neither status nor parent, so it fires nothing further.
CREATE FUNCTION baton_child_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE cards SET open_children = open_children + 1 WHERE id = NEW.parent;
	RETURN NULL;
END $$;
CREATE FUNCTION baton_child_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE cards SET open_children = open_children - 1 WHERE id = OLD.parent;
	RETURN NULL;
END $$;
CREATE FUNCTION baton_child_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF OLD.parent IS NOT NULL AND OLD.status <> 'done' THEN
		UPDATE cards SET open_children = open_children - 1 WHERE id = OLD.parent;
	END IF;
	IF NEW.parent IS NOT NULL AND NEW.status <> 'done' THEN
		UPDATE cards SET open_children = open_children + 1 WHERE id = NEW.parent;
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER cards_child_inserted AFTER INSERT ON cards FOR EACH ROW
	WHEN (NEW.parent IS NOT NULL AND NEW.status <> 'done') EXECUTE FUNCTION baton_child_inserted();
CREATE TRIGGER cards_child_deleted AFTER DELETE ON cards FOR EACH ROW
	WHEN (OLD.parent IS NOT NULL AND OLD.status <> 'done') EXECUTE FUNCTION baton_child_deleted();
CREATE TRIGGER cards_child_moved AFTER UPDATE OF status, parent ON cards FOR EACH ROW
	WHEN ((OLD.parent IS NOT NULL OR NEW.parent IS NOT NULL)
		AND (OLD.parent IS DISTINCT FROM NEW.parent OR (OLD.status = 'done') <> (NEW.status = 'done')))
	EXECUTE FUNCTION baton_child_moved();
