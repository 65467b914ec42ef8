/**
 * Team mode (DESIGN §1): two hubs with separate data dirs on one PostgreSQL schema. Workers on both
 * drain one backlog without double claims, and an event written through one hub reaches the other
 * hub's clients through LISTEN/NOTIFY quickly (the latency is printed). The relay announces a hub's
 * commits after they commit, coalesced, never dropping the last one, and ignores its own NOTIFYs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { BacklogEvent } from '../../core/protocol';
import type { RpcClient } from '../../core/rpc';
import { NotifyRelay } from '../../mcp-server/hub/notifyRelay';
import { type HubProcess, client, hubEnv, removeDataDir, startHub, tempDataDir, waitFor } from '../helpers/hub';

const databaseUrl = process.env.DATABASE_URL_TEST ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `bt_hub_${process.pid}_${Date.now().toString(36)}`;

describe('two hubs on one PostgreSQL', () => {
	const dirs: string[] = [];
	const hubs: HubProcess[] = [];
	const clients: RpcClient[] = [];

	before(async () => {
		for (let i = 0; i < 2; i++) {
			const dataDir = tempDataDir();
			dirs.push(dataDir);
			hubs.push(await startHub({ dataDir, env: hubEnv({ DATABASE_URL: databaseUrl, BATON_PG_SCHEMA: schema }) }));
		}
	});

	after(async () => {
		for (const c of clients) {
			c.close();
		}
		for (const h of hubs) {
			await h.stop();
		}
		for (const d of dirs) {
			removeDataDir(d);
		}
		const admin = new pg.Client({ connectionString: databaseUrl });
		await admin.connect();
		await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
		await admin.end();
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
