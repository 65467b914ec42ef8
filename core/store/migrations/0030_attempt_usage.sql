-- What each attempt cost: the tokens and dollars its agent reported (a --command agent's BATON_USAGE
-- line read by the supervisor, or the agent's own heartbeat), one row per claim of a card (its epoch),
-- the last report replacing the earlier ones (a report is the attempt's running total). The agent kind
-- and project are kept with the row, so stats and /metrics sum by them without joining cards, and a
-- deleted card's spend stays counted (money spent is spent): no foreign key to cards.
-- cost_usd null: the agent reported tokens but no cost; nothing is invented for it.
CREATE TABLE attempt_usage (
	card_id text NOT NULL,
	epoch integer NOT NULL,
	kind text,
	project text,
	input_tokens bigint NOT NULL CHECK (input_tokens >= 0),
	output_tokens bigint NOT NULL CHECK (output_tokens >= 0),
	cost_usd double precision CHECK (cost_usd >= 0),
	updated_at timestamptz NOT NULL,
	PRIMARY KEY (card_id, epoch)
);

-- The sums card/stats and /metrics read, kept by every report in its own transaction (the difference
-- from the attempt's previous report is added), so a stats call reads a few rows instead of grouping
-- every attempt ever made (measured: 300 ms at 100k attempts on a loaded 2-core machine). '' stands for
-- no kind (not dispatched) and no project; unknown_cost counts the attempts whose report has no cost.
CREATE TABLE usage_totals (
	kind text NOT NULL,
	project text NOT NULL,
	input_tokens bigint NOT NULL,
	output_tokens bigint NOT NULL,
	known_cost_usd double precision NOT NULL,
	unknown_cost integer NOT NULL,
	PRIMARY KEY (kind, project)
);
