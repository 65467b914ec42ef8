/**
 * The full backup file: what `baton backup`, the rolling backups and `export --with-history` write and
 * `baton restore` reads. JSONL, gzip when the name ends in .gz: a header line
 * `{"baton":"backup","version":2,"schema":N,…,"rows":{table: count}}`, then one `{"t":table,"r":row}`
 * per row (core/store/dump.ts). Parsing checks everything before a restore touches any store: the
 * header, the schema (a newer one is refused), every line, every card, edge and agent against the
 * protocol's schemas (core/formats/backupRows.ts), and the counts.
 */
import { z } from 'zod';

import { gunzipBounded } from '../../core/files/boundedRead';
import { backupRowProblem } from '../../core/formats/backupRows';
import { BatonError } from '../../core/errors';
import { type ExportHeader, parseExport, writeFileAtomic } from '../../core/formats/export';
import type { Card } from '../../core/protocol';
import { protocolVersion } from '../../core/protocol';
import { type DumpRows, dumpCounts, dumpTableNames, dumpTables } from '../../core/store/dump';

export const backupFormatVersion = 2;

export const BackupHeader = z
	.object({
		baton: z.literal('backup'),
		version: z.literal(backupFormatVersion),
		schema: z.number().int().positive(),
		protocol: z.number().int(),
		exportedAt: z.string(),
		rows: z.record(z.string(), z.number().int().nonnegative()),
	})
	.loose();
export type BackupHeader = z.infer<typeof BackupHeader>;

/** A parsed file: a full backup, or an older cards-only export (restorable as its cards). */
export type BackupFile =
	{ kind: 'backup'; header: BackupHeader; rows: DumpRows } | { kind: 'cards'; header: ExportHeader; cards: Card[] };

export function formatBackup(rows: DumpRows, schema: number, exportedAt: Date = new Date()): string {
	const header: BackupHeader = {
		baton: 'backup',
		version: backupFormatVersion,
		schema,
		protocol: protocolVersion,
		exportedAt: exportedAt.toISOString(),
		rows: dumpCounts(rows),
	};
	const lines = [JSON.stringify(header)];
	for (const table of dumpTables) {
		for (const row of rows[table.name]) {
			lines.push(`{"t":"${table.name}","r":${row}}`);
		}
	}
	return lines.join('\n') + '\n';
}

/** Writes a full backup atomically (gzip for .gz); returns the bytes written. */
export function writeBackupFile(path: string, rows: DumpRows, schema: number, exportedAt?: Date): number {
	return writeFileAtomic(path, formatBackup(rows, schema, exportedAt));
}

/** Parses a backup or a cards-only export; anything else is an `invalid_input` error saying what it is. */
export function parseBackup(data: Buffer): BackupFile {
	const text = decompress(data);
	const firstLine = text.slice(0, Math.max(0, text.indexOf('\n'))) || text;
	let head: unknown;
	try {
		head = JSON.parse(firstLine);
	} catch {
		throw notABackup();
	}
	if (typeof head === 'object' && head !== null && 'baton' in head && head.baton === 'export') {
		const { header, cards } = parseExport(text);
		return { kind: 'cards', header, cards };
	}
	const header = BackupHeader.safeParse(head);
	if (!header.success) {
		if (typeof head === 'object' && head !== null && 'baton' in head && head.baton === 'backup') {
			throw new BatonError(
				'invalid_input',
				`This backup's header is not one this Baton reads (backup format ${backupFormatVersion}); it may come from a newer Baton.`,
			);
		}
		throw notABackup();
	}
	const rows = Object.fromEntries(dumpTableNames.map(n => [n, [] as string[]])) as unknown as DumpRows;
	const lines = text.split('\n');
	for (let i = 1; i < lines.length; i++) {
		const line = lines[i] ?? '';
		if (line.trim() === '') {
			continue;
		}
		const m = /^\{"t":"([a-z_]+)","r":(\{.*\})\}$/.exec(line);
		const table = m?.[1];
		const row = m === null ? undefined : jsonOf(m[2] ?? '');
		if (m === null || table === undefined || !dumpTableNames.includes(table) || row === undefined) {
			throw new BatonError('invalid_input', `Line ${i + 1} of the backup is not a {"t":table,"r":row} line.`);
		}
		const problem = backupRowProblem(table, row);
		if (problem !== undefined) {
			throw new BatonError('invalid_input', `Line ${i + 1} of the backup: ${problem}. Nothing was changed.`, {
				line: i + 1,
			});
		}
		rows[table as keyof DumpRows].push(m[2] ?? '');
	}
	for (const [table, count] of Object.entries(header.data.rows)) {
		const found = dumpTableNames.includes(table) ? rows[table as keyof DumpRows].length : 0;
		if (found !== count) {
			throw new BatonError(
				'invalid_input',
				`The backup is incomplete: its header promises ${count} ${table} rows, the file holds ${found}. Nothing was changed.`,
			);
		}
	}
	return { kind: 'backup', header: header.data, rows };
}

function decompress(data: Buffer): string {
	if (data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b) {
		return gunzipBounded(data).toString('utf8');
	}
	return data.toString('utf8');
}

function jsonOf(text: string): unknown {
	try {
		return JSON.parse(text) as unknown;
	} catch {
		return undefined;
	}
}

function notABackup(): BatonError {
	return new BatonError(
		'invalid_input',
		'This file is not a Baton backup or export: its first line should be a {"baton":"backup",…} or {"baton":"export",…} header.',
	);
}
