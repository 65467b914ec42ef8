/**
 * The drizzle schema (core/store/schema.ts) and the SQL migrations describe the same tables: every
 * column with its type and nullability, and every named index, checked against a migrated PGlite
 * and a migrated PostgreSQL schema.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { toSnakeCase } from 'drizzle-orm/casing';
import { getTableConfig } from 'drizzle-orm/pg-core';

import type { Db } from '../../core/store/db';
import { loadMigrations, migrate } from '../../core/store/migrate';
import { openPglite, sourceStoreDir } from '../../core/store/pglite';
import { openPostgres } from '../../core/store/postgres';
import { tables } from '../../core/store/schema';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';

type Columns = Record<string, string>;

/** table -> column -> "type null|not null", as drizzle declares them. */
function declared(): Record<string, Columns> {
	const out: Record<string, Columns> = {};
	for (const table of Object.values(tables)) {
		const config = getTableConfig(table);
		out[config.name] = Object.fromEntries(
			config.columns.map(c => [toSnakeCase(c.name), `${c.getSQLType()} ${c.notNull ? 'not null' : 'null'}`]),
		);
	}
	return out;
}

async function live(db: Db, schema: string): Promise<Record<string, Columns>> {
	const rows = await db.query<{
		table_name: string;
		column_name: string;
		data_type: string;
		udt_name: string;
		is_nullable: string;
	}>(
		`SELECT table_name, column_name, data_type, udt_name, is_nullable FROM information_schema.columns
		 WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
		[schema],
	);
	const out: Record<string, Columns> = {};
	for (const r of rows) {
		const type = r.data_type === 'ARRAY' ? `${r.udt_name.slice(1)}[]` : r.data_type;
		(out[r.table_name] ??= {})[r.column_name] = `${type} ${r.is_nullable === 'YES' ? 'null' : 'not null'}`;
	}
	return out;
}

async function liveIndexes(db: Db, schema: string): Promise<string[]> {
	const rows = await db.query<{ indexname: string }>(
		`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_key'
		 ORDER BY indexname`,
		[schema],
	);
	return rows.map(r => r.indexname);
}

function declaredIndexes(): string[] {
	return Object.values(tables)
		.flatMap(t => getTableConfig(t).indexes.map(i => i.config.name ?? ''))
		.sort();
}

const migrations = loadMigrations(join(sourceStoreDir, 'migrations'));

describe('drizzle schema matches the migrations', () => {
	it('on PGlite', async () => {
		const { db } = await openPglite({});
		try {
			await migrate(db, migrations);
			assert.deepEqual(await live(db, 'public'), declared());
			assert.deepEqual(await liveIndexes(db, 'public'), declaredIndexes());
		} finally {
			await db.close();
		}
	});

	it('on PostgreSQL', async () => {
		const schema = uniqueSchema();
		const db = await openPostgres({ databaseUrl: testDatabaseUrl, schema });
		try {
			await migrate(db, migrations);
			assert.deepEqual(await live(db, schema), declared());
			assert.deepEqual(await liveIndexes(db, schema), declaredIndexes());
		} finally {
			await db.close();
			await dropSchema(schema);
		}
	});
});
