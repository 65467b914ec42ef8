-- Messages on a card: anyone posts markdown text (≤ 4 KiB, checked by core) on a card;
-- `question` marks an agent asking a human. A post also appends a `commented` event carrying the
-- message, in the same transaction. `id` numbers a card's messages 1, 2, 3… in the order they were
-- posted (taken under the card's row lock), so "newest last" holds even within one millisecond;
-- `actor` is who posted it (the wire calls it `from`). Messages go with their card.
CREATE TABLE messages (
	card_id text NOT NULL REFERENCES cards (id) ON DELETE CASCADE,
	id integer NOT NULL,
	actor text NOT NULL,
	text text NOT NULL,
	question boolean NOT NULL DEFAULT false,
	at timestamptz NOT NULL,
	PRIMARY KEY (card_id, id)
);
