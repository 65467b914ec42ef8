-- Links that do not block (issue 31): a card's `related` cards (kept on both cards), the cards it
-- `duplicates`, and `discovered_from`, the card its creator held when it created this one (an agent
-- finding work while doing other work). None of them changes readiness: claimableSql.ts never reads
-- them. baton_card carries them (functions.sql), so older hubs must not write their functions back.
ALTER TABLE cards ADD COLUMN related text[] NOT NULL DEFAULT '{}';
ALTER TABLE cards ADD COLUMN duplicates text[] NOT NULL DEFAULT '{}';
ALTER TABLE cards ADD COLUMN discovered_from text;
