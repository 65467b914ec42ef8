/**
 * Regenerates core/store/template.tar.gz: an empty PGlite database with every migration applied,
 * dumped with dumpDataDir('gzip'). A new data dir loads it instead of running initdb (first start
 * ≤ 1.5 s; PERFORMANCE.md). Run after adding a migration: `npm run db:template`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';

import { openPglite, sourceStoreDir } from '../core/store/pglite';
import { loadMigrations, migrate } from '../core/store/migrate';

async function main(): Promise<void> {
	// Start from a real initdb, never from the previous template, so nothing stale carries over.
	const { db, dumpDataDir } = await openPglite({ useTemplate: false });
	const applied = await migrate(db, loadMigrations(join(sourceStoreDir, 'migrations')));
	await db.exec('VACUUM (ANALYZE)');
	const dump = await dumpDataDir();
	await db.close();
	const { tar, dropped } = withoutTemplateDatabases(gunzipSync(Buffer.from(await dump.arrayBuffer())));
	const out = join(sourceStoreDir, 'template.tar.gz');
	const gz = gzipSync(tar, { level: 9 });
	writeFileSync(out, gz);
	console.log(`wrote ${out}: ${gz.length} bytes, migrations ${applied.join(', ')}; left out ${dropped} files`);
}

/**
 * The dump without the files of template0 and template1 (base/1, base/4). Baton connects to the
 * `postgres` database only and never creates a database, so PostgreSQL never opens them; they were
 * 602 of the template's 1,049 files, and a first start creates every file of the template, which
 * took ~0.28 ms per file on a machine with slow file creation (strace: 2,624 openat, 0.72 s).
 * Their pg_database rows stay; nothing reads their directories.
 */
function withoutTemplateDatabases(tar: Buffer): { tar: Buffer; dropped: number } {
	const kept: Buffer[] = [];
	let dropped = 0;
	for (let offset = 0; offset + 512 <= tar.length;) {
		const header = tar.subarray(offset, offset + 512);
		if (header.every(b => b === 0)) {
			break;
		}
		const field = (start: number, length: number): string =>
			header
				.subarray(start, start + length)
				.toString('utf8')
				.replace(/\0.*$/s, '');
		const name = `${field(345, 155)}${field(0, 100)}`;
		const size = parseInt(field(124, 12).trim() || '0', 8);
		const end = offset + 512 + Math.ceil(size / 512) * 512;
		if (/(^|\/)base\/(1|4)(\/|$)/.test(name)) {
			dropped++;
		} else {
			kept.push(tar.subarray(offset, end));
		}
		offset = end;
	}
	return { tar: Buffer.concat([...kept, Buffer.alloc(1024)]), dropped };
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
