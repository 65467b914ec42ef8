/**
 * Regenerates core/store/template.tar.gz: an empty PGlite database with every migration applied,
 * dumped with dumpDataDir('gzip'). A new data dir loads it instead of running initdb (first start
 * ≤ 1.5 s; PERFORMANCE.md). Run after adding a migration: `npm run db:template`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { openPglite, sourceStoreDir } from '../core/store/pglite';
import { loadMigrations, migrate } from '../core/store/migrate';

async function main(): Promise<void> {
	// Start from a real initdb, never from the previous template, so nothing stale carries over.
	const { db, pglite: fresh } = await openPglite({ useTemplate: false });
	const applied = await migrate(db, loadMigrations(join(sourceStoreDir, 'migrations')));
	await db.exec('VACUUM (ANALYZE)');
	const dump = await fresh.dumpDataDir('gzip');
	await db.close();
	const out = join(sourceStoreDir, 'template.tar.gz');
	writeFileSync(out, Buffer.from(await dump.arrayBuffer()));
	console.log(`wrote ${out}: ${dump.size} bytes, migrations ${applied.join(', ')}`);
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
