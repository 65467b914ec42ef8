/**
 * Rolling backups: PGlite does not fsync on Node, so an OS crash can lose recent work. A backup is the
 * whole store — every table, in one snapshot — as a gzip JSONL file (mcp-server/hub/backupFormat.ts) in
 * <dataDir>/backups, written whole or not at all (core/files/wholeFile.ts) and read back and checked before
 * an older one is pruned; only the newest `keep` are kept. `baton restore FILE` brings a data dir back
 * to one. Writes files only; never touches the store.
 */
import { chmodSync, mkdirSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

import { parseBackup, writeBackupFile } from './backupFormat';
import { maxBackupBytes, readBounded } from '../../core/files/boundedRead';
import { BatonError } from '../../core/errors';
import { errorText } from '../../core/log';
import { type DumpRows, dumpCounts, dumpTables } from '../../core/store/dump';

export interface BackupInfo {
	path: string;
	cards: number;
	events: number;
	bytes: number;
}

/** Reads the whole store (Backlog.dump). */
export type DumpSource = () => Promise<{ rows: DumpRows; schema: number }>;

const backupName = /^baton-\d{8}T\d{9}Z(?:-\d+)?\.jsonl(?:\.gz)?$/;

export class Backups {
	private running: Promise<BackupInfo> | undefined;

	constructor(
		private readonly dir: string,
		private readonly source: DumpSource,
		private readonly keep = 10,
	) {}

	/** Writes one backup now (concurrent callers share it) and prunes old ones. */
	run(): Promise<BackupInfo> {
		this.running ??= this.write().finally(() => {
			this.running = undefined;
		});
		return this.running;
	}

	/** Existing backups, oldest first. */
	list(): string[] {
		try {
			return readdirSync(this.dir)
				.filter(f => backupName.test(f))
				.sort()
				.map(f => join(this.dir, f));
		} catch {
			return [];
		}
	}

	private async write(): Promise<BackupInfo> {
		try {
			statSync(this.dir);
		} catch {
			mkdirSync(this.dir, { recursive: true, mode: 0o700 });
			chmodSync(this.dir, 0o700);
		}
		const { rows, schema } = await this.source();
		const now = new Date();
		const stamp = now.toISOString().replace(/[-:]/g, '').replace('.', '');
		let path = join(this.dir, `baton-${stamp}.jsonl.gz`);
		for (let n = 1; this.exists(path); n++) {
			path = join(this.dir, `baton-${stamp}-${n}.jsonl.gz`);
		}
		const bytes = writeBackupFile(path, rows, schema, now);
		verifyBackup(path, rows);
		// Only a backup that read back whole may push an older one out.
		this.prune();
		return { path, cards: rows.cards.length, events: rows.events.length, bytes };
	}

	private exists(path: string): boolean {
		try {
			statSync(path);
			return true;
		} catch {
			return false;
		}
	}

	private prune(): void {
		const all = this.list();
		for (const old of all.slice(0, Math.max(0, all.length - this.keep))) {
			try {
				unlinkSync(old);
			} catch {
				// Removed by hand meanwhile; nothing to prune.
			}
		}
	}
}

/**
 * Reads a backup just written back from the disk (gunzip, every line parsed and checked, the counts
 * against what was dumped); a file that does not hold exactly that is removed and an error says so.
 */
export function verifyBackup(path: string, rows: DumpRows): void {
	let why: string | undefined;
	try {
		const back = parseBackup(readBounded(path, { maxBytes: maxBackupBytes, what: 'the backup' }));
		const counts = dumpCounts(rows);
		const found = back.kind === 'backup' ? back.header.rows : {};
		const missing = dumpTables.find(t => found[t.name] !== counts[t.name]);
		if (missing !== undefined) {
			why = `it holds ${found[missing.name] ?? 0} ${missing.name} rows of ${counts[missing.name]}`;
		}
	} catch (e) {
		why = errorText(e);
	}
	if (why !== undefined) {
		rmSync(path, { force: true });
		throw new BatonError(
			'internal',
			`The backup ${path} did not read back whole (${why}); it was removed and no older backup was pruned.`,
		);
	}
}
