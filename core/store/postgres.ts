/**
 * PostgreSQL behind the Db interface, through a node-postgres pool (team mode). Hot
 * statements run as named prepared statements; each connection pins search_path to the schema.
 * A server that goes away fails the requests that meet it (pgErrors.ts names it `unavailable`) and
 * never the process; the pool opens fresh connections once it is back. Nothing here retries a
 * request whose connection died: its commit may have landed, which only the request's key can tell.
 */
import pg from 'pg';

import { type Db, type Queryable, type Row, retryableSqlStates, sqlState } from './db';

export interface PostgresOptions {
	databaseUrl: string;
	schema?: string | undefined;
	poolSize?: number | undefined;
}

const maxRetries = 8;
/** How long opening a connection may take before the request fails as unavailable. */
const connectTimeoutMs = 10_000;

/** Quotes an identifier for SQL ("my schema" -> "\"my schema\""). */
export function quoteIdent(name: string): string {
	return `"${name.replaceAll('"', '""')}"`;
}

class PgQueryable implements Queryable {
	constructor(private readonly client: pg.Pool | pg.PoolClient) {}

	async query<T = Row>(text: string, params: readonly unknown[] = [], name?: string): Promise<T[]> {
		const config: pg.QueryConfig = { text, values: params as unknown[] };
		if (name !== undefined) {
			config.name = name;
		}
		const result = await this.client.query(config);
		return result.rows as T[];
	}
}

export async function openPostgres(options: PostgresOptions): Promise<Db> {
	const schema = options.schema;
	if (schema !== undefined) {
		// Create the schema once with a throwaway client: search_path is set per pooled connection.
		const setup = new pg.Client({ connectionString: options.databaseUrl, connectionTimeoutMillis: connectTimeoutMs });
		// The server going away mid-setup fails the query; the 'error' event must not also end the process.
		setup.on('error', () => undefined);
		await setup.connect();
		try {
			await setup.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
		} catch (e) {
			// Two processes creating the same schema at once: the loser sees a unique violation.
			if (sqlState(e) !== '23505' && sqlState(e) !== '42P06') {
				throw e;
			}
		} finally {
			await setup.end();
		}
	}
	// Named (prepared) statements keep their generic plan: re-planning the claim CTE per call costs more
	// than running it. search_path pins the schema for every pooled connection.
	const settings = ['-c plan_cache_mode=force_generic_plan'];
	if (schema !== undefined) {
		settings.push(`-c search_path=${quoteIdent(schema)},public`);
	}
	const pool = new pg.Pool({
		connectionString: options.databaseUrl,
		max: options.poolSize ?? 4,
		options: settings.join(' '),
		// A server that does not answer (host gone, packets dropped) fails the request instead of hanging it.
		connectionTimeoutMillis: connectTimeoutMs,
	});
	// An idle client's error (server restart) must not crash the process; the pool drops that client.
	pool.on('error', () => undefined);
	// A checked-out client (in a transaction or a script) has no pool listener: when the server goes away
	// it emits 'error' besides failing its query, and an unheard 'error' ends the process. The query's
	// rejection is what callers act on (the client is then released as broken), so this only listens.
	pool.on('connect', client => {
		client.on('error', () => undefined);
	});
	const root = new PgQueryable(pool);
	return {
		mode: 'postgres',
		query: (text, params, name) => root.query(text, params, name),
		async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
			for (let attempt = 0; ; attempt++) {
				const client = await pool.connect();
				let broken = false;
				try {
					await client.query('BEGIN');
					const result = await fn(new PgQueryable(client));
					await client.query('COMMIT');
					return result;
				} catch (e) {
					try {
						await client.query('ROLLBACK');
					} catch {
						broken = true;
					}
					const state = sqlState(e);
					if (state !== undefined && retryableSqlStates.has(state) && attempt < maxRetries) {
						// Back off a little, with jitter, so the two sides of a deadlock do not collide again.
						await new Promise(resolve => setTimeout(resolve, 2 + Math.random() * 10 * (attempt + 1)));
						continue;
					}
					throw e;
				} finally {
					client.release(broken);
				}
			}
		},
		async exec(sql: string): Promise<void> {
			// A dedicated client, so a failed script's ROLLBACK reaches the session that began it.
			const client = await pool.connect();
			let broken = false;
			try {
				await client.query(sql);
			} catch (e) {
				try {
					await client.query('ROLLBACK');
				} catch {
					broken = true;
				}
				throw e;
			} finally {
				client.release(broken);
			}
		},
		async close(): Promise<void> {
			await pool.end();
		},
	};
}
