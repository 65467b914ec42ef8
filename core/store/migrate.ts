/**
 * SQL migrations (core/store/migrations/NNNN_name.sql), applied in order on every open and tracked in
 * baton_migrations. Each runs in its own transaction; on PostgreSQL an advisory lock makes hubs that
 * start together take turns, and a migration another hub applied first is recognised, not re-run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Db } from './db';

export interface Migration {
	version: number;
	name: string;
	sql: string;
}

/** Arbitrary constant: the advisory lock key that serialises migrations across hubs. */
export const migrationLockKey = 0x6261746f; // "bato"

export function loadMigrations(dir: string): Migration[] {
	return readdirSync(dir)
		.filter(f => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
		.sort()
		.map(f => ({ version: Number(f.slice(0, 4)), name: f.slice(5, -4), sql: readFileSync(join(dir, f), 'utf8') }));
}

async function appliedVersions(db: Db): Promise<Set<number>> {
	await db.exec(`CREATE TABLE IF NOT EXISTS baton_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
	const rows = await db.query<{ version: number }>('SELECT version FROM baton_migrations');
	return new Set(rows.map(r => r.version));
}

/** Applies every migration not applied yet; returns the versions it applied. */
export async function migrate(db: Db, migrations: readonly Migration[]): Promise<number[]> {
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
		const lock = db.mode === 'postgres' ? `SELECT pg_advisory_xact_lock(${migrationLockKey});\n` : '';
		try {
			await db.exec(
				`BEGIN;\n${lock}${m.sql}\n;INSERT INTO baton_migrations (version, name) VALUES (${m.version}, '${m.name}');\nCOMMIT;`,
			);
			done.push(m.version);
		} catch (e) {
			if ((await appliedVersions(db)).has(m.version)) {
				continue; // another hub applied it while we waited for the lock
			}
			throw e;
		}
	}
	return done;
}
