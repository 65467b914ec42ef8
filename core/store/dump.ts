/**
 * The whole store as rows, and back: what a full backup holds (mcp-server/hub/backupFormat.ts) and what
 * `baton restore` loads. Every table but the migration log, each row as PostgreSQL's own row_to_json
 * text, read in one consistent snapshot; loaded in one transaction with json_populate_recordset, so
 * types (timestamps to the microsecond, arrays, json) come back exactly. Runs on any Db (PGlite or
 * PostgreSQL); knows nothing of files, hubs or which store is current.
 */
import { BatonError } from '../errors';
import type { Db, Queryable } from './db';
import { quoteIdent } from './postgres';

/** The tables a dump holds, parents first; each with its primary key (the dump's row order). */
export const dumpTables = [
	{ name: 'cards', key: ['id'] },
	{ name: 'edges', key: ['card_id', 'dep_id'] },
	{ name: 'events', key: ['seq'] },
	{ name: 'agents', key: ['id'] },
	{ name: 'request_log', key: ['key'] },
	{ name: 'settings', key: ['key'] },
	{ name: 'messages', key: ['card_id', 'id'] },
	{ name: 'log_state', key: ['id'] },
	// Outgoing webhooks' configuration, secret and cursor (a restored store delivers from where the
	// backup's log ends); their delivery log (webhook_deliveries) is recent history and is left out.
	{ name: 'webhooks', key: ['id'] },
	// Per-project workspace settings (migration 0020).
	{ name: 'project_settings', key: ['project'] },
	// Readable ids: a restored store goes on numbering where the backup stopped.
	{ name: 'id_counters', key: ['prefix'] },
	{ name: 'id_prefixes', key: ['project'] },
	// The pauses of the line: a restored backlog is paused where the backup's was. The
	// supervisors' runs are live processes, not history: left out.
	{ name: 'pauses', key: ['scope', 'target'] },
	// What each attempt cost (migration 0030): spend is history a restore keeps.
	{ name: 'attempt_usage', key: ['card_id', 'epoch'] },
	{ name: 'usage_totals', key: ['kind', 'project'] },
] as const;

export type DumpTable = (typeof dumpTables)[number]['name'];

export const dumpTableNames: readonly string[] = dumpTables.map(t => t.name);

/** Rows per table, each a JSON object text from row_to_json, in primary-key order. */
export type DumpRows = Record<DumpTable, string[]>;

const pageRows = 5_000;

/** Reads every table in one snapshot. Awaits nothing but the database (PGlite holds its lock). */
export async function readDump(db: Db): Promise<DumpRows> {
	return db.transaction(async tx => {
		// The first statement of the transaction: every page below sees the same snapshot.
		await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
		const rows = {} as DumpRows;
		for (const table of dumpTables) {
			rows[table.name] = await readTable(tx, table.name, table.key);
		}
		return rows;
	});
}

/** One table in key order, a page at a time (keyset paging: no OFFSET over a long event log). */
async function readTable(tx: Queryable, table: string, key: readonly string[]): Promise<string[]> {
	const keys = key.map(quoteIdent);
	const order = keys.join(', ');
	const out: string[] = [];
	let after: unknown[] | undefined;
	for (;;) {
		const where = after === undefined ? '' : `WHERE (${order}) > (${key.map((_, i) => `$${i + 1}`).join(', ')})`;
		const rows = await tx.query<Record<string, unknown>>(
			`SELECT row_to_json(t)::text AS r, ${keys.map((k, i) => `${k} AS k${i}`).join(', ')} FROM ${quoteIdent(table)} t ${where} ORDER BY ${order} LIMIT ${pageRows}`,
			after ?? [],
		);
		for (const row of rows) {
			out.push(String(row.r));
		}
		const last = rows.at(-1);
		if (rows.length < pageRows || last === undefined) {
			return out;
		}
		after = key.map((_, i) => last[`k${i}`]);
	}
}

/** Row counts per table, for headers and messages. */
export function dumpCounts(rows: DumpRows): Record<DumpTable, number> {
	const counts = {} as Record<DumpTable, number>;
	for (const table of dumpTables) {
		counts[table.name] = rows[table.name].length;
	}
	return counts;
}

