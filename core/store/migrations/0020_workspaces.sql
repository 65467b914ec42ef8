-- Workspaces: a claimed card's own branch and git worktree, made and kept by the hub that
-- claimed it (mcp-server/hub/claimWorkspace.ts and its neighbours; the git itself in mcp-server/workspaces/).
--
-- `cards.workspace`: the card's workspace as protocol CardWorkspace (root, path, branch, base, host, and
-- once complete committed it: head and the diff's counts; once approved landed it: landed). NULL = none.
-- baton_card carries it as `workspace` only when set (functions.sql).
ALTER TABLE cards ADD COLUMN workspace jsonb;

-- Per-project workspace settings (protocol ProjectSettings), one row per project that ever set one; a
-- project without a row has the defaults (worktrees off). `roots`: the repository's root per host name,
-- recorded by `baton settings --worktrees on` run inside it (a claim without a `root` uses this host's).
CREATE TABLE project_settings (
	project text PRIMARY KEY,
	worktrees boolean NOT NULL DEFAULT false,
	base text,
	land text NOT NULL DEFAULT 'squash' CHECK (land IN ('squash', 'merge', 'rebase', 'none')),
	push boolean NOT NULL DEFAULT false,
	setup text,
	setup_timeout_seconds integer NOT NULL DEFAULT 600,
	wip_days integer NOT NULL DEFAULT 30,
	roots jsonb NOT NULL DEFAULT '{}'
);
