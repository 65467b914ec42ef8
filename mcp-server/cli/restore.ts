/**
 * `baton restore FILE`: brings a data dir's store back to exactly what a full backup holds. The file is
 * read and checked first (a damaged, foreign or newer-schema file changes nothing); the caller has
 * stopped the hub, and this holds the data dir's ownership throughout so no hub starts meanwhile.
 * PGlite: the backup is loaded into a new store beside the current one, which is then moved aside to a
 * timestamped folder (never deleted) and replaced by the new one. PostgreSQL: only into a schema that
 * holds no backlog yet. Never talks to a hub; never deletes a store it did not create.
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { Backlog } from '../../core/backlog';
import { pauseRestoredHooks } from '../../core/backlog/hookStore';
import { type BackupFile, parseBackup } from '../hub/backupFormat';
import { maxBackupBytes, readBounded } from '../../core/files/boundedRead';
import { BatonError } from '../../core/errors';
import { importBatches } from '../../core/formats/export';
import { acquireOwnership, type Ownership } from '../hub/ownership';
import { hubPaths } from '../../core/paths';
import type { Db } from '../../core/store/db';
import { type DumpRows, loadDump, storeRowCount } from '../../core/store/dump';
import { knownSchema, loadMigrations, type Migrations, migrate, tooNewError } from '../../core/store/migrate';
import { openPglite, sourceStoreDir } from '../../core/store/pglite';
import { openPostgres } from '../../core/store/postgres';

export interface RestoreOptions {
	/** What readRestorable returned. */
	backup: BackupFile;
	migrations: Migrations;
	dataDir: string;
	/** DATABASE_URL: restore into PostgreSQL instead of the data dir's PGlite store. */
	databaseUrl?: string | undefined;
	schema?: string | undefined;
	/** dist/pglite when bundled (PGlite assets and migrations). */
	assetsDir?: string | undefined;
	/** How long to wait for a stopping hub to let go of the data dir. */
	ownershipWaitMs?: number;
}

export interface RestoreResult {
	mode: 'pglite' | 'postgres';
	cards: number;
	events: number;
	/** Where the store that was current before the restore now is (PGlite; absent when there was none). */
	keptAside?: string;
	/** The webhooks brought back, each paused until `baton hooks resume ID` (the original may still deliver them). */
	pausedHooks: string[];
}

/** The migrations this Baton builds stores with (the bundle's or the sources'). */
export function restoreMigrations(assetsDir: string | undefined): Migrations {
	return loadMigrations(join(assetsDir ?? sourceStoreDir, 'migrations'));
}

/** Reads and checks a backup or export file; throws, having changed nothing, when it cannot be restored. */
export function readRestorable(file: string, migrations: Migrations): BackupFile {
	const parsed = parseBackup(readBounded(file, { maxBytes: maxBackupBytes, what: 'the backup' }));
	if (parsed.kind === 'backup' && parsed.header.schema > knownSchema(migrations)) {
		throw tooNewError(parsed.header.schema, knownSchema(migrations), 'This backup');
	}
	return parsed;
}

export async function restore(options: RestoreOptions): Promise<RestoreResult> {
	const { backup, migrations } = options;
	const ownership = await takeOwnership(options.dataDir, options.ownershipWaitMs ?? 15_000);
	try {
		return options.databaseUrl === undefined
			? await restorePglite(backup, migrations, options)
			: await restorePostgres(backup, migrations, options.databaseUrl, options.schema);
	} finally {
		await ownership.release();
	}
}

function counts(backup: BackupFile): { cards: number; events: number } {
	return backup.kind === 'backup'
		? { cards: backup.rows.cards.length, events: backup.rows.events.length }
		: { cards: backup.cards.length, events: 0 };
}

