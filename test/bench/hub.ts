/**
 * The hub as a process (`node dist/baton.js hub`): start-up on an empty and on a 100,000-card data
 * dir, its peak RSS while serving that backlog (a full snapshot page-through, claims, a 20-client
 * fan-out), the request round trip through the websocket, and how long an event takes to reach 20
 * subscribed clients. The hub's memory is read from /proc/<pid>/status (VmHWM), so nothing of this
 * process is counted. Standalone: `npm run build && node --import tsx test/bench/hub.ts [--quick]`.
 */
import { mkdtempSync, rmSync } from 'node:fs';

import type { RpcClient } from '../../core/protocol/rpc';
import { cardBatches } from './dataset';
import { connect, cpuMsOf, type HubHandle, rssOf, startHub } from './hubProcess';
import { median, percentile, Reporter, row } from './report';

const quick = process.argv.includes('--quick');
const size = quick ? 10_000 : 100_000;
const subscribers = 20;
const fanoutEvents = quick ? 50 : 300;
const roundTrips = quick ? 200 : 1_000;

/** Pages through every card as a board snapshot would, 1,000 at a time. */
async function readEverything(client: RpcClient): Promise<number> {
	let total = 0;
	let cursor: string | undefined;
	do {
		const page = await client.request('card/list', { limit: 1000, ...(cursor ? { cursor } : {}) });
		total += page.cards.length;
		cursor = page.nextCursor;
	} while (cursor !== undefined);
	return total;
}

/** 20 subscribed clients; one writer creates cards one at a time; per event, when each copy arrived. */
async function fanout(dataDir: string, writer: RpcClient): Promise<{ each: number[]; last: number[] }> {
	const clients: RpcClient[] = [];
	const arrivals = new Map<string, number[]>();
	let waiting: { id: string; resolve: () => void } | undefined;
	try {
		for (let i = 0; i < subscribers; i++) {
			const c = await connect(dataDir);
			c.onEvent(event => {
				if (event.type !== 'created') {
					return;
				}
				const at = performance.now();
				const list = arrivals.get(event.cardId) ?? [];
				list.push(at);
				arrivals.set(event.cardId, list);
				if (waiting?.id === event.cardId && list.length === subscribers) {
					waiting.resolve();
				}
			});
			// From the current seq: replaying the whole log of a 100k backlog is not what is measured here.
			await c.subscribe(c.hello?.seq ?? 0);
			clients.push(c);
		}
		const each: number[] = [];
		const last: number[] = [];
		for (let i = 0; i < fanoutEvents; i++) {
			const id = `fan${i}`;
			const all = new Promise<void>((resolve, reject) => {
				waiting = { id, resolve };
				setTimeout(
					() => reject(new Error(`event for ${id} did not reach all ${subscribers} clients in 10 s`)),
					10_000,
				).unref();
			});
			const t0 = performance.now();
			await writer.request('card/create', { cards: [{ id, title: `Fan-out ${i}` }] });
			await all;
			const times = (arrivals.get(id) ?? []).map(t => t - t0);
			each.push(...times);
			last.push(Math.max(...times));
		}
		return { each, last };
	} finally {
		for (const c of clients) {
			c.close();
		}
	}
}

