-- An UPDATE that cannot be HOT writes a new entry into every index of the table, except partial
-- indexes whose predicate the new row fails. A claim, a complete and each dependent's readiness
-- counter are such updates (status and unmet_deps sit in index predicates), so each index costs
-- every one of them. Two indexes paid that for nothing (docs/benchmarks.md: 0.06 ms less per
-- claim+complete at 100k cards, interleaved A/B):
-- * cards_status_idx: four values over the whole table. Listing by status never used it (the order
--   index with a filter, or the partial indexes below, serve better), and stats reads every row.
-- * The unique constraint on idempotency_key indexed every card, NULL keys included; only cards
--   created with a key need the entry, and lookups by key (= ANY) imply NOT NULL.
DROP INDEX cards_status_idx;
ALTER TABLE cards DROP CONSTRAINT cards_idempotency_key_key;
CREATE UNIQUE INDEX cards_idempotency_key_idx ON cards (idempotency_key) WHERE idempotency_key IS NOT NULL;
-- Blocked cards are few and wait for a human: list them without walking the whole order index. No
-- claim or complete writes here (their rows are never blocked).
CREATE INDEX cards_blocked_idx ON cards (priority DESC, created_at, id) WHERE status = 'blocked';
