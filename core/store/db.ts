/**
 * The one database interface Backlog talks to, implemented over PGlite (pglite.ts) and node-postgres
 * (postgres.ts), so every operation has one code path for both (docs/decisions/0044-db-interface.md).
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

export interface Db extends Queryable {
	readonly mode: 'pglite' | 'postgres';
	/**
	 * Runs `fn` in one transaction: commit when it resolves, roll back when it throws. On PostgreSQL a
	 * deadlock or serialization failure is retried a few times (fn must be safe to re-run: it only
	 * touches the database). In PGlite the whole instance is locked until it settles, so fn must await
	 * nothing but the database.
	 */
	transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
	/** Runs a script of several statements without parameters (migrations, maintenance). */
	exec(sql: string): Promise<void>;
	/**
	 * PGlite: prepares named statements outside any transaction, so a transaction can run them by name
	 * (a named statement a transaction meets unprepared is parsed and planned on every call: 1–13 ms for
	 * the claim's general path). PostgreSQL prepares a named statement on first use on each connection,
	 * so it has nothing to do here.
	 */
	prepare?(statements: readonly { name: string; text: string }[]): Promise<void>;
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
