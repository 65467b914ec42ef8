/**
 * Data dirs and schema versions at open, on real PGlite and PostgreSQL: a store that lost its marker is
 * opened, checked and re-marked, never replaced; only Baton's own cut-short first init is set aside,
 * into a timestamped folder nothing deletes; anything else with content is refused with a sentence
 * naming the dir, untouched; a store migrated by a newer Baton is refused, changing nothing.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';

import { Backlog } from '../../core/backlog';
import { BatonError } from '../../core/errors';
import { initMarker, readyMarker } from '../../core/store/dataDir';
import { openPglite } from '../../core/store/pglite';
import { dropSchema, tempDir, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';

const ctx = { actor: 'data-dir-test' };

/** Every entry of a dir with its size, to prove a refusal changed nothing. */
function snapshot(dir: string): string[] {
	return readdirSync(dir, { recursive: true, withFileTypes: true })
		.filter(e => e.isFile())
		.map(e => `${join(e.parentPath, e.name)}:${readFileSync(join(e.parentPath, e.name)).length}`)
		.sort();
}

function refusedNaming(dir: string, phrase: string) {
	return (e: unknown): boolean => {
		assert.ok(BatonError.is(e, 'store_refused'), String(e));
		assert.match(e.message, new RegExp(`data dir ${dir}`));
		assert.ok(e.message.includes(phrase), e.message);
		assert.match(e.message, /Nothing was changed/);
		return true;
	};
}

