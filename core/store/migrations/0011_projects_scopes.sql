-- Projects and scopes:
-- * `project`: the repository a card belongs to (`github.com/acme/web`); null = none, claimable from any.
-- * `scope`: path globs relative to the project root and `lock:` names its work touches, as given.
-- * `reserved`: what the holder added with card/reserve while it works; emptied whenever the claim ends
--   (every status change and every new epoch clears it).
-- Whether two scopes overlap is decided in TypeScript (core/scope.ts), under an advisory lock, by the
-- claim's general path: the one-statement claims (and baton_hand_over's pick) take only cards without a
-- scope, and hand a scoped best card to that path by claiming nothing. They also filter by project:
-- '*' = any project, null = only cards with none, else that project's cards and cards with none.
ALTER TABLE cards ADD COLUMN project text;
ALTER TABLE cards ADD COLUMN scope text[] NOT NULL DEFAULT '{}';
ALTER TABLE cards ADD COLUMN reserved text[] NOT NULL DEFAULT '{}';
-- The live scopes a scoped claim checks against: few rows (one per working agent at most).
CREATE INDEX cards_live_scope_idx ON cards (project) WHERE status = 'claimed' AND (scope <> '{}' OR reserved <> '{}');
CREATE INDEX cards_project_idx ON cards (project) WHERE project IS NOT NULL;
-- baton_card carries the new columns, and baton_hand_over takes the project as an eleventh argument
-- (functions.sql): the ten-argument one of a store from before goes (a new store never had it).
DROP FUNCTION IF EXISTS baton_hand_over(timestamptz, text, text, text, int, text, text[], text, timestamptz, int);