const insertRows = 1_000;

/**
 * Replaces every dumped table's rows with `rows`, in one transaction: all of it or nothing. The store
 * must already have the schema the rows were dumped from (a table that schema does not have yet, such
 * as `messages` before migration 0009, must have no rows); the event sequence continues after the
 * highest seq loaded, and the log's compaction state is there even when the backup predates it. A row that does not fit its table is an `invalid_input` error naming the table.
 */
export async function loadDump(db: Db, rows: DumpRows): Promise<void> {
	await db.transaction(async tx => {
		const present = await presentTables(tx);
		const tables = dumpTables.filter(t => present.has(t.name));
		for (const table of dumpTables.filter(t => !present.has(t.name) && rows[t.name].length > 0)) {
			throw new BatonError('invalid_input', `The backup has ${table.name} rows, but its schema has no such table.`);
		}
		for (const table of [...tables].reverse()) {
			await tx.query(`DELETE FROM ${quoteIdent(table.name)}`);
		}
		for (const table of tables) {
			const columns = await writableColumns(tx, table.name);
			const list = columns.map(quoteIdent).join(', ');
			const all = rows[table.name];
			for (let i = 0; i < all.length; i += insertRows) {
				const batch = `[${all.slice(i, i + insertRows).join(',')}]`;
				try {
					await tx.query(
						`INSERT INTO ${quoteIdent(table.name)} (${list}) SELECT ${list} FROM json_populate_recordset(NULL::${quoteIdent(table.name)}, $1::json)`,
						[batch],
					);
				} catch (e) {
					const why = e instanceof Error ? e.message : String(e);
					throw new BatonError('invalid_input', `The backup's ${table.name} rows do not load: ${why}.`);
				}
			}
		}
		if (tables.some(t => t.name === 'cards') && (await writableColumns(tx, 'cards')).includes('open_children')) {
			// Migration 0023's triggers counted each loaded child on top of the dumped counts: count again.
			await tx.query(`UPDATE cards p SET open_children = (SELECT count(*) FROM cards c WHERE c.parent = p.id AND c.status <> 'done')
				WHERE p.open_children <> 0 OR EXISTS (SELECT 1 FROM cards c WHERE c.parent = p.id)`);
		}
		await tx.query("SELECT setval('event_seq', coalesce((SELECT max(seq) FROM events), 0) + 1, false)");
		if (present.has('log_state')) {
			// A backup from before the bounded log (0013) has no compaction state: nothing was compacted.
			await tx.query('INSERT INTO log_state DEFAULT VALUES ON CONFLICT DO NOTHING');
		}
	});
}

/** The dumped tables this store has (an older schema lacks the newer ones). */
async function presentTables(q: Queryable): Promise<Set<string>> {
	const rows = await q.query<{ name: string }>(
		`SELECT table_name AS name FROM information_schema.tables
		 WHERE table_schema = current_schema() AND table_name = ANY($1::text[])`,
		[dumpTableNames],
	);
	return new Set(rows.map(r => r.name));
}

/** The table's columns a row may set (generated columns are computed by the store). */
async function writableColumns(tx: Queryable, table: string): Promise<string[]> {
	const rows = await tx.query<{ name: string }>(
		`SELECT column_name AS name FROM information_schema.columns
		 WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER'
		 ORDER BY ordinal_position`,
		[table],
	);
	return rows.map(r => r.name);
}

/** Rows a store holds in the dumped tables: a restore target must hold none (PostgreSQL mode). */
export async function storeRowCount(db: Db): Promise<number> {
	const present = await presentTables(db);
	const rows = await db.query<{ n: number }>(
		`SELECT (${dumpTables
			.filter(t => t.name !== 'settings' && t.name !== 'log_state' && present.has(t.name))
			.map(t => `(SELECT count(*) FROM ${quoteIdent(t.name)})`)
			.join(' + ')})::int AS n`,
	);
	return rows[0]?.n ?? 0;
}