describe('PGlite data dirs at open', () => {
	it('opens a populated store that lost its marker, checks it and writes the marker again', async () => {
		const root = tempDir();
		const dir = join(root, 'pg');
		try {
			const first = await Backlog.open({ pgliteDir: dir });
			await first.create(ctx, { cards: [{ id: 'keep-1', title: 'must survive' }, { title: 'and me' }] });
			await first.close();
			rmSync(join(dir, readyMarker));
			const again = await Backlog.open({ pgliteDir: dir });
			try {
				assert.equal((await again.stats(ctx, {})).total, 2, 'the same store, not a fresh one');
				assert.equal((await again.get(ctx, { cardId: 'keep-1' })).card.title, 'must survive');
				assert.equal(again.notices.length, 1);
				assert.match(again.notices[0] ?? '', /lost its baton-ready marker.*2 cards/);
			} finally {
				await again.close();
			}
			assert.ok(existsSync(join(dir, readyMarker)), 'the marker is back');
			assert.deepEqual(readdirSync(root), ['pg'], 'nothing was set aside');
			const third = await Backlog.open({ pgliteDir: dir });
			assert.deepEqual(third.notices, [], 'a marked store opens without notices');
			await third.close();
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});

	it('opens a store killed between its two markers as ready, keeps its cards, and drops the stale init marker', async () => {
		const root = tempDir();
		const dir = join(root, 'pg');
		try {
			const first = await Backlog.open({ pgliteDir: dir });
			await first.create(ctx, { cards: [{ id: 'KEEP-1', title: 'written before the kill' }] });
			await first.close();
			// The first init was killed after writing the ready marker and before removing the init marker.
			writeFileSync(join(dir, initMarker), '2026-11-26T00:00:00.000Z\n');
			const again = await Backlog.open({ pgliteDir: dir });
			try {
				assert.deepEqual(again.notices, [], 'a ready store opens without notices');
				assert.equal((await again.get(ctx, { cardId: 'KEEP-1' })).card.title, 'written before the kill');
			} finally {
				await again.close();
			}
			const entries = readdirSync(dir);
			assert.ok(entries.includes(readyMarker) && !entries.includes(initMarker), entries.join(', '));
			assert.deepEqual(
				readdirSync(root).filter(f => f !== 'pg'),
				[],
				'nothing set aside',
			);
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});

	it("sets aside only Baton's own cut-short first init, timestamped, and never deletes an earlier one", async () => {
		const root = tempDir();
		const dir = join(root, 'pg');
		try {
			for (let i = 0; i < 2; i++) {
				// What a kill during first init leaves: the init marker, some of PostgreSQL's files, no ready marker.
				mkdirSync(dir);
				writeFileSync(join(dir, initMarker), 'then killed\n');
				writeFileSync(join(dir, 'PG_VERSION'), '17\n');
				const b = await Backlog.open({ pgliteDir: dir });
				try {
					assert.equal(b.notices.length, 1);
					assert.match(b.notices[0] ?? '', /cut short before it ever served a request; it was moved to .*pg\.partial-/);
					await b.create(ctx, { cards: [{ title: 'fresh start' }] });
				} finally {
					await b.close();
				}
				const ready = readdirSync(dir);
				assert.ok(ready.includes(readyMarker) && !ready.includes(initMarker));
				// Start over for the next round: this dir plays the next cut-short init.
				rmSync(dir, { recursive: true });
			}
			const asides = readdirSync(root).filter(f => f.startsWith('pg.partial-'));
			assert.equal(asides.length, 2, `both partial inits are kept: ${asides.join(', ')}`);
			for (const aside of asides) {
				assert.deepEqual(readdirSync(join(root, aside)).sort(), ['PG_VERSION', initMarker].sort());
			}
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});

	it('refuses, untouched, a PostgreSQL database that is not a Baton backlog', async () => {
		const root = tempDir();
		const dir = join(root, 'pg');
		try {
			const raw = await openPglite({ dataDir: dir, useTemplate: false });
			await raw.db.exec('CREATE TABLE someone_elses (x integer)');
			await raw.db.close();
			rmSync(join(dir, initMarker)); // another program's database carries no Baton marker at all
			const before = snapshot(dir);
			await assert.rejects(Backlog.open({ pgliteDir: dir }), refusedNaming(dir, 'not a Baton backlog'));
			assert.ok(!existsSync(join(dir, readyMarker)));
			const reopened = await openPglite({ dataDir: dir });
			const tables = await reopened.db.query<{ n: number }>(
				"SELECT count(*)::int AS n FROM pg_tables WHERE tablename IN ('cards', 'baton_migrations')",
			);
			await reopened.db.close();
			assert.deepEqual(tables, [{ n: 0 }], 'no Baton table was created in it');
			assert.equal(snapshot(dir).length, before.length);
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});

	it('refuses a folder of other files, and a Baton data dir passed where the PGlite dir belongs', async () => {
		const root = tempDir();
		try {
			const notes = join(root, 'notes');
			mkdirSync(notes);
			writeFileSync(join(notes, 'todo.md'), '# mine\n');
			await assert.rejects(
				Backlog.open({ pgliteDir: notes }),
				refusedNaming(notes, 'not a PostgreSQL store (todo.md)'),
			);
			assert.deepEqual(readdirSync(notes), ['todo.md']);

			const batonDir = join(root, 'baton');
			mkdirSync(join(batonDir, 'pgdata'), { recursive: true });
			mkdirSync(join(batonDir, 'run'));
			await assert.rejects(
				Backlog.open({ pgliteDir: batonDir }),
				refusedNaming(batonDir, `BATON_DATA_DIR to ${batonDir}`),
			);
			assert.deepEqual(readdirSync(batonDir).sort(), ['pgdata', 'run']);
			assert.deepEqual(readdirSync(root).sort(), ['baton', 'notes'], 'nothing set aside');
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});
});

describe('schema versions at open', () => {
	const newer = 9999;
	const tooNew = (e: unknown): boolean => {
		assert.ok(BatonError.is(e, 'store_too_new'), String(e));
		assert.ok(
			e.message.includes(`this backlog was written by a newer Baton (schema ${newer}); upgrade Baton`),
			e.message,
		);
		return true;
	};

	it('PGlite: refuses a store a newer Baton migrated, and changes nothing', async () => {
		const root = tempDir();
		const dir = join(root, 'pg');
		try {
			const b = await Backlog.open({ pgliteDir: dir });
			await b.create(ctx, { cards: [{ id: 'n1', title: 'from the future' }] });
			await b.close();
			const raw = await openPglite({ dataDir: dir });
			await raw.db.exec(`INSERT INTO baton_migrations (version, name) VALUES (${newer}, 'from_the_future')`);
			const migrationsBefore = await raw.db.query('SELECT version, name FROM baton_migrations ORDER BY version');
			await raw.db.close();
			await assert.rejects(Backlog.open({ pgliteDir: dir }), tooNew);
			const after = await openPglite({ dataDir: dir });
			try {
				assert.deepEqual(
					await after.db.query('SELECT version, name FROM baton_migrations ORDER BY version'),
					migrationsBefore,
				);
				assert.deepEqual(await after.db.query('SELECT id, title FROM cards'), [{ id: 'n1', title: 'from the future' }]);
			} finally {
				await after.db.close();
			}
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});

	it('PostgreSQL: refuses a schema a newer Baton migrated, and changes nothing', async () => {
		const schema = uniqueSchema();
		const options = { databaseUrl: testDatabaseUrl, schema };
		const client = new pg.Client({ connectionString: testDatabaseUrl });
		try {
			const b = await Backlog.open(options);
			await b.create(ctx, { cards: [{ id: 'n1', title: 'from the future' }] });
			await b.close();
			await client.connect();
			await client.query(`INSERT INTO "${schema}".baton_migrations (version, name) VALUES ($1, 'from_the_future')`, [
				newer,
			]);
			const read = async (): Promise<unknown> =>
				(
					await client.query(
						`SELECT (SELECT json_agg(version ORDER BY version) FROM "${schema}".baton_migrations) AS versions,
							(SELECT json_agg(id) FROM "${schema}".cards) AS cards,
							(SELECT count(*)::int FROM "${schema}".events) AS events`,
					)
				).rows;
			const before = await read();
			await assert.rejects(Backlog.open(options), tooNew);
			assert.deepEqual(await read(), before);
		} finally {
			await client.end().catch(() => undefined);
			await dropSchema(schema);
		}
	});
});
