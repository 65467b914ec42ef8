-- The review gate and the inbox:
-- * status `review`: a card whose `review` is not 'none' goes there on complete instead of done; its
--   dependents keep waiting until it is approved. `completed_by` is the agent whose work is under
--   review (it may never approve it); an agent reviewer holds the card under a lease like a claim
--   (claim_owner, lease, epoch) while the status stays `review`.
-- * `handoff`: the reviewer's note from "request changes", handed to the next claimer.
-- * `needs_input`: an agent asked a question (a message with question = true) nobody answered yet.
-- * messages.delivered_at: when the card's holder got the message in a tool result (its inbox).
-- The holder's one-statement complete (and baton_hand_over) now applies only to cards without review.
ALTER TABLE cards DROP CONSTRAINT cards_status_check;
ALTER TABLE cards ADD CONSTRAINT cards_status_check CHECK (status IN ('ready', 'claimed', 'review', 'blocked', 'done'));
ALTER TABLE cards ADD COLUMN review text NOT NULL DEFAULT 'none';
ALTER TABLE cards ADD CONSTRAINT cards_review_check CHECK (review IN ('none', 'human', 'agent'));
ALTER TABLE cards ADD COLUMN completed_by text;
ALTER TABLE cards ADD COLUMN handoff text;
ALTER TABLE cards ADD COLUMN needs_input boolean NOT NULL DEFAULT false;
CREATE INDEX cards_review_idx ON cards (priority DESC, created_at, id) WHERE status = 'review';
ALTER TABLE messages ADD COLUMN delivered_at timestamptz;
CREATE INDEX messages_undelivered_idx ON messages (card_id) WHERE delivered_at IS NULL;
-- baton_card carries the new columns; baton_hand_over completes only cards without review (functions.sql).
