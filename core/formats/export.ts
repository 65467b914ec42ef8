/**
 * The JSONL export format shared by `baton export`/`import` and the hub's rolling backups: a header
 * line `{"baton":"export","version":1,…}`, then one protocol `Card` per line (lossless: dependsOn
 * included). Files may be gzip-compressed; readers detect it by the magic bytes.
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { z } from 'zod';
import { cardRuleProblem } from './backupRows';
import { gunzipBounded } from '../files/boundedRead';
import { BatonError } from '../errors';
import { Card, limits, protocolVersion } from '../protocol';
import { writeFileWhole } from '../files/wholeFile';

export const exportFormatVersion = 1;

export const ExportHeader = z
	.object({
		baton: z.literal('export'),
		version: z.literal(exportFormatVersion),
		protocol: z.number().int(),
		exportedAt: z.string(),
		cards: z.number().int().nonnegative(),
	})
	.loose();
export type ExportHeader = z.infer<typeof ExportHeader>;

/** A page source: the hub's or client's `data/export` call. */
export type ExportPager = (cursor: string | undefined) => Promise<{ cards: Card[]; nextCursor?: string | undefined }>;

/** Reads every page of `data/export`. */
export async function collectExport(pager: ExportPager): Promise<Card[]> {
	const cards: Card[] = [];
	let cursor: string | undefined;
	do {
		const page = await pager(cursor);
		cards.push(...page.cards);
		cursor = page.nextCursor;
	} while (cursor !== undefined);
	return cards;
}

/** The whole export as text (header + one card per line, newline-terminated). */
export function formatExport(cards: readonly Card[], exportedAt: Date = new Date()): string {
	const header: ExportHeader = {
		baton: 'export',
		version: exportFormatVersion,
		protocol: protocolVersion,
		exportedAt: exportedAt.toISOString(),
		cards: cards.length,
	};
	return [JSON.stringify(header), ...cards.map(c => JSON.stringify(c))].join('\n') + '\n';
}

/** Writes an export atomically (gzip when the path ends in `.gz`); returns the byte size written. */
export function writeExportFile(path: string, cards: readonly Card[], exportedAt: Date = new Date()): number {
	return writeFileAtomic(path, formatExport(cards, exportedAt));
}

/**
 * Writes text whole or not at all (core/files/wholeFile.ts: every byte, size checked, fsync, rename), gzip
 * when the path ends in `.gz`; returns the bytes written. A full disk is a `disk_full` error and no file.
 */
export function writeFileAtomic(path: string, text: string): number {
	return writeFileWhole(path, path.endsWith('.gz') ? gzipSync(text) : text);
}

/** Parses an export (plain or gzip). Any bad line is an `invalid_input` error naming its line. */
export function parseExport(data: Buffer | string): { header: ExportHeader; cards: Card[] } {
	let text: string;
	if (typeof data !== 'string' && data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b) {
		text = gunzipBounded(data, 'The export file').toString('utf8');
	} else {
		text = typeof data === 'string' ? data : data.toString('utf8');
	}
	const lines = text.split('\n').filter(l => l.trim() !== '');
	const first = lines[0];
	if (first === undefined) {
		throw new BatonError('invalid_input', 'The export file is empty: expected a {"baton":"export"} header line.');
	}
	const header = ExportHeader.safeParse(parseLine(first, 1));
	if (!header.success) {
		throw new BatonError(
			'invalid_input',
			`Line 1 is not a Baton export header (expected {"baton":"export","version":${exportFormatVersion},…}).`,
		);
	}
	const cards: Card[] = [];
	for (let i = 1; i < lines.length; i++) {
		const parsed = Card.safeParse(parseLine(lines[i] ?? '', i + 1));
		if (!parsed.success) {
			const issue = parsed.error.issues[0];
			const where = issue ? `${issue.path.map(String).join('.') || 'card'}: ${issue.message}` : 'not a card';
			throw new BatonError('invalid_input', `Line ${i + 1} of the export is not a valid card (${where}).`);
		}
		const problem = cardRuleProblem(parsed.data);
		if (problem !== undefined) {
			throw new BatonError('invalid_input', `Line ${i + 1} of the export: card ${parsed.data.id}: ${problem}.`);
		}
		cards.push(parsed.data);
	}
	return { header: header.data, cards };
}

export function readExportFile(path: string): { header: ExportHeader; cards: Card[] } {
	return parseExport(readFileSync(path));
}

/** Splits cards into `data/import` batches of the protocol's maximum size. */
export function importBatches(cards: readonly Card[]): Card[][] {
	const batches: Card[][] = [];
	for (let i = 0; i < cards.length; i += limits.importBatch) {
		batches.push(cards.slice(i, i + limits.importBatch));
	}
	return batches;
}

function parseLine(line: string, n: number): unknown {
	try {
		return JSON.parse(line);
	} catch {
		throw new BatonError('invalid_input', `Line ${n} of the export is not valid JSON.`);
	}
}
