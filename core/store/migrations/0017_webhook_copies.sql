-- Webhooks in a restored copy: a restore brought the original's hooks back active, and
-- the copy re-sent events under the original's delivery ids (`<hook>-<seq>`), so receivers that
-- de-duplicate on them dropped one backlog's real events.
-- * `paused`: why the hook sends nothing (null = it delivers). `baton restore` sets it on every hook it
--   brings back; `baton hooks resume ID` clears it.
-- * `instance`: which copy of the hook this is, part of every delivery id (`<hook>-<instance>-<seq>`);
--   random when the hook is added (existing hooks each get their own here) and made anew by a restore.
ALTER TABLE webhooks ADD COLUMN paused text;
ALTER TABLE webhooks ADD COLUMN instance text NOT NULL DEFAULT substr(md5(random()::text || clock_timestamp()::text), 1, 8);
