/**
 * Backpressure and fairness on the real hub, in its own process, over real websockets:
 * a backlog of 1,000 cards with 25 KB bodies; one client floods 100 `card/list {limit: 1000}` (300
 * behave the same, in three times as long); one pipelines 10,000 and stops reading; ten subscribers
 * stop reading while 12 MB of events are written.
 * Throughout, the hub stays up, its peak RSS stays under 1 GB, another client's `card/stats` answers
 * within 1 s, and every card it was acknowledged is there afterwards. The non-readers are cut off
 * with a reason in the hub's log; subscribers that resume reading are resynced, then live again.
 * @serial another client's card/stats within 1 s while the hub is flooded: run alone (scripts/testSuite.mjs).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { RpcClient } from '../../core/protocol/rpc';
import {
	type HubProcess,
	RawClient,
	alive,
	client,
	removeDataDir,
	sleep,
	startHub,
	tempDataDir,
	waitFor,
} from '../helpers/hub';

// 25 KB on the wire; one repeated letter keeps the store's text index (and so the set-up) cheap.
const body = 'x'.repeat(25_000);
const gib = 1024 * 1024 * 1024;

/** A field of /proc/<pid>/status in bytes (VmRSS now, VmHWM the peak so far). */
function procBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
	const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
	return m ? Number(m[1]) * 1024 : 0;
}

/**
 * Another client, asking `card/stats` every 100 ms and creating a small card every fifth time while
 * the test runs: the slowest answer, and the cards the hub acknowledged.
 */
class Bystander {
	worstMs = 0;
	answers = 0;
	readonly acknowledged: string[] = [];
	private running = true;
	private readonly done: Promise<void>;

	constructor(
		private readonly rpc: RpcClient,
		private readonly tag: string,
	) {
		this.done = this.loop();
	}

	private async loop(): Promise<void> {
		for (let i = 0; this.running; i++) {
			const started = performance.now();
			await this.rpc.request('card/stats', {});
			this.worstMs = Math.max(this.worstMs, performance.now() - started);
			this.answers++;
			if (i % 5 === 0) {
				const id = `${this.tag}-${i}`;
				await this.rpc.request('card/create', { cards: [{ id, title: `bystander ${id}` }] });
				this.acknowledged.push(id);
			}
			await sleep(100);
		}
	}

	async stop(): Promise<void> {
		this.running = false;
		await this.done;
	}
}

async function rawClient(hub: HubProcess): Promise<RawClient> {
	const c = await RawClient.unix(hub.paths);
	await c.hello({ token: hub.token });
	return c;
}

