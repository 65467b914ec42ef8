/**
 * Regenerates core/store/template.tar.gz: an empty PGlite database with every migration applied,
 * shut down cleanly, as a gzipped tar of its data dir (paths `/base/5/…`, as PGlite's dumpDataDir
 * writes them, so `loadDataDir` takes it too). A new data dir loads it instead of running initdb
 * (first start ≤ 1.5 s; docs/benchmarks.md, "Start-up"). Run after adding a migration:
 * `npm run db:template`.
 *
 * Clean, not dumped live: dumpDataDir copies a running cluster, whose control file says "in
 * production", so every new data dir's first start ran crash recovery — an fsync of every file of
 * the dir and an end-of-recovery checkpoint, ~0.3 s of CPU and more of wall time.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

import { loadMigrations, migrate } from '../core/store/migrate';
import { openPglite, sourceStoreDir } from '../core/store/pglite';

/** pg_control's DBState 1: the cluster was shut down cleanly. */
const dbShutDowned = 1;

async function main(): Promise<void> {
	// Start from a real initdb, never from the previous template, so nothing stale carries over.
	const dir = mkdtempSync(join(tmpdir(), 'baton-template-'));
	const pgdata = join(dir, 'pgdata');
	try {
		const { db } = await openPglite({ dataDir: pgdata, useTemplate: false });
		const applied = await migrate(db, loadMigrations(join(sourceStoreDir, 'migrations')));
		await db.exec('VACUUM (ANALYZE)');
		await db.close();
		const state = readFileSync(join(pgdata, 'global', 'pg_control')).readUInt32LE(16);
		if (state !== dbShutDowned) {
			throw new Error(`the template cluster was not shut down cleanly (pg_control state ${state})`);
		}
		const { tar, files, dropped } = tarDataDir(pgdata);
		const out = join(sourceStoreDir, 'template.tar.gz');
		const gz = gzipSync(tar, { level: 9 });
		writeFileSync(out, gz);
		console.log(
			`wrote ${out}: ${gz.length} bytes, ${files} files, migrations ${applied.join(', ')}; left out ${dropped}`,
		);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

/**
 * Whether a path of the data dir stays out of the template: Baton's own markers (a new dir writes
 * its own), a stale lock file, and the files of template0 and template1 (base/1, base/4). Baton
 * connects to the `postgres` database only and never creates a database, so PostgreSQL never opens
 * them; they were 602 of the template's 1,049 files, and a first start creates every file of the
 * template, which took ~0.28 ms per file on a machine with slow file creation (strace: 2,624
 * openat, 0.72 s). Their pg_database rows stay; nothing reads their directories.
 */
function leftOut(path: string): boolean {
	return path.startsWith('baton-') || path === 'postmaster.pid' || /^base\/(1|4)(\/|$)/.test(path);
}

/** The data dir as a ustar archive, directories before their contents, names sorted. */
function tarDataDir(root: string): { tar: Buffer; files: number; dropped: number } {
	const out: Buffer[] = [];
	let files = 0;
	let dropped = 0;
	const walk = (relative: string): void => {
		for (const name of readdirSync(join(root, relative)).sort()) {
			const path = relative === '' ? name : `${relative}/${name}`;
			if (leftOut(path)) {
				dropped++;
				continue;
			}
			if (statSync(join(root, path)).isDirectory()) {
				out.push(tarHeader(`/${path}`, 0, '5', 0o750));
				walk(path);
			} else {
				const data = readFileSync(join(root, path));
				out.push(tarHeader(`/${path}`, data.length, '0', 0o600), data, Buffer.alloc((512 - (data.length % 512)) % 512));
				files++;
			}
		}
	};
	walk('');
	out.push(Buffer.alloc(1024));
	return { tar: Buffer.concat(out), files, dropped };
}

/** One ustar header block (names fit in 100 bytes: a data dir's longest is ~30). */
function tarHeader(name: string, size: number, type: '0' | '5', mode: number): Buffer {
	if (Buffer.byteLength(name) > 100) {
		throw new Error(`tar name longer than 100 bytes: ${name}`);
	}
	const header = Buffer.alloc(512);
	const octal = (value: number, width: number): string => `${value.toString(8).padStart(width - 1, '0')}\0`;
	header.write(name, 0, 'utf8');
	header.write(octal(mode, 8), 100);
	header.write(octal(0, 8), 108); // uid
	header.write(octal(0, 8), 116); // gid
	header.write(octal(size, 12), 124);
	header.write(octal(Math.floor(Date.now() / 1000), 12), 136);
	header.write('        ', 148); // the checksum counts its own field as spaces
	header.write(type, 156);
	header.write('ustar\0', 257);
	header.write('00', 263);
	const sum = header.reduce((total, byte) => total + byte, 0);
	header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
	return header;
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
