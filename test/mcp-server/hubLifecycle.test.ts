/**
 * Hub lifecycle through real processes: graceful SIGTERM/SIGINT and idle exits close the store and
 * remove hub.json (RELIABILITY 7), hub/status, and rolling backups that `baton restore` brings into a fresh data dir
 * with identical cards (RELIABILITY 8), keeping only the newest 10.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { type BackupFile, parseBackup } from '../../mcp-server/hub/backupFormat';
import type { Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { client, removeDataDir, startHub, tempDataDir, waitFor } from '../helpers/hub';
import { runBaton } from '../helpers/mcp';

function backupCards(path: string): string[] {
	const file: BackupFile = parseBackup(readFileSync(path));
	assert.equal(file.kind, 'backup');
	return file.rows.cards.map(r => (JSON.parse(r) as { id: string }).id);
}

const dirs: string[] = [];
function freshDir(): string {
	const d = tempDataDir();
	dirs.push(d);
	return d;
}

after(() => {
	for (const d of dirs) {
		removeDataDir(d);
	}
});

async function exportAll(c: RpcClient): Promise<Card[]> {
	const cards: Card[] = [];
	let cursor: string | undefined;
	do {
		const page = await c.request('data/export', cursor === undefined ? {} : { cursor });
		cards.push(...page.cards);
		cursor = page.nextCursor;
	} while (cursor !== undefined);
	return cards.sort((a, b) => a.id.localeCompare(b.id));
}

function openMs(stderr: string): number {
	const m = /opened the \w+ store in (\d+) ms/.exec(stderr);
	assert.ok(m, stderr);
	return Number(m[1]);
}

describe('hub lifecycle', () => {
	it('stops cleanly on SIGTERM and SIGINT: exit 0, store closed, hub.json and hub.sock removed (7)', async () => {
		const dataDir = freshDir();
		for (const signal of ['SIGTERM', 'SIGINT'] as const) {
			const hub = await startHub({ dataDir });
			const c = await client(dataDir, { reconnect: false });
			await c.request('card/create', { cards: [{ title: `before ${signal}` }] });
			const exit = await hub.stop(signal);
			assert.deepEqual(exit, { code: 0, signal: null }, hub.stderr());
			assert.match(hub.stderr(), /stopping \(SIG/);
			assert.ok(!existsSync(hub.paths.hubJson), 'hub.json removed');
			assert.ok(!existsSync(hub.paths.socket), 'hub.sock removed');
			assert.ok(!existsSync(hub.paths.ownerSocket), 'owner.sock removed');
			await waitFor(() => c.connectionState === 'offline', 5_000, 'client sees the hub go');
			c.close();
		}
		const hub = await startHub({ dataDir });
		const c = await client(dataDir);
		assert.equal((await c.request('card/stats', {})).total, 2);
		c.close();
		const afterClean = openMs(hub.stderr());
		await hub.stop('SIGKILL');
		const again = await startHub({ dataDir });
		const afterKill = openMs(again.stderr());
		console.log(`store open after a clean stop: ${afterClean} ms; after kill -9: ${afterKill} ms`);
		await again.stop();
	});

	it('exits by itself when it has had no clients for the idle time, not while one is connected', async () => {
		const dataDir = freshDir();
		const hub = await startHub({ dataDir, idleSeconds: 4 });
		const c = await client(dataDir, { reconnect: false });
		await new Promise(resolve => setTimeout(resolve, 5_000));
		assert.equal((await c.request('hub/status', {})).pid, hub.pid, 'still serving with a client');
		c.close();
		const t0 = Date.now();
		const exit = await hub.exited;
		assert.equal(exit.code, 0);
		assert.match(hub.stderr(), /no clients for 4 s/);
		assert.ok(!existsSync(hub.paths.hubJson));
		const ms = Date.now() - t0;
		console.log(`idle exit ${ms} ms after the last client left (idle 4 s)`);
		assert.ok(ms >= 3_500, `left after ${ms} ms`);
	});

	it('writes periodic backups when something changed (--backup-minutes)', async () => {
		const dataDir = freshDir();
		const hub = await startHub({ dataDir, args: ['--backup-minutes', '0.02'] });
		const c = await client(dataDir);
		await c.request('card/create', { cards: [{ id: 'P1', title: 'backed up by the timer' }] });
		const newest = (): string[] => {
			// Only finished backups: one being written is a .tmp file until its rename.
			const files = existsSync(hub.paths.backups)
				? readdirSync(hub.paths.backups)
						.filter(f => f.endsWith('.jsonl.gz'))
						.sort()
				: [];
			const last = files.at(-1);
			return last === undefined ? [] : backupCards(`${hub.paths.backups}/${last}`);
		};
		// The first tick may predate the create (a first backup is taken even of an empty backlog).
		await waitFor(() => newest().includes('P1'), 10_000, 'a periodic backup with the new card');
		assert.deepEqual(newest(), ['P1']);
		c.close();
		await hub.stop();
	});

	it('reports its status', async () => {
		const dataDir = freshDir();
		const hub = await startHub({ dataDir });
		const c = await client(dataDir);
		const status = await c.request('hub/status', {});
		assert.equal(status.pid, hub.pid);
		assert.equal(status.port, hub.port);
		assert.equal(status.mode, 'pglite');
		assert.equal(status.dataDir, hub.paths.dataDir);
		assert.equal(status.clients, 1);
		c.close();
		await hub.stop();
	});

	it('writes a backup that restores into a fresh data dir with identical cards, keeping the newest 10 (8)', async () => {
		const dataDir = freshDir();
		const hub = await startHub({ dataDir });
		const c = await client(dataDir);
		await c.request('card/create', {
			cards: Array.from({ length: 40 }, (_, i) => ({
				id: `B${i}`,
				title: `card ${i}`,
				body: `body ${i} with **markdown**`,
				priority: i % 7,
				phase: i % 2 === 0 ? 'even' : 'odd',
				acceptance: [`criterion ${i}`],
				...(i > 0 && i % 5 === 0 ? { dependsOn: [`B${i - 1}`] } : {}),
			})),
		});
		const claim = await c.request('card/claim', { cardId: 'B3' });
		assert.ok(claim.lease);
		await c.request('card/complete', { cardId: 'B3', epoch: claim.lease.epoch, result: 'done in test' });
		await c.request('card/block', { cardId: 'B7', reason: 'waiting for a human' });
		const original = await exportAll(c);

		const backup = await c.request('hub/backup', {});
		assert.equal(backup.cards, 40);
		assert.ok(backup.path.startsWith(hub.paths.backups));
		assert.equal(backupCards(backup.path).length, 40);

		const restored = freshDir();
		const done = await runBaton(['restore', backup.path], { dataDir: restored });
		assert.equal(done.code, 0, done.stderr);
		const second = await startHub({ dataDir: restored });
		const r = await client(restored);
		assert.deepEqual(await exportAll(r), original, 'identical cards after restore');
		r.close();
		await second.stop();

		for (let i = 0; i < 11; i++) {
			await c.request('hub/backup', {});
		}
		const files = readdirSync(hub.paths.backups).filter(f => f.endsWith('.jsonl.gz'));
		assert.equal(files.length, 10, 'only the newest 10 backups are kept');
		c.close();
		await hub.stop();
	});
});
