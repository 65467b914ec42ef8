/**
 * The store layer with real databases: on-disk PGlite reopens with its data, loads bundled assets
 * from an assetsDir, applies migrations newer than the template on top of it; PostgreSQL hubs that
 * open one schema at once both succeed, and the backlog's own transactions send no NOTIFY.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';

import { Backlog } from '../../core/backlog';
import { BatonError } from '../../core/errors';
import { loadMigrations, migrate } from '../../core/store/migrate';
import { type Db, sqlState } from '../../core/store/db';
import { openPglite, sourceStoreDir, sqlLiteral } from '../../core/store/pglite';
import { dropSchema, openTestBacklog, storeKinds, tempDir, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';

const ctx = { actor: 'store-test' };

/** A folder laid out like dist/pglite: WASM, data bundle, template and migrations. */
function makeAssetsDir(root: string, extraMigration?: string): string {
	const dir = join(root, 'assets');
	mkdirSync(join(dir, 'migrations'), { recursive: true });
	const pgliteDist = join('node_modules', '@electric-sql', 'pglite', 'dist');
	for (const file of ['pglite.wasm', 'initdb.wasm', 'pglite.data', 'pg_trgm.tar.gz']) {
		copyFileSync(join(pgliteDist, file), join(dir, file));
	}
	copyFileSync(join(sourceStoreDir, 'template.tar.gz'), join(dir, 'template.tar.gz'));
	for (const file of readdirSync(join(sourceStoreDir, 'migrations'))) {
		copyFileSync(join(sourceStoreDir, 'migrations', file), join(dir, 'migrations', file));
	}
	if (extraMigration !== undefined) {
		writeFileSync(join(dir, 'migrations', '0999_test_extra.sql'), extraMigration);
	}
	return dir;
}

