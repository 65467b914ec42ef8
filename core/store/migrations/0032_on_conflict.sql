-- What a project does with a card in review whose branch stops merging into its base after another
-- card landed (mcp-server/hub/reviewConflicts.ts): 'mark' (the default) marks it on every face;
-- 'send-back' sends it back to ready at once, the conflict as its hand-over (not a failed attempt),
-- so its next claim merges the base in and an agent resolves the markers.
ALTER TABLE project_settings ADD COLUMN on_conflict text NOT NULL DEFAULT 'mark'
	CHECK (on_conflict IN ('mark', 'send-back'));
