/**
 * Full-fidelity backups on real PGlite and PostgreSQL: a backlog with every kind of row (cards in all
 * states, edges, a long event log, agents, idempotency records, settings, messages, a webhook) is dumped, written to the
 * backup format, parsed back and loaded into a fresh store; every table then reads back identical, row
 * for row, and the restored store keeps working (event seqs continue, claims work). Damaged files and
 * newer schemas are refused by the parser before any store is touched; a backup from before a table
 * existed (messages, migration 0009) still loads into the schema it was made with.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';

import { Backlog, type OpContext } from '../../core/backlog';
import { formatBackup, parseBackup } from '../../mcp-server/hub/backupFormat';
import { BatonError } from '../../core/errors';
import { formatExport } from '../../core/formats/export';
import type { Db } from '../../core/store/db';
import { type DumpRows, dumpTables, loadDump, readDump, storeRowCount } from '../../core/store/dump';
import { loadMigrations, migrate, schemaVersion } from '../../core/store/migrate';
import { openPglite, sourceStoreDir } from '../../core/store/pglite';
import { openPostgres } from '../../core/store/postgres';
import {
	dropSchema,
	openTestBacklog,
	storeKinds,
	type StoreKind,
	type TestBacklog,
	tempDir,
	testDatabaseUrl,
	uniqueSchema,
} from '../helpers/backlog';

const alice: OpContext = { actor: 'alice' };
const human: OpContext = { actor: 'vscode:human' };
const migrations = loadMigrations(join(sourceStoreDir, 'migrations'));

/** A backlog that has seen every kind of write. */
async function populate(b: Backlog): Promise<void> {
	await b.registerAgent({ id: 'alice', name: 'Alice', client: 'test', capabilities: ['lang:ts'], pid: 42 });
	await b.updateSettings(human, { stallReleaseSeconds: 600 });
	await b.create(
		{ ...alice, requestKey: 'alice:1' },
		{
			cards: [
				{ id: 'A', title: 'Schema', body: 'Ünïcode body — "quotes" and \\ backslashes\nline two', priority: 2 },
				{ id: 'B', title: 'API', dependsOn: ['A'], requires: ['lang:ts'], phase: 'build', acceptance: ['it works'] },
				{ id: 'C', title: 'UI', dependsOn: ['A', 'B'] },
				{ id: 'D', title: 'Docs' },
				{ id: 'E', title: 'Parked' },
			],
		},
	);
	const a = (await b.claim(alice, { cardId: 'A' })).lease;
	assert.ok(a);
	await b.heartbeat(alice, { cardId: 'A', epoch: a.epoch, progress: 50, note: 'half way' });
	await b.complete(alice, { cardId: 'A', epoch: a.epoch, result: 'done in 3 commits' });
	const d = (await b.claim(alice, { cardId: 'D' })).lease;
	assert.ok(d);
	await b.fail(alice, { cardId: 'D', epoch: d.epoch, reason: 'flaky test', backoffSeconds: 0 });
	await b.block(human, { cardId: 'E', reason: 'waiting for legal' });
	await b.claim(alice, { cardId: 'B', capabilities: ['lang:ts'] });
	await b.comment(human, { cardId: 'B', text: 'Use the **v2** API — "quoted"' });
	await b.comment(alice, { cardId: 'B', text: 'Which endpoint?', question: true });
	for (let i = 0; i < 40; i++) {
		await b.update(human, { cardId: 'C', priority: i % 5 });
	}
	await b.addHook(human, { url: 'http://127.0.0.1:9/hook', secret: 'a secret of twenty chars', events: ['completed'] });
}

/** An empty store; `initdb`: PGlite without the template (which is at the newest schema already). */
async function openEmpty(kind: StoreKind, initdb = false): Promise<{ db: Db; close(): Promise<void> }> {
	if (kind === 'pglite') {
		const opened = await openPglite(initdb ? { useTemplate: false } : {});
		return { db: opened.db, close: () => opened.db.close() };
	}
	const schema = uniqueSchema();
	const db = await openPostgres({ databaseUrl: testDatabaseUrl, schema, poolSize: 2 });
	return {
		db,
		async close() {
			await db.close();
			await dropSchema(schema);
		},
	};
}

