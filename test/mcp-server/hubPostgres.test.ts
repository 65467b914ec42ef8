/**
 * Team mode: two hubs with separate data dirs on one PostgreSQL schema. Workers on both
 * drain one backlog without double claims, and an event written through one hub reaches the other
 * hub's clients through LISTEN/NOTIFY quickly (the latency is printed). The relay announces a hub's
 * commits after they commit, coalesced, never dropping the last one, and ignores its own NOTIFYs.
 * A client waits past its start timeout for a hub that owns its data dir but is still migrating.
 * @serial an event relayed from one hub to the other within 200 ms, and it cuts every client connection
 * to the test database: run alone (scripts/testSuite.mjs).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import pg from 'pg';
import { connectHub } from '../../core/client/connectHub';
import { probeOwner } from '../../core/client/ownerProbe';
import { BatonError } from '../../core/errors';
import type { BacklogEvent } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { hubPaths } from '../../core/paths';
import { migrationLockKey } from '../../core/store/migrate';
import { NotifyRelay } from '../../mcp-server/hub/notifyRelay';
import { runBaton } from '../helpers/mcp';
import {
	type SharedHubs,
	client,
	hubCommand,
	hubEnv,
	removeDataDir,
	sleep,
	startSharedHubs,
	tempDataDir,
	waitFor,
} from '../helpers/hub';

const databaseUrl = process.env.DATABASE_URL_TEST ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `bt_hub_${process.pid}_${Date.now().toString(36)}`;

describe('two hubs on one PostgreSQL', () => {
	let dirs: string[] = [];
	let shared: SharedHubs | undefined;
	const clients: RpcClient[] = [];

	before(async () => {
		shared = await startSharedHubs(2, schema);
		({ dirs } = shared);
	});

	after(async () => {
		for (const c of clients) {
			c.close();
		}
		await shared?.stop();
	});

	async function open(i: number, id?: string): Promise<RpcClient> {
		const c = await client(dirs[i]!, id === undefined ? {} : { agent: { id } });
		clients.push(c);
		return c;
	}

	it('relays an event from one hub to the other hub’s clients', async () => {
		const writer = await open(0);
		const reader = await open(1);
		assert.equal((await writer.request('hub/status', {})).mode, 'postgres');
		const arrivals = new Map<string, number>();
		reader.onEvent((e: BacklogEvent) => {
			if (e.type === 'created') {
				arrivals.set(e.cardId, performance.now());
			}
		});
		await reader.subscribe((await reader.request('events/list', { limit: 1 })).lastSeq);
		const samples: number[] = [];
		for (let i = 1; i <= 5; i++) {
			const id = `relay-${i}`;
			const t0 = performance.now();
			await writer.request('card/create', { cards: [{ id, title: 'crosses hubs' }] });
			await waitFor(() => arrivals.has(id), 5_000, 'the relayed event');
			samples.push(arrivals.get(id)! - t0);
		}
		const worst = Math.max(...samples);
		console.log(
			`hub A -> hub B event latency: ${samples.map(s => s.toFixed(1)).join(', ')} ms (worst ${worst.toFixed(1)})`,
		);
		assert.ok(worst < 200, `worst ${worst.toFixed(1)} ms`);
	});

	it('drains one backlog from both hubs without a double claim', async () => {
		const creator = await open(0);
		const total = 120;
		await creator.request('card/create', {
			cards: Array.from({ length: total }, (_, i) => ({ id: `pg-${i}`, title: `shared ${i}`, phase: 'drain' })),
		});
		const workers = await Promise.all([open(0, 'pg-w0'), open(0, 'pg-w1'), open(1, 'pg-w2'), open(1, 'pg-w3')]);
		const completedBy = new Map<string, string[]>();
		await Promise.all(
			workers.map(async (w, n) => {
				for (;;) {
					const { card, lease } = await w.request('card/claim', { phase: 'drain' });
					if (card === null || lease === null) {
						return;
					}
					await w.request('card/complete', { cardId: card.id, epoch: lease.epoch, result: `by ${n}` });
					completedBy.set(card.id, [...(completedBy.get(card.id) ?? []), `w${n}`]);
				}
			}),
		);
		const doubles = [...completedBy].filter(([, by]) => by.length > 1);
		const perWorker = workers.map((_, n) => [...completedBy.values()].filter(by => by[0] === `w${n}`).length);
		console.log(
			`drained ${completedBy.size}/${total} cards across 2 hubs; per worker ${perWorker.join('/')}; ${doubles.length} double claims`,
		);
		assert.equal(completedBy.size, total);
		assert.deepEqual(doubles, []);
		const stats = await creator.request('card/stats', {});
		assert.ok(stats.counts.done >= total);
	});
	it('recovers when PostgreSQL drops every connection: writes answer again, events cross hubs again', async () => {
		const writer = await open(0);
		const reader = await open(1);
		const arrivals = new Set<string>();
		reader.onEvent((e: BacklogEvent) => arrivals.add(e.cardId));
		await reader.subscribe((await reader.request('events/list', { limit: 1 })).lastSeq);
		const admin = new pg.Client({ connectionString: databaseUrl });
		await admin.connect();
		try {
			const cut = await admin.query<{ n: number }>(
				`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
				 WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
			);
			assert.ok((cut.rows[0]?.n ?? 0) >= 2, 'the hubs had connections to cut');
		} finally {
			await admin.end();
		}
		// A request that meets a dead connection is refused as unavailable, naming PostgreSQL; never internal.
		let refusals = 0;
		await waitFor(
			async () => {
				try {
					await writer.request('card/create', { cards: [{ id: 'after-cut', title: 'written after the cut' }] });
					return true;
				} catch (e) {
					assert.ok(BatonError.is(e, 'unavailable') || BatonError.is(e, 'conflict'), String(e));
					if (BatonError.is(e, 'unavailable')) {
						assert.match(e.message, /PostgreSQL at 127\.0\.0\.1:5432 .*\(retrying\)/);
						refusals++;
					}
					return BatonError.is(e, 'conflict'); // an earlier try did create it
				}
			},
			10_000,
			'a write after the connections were cut',
		);
		await waitFor(() => arrivals.has('after-cut'), 10_000, 'the event on the other hub');
		console.log(`writes refused as unavailable while reconnecting: ${refusals}`);
	});
});

describe('NotifyRelay', () => {
	it('announces commits after the fact, coalesced, with the last seq, and ignores its own', async () => {
		const listener = new pg.Client({ connectionString: databaseUrl });
		let selfKicks = 0;
		const relay = new NotifyRelay(databaseUrl, () => selfKicks++, { announceGapMs: 20, pollMs: 0 });
		try {
			await listener.connect();
			const payloads: string[] = [];
			listener.on('notification', n => payloads.push(n.payload ?? ''));
			await listener.query('LISTEN baton_events');
			await relay.start();
			for (let seq = 1; seq <= 50; seq++) {
				relay.announce(seq);
			}
			await waitFor(() => payloads.includes('50'), 2_000, 'the last announcement');
			assert.ok(payloads.length < 10, `${payloads.length} NOTIFYs for a burst of 50: ${payloads.join(',')}`);
			assert.equal(payloads[payloads.length - 1], '50');
			await new Promise(resolve => setTimeout(resolve, 100));
			assert.equal(selfKicks, 0);
			await listener.query("NOTIFY baton_events, 'other hub'");
			await waitFor(() => selfKicks === 1, 2_000, 'a kick for another hub');
		} finally {
			await relay.close();
			await listener.end();
		}
	});
});

describe('a hub still opening its store', () => {
	it('is waited for past the start timeout while it holds the data dir, and named when it takes too long', async () => {
		// Migrations on PostgreSQL take one advisory lock (core/store/migrate.ts). Holding it keeps a new
		// hub opening its store, exactly as a long migration on a big store does, while it owns the dir.
		const slowSchema = `${schema}_slow`;
		const locker = new pg.Client({ connectionString: databaseUrl });
		await locker.connect();
		const dataDir = tempDataDir();
		const spawnHub = {
			...hubCommand(dataDir),
			env: hubEnv({ DATABASE_URL: databaseUrl, BATON_PG_SCHEMA: slowSchema }),
		};
		let hub: RpcClient | undefined;
		let opening: ReturnType<typeof spawn> | undefined;
		try {
			await locker.query('SELECT pg_advisory_lock($1)', [migrationLockKey]);
			// The hub holds the data dir (its owner socket answers) before the client's wait is measured: on a
			// busy machine a hub the client spawns can take longer than the 500 ms start timeout to get that
			// far, and the client then rightly says it did not start. The client's own spawn loses the election.
			opening = spawn(spawnHub.command, spawnHub.args, { env: spawnHub.env, stdio: 'ignore', detached: true });
			const ownerSocket = hubPaths(dataDir).ownerSocket;
			await waitFor(
				async () => (await probeOwner(ownerSocket, 200)).state === 'alive',
				30_000,
				'the hub to hold the dir',
			);
			let started = Date.now();
			// Too long even for a hub that is opening: the error names the owner and where to look.
			await assert.rejects(
				connectHub({ dataDir, client: 'test', spawnHub, startTimeoutMs: 500, openTimeoutMs: 1_500 }),
				(e: unknown) =>
					BatonError.is(e, 'unavailable') &&
					/baton hub \(pid \d+\) holds .* but has not opened its store/.test(e.message),
			);
			assert.ok(Date.now() - started >= 1_500);
			// The same hub is still opening; let its migrations go on after 2 s.
			started = Date.now();
			const release = sleep(2_000).then(() => locker.query('SELECT pg_advisory_unlock($1)', [migrationLockKey]));
			hub = await connectHub({ dataDir, client: 'test', spawnHub, startTimeoutMs: 500 });
			await release;
			const waited = Date.now() - started;
			assert.ok(waited >= 2_000, `connected after ${waited} ms, before the store could open`);
			assert.equal((await hub.request('card/stats', {})).counts.ready, 0);
			console.log(`a hub still opening: waited ${waited} ms past a 500 ms start timeout, then connected`);
			await hub.request('hub/stop', {});
		} finally {
			hub?.close();
			if (opening?.exitCode === null && opening.signalCode === null) {
				const exited = once(opening, 'exit');
				opening.kill('SIGTERM');
				await exited;
			}
			await locker.end();
			removeDataDir(dataDir);
			const admin = new pg.Client({ connectionString: databaseUrl });
			await admin.connect();
			await admin.query(`DROP SCHEMA IF EXISTS "${slowSchema}" CASCADE`);
			await admin.end();
		}
	});
});

describe('PostgreSQL that cannot be reached at start', () => {
	it('is named at once by the client that started the hub, instead of a start timeout', async () => {
		const dataDir = tempDataDir();
		try {
			const started = Date.now();
			const r = await runBaton(['list'], { dataDir, env: { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/test' } });
			assert.equal(r.code, 1);
			assert.match(r.stderr, /PostgreSQL at 127\.0\.0\.1:1 refused the connection\. Start it \(or fix DATABASE_URL\)/);
			assert.ok(Date.now() - started < 10_000, `answered in ${Date.now() - started} ms`);
		} finally {
			removeDataDir(dataDir);
		}
	});
});
