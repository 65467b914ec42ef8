/**
 * The stored functions (core/store/migrations/functions.sql) on both stores: applied after the
 * migrations, not again while their text is unchanged (a store opened twice re-creates nothing), again
 * on the next open once the text changes, and not at all on a store built only part of the way.
 */
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import type { Db } from '../../core/store/db';
import { functionsFile, loadMigrations, migrate, storedFunctions } from '../../core/store/migrate';
import { openPglite, sourceStoreDir } from '../../core/store/pglite';
import { openPostgres } from '../../core/store/postgres';
import { dropSchema, type StoreKind, storeKinds, tempDir, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';

/** A store of `kind` that outlives its connections: a PGlite data dir, or a PostgreSQL schema. */
function reopenable(kind: StoreKind, root: string): { open(): Promise<Db>; drop(): Promise<void> } {
	if (kind === 'pglite') {
		const dataDir = join(root, 'pg');
		return { open: async () => (await openPglite({ dataDir })).db, drop: () => Promise.resolve() };
	}
	const schema = uniqueSchema();
	return { open: () => openPostgres({ databaseUrl: testDatabaseUrl, schema }), drop: () => dropSchema(schema) };
}

/** The row version of each function: CREATE OR REPLACE writes a new one even for the same text. */
async function versions(db: Db, names: string[]): Promise<Record<string, string>> {
	const rows = await db.query<{ name: string; xmin: string }>(
		`SELECT p.oid::regprocedure::text AS name, p.xmin::text AS xmin FROM pg_proc p
		 WHERE p.pronamespace = current_schema()::regnamespace AND p.proname = ANY($1::text[])`,
		[names],
	);
	return Object.fromEntries(rows.map(r => [r.name, r.xmin]));
}

async function appliedHashes(db: Db): Promise<{ hash: string; at: string }[]> {
	return db.query<{ hash: string; at: string }>('SELECT hash, applied_at::text AS at FROM baton_functions');
}

const watched = ['baton_ts', 'baton_card', 'baton_hand_over', 'baton_fold_counts', 'baton_test_marker'];

for (const kind of storeKinds) {
	describe(`stored functions on ${kind}`, () => {
		it('are applied once, kept while their text is the same, and applied again when it changes', async () => {
			const root = tempDir();
			const dir = join(root, 'migrations');
			cpSync(join(sourceStoreDir, 'migrations'), dir, { recursive: true });
			const store = reopenable(kind, root);
			try {
				const first = await store.open();
				const applied = await migrate(first, loadMigrations(dir));
				const { hash } = storedFunctions(readFileSync(join(dir, functionsFile), 'utf8'));
				const afterFirst = await appliedHashes(first);
				assert.deepEqual(
					afterFirst.map(r => r.hash),
					[hash],
				);
				if (kind === 'pglite') {
					assert.deepEqual(applied, [], 'a new data dir starts from the template');
					const row = await first.query<{ n: number }>('SELECT count(*)::int AS n FROM baton_migrations');
					assert.ok((row[0]?.n ?? 0) > 0);
				}
				const before = await versions(first, watched);
				assert.deepEqual(Object.keys(before).sort(), [
					'baton_card(cards)',
					'baton_fold_counts()',
					'baton_hand_over(timestamp with time zone,text,text,text,integer,text,text[],text,timestamp with time zone,integer,text)',
					'baton_hand_over(timestamp with time zone,text,text,text,integer,text,text[],text,timestamp with time zone,integer,text,text)',
					'baton_hand_over(timestamp with time zone,text,text,text,integer,text,text[],text,timestamp with time zone,integer,text,text,text)',
					'baton_ts(timestamp with time zone)',
				]);
				await first.close();

				// Opened again, same text: nothing is created again.
				const second = await store.open();
				assert.deepEqual(await migrate(second, loadMigrations(dir)), []);
				assert.deepEqual(await versions(second, watched), before);
				assert.deepEqual(await appliedHashes(second), afterFirst);
				await second.close();

				// The file changes: the next open applies all of it, and records the new text.
				appendFileSync(
					join(dir, functionsFile),
					'\nCREATE OR REPLACE FUNCTION baton_test_marker() RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT 29 $$;\n',
				);
				const third = await store.open();
				assert.deepEqual(await migrate(third, loadMigrations(dir)), []);
				assert.deepEqual(await third.query('SELECT baton_test_marker() AS n'), [{ n: 29 }]);
				const changed = await versions(third, watched);
				assert.notEqual(changed['baton_card(cards)'], before['baton_card(cards)'], 'the whole file was applied');
				const { hash: newHash } = storedFunctions(readFileSync(join(dir, functionsFile), 'utf8'));
				assert.deepEqual(
					(await appliedHashes(third)).map(r => r.hash),
					[newHash],
				);
				await third.close();

				const fourth = await store.open();
				assert.deepEqual(await migrate(fourth, loadMigrations(dir)), []);
				assert.deepEqual(await versions(fourth, watched), changed);
				await fourth.close();
			} finally {
				await store.drop();
				rmSync(root, { recursive: true, force: true });
			}
		});

		it('wait for the last migration: a store built part of the way (a restore of an older backup) has none', async () => {
			const root = tempDir();
			const store = reopenable(kind, root);
			try {
				const db = await (kind === 'pglite' ? openPglite({ useTemplate: false }).then(o => o.db) : store.open());
				try {
					const migrations = loadMigrations(join(sourceStoreDir, 'migrations'));
					await migrate(
						db,
						migrations.filter(m => m.version <= 12),
					);
					assert.deepEqual(await versions(db, watched), {});
					assert.deepEqual(await appliedHashes(db), []);
					// The triggers 0012 made run, with the functions that migration keeps.
					await db.exec(
						"INSERT INTO cards (id, title, body, status, created_at, updated_at) VALUES ('C1', 't', 'b', 'ready', now(), now())",
					);
					assert.deepEqual(await db.query('SELECT bucket, n::int AS n FROM card_counts'), [{ bucket: 'open', n: 1 }]);
					await migrate(db, migrations);
					assert.equal(Object.keys(await versions(db, watched)).length, 6);
					assert.deepEqual(await db.query("SELECT baton_card(c)->>'id' AS id FROM cards c"), [{ id: 'C1' }]);
				} finally {
					await db.close();
				}
			} finally {
				await store.drop();
				rmSync(root, { recursive: true, force: true });
			}
		});
	});
}
