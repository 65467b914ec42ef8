/**
 * The drizzle schema (core/store/schema.ts) and the SQL migrations describe the same tables. drizzle-kit
 * renders schema.ts as DDL; that DDL builds one empty schema and the migrations another, and the two
 * catalogues must agree on every column (type, nullability, default), every index (its whole
 * definition: columns, order, predicate, uniqueness) and every constraint (name and definition:
 * primary and foreign keys, checks), on PGlite and on PostgreSQL. This is the drizzle-kit check:
 * `drizzle-kit check` itself only validates the snapshots drizzle-kit writes beside migrations it
 * generates, and ours are hand-written, so it had nothing to look at.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { generateDrizzleJson, generateMigration } from 'drizzle-kit/api';
import { getTableName } from 'drizzle-orm';

import type { Db } from '../../core/store/db';
import { loadMigrations, migrate } from '../../core/store/migrate';
import { openPglite, sourceStoreDir } from '../../core/store/pglite';
import { openPostgres } from '../../core/store/postgres';
import { tables } from '../../core/store/schema';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';

const migrations = loadMigrations(join(sourceStoreDir, 'migrations'));

/**
 * The part of a drizzle-kit snapshot this test touches. drizzle-kit declares its snapshots with zod 3's
 * types, which do not resolve against our zod 4, so they arrive untyped.
 */
interface Snapshot {
	id: string;
}

/** schema.ts as drizzle-kit would create it, unqualified so it lands in the session's schema. */
async function declaredDdl(): Promise<string> {
	const empty = generateDrizzleJson({}, undefined, undefined, 'snake_case') as unknown as Snapshot;
	const declared = generateDrizzleJson(tables, empty.id, undefined, 'snake_case') as unknown as Snapshot;
	const statements = await generateMigration(empty, declared);
	return statements.join('\n').replaceAll('"public".', '');
}

interface Catalogue {
	columns: string[];
	indexes: string[];
	constraints: string[];
}

/** One schema's tables as sorted lines, with the schema name taken out so two schemas compare. */
async function catalogue(db: Db, schema: string): Promise<Catalogue> {
	const local = (definition: string): string => definition.replaceAll(`${schema}.`, '');
	const columns = await db.query<{
		table_name: string;
		column_name: string;
		data_type: string;
		udt_name: string;
		is_nullable: string;
		column_default: string | null;
	}>(
		`SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default
		 FROM information_schema.columns WHERE table_schema = $1`,
		[schema],
	);
	// Indexes of their own; those behind a primary key or unique constraint are compared as constraints.
	const indexes = await db.query<{ name: string; definition: string }>(
		`SELECT i.relname AS name, pg_get_indexdef(i.oid) AS definition
		 FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
		 WHERE n.nspname = $1
		   AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.oid AND k.contype IN ('p', 'u', 'x'))`,
		[schema],
	);
	const constraints = await db.query<{ table_name: string; name: string; definition: string }>(
		`SELECT c.relname AS table_name, k.conname AS name, pg_get_constraintdef(k.oid) AS definition
		 FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = k.connamespace
		 WHERE n.nspname = $1`,
		[schema],
	);
	return {
		columns: columns
			.map(c => {
				const type = c.data_type === 'ARRAY' ? `${c.udt_name.slice(1)}[]` : c.data_type;
				const nullable = c.is_nullable === 'YES' ? 'null' : 'not null';
				return `${c.table_name}.${c.column_name} ${type} ${nullable} default ${c.column_default ?? 'none'}`;
			})
			.sort(),
		indexes: indexes.map(i => `${i.name}: ${local(i.definition)}`).sort(),
		constraints: constraints.map(k => `${k.table_name} ${k.name}: ${local(k.definition)}`).sort(),
	};
}

function assertSame(migrated: Catalogue, declared: Catalogue): void {
	// Every table schema.ts declares is there, and the lists are not trivially equal.
	assert.deepEqual(
		[...new Set(declared.columns.map(c => c.split('.')[0]))].sort(),
		Object.values(tables)
			.map(t => getTableName(t))
			.sort(),
	);
	assert.deepEqual(migrated.columns, declared.columns);
	assert.deepEqual(migrated.indexes, declared.indexes);
	assert.deepEqual(migrated.constraints, declared.constraints);
}

describe('drizzle schema matches the migrations', () => {
	it('on PGlite', async () => {
		const { db } = await openPglite({});
		try {
			await migrate(db, migrations);
			await db.exec(
				`CREATE SCHEMA declared; SET search_path TO declared, public;\n${await declaredDdl()}\nSET search_path TO public;`,
			);
			assertSame(await catalogue(db, 'public'), await catalogue(db, 'declared'));
		} finally {
			await db.close();
		}
	});

	it('on PostgreSQL', async () => {
		const migratedSchema = uniqueSchema();
		const declaredSchema = uniqueSchema();
		const migrated = await openPostgres({ databaseUrl: testDatabaseUrl, schema: migratedSchema });
		const declared = await openPostgres({ databaseUrl: testDatabaseUrl, schema: declaredSchema });
		try {
			await migrate(migrated, migrations);
			await declared.exec(await declaredDdl());
			assertSame(await catalogue(migrated, migratedSchema), await catalogue(declared, declaredSchema));
		} finally {
			await migrated.close();
			await declared.close();
			await dropSchema(migratedSchema);
			await dropSchema(declaredSchema);
		}
	});
});
