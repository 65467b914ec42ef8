/**
 * The one database interface Backlog talks to, implemented over PGlite (pglite.ts) and node-postgres
 * (postgres.ts), so every operation has one code path for both (DESIGN §1, PERFORMANCE.md §2).
 */

export type Row = Record<string, unknown>;

/** Something that runs SQL: the database itself or an open transaction. */
export interface Queryable {
	/**
	 * Runs one statement with $n parameters and returns its rows. `name` marks a hot statement worth
	 * preparing once per connection (PostgreSQL named statements); its text must never vary.
	 */
	query<T = Row>(text: string, params?: readonly unknown[], name?: string): Promise<T[]>;
}

/**
 * A hot statement that appends events, in two texts (PGlite, querySeq): `withSeq` takes the next event
 * seq as one more parameter after the caller's; `inSql` computes it (max(seq) + 1). Both are prepared
 * under their names.
 */
export interface SeqStatement<T> {
	withSeq: { text: string; name: string };
	inSql: { text: string; name: string };
	/** The highest seq the statement appended, read from its rows; undefined when it appended none. */
	lastSeqOf(rows: readonly T[]): number | undefined;
}

export interface Db extends Queryable {
	readonly mode: 'pglite' | 'postgres';
	/**
	 * PGlite only: runs a hot statement that appends events, handing it the next seq when the store
	 * knows it (its last statement was such a one, run alone), which saves the max(seq) lookup; else the
	 * statement computes it. Seqs stay gap-free either way.
	 */
	querySeq?<T = Row>(statement: SeqStatement<T>, params: readonly unknown[]): Promise<T[]>;
	/**
	 * Runs `fn` in one transaction: commit when it resolves, roll back when it throws. On PostgreSQL a
	 * deadlock or serialization failure is retried a few times (fn must be safe to re-run: it only
	 * touches the database). In PGlite the whole instance is locked until it settles, so fn must await
	 * nothing but the database (PERFORMANCE.md §3).
	 */
	transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
	/** Runs a script of several statements without parameters (migrations, maintenance). */
	exec(sql: string): Promise<void>;
	close(): Promise<void>;
}

/** SQLSTATEs worth re-running a whole transaction for. */
export const retryableSqlStates: ReadonlySet<string> = new Set(['40P01', '40001']);

export function sqlState(e: unknown): string | undefined {
	if (typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string') {
		return e.code;
	}
	return undefined;
}
