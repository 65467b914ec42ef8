/**
 * Opens the store a backlog runs on: PostgreSQL when a URL is given, else PGlite (a data dir, or in
 * memory), migrated to this Baton's schema. Decides nothing about cards and keeps no handle: the
 * caller owns the Db it returns (Backlog.open passes it to `new Backlog`).
 */
import { join } from 'node:path';

import type { Db } from '../store/db';
import { checkUnmarked, loadMigrations, migrate } from '../store/migrate';
import { openPglite, sourceStoreDir } from '../store/pglite';
import { openPostgres } from '../store/postgres';
import type { FastPaths } from './fastPaths';

export interface StoreOptions {
	/** PGlite data directory; omitted (and no databaseUrl) = in-memory. Must be used by PGlite only. */
	pgliteDir?: string | undefined;
	/** PostgreSQL via node-postgres (pg.Pool). */
	databaseUrl?: string | undefined;
	/** PostgreSQL schema to use (created if missing; tests isolate with it). */
	schema?: string | undefined;
	/** PostgreSQL pool size (default 4). */
	poolSize?: number | undefined;
	/** Folder with pglite.wasm, initdb.wasm, pglite.data, template.tar.gz and migrations/ (dist/pglite). */
	assetsDir?: string | undefined;
	/** PGlite's shared_buffers ('32MB'); omitted = from the store's size (store/bufferPool.ts). */
	pgliteBufferPool?: string | undefined;
	/** Latency mechanisms to turn off (all on by default; fastPaths.ts). Only `wire` concerns the store. */
	fastPaths?: Partial<FastPaths> | undefined;
}

export interface OpenedStore {
	db: Db;
	/** What opening the store did that users should hear of (hub/status, the hub's log). */
	notices: string[];
	/** PGlite only: the whole data dir as a gzip tarball (backups). */
	dumpDataDir?: () => Promise<Blob | File>;
}

/** Opens (creating and migrating as needed) the store described by `options`; closes it again on failure. */
export async function openStore(options: StoreOptions): Promise<OpenedStore> {
	const migrations = loadMigrations(join(options.assetsDir ?? sourceStoreDir, 'migrations'));
	if (options.databaseUrl !== undefined) {
		const db = await openPostgres({
			databaseUrl: options.databaseUrl,
			schema: options.schema,
			poolSize: options.poolSize,
		});
		try {
			await migrate(db, migrations);
		} catch (e) {
			await db.close();
			throw e;
		}
		return { db, notices: [] };
	}
	const opened = await openPglite({
		dataDir: options.pgliteDir,
		assetsDir: options.assetsDir,
		bufferPool: options.pgliteBufferPool,
		wire: options.fastPaths?.wire ?? true,
	});
	const notices = [...opened.notices];
	try {
		if (opened.unmarked) {
			notices.push(await checkUnmarked(opened.db, options.pgliteDir ?? ''));
		}
		await migrate(opened.db, migrations);
		opened.markReady();
	} catch (e) {
		await opened.db.close();
		throw e;
	}
	return { db: opened.db, notices, dumpDataDir: () => opened.dumpDataDir() };
}