async function main(): Promise<void> {
	const report = new Reporter('hub');
	const temp = mkdtempSync('/tmp/bt-');
	let hub: HubHandle | undefined;
	try {
		console.log(`hub: dist/baton.js hub, ${size} cards, ${subscribers} subscribers`);
		hub = await startHub(temp);
		report.add(
			row(
				'hub first start on an empty data dir (spawn → hello answered)',
				hub.startMs,
				'ms',
				undefined,
				'includes node start-up',
			),
		);
		report.add(row('of which the hub opening its store (its own log)', hub.storeOpenMs ?? Number.NaN, 'ms'));
		report.add(
			row(
				'CPU used by the hub for that first start',
				hub.startCpuMs,
				'ms',
				undefined,
				'user+system of the hub process',
			),
		);
		let client = await connect(temp);
		const t0 = performance.now();
		for (const cards of cardBatches(size)) {
			await client.request('card/create', { cards }, { timeoutMs: 120_000 });
		}
		report.add(
			row(
				`create through the hub, batches of 1,000, ${size} cards`,
				size / ((performance.now() - t0) / 1000),
				'cards/s',
			),
		);
		report.add(row(`hub peak RSS while building ${size} cards`, rssOf(hub.pid).peakMb, 'MB'));
		client.close();
		await hub.stop();

		hub = await startHub(temp);
		report.add(row(`hub start on a ${size}-card data dir (spawn → hello answered)`, hub.startMs, 'ms'));
		report.add(
			row(`of which the hub opening its store (its own log), ${size} cards`, hub.storeOpenMs ?? Number.NaN, 'ms'),
		);
		report.add(
			row(
				`CPU used by the hub for that start, ${size} cards`,
				hub.startCpuMs,
				'ms',
				undefined,
				'user+system of the hub process',
			),
		);
		report.add(row(`hub RSS after start, ${size} cards`, rssOf(hub.pid).currentMb, 'MB'));
		client = await connect(temp, 'test', { id: 'bench-worker' });
		const t1 = performance.now();
		const total = await readEverything(client);
		report.add(row(`full snapshot page-through (${total} cards, 1,000 per page)`, performance.now() - t1, 'ms'));
		const stats = await client.request('card/stats', {});
		if (stats.total !== total) {
			throw new Error(`stats says ${stats.total} cards, the page-through found ${total}`);
		}

		const pairMs: number[] = [];
		const pageMs: number[] = [];
		const pairCpu = cpuMsOf(hub.pid);
		for (let i = 0; i < roundTrips; i++) {
			const t = performance.now();
			const { card, lease } = await client.request('card/claim', {});
			if (!card || !lease) {
				throw new Error(`nothing to claim after ${i} claims`);
			}
			await client.request('card/complete', { cardId: card.id, epoch: lease.epoch });
			pairMs.push(performance.now() - t);
		}
		const hubCpuPerPair = (cpuMsOf(hub.pid) - pairCpu) / roundTrips;
		for (let i = 0; i < roundTrips; i++) {
			const p = performance.now();
			await client.request('card/list', { readyOnly: true, limit: 50 });
			pageMs.push(performance.now() - p);
		}
		report.add(
			row(
				'hub CPU per claim+complete',
				hubCpuPerPair,
				'ms',
				undefined,
				'user+system of the hub process; steadier than wall time on a busy machine',
			),
		);
		report.add(
			row(
				`claim+complete through the hub (ws + hub.sock) p50, ${size} cards`,
				median(pairMs),
				'ms',
				undefined,
				`${roundTrips} pairs; p99 ${percentile(pairMs, 99).toFixed(2)} ms`,
			),
		);
		report.add(
			row(
				`ready page of 50 through the hub p50, ${size} cards`,
				median(pageMs),
				'ms',
				undefined,
				`p99 ${percentile(pageMs, 99).toFixed(2)} ms`,
			),
		);

		const { each, last } = await fanout(temp, client);
		report.add(
			row(
				`event fan-out to ${subscribers} clients p99 (create sent → event received, each copy)`,
				percentile(each, 99),
				'ms',
				{ max: 20 },
				`${fanoutEvents} events × ${subscribers}`,
			),
		);
		report.add(row(`event fan-out p50 (each copy)`, median(each), 'ms'));
		report.add(row(`event fan-out p99 (until the last of ${subscribers} has it)`, percentile(last, 99), 'ms'));
		report.note(
			`Fan-out: the ${subscribers} subscribers and the writer share one bench process (one event loop), so client-side parsing is serial and counted; the hub is a separate process.`,
		);

		const rss = rssOf(hub.pid);
		report.add(
			row(
				`hub peak RSS serving ${size} cards`,
				rss.peakMb,
				'MB',
				{ max: 500 },
				'restarted hub: snapshot, claims, fan-out',
			),
		);
		client.close();
	} finally {
		await hub?.stop();
		rmSync(temp, { recursive: true, force: true });
	}
	report.finish();
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
