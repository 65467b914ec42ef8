/**
 * SQL migrations (core/store/migrations/NNNN_name.sql), applied in order on every open and tracked in
 * baton_migrations. Each runs in its own transaction; on PostgreSQL an advisory lock makes hubs that
 * start together take turns, and a migration another hub applied first is recognised, not re-run.
 * A store that already holds a migration this Baton does not know was written by a newer Baton: it is
 * refused before anything is applied, so a downgrade never runs old code against a newer schema.
 *
 * The stored functions (migrations/functions.sql) are not migrations: the file holds each function as
 * it is now and is applied whole, after the migrations, whenever its text differs from the one last
 * applied (its hash, in baton_functions), so a normal open costs one SELECT for it. Does not decide
 * what the functions do, nor run any backlog code.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { BatonError } from '../errors';
import { refusal } from './dataDir';
import type { Db } from './db';

export interface Migration {
	version: number;
	name: string;
	sql: string;
}

/** The stored functions, re-applied whenever their text changes (migrations/functions.sql). */
export interface StoredFunctions {
	sql: string;
	/** sha256 of `sql`, kept in baton_functions once applied. */
	hash: string;
}

/**
 * The migrations in order, with the stored functions of the newest schema. A list cut to an older
 * schema (`filter`, as a restore does before loading an older backup) carries no functions: they are
 * written for the newest schema, and are applied once the last migration is.
 */
export interface Migrations extends ReadonlyArray<Migration> {
	readonly functions?: StoredFunctions;
}

export const functionsFile = 'functions.sql';

/** Arbitrary constant: the advisory lock key that serialises migrations across hubs. */
export const migrationLockKey = 0x6261746f; // "bato"

export function loadMigrations(dir: string): Migrations {
	const list = readdirSync(dir)
		.filter(f => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
		.sort()
		.map(f => ({ version: Number(f.slice(0, 4)), name: f.slice(5, -4), sql: readFileSync(join(dir, f), 'utf8') }));
	return Object.assign(list, { functions: storedFunctions(readFileSync(join(dir, functionsFile), 'utf8')) });
}

export function storedFunctions(sql: string): StoredFunctions {
	return { sql, hash: createHash('sha256').update(sql).digest('hex') };
}

async function appliedVersions(db: Db): Promise<Set<number>> {
	await db.exec(`CREATE TABLE IF NOT EXISTS baton_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
	CREATE TABLE IF NOT EXISTS baton_functions (hash text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
	const rows = await db.query<{ version: number }>('SELECT version FROM baton_migrations');
	return new Set(rows.map(r => r.version));
}

/** True when the database holds Baton's migration table (read-only: creates nothing). */
export async function isBatonStore(db: Db): Promise<boolean> {
	const rows = await db.query<{ found: boolean }>("SELECT to_regclass('baton_migrations') IS NOT NULL AS found");
	return rows[0]?.found === true;
}

/**
 * Checks a PGlite store whose ready marker is missing before anything writes to it: it must be a Baton
 * backlog (else it is refused, untouched). Returns the notice saying it was checked; the caller
 * re-writes the marker once migrations succeeded.
 */
export async function checkUnmarked(db: Db, dataDir: string): Promise<string> {
	if (!(await isBatonStore(db))) {
		throw refusal(dataDir, 'it holds a PostgreSQL database that is not a Baton backlog (no baton_migrations table)');
	}
	const rows = await db.query<{ cards: number; events: number }>(
		'SELECT (SELECT count(*) FROM cards)::int AS cards, (SELECT count(*) FROM events)::int AS events',
	);
	const { cards = 0, events = 0 } = rows[0] ?? {};
	return `The data dir ${dataDir} had lost its baton-ready marker; its store was opened and checked (${cards} cards, ${events} events, schema ${await schemaVersion(db)}) and the marker was written again.`;
}

/** The store's schema version: the newest migration applied (0 for none). */
export async function schemaVersion(db: Db): Promise<number> {
	if (!(await isBatonStore(db))) {
		return 0;
	}
	const rows = await db.query<{ version: number | null }>('SELECT max(version) AS version FROM baton_migrations');
	return rows[0]?.version ?? 0;
}

/** The newest schema these migrations build. */
export function knownSchema(migrations: readonly Migration[]): number {
	return migrations.reduce((max, m) => Math.max(max, m.version), 0);
}

/** The refusal of a store (or a backup) written by a newer Baton. */
export function tooNewError(schema: number, known: number, what = 'this backlog'): BatonError {
	return new BatonError(
		'store_too_new',
		`${what} was written by a newer Baton (schema ${schema}); upgrade Baton. This Baton knows schema ${known} and changed nothing.`,
		{ schema, known },
	);
}

/**
 * Applies every migration not applied yet, then the stored functions if `migrations` carries them and
 * they changed; returns the versions it applied. Refuses, changing nothing, a store whose newest
 * migration is newer than any of `migrations`.
 */
export async function migrate(db: Db, migrations: Migrations): Promise<number[]> {
	const known = knownSchema(migrations);
	const current = await schemaVersion(db);
	if (current > known) {
		throw tooNewError(current, known);
	}
	let applied: Set<number>;
	try {
		applied = await appliedVersions(db);
	} catch (e) {
		// Two PostgreSQL hubs creating the tracking table at the same instant: the loser retries once.
		applied = await appliedVersions(db).catch(() => {
			throw e;
		});
	}
	const done: number[] = [];
	for (const m of migrations) {
		if (applied.has(m.version)) {
			continue;
		}
		try {
			await db.exec(
				`BEGIN;\n${lockSql(db)}${m.sql}\n;INSERT INTO baton_migrations (version, name) VALUES (${m.version}, '${m.name}');\nCOMMIT;`,
			);
			done.push(m.version);
		} catch (e) {
			if ((await appliedVersions(db)).has(m.version)) {
				continue; // another hub applied it while we waited for the lock
			}
			throw e;
		}
	}
	if (migrations.functions !== undefined) {
		await applyFunctions(db, migrations.functions);
	}
	return done;
}

/**
 * Applies the stored functions unless the store already has this text of them (one SELECT); true when
 * it applied them. All of them and their hash in one transaction, under the migrations' lock. Two hubs
 * that both find them changed apply them in turn, the second to the same effect (CREATE OR REPLACE).
 */
async function applyFunctions(db: Db, functions: StoredFunctions): Promise<boolean> {
	const rows = await db.query<{ hash: string }>('SELECT hash FROM baton_functions');
	if (rows.length === 1 && rows[0]?.hash === functions.hash) {
		return false;
	}
	await db.exec(
		`BEGIN;\n${lockSql(db)}${functions.sql}\n;DELETE FROM baton_functions;\nINSERT INTO baton_functions (hash) VALUES ('${functions.hash}');\nCOMMIT;`,
	);
	return true;
}

/** PostgreSQL: the transaction-scoped advisory lock that makes hubs take turns; PGlite has one connection. */
function lockSql(db: Db): string {
	return db.mode === 'postgres' ? `SELECT pg_advisory_xact_lock(${migrationLockKey});\n` : '';
}
