/**
 * The bounded log seen from the hub's clients, on a real hub process over PostgreSQL,
 * whose log the test compacts through a second Backlog on the same schema (as another hub would): a
 * live subscriber keeps every event in order, gap-free, while compaction deletes old progress; a client
 * that resumes after a seq older than the horizon gets an explicit `resync` answer (and RpcClient's
 * onResync), never a replay with holes; resuming at the horizon replays everything after it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Backlog } from '../../core/backlog';
import type { BacklogEvent } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { type SharedHubs, client, ensureBuilt, startSharedHubs, waitFor } from '../helpers/hub';

describe('resuming the event feed behind the compaction horizon', () => {
	const schema = uniqueSchema();
	let shared: SharedHubs;
	let dataDir: string;
	let other: Backlog;
	const clients: RpcClient[] = [];

	before(async () => {
		ensureBuilt();
		shared = await startSharedHubs(1, schema);
		dataDir = shared.dirs[0] ?? '';
		other = await Backlog.open({ databaseUrl: testDatabaseUrl, schema });
	});
	after(async () => {
		for (const c of clients) {
			c.close();
		}
		await other.close();
		await shared.stop();
	});

	async function connect(id: string): Promise<RpcClient> {
		const c = await client(dataDir, { agent: { id } });
		clients.push(c);
		return c;
	}

	it('keeps live subscribers gap-free and tells a client behind the horizon to resync', async () => {
		const live = await connect('live');
		const seen: BacklogEvent[] = [];
		live.onEvent(e => seen.push(e));
		const start = await live.subscribe(live.hello?.seq ?? 0);

		const agent = await connect('worker');
		await agent.request('card/create', { cards: [{ id: 'H1', title: 'long job' }] });
		const leftAt = await agent.request('events/list', { limit: 1 }).then(r => r.lastSeq);
		const { lease } = await agent.request('card/claim', { cardId: 'H1' });
		assert.ok(lease);
		for (let i = 1; i <= 80; i++) {
			await agent.request('card/heartbeat', { cardId: 'H1', epoch: lease.epoch, note: `step ${i}` });
		}
		await agent.request('card/complete', { cardId: 'H1', epoch: lease.epoch });
		const report = await other.compactLog({ settleMs: 0 });
		assert.equal(report.deleted, 30, '80 progress events, the newest 50 kept');
		assert.ok(report.horizon > leftAt);

		const last = (await agent.request('events/list', { limit: 1 })).lastSeq;
		await waitFor(() => seen.at(-1)?.seq === last, 10_000, 'the live subscriber got every event');
		const seqs = seen.map(e => e.seq);
		assert.deepEqual(
			seqs,
			Array.from({ length: last - start }, (_, i) => start + 1 + i),
			'every seq once, in order, none missing',
		);
		assert.equal(seen.filter(e => e.type === 'heartbeat').length, 80);

		// A client that left before the compacted events and comes back: no replay with holes.
		const back = await connect('back');
		const answer = await back.request('events/subscribe', { afterSeq: leftAt });
		assert.equal(answer.resync, true);
		assert.ok(answer.seq >= last);
		const resyncs: number[] = [];
		const again = await connect('again');
		again.onResync(seq => resyncs.push(seq));
		await again.subscribe(leftAt);
		assert.equal(resyncs.length, 1, 'RpcClient tells its listeners to reload');

		// Resuming at the horizon misses nothing: everything after it is replayed, no resync.
		const atHorizon = await connect('at-horizon');
		const replayed: BacklogEvent[] = [];
		atHorizon.onEvent(e => replayed.push(e));
		const ok = await atHorizon.request('events/subscribe', { afterSeq: report.horizon });
		assert.equal(ok.resync, undefined);
		await waitFor(() => replayed.at(-1)?.seq === last, 10_000, 'the replay reached the end');
		assert.equal(replayed[0]?.seq, report.horizon + 1);
		assert.equal(replayed.filter(e => e.type === 'heartbeat').length, 50);

		const listed = await agent.request('events/list', { afterSeq: leftAt, limit: 500 });
		assert.equal(listed.horizon, report.horizon, 'events/list says where the complete log begins');
		assert.equal(listed.events.filter(e => e.type === 'heartbeat').length, 50);
		assert.deepEqual(
			listed.events.filter(e => e.type !== 'heartbeat').map(e => e.type),
			['claimed', 'completed'],
			'every state change is still there',
		);
	});
});
