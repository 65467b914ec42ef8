-- Links that do not block: a card's `related` cards (kept on both cards), the cards it
-- `duplicates`, and `discovered_from`, the card its creator held when it created this one (an agent
-- finding work while doing other work). None of them changes readiness: claimableSql.ts never reads
-- them. baton_card carries them (functions.sql), so older hubs must not write their functions back.
ALTER TABLE cards ADD COLUMN related text[] NOT NULL DEFAULT '{}';
ALTER TABLE cards ADD COLUMN duplicates text[] NOT NULL DEFAULT '{}';
ALTER TABLE cards ADD COLUMN discovered_from text;

-- Readable ids: a card created without an id gets `<PREFIX>-<n>`. `id_counters` holds the
-- next number per prefix, taken by an upsert in the create's own transaction, so concurrent creates
-- (two hubs on PostgreSQL included) wait on the row and never skip or repeat a number; a rolled-back
-- create gives its numbers back. `id_prefixes` holds the prefixes set with `baton settings --id-prefix`
-- per project; other projects' prefix comes from their name (core/backlog/readableIds.ts), and cards
-- without a project use the backlog's own (the `idPrefix` setting). Existing ids are not touched.
CREATE TABLE id_counters (prefix text PRIMARY KEY, next integer NOT NULL);
CREATE TABLE id_prefixes (project text PRIMARY KEY, prefix text NOT NULL);
