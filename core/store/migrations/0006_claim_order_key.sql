-- Picks must read cards_claim_idx whatever the statistics say.
--
-- cards_claim_idx (ready, unblocked cards) and cards_order_idx (every card) had the same key, the claim
-- order. Statistics taken while most cards were ready (right after a bulk create; PostgreSQL's
-- autovacuum takes them then) made the two indexes look alike, and the planner could pick
-- cards_order_idx for the claim: each pick then stepped over every done card ahead of the first ready
-- one, a cost growing with the work done until the next ANALYZE. The claim index now holds the same
-- order as the expression (-priority), which only the claim's own queries (the pick, the ready page)
-- ask for, so no other index can serve them. Lists of all cards keep cards_order_idx.
DROP INDEX cards_claim_idx;
CREATE INDEX cards_claim_idx ON cards ((-priority), created_at, id) WHERE status = 'ready' AND unmet_deps = 0;
-- A claim for one phase found its first card by walking the claim index past the other phases' cards,
-- or, with statistics saying few cards have that phase, by reading the whole table. This index starts
-- at the phase's first card in claim order. Like the claim index it gains an entry only when a card
-- becomes claimable (created, unblocked, released), never on a claim or a complete.
CREATE INDEX cards_claim_phase_idx ON cards (phase, (-priority), created_at, id)
	WHERE status = 'ready' AND unmet_deps = 0 AND phase IS NOT NULL;
-- The hand-over's pick (migration 0005) in the same order: functions.sql.
