-- A card's own base branch: the branch its worktree starts from and its approval lands into,
-- over the project's (project_settings.base) and over a `--land none` dependency's branch
-- (mcp-server/hub/claimWorkspace.ts). NULL = the project's. baton_card carries it as `base`
-- (functions.sql), so the stored functions of older hubs must not be written back: this migration tells
-- them the store is newer.
ALTER TABLE cards ADD COLUMN base text;
