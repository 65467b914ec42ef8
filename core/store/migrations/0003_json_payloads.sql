-- Cards cross the wire as JSON text, and event data and request results are only ever stored and read
-- back whole: nothing queries inside them. So they are json, not jsonb. A card built as jsonb was
-- assembled into a binary tree, sorted by key and printed back to text on every claim and complete;
-- as json it is written once as text (docs/benchmarks.md: ~0.05 ms of a PGlite claim+complete).
ALTER TABLE events ALTER COLUMN data TYPE json USING data::json;
ALTER TABLE request_log ALTER COLUMN result TYPE json USING result::json;
-- baton_card returns json from here on (functions.sql). CREATE OR REPLACE cannot change a return type,
-- so the jsonb one of a store from before goes (a new store has none yet).
DROP FUNCTION IF EXISTS baton_card(cards);