async function restorePglite(
	backup: BackupFile,
	migrations: Migrations,
	options: RestoreOptions,
): Promise<RestoreResult> {
	const paths = hubPaths(options.dataDir);
	const stamp = new Date()
		.toISOString()
		.replace(/[-:]/g, '')
		.replace(/\.\d+Z$/, 'Z');
	const staging = `${paths.pgdata}.restoring-${stamp}`;
	let pausedHooks: string[] = [];
	try {
		if (backup.kind === 'backup') {
			const { schema } = backup.header;
			// The template is built at the newest schema: an older backup loads into a store built up to its own.
			const opened = await openPglite({
				dataDir: staging,
				assetsDir: options.assetsDir,
				useTemplate: schema === knownSchema(migrations),
			});
			try {
				await loadAt(opened.db, schema, backup.rows, migrations);
				pausedHooks = await pauseRestoredHooks(opened.db, new Date());
				opened.markReady();
			} finally {
				await opened.db.close();
			}
		} else {
			await importInto(await Backlog.open({ pgliteDir: staging, assetsDir: options.assetsDir }), backup);
		}
	} catch (e) {
		rmSync(staging, { recursive: true, force: true }); // our own half-built store; the current one is untouched
		throw e;
	}
	let keptAside: string | undefined;
	if (existsSync(paths.pgdata)) {
		keptAside = `${paths.pgdata}.before-restore-${stamp}`;
		renameSync(paths.pgdata, keptAside);
	}
	renameSync(staging, paths.pgdata);
	return { mode: 'pglite', ...counts(backup), pausedHooks, ...(keptAside === undefined ? {} : { keptAside }) };
}

async function restorePostgres(
	backup: BackupFile,
	migrations: Migrations,
	databaseUrl: string,
	schema: string | undefined,
): Promise<RestoreResult> {
	const where = schema === undefined ? 'this PostgreSQL database' : `the PostgreSQL schema ${schema}`;
	const db = await openPostgres({ databaseUrl, schema, poolSize: 1 });
	let pausedHooks: string[] = [];
	try {
		const present = (await db.query<{ found: boolean }>("SELECT to_regclass('cards') IS NOT NULL AS found"))[0];
		if (present?.found === true && (await storeRowCount(db)) > 0) {
			throw nonEmpty(where);
		}
		if (backup.kind === 'backup') {
			await loadAt(db, backup.header.schema, backup.rows, migrations);
			pausedHooks = await pauseRestoredHooks(db, new Date());
		}
	} finally {
		await db.close();
	}
	if (backup.kind === 'cards') {
		await importInto(await Backlog.open({ databaseUrl, schema }), backup);
	}
	return { mode: 'postgres', ...counts(backup), pausedHooks };
}

/** Builds the schema up to the backup's, loads its rows, then applies any newer migrations. */
async function loadAt(db: Db, schema: number, rows: DumpRows, migrations: Migrations): Promise<void> {
	await migrate(
		db,
		migrations.filter(m => m.version <= schema),
	);
	await loadDump(db, rows);
	await migrate(db, migrations);
}

/** A cards-only export: its cards, through the normal import (their history starts at the restore). */
async function importInto(backlog: Backlog, backup: Extract<BackupFile, { kind: 'cards' }>): Promise<void> {
	try {
		for (const batch of importBatches(backup.cards)) {
			await backlog.importCards({ actor: 'cli:restore' }, { cards: batch });
		}
	} finally {
		await backlog.close();
	}
}

function nonEmpty(where: string): BatonError {
	return new BatonError(
		'conflict',
		`${where} already holds a backlog; restore replaces nothing in PostgreSQL. Restore into an empty schema (BATON_PG_SCHEMA=new_name) and point the hubs at it, or drop the old schema first.`,
	);
}

/** The data dir's ownership, waiting for a hub that is stopping to let go. */
async function takeOwnership(dataDir: string, waitMs: number): Promise<Ownership> {
	const deadline = Date.now() + waitMs;
	for (;;) {
		try {
			return await acquireOwnership(dataDir, { role: 'baton restore' });
		} catch (e) {
			if (!BatonError.is(e, 'conflict') || Date.now() > deadline) {
				throw e;
			}
			await new Promise(resolve => setTimeout(resolve, 200));
		}
	}
}
