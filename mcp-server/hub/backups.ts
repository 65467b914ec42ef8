/**
 * Rolling backups (DESIGN §1 durability: PGlite does not fsync on Node, so an OS crash can lose recent
 * work). A backup is a gzip JSONL export (core/exportFormat.ts) in <dataDir>/backups, written
 * atomically; only the newest `keep` are kept. `importCards` restores one into a fresh data dir.
 */
import { chmodSync, mkdirSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { collectExport, type ExportPager, writeExportFile } from '../../core/exportFormat';

export interface BackupInfo {
	path: string;
	cards: number;
	bytes: number;
}

const backupName = /^baton-\d{8}T\d{9}Z(?:-\d+)?\.jsonl(?:\.gz)?$/;

export class Backups {
	private running: Promise<BackupInfo> | undefined;

	constructor(
		private readonly dir: string,
		private readonly pager: ExportPager,
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
		const cards = await collectExport(this.pager);
		const now = new Date();
		const stamp = now.toISOString().replace(/[-:]/g, '').replace('.', '');
		let path = join(this.dir, `baton-${stamp}.jsonl.gz`);
		for (let n = 1; this.exists(path); n++) {
			path = join(this.dir, `baton-${stamp}-${n}.jsonl.gz`);
		}
		const bytes = writeExportFile(path, cards, now);
		this.prune();
		return { path, cards: cards.length, bytes };
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
