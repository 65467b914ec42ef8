/**
 * The hub's file formats and locations, without a hub: data dir resolution and layout
 * (core/paths.ts) and the JSONL export/backup format (core/formats/export.ts), plain and gzip.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { BatonError } from '../../core/errors';
import { formatExport, importBatches, parseExport, readExportFile, writeExportFile } from '../../core/formats/export';
import { hubPaths, resolveDataDir, socketPathProblem, stalePgliteDataDir } from '../../core/paths';
import { type Card, limits } from '../../core/protocol';
import { makeCard } from '../helpers/cards';

function card(id: string, extra: Partial<Card> = {}): Card {
	return makeCard({
		id,
		title: `title ${id}`,
		body: 'body with "quotes" and\nnewlines',
		createdAt: '2026-11-22T10:00:00.000Z',
		...extra,
	});
}

describe('data dir paths', () => {
	it('resolves BATON_DATA_DIR, else ~/.config/baton/backlog, and never reads PGLITE_DATA_DIR', () => {
		const home = join(homedir(), '.config', 'baton', 'backlog');
		assert.equal(resolveDataDir({ BATON_DATA_DIR: '/a', PGLITE_DATA_DIR: '/b' }), '/a');
		assert.equal(resolveDataDir({ PGLITE_DATA_DIR: '/b' }), home);
		assert.equal(resolveDataDir({ BATON_DATA_DIR: '  ', PGLITE_DATA_DIR: '/b' }), home);
		assert.equal(resolveDataDir({}), home);
		assert.equal(resolveDataDir({ BATON_DATA_DIR: 'rel' }), join(process.cwd(), 'rel'));
	});

	it('tells a user whose PGLITE_DATA_DIR still names a Baton data dir how to keep using it', () => {
		const old = mkdtempSync('/tmp/bt-');
		try {
			assert.equal(stalePgliteDataDir('/tmp/new', { PGLITE_DATA_DIR: old }), undefined, 'not a Baton data dir');
			mkdirSync(join(old, 'pgdata'));
			assert.match(
				stalePgliteDataDir('/tmp/new', { PGLITE_DATA_DIR: old }) ?? '',
				new RegExp(
					`no longer reads it: this hub serves /tmp/new\\. To keep using that backlog, set BATON_DATA_DIR=${old}`,
				),
			);
			assert.equal(stalePgliteDataDir(old, { PGLITE_DATA_DIR: old }), undefined, 'the same dir');
			assert.equal(stalePgliteDataDir('/tmp/new', {}), undefined);
		} finally {
			rmSync(old, { recursive: true, force: true });
		}
	});

	it('refuses a data dir whose socket paths would not fit in sun_path', () => {
		assert.equal(socketPathProblem(hubPaths('/tmp/short')), undefined);
		const long = hubPaths(`/tmp/${'x'.repeat(100)}`);
		assert.match(socketPathProblem(long) ?? '', /too long for its Unix sockets .*Use a shorter BATON_DATA_DIR/);
	});

	it('keeps PGlite, the run dir and backups apart inside the data dir', () => {
		const p = hubPaths('/tmp/x');
		assert.deepEqual(
			[p.pgdata, p.runDir, p.socket, p.ownerSocket, p.token, p.hubJson, p.backups],
			[
				'/tmp/x/pgdata',
				'/tmp/x/run',
				'/tmp/x/run/hub.sock',
				'/tmp/x/run/owner.sock',
				'/tmp/x/run/token',
				'/tmp/x/hub.json',
				'/tmp/x/backups',
			],
		);
	});
});

describe('export format', () => {
	const cards = [card('A1', { dependsOn: ['A2'], unmetDeps: 1 }), card('A2', { status: 'done', result: 'ok' })];

	it('round-trips cards through plain and gzip files, written atomically with mode 0600', () => {
		const dir = mkdtempSync('/tmp/bt-');
		try {
			for (const name of ['e.jsonl', 'e.jsonl.gz']) {
				const path = join(dir, name);
				const bytes = writeExportFile(path, cards, new Date('2026-11-22T11:00:00Z'));
				assert.equal(statSync(path).size, bytes);
				assert.equal(statSync(path).mode & 0o777, 0o600);
				const { header, cards: back } = readExportFile(path);
				assert.equal(header.cards, 2);
				assert.equal(header.exportedAt, '2026-11-22T11:00:00.000Z');
				assert.deepEqual(back, cards);
			}
			assert.equal(
				readFileSync(join(dir, 'e.jsonl'), 'utf8').split('\n')[0]?.startsWith('{"baton":"export","version":1'),
				true,
			);
			assert.deepEqual(readdirSync(dir).sort(), ['e.jsonl', 'e.jsonl.gz'], 'no temp files left');
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	it('refuses bad input with invalid_input naming the line', () => {
		const good = formatExport(cards);
		const cases: [string | Buffer, RegExp][] = [
			['', /empty/],
			['{"not":"an export"}\n', /Line 1 is not a Baton export header/],
			[good.replace(/"title":"title A2"/, '"title":42'), /Line 3 .*title/],
			[`${good}{oops\n`, /Line 4 of the export is not valid JSON/],
			[Buffer.from([0x1f, 0x8b, 1, 2, 3]), /gzip/],
		];
		for (const [input, message] of cases) {
			assert.throws(
				() => parseExport(input),
				(e: unknown) => BatonError.is(e, 'invalid_input') && message.test(e.message),
				String(message),
			);
		}
		assert.deepEqual(parseExport(gzipSync(good)).cards, cards);
	});

	it('splits imports into protocol-sized batches', () => {
		const many = Array.from({ length: limits.importBatch * 2 + 3 }, (_, i) => card(`C${i}`));
		assert.deepEqual(
			importBatches(many).map(b => b.length),
			[limits.importBatch, limits.importBatch, 3],
		);
	});
});
