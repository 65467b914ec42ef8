-- baton_ts was declared IMMUTABLE, but to_char is only STABLE, and PostgreSQL never inlines a SQL
-- function whose body is more volatile than its declaration. So every card built by baton_card() made
-- five real function calls, each set up afresh in every statement: ~0.3 ms of a claim's or a
-- complete's ~0.5 ms on PostgreSQL 15 (docs/benchmarks.md). Declared STABLE, the body is inlined.
CREATE OR REPLACE FUNCTION baton_ts(t timestamptz) RETURNS text LANGUAGE sql STABLE AS $$
	SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;
