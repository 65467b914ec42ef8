-- The board and the tree load Done newest first, a page at a time: card/list with
-- order 'recent' reads this index from its start, or from a cursor's (updated_at, id), and stops after
-- one page, so a page costs the same at 50,000 done cards as at 50. Partial: done cards are the only
-- bulk status listed this way (the other columns are loaded in full), and an index over every card
-- would be touched by every update of a live card.
CREATE INDEX cards_done_recent_idx ON cards (updated_at DESC, id DESC) WHERE status = 'done';