describe('PGlite store', () => {
	it('keeps everything across a clean close and reopen, and the first start loads the template', async () => {
		const root = tempDir();
		const dir = join(root, 'pg');
		try {
			let started = performance.now();
			const first = await Backlog.open({ pgliteDir: dir });
			const firstStartMs = performance.now() - started;
			await first.create(ctx, {
				cards: [
					{ id: 'A1', title: 'persist me' },
					{ id: 'B1', title: 'dep', dependsOn: ['A1'] },
				],
			});
			const claim = await first.claim(ctx, { cardId: 'A1' });
			const seq = await first.lastSeq();
			await first.close();
			started = performance.now();
			const again = await Backlog.open({ pgliteDir: dir });
			const reopenMs = performance.now() - started;
			try {
				const got = await again.get(ctx, { cardId: 'B1' });
				assert.deepEqual(got.dependencies, [
					{ id: 'A1', title: 'persist me', status: 'claimed', unmetDeps: 0, deferUntil: null },
				]);
				assert.equal(await again.lastSeq(), seq);
				// The lease survives the restart: the holder completes with the epoch it got before.
				const done = await again.complete(ctx, { cardId: 'A1', epoch: claim.lease?.epoch ?? -1 });
				assert.deepEqual(done.unblocked, ['B1']);
				assert.equal(await again.lastSeq(), seq + 1);
			} finally {
				await again.close();
			}
			console.log(
				`PGlite on disk: first start ${Math.round(firstStartMs)} ms (template, no initdb), reopen ${Math.round(reopenMs)} ms`,
			);
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});

	it('loads WASM, data bundle, template and migrations from an assetsDir (the bundled layout)', async () => {
		const root = tempDir();
		try {
			const assetsDir = makeAssetsDir(root);
			for (const pgliteDir of [undefined, join(root, 'pg')]) {
				const b = await Backlog.open({ assetsDir, ...(pgliteDir === undefined ? {} : { pgliteDir }) });
				await b.create(ctx, { cards: [{ id: 'X1', title: 'bundled' }] });
				assert.equal((await b.stats(ctx, {})).total, 1);
				await b.close();
			}
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});

	it('applies migrations newer than the template on top of it, once', async () => {
		const root = tempDir();
		try {
			const assetsDir = makeAssetsDir(root, 'CREATE TABLE test_extra (x integer);');
			const migrations = loadMigrations(join(assetsDir, 'migrations'));
			const opened = await openPglite({ dataDir: join(root, 'pg'), assetsDir });
			assert.equal(opened.fresh, true);
			assert.deepEqual(await migrate(opened.db, migrations), [999], 'the template already holds 0001');
			opened.markReady();
			assert.deepEqual(await migrate(opened.db, migrations), []);
			assert.deepEqual(await opened.db.query('SELECT count(*)::int AS n FROM test_extra'), [{ n: 0 }]);
			await opened.db.close();
			const reopened = await openPglite({ dataDir: join(root, 'pg'), assetsDir });
			assert.equal(reopened.fresh, false);
			assert.deepEqual(await migrate(reopened.db, migrations), []);
			await reopened.db.close();
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});

	it('refuses a dir with PostgreSQL files it cannot start, instead of replacing it', async () => {
		const root = tempDir();
		const dir = join(root, 'pg');
		try {
			mkdirSync(dir);
			writeFileSync(join(dir, 'PG_VERSION'), '18\n');
			await assert.rejects(Backlog.open({ pgliteDir: dir }), (e: unknown) => BatonError.is(e, 'store_refused'));
			assert.deepEqual(readdirSync(dir), ['PG_VERSION'], 'nothing written, nothing moved');
			assert.deepEqual(
				readdirSync(root).filter(f => f !== 'pg'),
				[],
			);
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});

	it('quotes literals for EXECUTE safely', () => {
		assert.equal(sqlLiteral("it's; DROP TABLE cards; --"), "'it''s; DROP TABLE cards; --'");
		assert.equal(sqlLiteral(['a', "b'c"]), "ARRAY['a','b''c']::text[]");
		assert.equal(sqlLiteral([]), 'ARRAY[]::text[]');
		assert.equal(sqlLiteral(null), 'NULL');
		assert.equal(sqlLiteral(new Date('2026-01-01T00:00:00.000Z')), "'2026-01-01T00:00:00.000Z'");
		assert.equal(sqlLiteral('back\\slash'), "'back\\slash'");
		assert.throws(() => sqlLiteral(Number.NaN));
		assert.throws(() => sqlLiteral('nul\u0000'));
	});

	it('stores hostile text verbatim through the prepared paths', async () => {
		const b = await Backlog.open({});
		try {
			const nasty = `Robert'); DROP TABLE cards; -- \\ \u00e9 "quoted" $1`;
			await b.create(ctx, { cards: [{ id: 'N1', title: nasty, body: nasty }] });
			const c = await b.claim({ actor: nasty }, {});
			assert.equal(c.card?.claimOwner, nasty);
			const done = await b.complete({ actor: nasty }, { cardId: 'N1', result: nasty });
			assert.equal(done.card.result, nasty);
			assert.equal((await b.get(ctx, { cardId: 'N1' })).card.title, nasty);
		} finally {
			await b.close();
		}
	});

	describe('prepared statements over the wire (one in-memory store: each test its own tables and names)', () => {
		let db: Db;
		before(async () => {
			db = (await openPglite({})).db;
		});
		after(async () => {
			await db.close();
		});

		it('reads prepared statements’ rows from the wire exactly as PGlite’s own query does', async () => {
			// Every type the hot statements return, nulls, several rows, and a reply far larger than
			// PGlite's receive buffer (it arrives in several chunks).
			const sql = `SELECT n::int AS n, n::bigint * 3000000000 AS big, NULL::text AS nothing, n % 2 = 0 AS even,
					ARRAY['a', 'b''c']::text[] AS list, json_build_object('k', n, 'é', 'ü') AS doc,
					'2026-01-01T00:00:00Z'::timestamptz AS at, repeat('x', n * 40000) AS long
				FROM generate_series(1, 12) AS n`;
			const viaWire = await db.query(sql, [], 'test_wire_types');
			assert.equal(viaWire.length, 12);
			assert.deepEqual(viaWire, await db.query(sql));
			assert.deepEqual(await db.query('SELECT 1 AS one WHERE false', [], 'test_wire_empty'), []);
			assert.deepEqual(await db.query('CREATE TEMP TABLE wire_t (x int PRIMARY KEY)'), []);
			assert.deepEqual(await db.query('INSERT INTO wire_t VALUES ($1)', [1], 'test_wire_insert'), []);
			// Parameters go over as text: arrays need their quoting, objects become JSON, dates ISO.
			const awkward = ['a"b', 'c\\d', 'NULL', '{}', 'x,y', ' lead', 'é', ''];
			const echo = 'SELECT $1::text[] AS list, $2::json AS doc, $3::timestamptz AS at, $4::bool AS flag, $5::int AS n';
			const at = new Date('2026-11-22T10:11:12.345Z');
			const args = [awkward, { nested: { quote: "it's" } }, at, false, -7];
			assert.deepEqual(await db.query(echo, args, 'test_wire_params'), [
				{ list: awkward, doc: { nested: { quote: "it's" } }, at, flag: false, n: -7 },
			]);
			assert.deepEqual(await db.query(echo, [[], null, null, true, null], 'test_wire_params'), [
				{ list: [], doc: null, at: null, flag: true, n: null },
			]);
			await assert.rejects(db.query(echo, [['nul\u0000'], null, null, null, null], 'test_wire_params'), /NUL/);
		});

		it('throws PGlite’s DatabaseError, with its SQLSTATE, from a failing prepared statement', async () => {
			await db.query('CREATE TABLE wire_u (x int PRIMARY KEY)');
			await db.query('INSERT INTO wire_u VALUES ($1)', [1], 'test_wire_unique');
			await assert.rejects(db.query('INSERT INTO wire_u VALUES ($1)', [1], 'test_wire_unique'), (e: unknown) => {
				assert.equal(sqlState(e), '23505');
				assert.match((e as Error).message, /duplicate key value violates unique constraint "wire_u_pkey"/);
				return true;
			});
			// The failed statement left no transaction open behind it.
			assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM wire_u', [], 'test_wire_count'), [{ n: 1 }]);
			// A statement that fails to prepare is not remembered as prepared: once it can be, it is.
			const later = 'SELECT count(*)::int AS n FROM wire_later';
			await assert.rejects(db.query(later, [], 'test_wire_later'), (e: unknown) => sqlState(e) === '42P01');
			await db.query('CREATE TABLE wire_later (x int)');
			assert.deepEqual(await db.query(later, [], 'test_wire_later'), [{ n: 0 }]);
		});

		it('runs a prepared statement only after an open transaction ends, never inside it', async () => {
			await db.query('CREATE TABLE wire_v (x int)');
			const count = 'SELECT count(*)::int AS n FROM wire_v';
			await db.query(count, [], 'test_wire_v');
			let seenDuring: unknown;
			let rolledBack = false;
			const tx = db
				.transaction(async t => {
					await t.query('INSERT INTO wire_v VALUES (1)');
					// While this transaction holds the instance, a query from outside must wait for it. Had it
					// run on the session right away, it would count the uncommitted row.
					seenDuring = db.query(count, [], 'test_wire_v');
					await new Promise(resolve => setTimeout(resolve, 50));
					throw new Error('roll back');
				})
				.catch(() => {
					rolledBack = true;
				});
			await tx;
			assert.equal(rolledBack, true);
			assert.deepEqual(await seenDuring, [{ n: 0 }]);
		});
	});
});

describe('PostgreSQL store', () => {
	it('lets several hubs open and migrate one new schema at the same time', async () => {
		const schema = uniqueSchema();
		try {
			const opened = await Promise.all(
				Array.from({ length: 4 }, () => Backlog.open({ databaseUrl: testDatabaseUrl, schema, poolSize: 1 })),
			);
			await opened[0]?.create(ctx, { cards: [{ id: 'P1', title: 'shared' }] });
			for (const b of opened) {
				assert.equal((await b.get(ctx, { cardId: 'P1' })).card.title, 'shared');
			}
			await Promise.all(opened.map(b => b.close()));
		} finally {
			await dropSchema(schema);
		}
	});

	it('picks the hand-over card with a snapshot of its own, not the statement snapshot from before its wait', async () => {
		// complete {next} is one call. Its pick used to read the snapshot taken when the call began, so a
		// card another worker had claimed since still looked ready: the pick locked it, failed the recheck
		// and held the lock until it committed, stalling that card's owner (migrations 0005, 0007). Here
		// the completion waits on a row lock after the call began, and an urgent card is unblocked
		// meanwhile: only a pick with a fresh snapshot sees it ready.
		const schema = uniqueSchema();
		const b = await Backlog.open({ databaseUrl: testDatabaseUrl, schema });
		const other = await Backlog.open({ databaseUrl: testDatabaseUrl, schema, poolSize: 1 });
		const blocker = new pg.Client({ connectionString: testDatabaseUrl, options: `-c search_path=${schema}` });
		const watcher = new pg.Client({ connectionString: testDatabaseUrl });
		try {
			await blocker.connect();
			await watcher.connect();
			await b.create(ctx, {
				cards: [
					{ id: 'H1', title: 'held', priority: 5 },
					{ id: 'O1', title: 'older' },
					{ id: 'U1', title: 'urgent, blocked for now', priority: 9 },
				],
			});
			await b.block(ctx, { cardId: 'U1', reason: 'waiting for a decision' });
			const held = await b.claim(ctx, {});
			assert.equal(held.card?.id, 'H1');
			await blocker.query('BEGIN');
			await blocker.query(`SELECT 1 FROM cards WHERE id = 'H1' FOR SHARE`);
			const completing = b.complete(
				{ ...ctx, requestKey: 'handover-1' },
				{ cardId: 'H1', epoch: held.lease?.epoch ?? -1, next: {} },
			);
			// Polled from a connection outside any transaction: inside one, pg_stat_activity stays as first read.
			const waiting = async (): Promise<boolean> => {
				const { rows } = await watcher.query<{ n: number }>(
					`SELECT count(*)::int AS n FROM pg_stat_activity
					 WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%baton_hand_over%'`,
				);
				return (rows[0]?.n ?? 0) > 0;
			};
			for (let i = 0; !(await waiting()); i++) {
				assert.ok(i < 500, 'the complete never waited on the row lock');
				await new Promise(resolve => setTimeout(resolve, 10));
			}
			await other.unblock(ctx, { cardId: 'U1' });
			await blocker.query('COMMIT');
			const done = await completing;
			assert.equal(done.card.status, 'done');
			assert.equal(done.next?.card?.id, 'U1', 'the pick saw the card unblocked while the complete waited');
			assert.equal((await b.get(ctx, { cardId: 'O1' })).card.status, 'ready');
			// Taken by the hand-over statement itself, not by the plain claim that follows an empty pick
			// (that one logs its result under the derived key handover-1#next).
			const { rows: keys } = await blocker.query<{ key: string }>(
				`SELECT key FROM request_log WHERE key LIKE 'handover-1%' ORDER BY key`,
			);
			assert.deepEqual(
				keys.map(k => k.key),
				['handover-1'],
			);
		} finally {
			await blocker.end();
			await watcher.end();
			await other.close();
			await b.close();
			await dropSchema(schema);
		}
	});

	it('sends no NOTIFY from its transactions (the hub announces after commit; see hubPostgres.test.ts)', async () => {
		// A transaction that has sent a NOTIFY takes one database-wide lock while it commits, which
		// serialised every commit (Lock:object under load), so the backlog must not NOTIFY itself.
		const schema = uniqueSchema();
		const listener = new pg.Client({ connectionString: testDatabaseUrl });
		const b = await Backlog.open({ databaseUrl: testDatabaseUrl, schema });
		try {
			await listener.connect();
			const payloads: string[] = [];
			listener.on('notification', n => payloads.push(n.payload ?? ''));
			await listener.query('LISTEN baton_events');
			await b.create(ctx, { cards: [{ id: 'N1', title: 'one' }] });
			const claim = await b.claim(ctx, {});
			await b.heartbeat(ctx, { cardId: 'N1', epoch: claim.lease?.epoch ?? -1, progress: 50 });
			await b.complete(ctx, { cardId: 'N1', epoch: claim.lease?.epoch ?? -1 });
			await new Promise(resolve => setTimeout(resolve, 200));
			assert.deepEqual(payloads, []);
			assert.equal(await b.lastSeq(), 4);
		} finally {
			await listener.end();
			await b.close();
			await dropSchema(schema);
		}
	});
});

/** Every "Index Name" / scan on `cards` in an EXPLAIN (FORMAT JSON) plan, as "Node Type:index". */
function cardScans(plan: unknown): string[] {
	const found: string[] = [];
	const walk = (node: unknown): void => {
		if (Array.isArray(node)) {
			node.forEach(walk);
			return;
		}
		if (typeof node !== 'object' || node === null) {
			return;
		}
		const n = node as Record<string, unknown>;
		if (n['Relation Name'] === 'cards' && typeof n['Node Type'] === 'string' && n['Node Type'] !== 'ModifyTable') {
			found.push(`${n['Node Type']}:${typeof n['Index Name'] === 'string' ? n['Index Name'] : ''}`);
		}
		Object.values(n).forEach(walk);
	};
	walk(plan);
	return found;
}

for (const kind of storeKinds) {
	describe(`hot statements on ${kind}`, () => {
		it('find their cards by primary key or a claim index, whatever the statistics say', async () => {
			// Statistics taken while no card was held say claim_owner is always NULL, so "claim_owner = $3"
			// looked as selective as "id = $2": the holder's complete and heartbeat then read the card through
			// cards_owner_idx, walking the dead entries of every card that agent had held before (a
			// 1-worker hand-over on PostgreSQL ran at half speed after ANALYZE). The same statistics, then
			// every hot statement's generic plan, as the store runs it.
			const t = await openTestBacklog(kind);
			try {
				const internals = t.backlog as unknown as {
					db: Db;
					sql: Record<string, string>;
				};
				// Enough cards that an index beats reading the table, as in any backlog worth a plan.
				for (let batch = 0; batch < 5; batch++) {
					const cards = Array.from({ length: 1000 }, (_, i) => ({ id: `S${batch}-${i}`, title: `card ${i}` }));
					await t.backlog.create(ctx, { cards });
				}
				await internals.db.exec('ANALYZE cards');
				const texts = Object.entries(internals.sql).filter(([key]) => !/^(readyPage|claimCandidates)/.test(key));
				assert.ok(texts.length >= 6, texts.map(([key]) => key).join(', '));
				const readsByClaimIndexes = (key: string, plan: unknown): void => {
					const scans = cardScans(plan);
					assert.ok(scans.length > 0, `${key}: no scan of cards in ${JSON.stringify(plan)}`);
					// A claim's max-held guard counts the claimer's held cards through the index of
					// claimed cards; it is an InitPlan that runs only while the maxHeld setting exists.
					// A complete asks whether a dependent of the card is a parent (treeDependents):
					// cards_parent_idx, one probe per dependent.
					const allowed = /^(claim|completeNext|baton_hand_over)/.test(key)
						? /^Index (Only )?Scan:(cards_pkey|cards_claim_idx|cards_claim_phase_idx|cards_lease_idx|cards_parent_idx)$/
						: key.startsWith('complete')
							? /^Index (Only )?Scan:(cards_pkey|cards_claim_idx|cards_claim_phase_idx|cards_parent_idx)$/
							: /^Index Scan:(cards_pkey|cards_claim_idx|cards_claim_phase_idx)$/;
					for (const scan of scans) {
						assert.match(scan, allowed, `${key} reads cards by ${scan}`);
					}
				};
				for (const [key, text] of texts) {
					if (text.includes('baton_hand_over(')) {
						// PostgreSQL's hand-over is a function (migration 0007): its statements' plans are below.
						continue;
					}
					const params = Math.max(...[...text.matchAll(/\$(\d+)/g)].map(m => Number(m[1])));
					const plan = await internals.db.transaction(async tx => {
						await tx.query('SET LOCAL plan_cache_mode = force_generic_plan');
						await tx.query(`PREPARE hot_plan_test AS ${text}`);
						try {
							const rows = await tx.query<Record<string, unknown>>(
								`EXPLAIN (FORMAT JSON) EXECUTE hot_plan_test(${Array(params).fill('NULL').join(', ')})`,
							);
							return rows[0]?.['QUERY PLAN'];
						} finally {
							await tx.query('DEALLOCATE hot_plan_test');
						}
					});
					readsByClaimIndexes(key, plan);
				}
				if (kind === 'postgres') {
					// The hand-over function's own statements, as generic plans, logged by auto_explain while it
					// completes a held card and claims the next (rolled back).
					const held = await t.backlog.claim(ctx, {});
					const client = new pg.Client({
						connectionString: testDatabaseUrl,
						options: `-c search_path=${t.options.schema ?? ''}`,
					});
					const plans: unknown[] = [];
					client.on('notice', notice => {
						const at = notice.message?.indexOf('{') ?? -1;
						if (at >= 0) {
							plans.push(JSON.parse(notice.message?.slice(at) ?? '{}'));
						}
					});
					await client.connect();
					try {
						for (const phase of [null, 'no such phase']) {
							await client.query('BEGIN');
							for (const setting of [
								"LOAD 'auto_explain'",
								'SET LOCAL auto_explain.log_min_duration = 0',
								'SET LOCAL auto_explain.log_nested_statements = on',
								"SET LOCAL auto_explain.log_level = 'notice'",
								"SET LOCAL auto_explain.log_format = 'json'",
								'SET LOCAL plan_cache_mode = force_generic_plan',
							]) {
								await client.query(setting);
							}
							plans.length = 0;
							const { rows } = await client.query(
								`SELECT * FROM baton_hand_over(now(), $1, $2, NULL, $3, NULL, '{}', $4, now() + interval '1 minute', 60, '*')`,
								[held.card?.id, ctx.actor, held.lease?.epoch, phase],
							);
							await client.query('ROLLBACK');
							assert.equal(rows.length, 1, 'the hand-over completed the held card');
							// The complete, the dependents' update, the pick and (without a phase) the claim read cards.
							const reading = plans.filter(plan => cardScans(plan).length > 0);
							assert.ok(reading.length >= 3, `only ${reading.length} statements read cards`);
							reading.forEach((plan, i) => readsByClaimIndexes(`baton_hand_over statement ${i}`, plan));
						}
					} finally {
						await client.end();
					}
				}
			} finally {
				await t.cleanup();
			}
		});
	});
}
