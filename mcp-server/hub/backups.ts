/**
 * Rolling backups: PGlite does not fsync on Node, so an OS crash can lose recent work. A backup is the
 * whole store — every table, in one snapshot — as a gzip JSONL file (core/backupFormat.ts) in
 * <dataDir>/backups, written atomically; only the newest `keep` are kept. `baton restore FILE` brings
 * a data dir back to one. Writes files only; never touches the store.
 */
import { chmodSync, mkdirSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { writeBackupFile } from '../../core/backupFormat';
import type { DumpRows } from '../../core/store/dump';

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