describe('backpressure and fairness', () => {
	let dataDir: string;
	let hub: HubProcess;
	let rpc: RpcClient;

	before(async () => {
		dataDir = tempDataDir();
		hub = await startHub({ dataDir });
		rpc = await client(dataDir);
		for (let b = 0; b < 4; b++) {
			await rpc.request('card/create', {
				cards: Array.from({ length: 250 }, (_, i) => ({ id: `big-${b}-${i}`, title: `big ${b} ${i}`, body })),
			});
		}
	});

	after(async () => {
		rpc.close();
		await hub.stop();
		removeDataDir(dataDir);
	});

	it('answers a flood of 100 card/list {limit: 1000} in full, in pages of about 1 MB, while another client is served within 1 s', async () => {
		const bystander = new Bystander(rpc, 'flood');
		const flood = await rawClient(hub);
		const started = performance.now();
		for (let i = 0; i < 100; i++) {
			flood.send({ id: 1000 + i, method: 'card/list', params: { limit: 1000 } });
		}
		const pages: { cards: unknown[]; nextCursor?: string }[] = [];
		for (let i = 0; i < 100; i++) {
			const frame = (await flood.next(f => f.id === 1000 + i, 30_000)) as { result?: (typeof pages)[number] };
			assert.ok(frame.result, `request ${i} answered with a result: ${JSON.stringify(frame).slice(0, 200)}`);
			pages.push(frame.result);
		}
		const floodMs = performance.now() - started;
		await bystander.stop();
		flood.close();
		const first = pages[0];
		assert.ok(first?.nextCursor !== undefined, 'the page was cut short with a cursor');
		assert.ok(first.cards.length > 10 && first.cards.length < 100, `${first.cards.length} cards of 25 KB`);
		const pageBytes = JSON.stringify(first).length;
		assert.ok(pageBytes < 1.2 * 1024 * 1024, `a page is ${pageBytes} bytes`);
		assert.ok(pages.every(p => p.cards.length === first.cards.length));
		// The cursor leads through the whole backlog.
		let cursor: string | undefined = first.nextCursor;
		let seen = first.cards.length;
		while (cursor !== undefined) {
			const next: { cards: unknown[]; nextCursor?: string | undefined } = await rpc.request('card/list', {
				limit: 1000,
				cursor,
			});
			seen += next.cards.length;
			cursor = next.nextCursor;
		}
		assert.ok(seen >= 1000, `${seen} cards through the cursor`);
		const peak = procBytes(hub.pid, 'VmHWM');
		console.log(
			`flood: 100 pages in ${Math.round(floodMs)} ms, hub peak RSS ${(peak / 2 ** 20).toFixed(0)} MB, ` +
				`slowest card/stats ${Math.round(bystander.worstMs)} ms of ${bystander.answers}`,
		);
		assert.ok(alive(hub.pid), 'the hub is up');
		assert.ok(peak < gib, `hub peak RSS ${peak}`);
		assert.ok(bystander.worstMs < 1_000, `card/stats took ${Math.round(bystander.worstMs)} ms`);
		for (const id of bystander.acknowledged) {
			assert.equal((await rpc.request('card/get', { cardId: id })).card.id, id);
		}
	});

	it('cuts off clients that stop reading, with a reason in the log, and resyncs subscribers that fell behind', async () => {
		// The bystander has a connection of its own: the writes below are another client's.
		const other = await client(dataDir);
		const bystander = new Bystander(other, 'lag');
		const { lastSeq } = await rpc.request('events/list', { limit: 1 });
		// Ten subscribers stop reading; five of them will read again, five never.
		const subscribers: RawClient[] = [];
		for (let i = 0; i < 10; i++) {
			const s = await rawClient(hub);
			const answer = (await s.request('events/subscribe', { afterSeq: lastSeq })) as { result?: unknown };
			assert.ok(answer.result);
			s.ws.pause();
			subscribers.push(s);
		}
		// One client pipelines 10,000 requests and never reads an answer.
		const pipeliner = await rawClient(hub);
		pipeliner.ws.pause();
		for (let i = 0; i < 10_000; i++) {
			pipeliner.send({ id: i + 1, method: 'card/list', params: { limit: 1000 } });
		}
		// 200 events of about 61 KB each (a created card with a 60 KB body; the event carries it): 12 MB
		// for every subscriber, which none of them reads. Writes of 20 cards, so the bystander is
		// measured against the non-readers, not against one big transaction.
		const wide = 'y'.repeat(60_000);
		for (let b = 0; b < 10; b++) {
			await rpc.request('card/create', {
				cards: Array.from({ length: 20 }, (_, i) => ({ id: `ev-${b}-${i}`, title: `event ${b} ${i}`, body: wide })),
			});
		}
		const writtenThrough = (await rpc.request('events/list', { limit: 1 })).lastSeq;
		const readers = subscribers.slice(0, 5);
		for (const r of readers) {
			r.ws.resume();
		}
		// A reader drains what was queued, then is told to reload, then gets live events again.
		for (const r of readers) {
			const resync = (await r.next(f => f.notice === 'resync', 15_000)) as { seq: number };
			assert.ok(resync.seq >= writtenThrough, `resynced at ${resync.seq}, written through ${writtenThrough}`);
			const events = r.frames.filter((f): f is { seq: number } => typeof f === 'object' && f !== null && 'event' in f);
			assert.ok(events.length < 200, `${events.length} events queued before the resync, not all 200`);
		}
		await rpc.request('card/create', { cards: [{ id: 'after-resync', title: 'after the resync' }] });
		for (const r of readers) {
			await r.next(f => f.event === 'created' && (f.data as { cardId?: string }).cardId === 'after-resync', 10_000);
		}
		// The ones that never read, and the pipeliner, are cut off (flowLimits.stallMs = 15 s), each logged.
		await waitFor(
			() => (hub.stderr().match(/disconnected connection \d+ .*does not read/g) ?? []).length >= 6,
			30_000,
			'six cut-offs in the log',
		);
		const log = hub.stderr();
		console.log(
			log
				.split('\n')
				.filter(l => l.includes('hub/flow') || l.includes('resynced'))
				.slice(0, 3)
				.join('\n'),
		);
		await bystander.stop();
		for (const s of [...subscribers, pipeliner]) {
			s.ws.resume();
		}
		for (const s of [...subscribers.slice(5), pipeliner]) {
			assert.equal((await s.waitClosed(5_000)).code, 1006, 'cut off');
		}
		for (const r of readers) {
			assert.equal(r.closed, undefined, 'a subscriber that reads again stays connected');
			r.close();
		}
		const peak = procBytes(hub.pid, 'VmHWM');
		console.log(
			`non-readers: hub peak RSS ${(peak / 2 ** 20).toFixed(0)} MB, now ${(procBytes(hub.pid, 'VmRSS') / 2 ** 20).toFixed(0)} MB, ` +
				`slowest card/stats ${Math.round(bystander.worstMs)} ms of ${bystander.answers}`,
		);
		assert.ok(alive(hub.pid), 'the hub is up');
		assert.ok(peak < gib, `hub peak RSS ${peak}`);
		assert.ok(bystander.worstMs < 1_000, `card/stats took ${Math.round(bystander.worstMs)} ms`);
		for (const id of bystander.acknowledged) {
			assert.equal((await rpc.request('card/get', { cardId: id })).card.id, id);
		}
		assert.equal((await rpc.request('card/get', { cardId: 'ev-9-19' })).card.body, wide, 'every event card is stored');
		other.close();
	});
});