for (const kind of storeKinds) {
	describe(`full backup round trip on ${kind}`, () => {
		let source: TestBacklog;
		let dumped: { rows: DumpRows; schema: number };

		before(async () => {
			source = await openTestBacklog(kind);
			await populate(source.backlog);
			dumped = await source.backlog.dump();
		});
		after(async () => {
			await source.cleanup();
		});

		it('holds every table, in key order', () => {
			assert.equal(dumped.schema, Math.max(...migrations.map(m => m.version)));
			assert.equal(dumped.rows.cards.length, 5);
			assert.equal(dumped.rows.edges.length, 3);
			assert.ok(dumped.rows.events.length > 45, `${dumped.rows.events.length} events`);
			assert.equal(dumped.rows.agents.length, 1);
			assert.ok(dumped.rows.request_log.length >= 1);
			assert.ok(dumped.rows.settings.length >= 1);
			assert.equal(dumped.rows.messages.length, 2);
			assert.equal(dumped.rows.webhooks.length, 1, 'a hook (its cursor and secret) is in the backup');
			const seqs = dumped.rows.events.map(r => (JSON.parse(r) as { seq: number }).seq);
			assert.deepEqual(
				seqs,
				[...seqs].sort((x, y) => x - y),
			);
		});

		it('loads into a fresh store identical table for table, and the store goes on', async () => {
			const file = parseBackup(gzipSync(formatBackup(dumped.rows, dumped.schema)));
			assert.equal(file.kind, 'backup');
			const target = await openEmpty(kind);
			try {
				await migrate(target.db, migrations);
				await loadDump(target.db, file.rows);
				const after = await readDump(target.db);
				for (const table of dumpTables) {
					assert.deepEqual(after[table.name], dumped.rows[table.name], `${table.name} differs after restore`);
				}
				assert.equal(await schemaVersion(target.db), dumped.schema);
				assert.ok((await storeRowCount(target.db)) > 0);
			} finally {
				await target.close();
			}
		});

		it('a restored backlog continues the event log and serves claims', async () => {
			const file = parseBackup(Buffer.from(formatBackup(dumped.rows, dumped.schema)));
			assert.ok(file.kind === 'backup');
			const where = await loadIntoStore(kind, file.rows);
			const restored = await Backlog.open(where.options);
			try {
				const lastBefore = Math.max(...dumped.rows.events.map(r => (JSON.parse(r) as { seq: number }).seq));
				assert.equal(await restored.lastSeq(), lastBefore);
				const c = await restored.claim(alice, { cardId: 'D' });
				assert.ok(c.card);
				assert.equal(c.card.id, 'D');
				assert.equal(c.card.attempts, 2, 'the failed attempt came back with the card');
				const history = await restored.listEvents({ cardId: 'D' });
				assert.ok(
					history.events.some(e => e.type === 'failed'),
					'the history came back',
				);
				assert.equal(await restored.lastSeq(), lastBefore + 1, 'seqs continue without a gap');
			} finally {
				await restored.close();
				await where.cleanup();
			}
		});

		it('loads a backup made before the messages table into the schema it was made with', async () => {
			const before0009 = migrations.filter(m => m.version < 9);
			const rows = { ...dumped.rows, messages: [], log_state: [], webhooks: [] };
			const target = await openEmpty(kind, true);
			try {
				await migrate(target.db, before0009);
				await loadDump(target.db, rows);
				assert.ok((await storeRowCount(target.db)) > 0);
				await assert.rejects(loadDump(target.db, dumped.rows), (e: unknown) => {
					assert.ok(BatonError.is(e, 'invalid_input'), String(e));
					assert.match(e.message, /messages rows, but its schema has no such table/);
					return true;
				});
				await migrate(target.db, migrations);
				const after = await readDump(target.db);
				// Without its messages no question is pending: needs_input (migration 0010) starts false.
				assert.deepEqual(
					after.cards,
					dumped.rows.cards.map(c => JSON.stringify({ ...(JSON.parse(c) as object), needs_input: false })),
				);
				assert.deepEqual(after.messages, []);
			} finally {
				await target.close();
			}
		});

		it('reads a cards-only export as its cards', async () => {
			const { cards } = await source.backlog.exportCards({});
			const parsed = parseBackup(Buffer.from(formatExport(cards)));
			assert.equal(parsed.kind, 'cards');
			assert.equal(parsed.cards.length, 5);
		});
	});
}

/** Loads rows into a new on-disk store the way `baton restore` does, for Backlog.open to reopen. */
async function loadIntoStore(
	kind: StoreKind,
	rows: DumpRows,
): Promise<{ options: Parameters<typeof Backlog.open>[0]; cleanup(): Promise<void> }> {
	if (kind === 'pglite') {
		const dir = tempDir();
		const opened = await openPglite({ dataDir: `${dir}/pg` });
		await migrate(opened.db, migrations);
		await loadDump(opened.db, rows);
		opened.markReady();
		await opened.db.close();
		return {
			options: { pgliteDir: `${dir}/pg` },
			cleanup: () => {
				rmSync(dir, { recursive: true, force: true });
				return Promise.resolve();
			},
		};
	}
	const schema = uniqueSchema();
	const db = await openPostgres({ databaseUrl: testDatabaseUrl, schema, poolSize: 1 });
	await migrate(db, migrations);
	await loadDump(db, rows);
	await db.close();
	return { options: { databaseUrl: testDatabaseUrl, schema }, cleanup: () => dropSchema(schema) };
}

describe('backup files that cannot be restored', () => {
	const good = (): string => {
		const rows = Object.fromEntries(dumpTables.map(t => [t.name, []])) as unknown as DumpRows;
		rows.cards.push('{"id":"X"}');
		return formatBackup(rows, 7);
	};
	const refused = (data: Buffer | string, text: RegExp): void => {
		try {
			parseBackup(Buffer.from(data));
		} catch (e) {
			assert.ok(BatonError.is(e, 'invalid_input'), String(e));
			assert.match(e.message, text);
			return;
		}
		assert.fail('expected a refusal');
	};

	it('refuses garbage, a truncated gzip, a cut-short file and a bad line, saying which', () => {
		refused('hello world\n', /not a Baton backup or export/);
		refused(gzipSync(good()).subarray(0, 30), /cannot be decompressed/);
		refused(good().replace('{"t":"cards","r":{"id":"X"}}\n', ''), /promises 1 cards rows, the file holds 0/);
		refused(good().replace('{"t":"cards"', '{"t":"nope"'), /Line 2 of the backup/);
		refused('{"baton":"backup","version":9}\n', /not one this Baton reads/);
	});
});
