-- Labels on cards: short tags (`ui`, `area:api`, `team/web`) an agent or a human filters
-- by (`list --label`, `claim {labels}`), checked by the protocol's schema (protocolDomain.ts Label: at
-- most 16 of at most 32 characters). baton_card carries them (functions.sql), so the stored functions of older hubs
-- must not be written back: this migration tells them the store is newer.
ALTER TABLE cards ADD COLUMN labels text[] NOT NULL DEFAULT '{}';
-- The open cards that have labels, for /metrics' count by label (a scan of these rows only).
CREATE INDEX cards_labeled_idx ON cards (id) WHERE labels <> '{}' AND status <> 'done';
