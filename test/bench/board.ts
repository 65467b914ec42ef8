/**
 * The board with 5,000 cards in headless Chromium against a real hub: first render (cards in memory →
 * columns in the DOM, and → the first painted frame), the whole load (connect, page through the live
 * cards, Done's first page, the stats, render), a live update (event frame arrives on the page's
 * socket → DOM patched), and frame times while scrolling a 2,000-card column; then the board at fleet
 * scale (boardFleet.ts: 100,000 cards, 50,000 done, loaded by column). Standalone:
 * `npm run build && node --import tsx test/bench/board.ts [--quick]`; the last line is BENCH_JSON.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

import type { CreateCardInput } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { benchFleet } from './boardFleet';
import { cardBatches } from './dataset';
import { connect, startHub } from './hubProcess';
import { Reporter, median, percentile, row } from './report';
import { chromiumArgs } from '../helpers/chromium';

const quick = process.argv.includes('--quick');
const size = quick ? 1_000 : 5_000;
const loads = quick ? 2 : 5;
const updates = quick ? 20 : 60;
const scrollFrames = quick ? 60 : 240;

/**
 * Timestamps every hub frame as it reaches the page, before the board's own handler runs (this
 * listener is added in the constructor, so it fires first): the start of "after its event arrives".
 */
const arrivalProbe = `
	// tsx compiles this file with keepNames, which wraps named functions passed to page.evaluate in __name().
	window.__name = f => f;
	window.__arrivals = new Map();
	window.__applied = new Map();
	const NativeWebSocket = window.WebSocket;
	window.WebSocket = class extends NativeWebSocket {
		constructor(...args) {
			super(...args);
			this.addEventListener('message', e => {
				const at = performance.now();
				const m = /^\\{"event":"[a-z]+","seq":(\\d+)/.exec(e.data);
				if (m) window.__arrivals.set(Number(m[1]), at);
			});
		}
	};
	document.addEventListener('baton:applied', e => {
		for (const seq of e.detail.seqs) window.__applied.set(seq, e.detail.appliedAt);
	});
`;

async function populate(admin: RpcClient, dataDir: string): Promise<{ readyIds: string[]; claimed: string[] }> {
	const all: CreateCardInput[] = [];
	for (const batch of cardBatches(size)) {
		await admin.request('card/create', { cards: batch });
		all.push(...batch);
	}
	// Only cards without dependencies can be claimed right away.
	const free = all.filter(c => c.dependsOn === undefined).map(c => c.id!);
	const agents: RpcClient[] = [];
	for (let i = 0; i < 4; i++) {
		agents.push(await connect(dataDir, 'test', { id: `agent-${i}`, name: `agent-${i}`, client: 'bench' }));
	}
	const done = Math.round(size * 0.2);
	const claimed = Math.round(size * 0.05);
	const blocked = Math.round(size * 0.02);
	const toComplete = free.slice(0, done);
	const toClaim = free.slice(done, done + claimed);
	const toBlock = free.slice(done + claimed, done + claimed + blocked);
	// The four agents work in parallel, as real ones do; each one's own requests stay in order.
	await Promise.all(
		agents.map(async (a, n) => {
			for (const id of toComplete.filter((_, i) => i % agents.length === n)) {
				const { lease } = await a.request('card/claim', { cardId: id });
				await a.request('card/complete', { cardId: id, epoch: lease?.epoch, result: 'done' });
			}
			for (const [i, id] of toClaim.entries()) {
				if (i % agents.length === n) {
					const { lease } = await a.request('card/claim', { cardId: id, ttlSeconds: 3600 });
					await a.request('card/heartbeat', {
						cardId: id,
						epoch: lease?.epoch,
						progress: (i * 7) % 100,
						note: 'working',
					});
				}
			}
		}),
	);
	for (const id of toBlock) {
		await admin.request('card/block', { cardId: id, reason: 'waiting on a decision' });
	}
	const claimedIds = toClaim;
	const k = done + claimed + blocked;
	for (const a of agents) {
		a.close();
	}
	return { readyIds: free.slice(k), claimed: claimedIds };
}

async function main(): Promise<void> {
	const report = new Reporter('board');
	const dataDir = join(mkdtempSync('/tmp/bt-'), 'd');
	// Launch the browser first: if Chromium is missing, no hub is left running behind the error.
	const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: chromiumArgs });
	const hub = await startHub(dataDir);
	const admin = await connect(dataDir, 'test', { id: 'bench-planner', name: 'bench-planner', client: 'bench' });
	// The 5,000-card hub is stopped before the fleet part starts its own (two hubs on 2 cores would measure each other).
	let stopped = false;
	try {
		const t0 = performance.now();
		const { readyIds, claimed } = await populate(admin, dataDir);
		console.log(`board: ${size} cards created and moved in ${Math.round(performance.now() - t0)} ms`);

		const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
		const page = await context.newPage();
		await page.addInitScript(arrivalProbe);
		const { url } = await admin.request('hub/boardTicket', {});
		await page.goto(url);

		const firstRender: number[] = [];
		const firstFrame: number[] = [];
		const wholeLoad: number[] = [];
		const fetchAll: number[] = [];
		for (let i = 0; i < loads; i++) {
			if (i > 0) {
				await page.reload();
			}
			await page.waitForSelector('body[data-ready="true"]', { timeout: 60_000 });
			await page.waitForFunction(() => performance.getEntriesByName('baton:first-frame').length > 0);
			const m = await page.evaluate(() => {
				const at = (name: string): number => performance.getEntriesByName(name)[0]?.startTime ?? Number.NaN;
				return {
					subscribed: at('baton:subscribed'),
					data: at('baton:data-loaded'),
					render: at('baton:first-render'),
					frame: at('baton:first-frame'),
					cards: document.querySelectorAll('.board .card').length,
				};
			});
			if (i === 0) {
				console.log(`board: ${m.cards} card elements in the DOM for a backlog of ${size}`);
			}
			firstRender.push(m.render - m.data);
			firstFrame.push(m.frame - m.data);
			wholeLoad.push(m.frame);
			fetchAll.push(m.data - m.subscribed);
		}
		report.add(
			row(
				`first render (${size.toLocaleString('en')}-card backlog in memory → columns in the DOM)`,
				median(firstRender),
				'ms',
				{ max: 300 },
				`median of ${loads} loads, max ${Math.round(Math.max(...firstRender))} ms`,
			),
		);
		report.add(
			row(
				'first render to the first painted frame',
				median(firstFrame),
				'ms',
				{ max: 300 },
				`median of ${loads} loads`,
			),
		);
		report.add(
			row(
				'whole load: navigation → first frame (connect, the live cards in pages of ≤ 1,000, Done’s first 200, card/stats, render)',
				median(wholeLoad),
				'ms',
				undefined,
				`median of ${loads} loads`,
			),
		);

		report.add(
			row(
				`  of which: fetching and validating the ${(size - Math.round(size * 0.2)).toLocaleString('en')} live cards, Done’s first 200 and the stats`,
				median(fetchAll),
				'ms',
				undefined,
				`median of ${loads} loads`,
			),
		);

		// Live updates: progress heartbeats on visible In-progress cards and priority edits in Ready.
		const worker = await connect(dataDir, 'test', { id: 'agent-0', name: 'agent-0', client: 'bench' });
		const latencies: number[] = [];
		for (let i = 0; i < updates; i++) {
			const before = await page.evaluate(
				() => (window as unknown as { __applied: Map<number, number> }).__applied.size,
			);
			if (i % 2 === 0) {
				const id = claimed[i % claimed.length]!;
				const owner = (await admin.request('card/get', { cardId: id })).card.claimOwner ?? 'agent-0';
				const c = owner === 'agent-0' ? worker : admin;
				await c
					.request('card/heartbeat', { cardId: id, progress: (i * 13) % 100, note: `step ${i}` })
					.catch(() => admin.request('card/update', { cardId: id, title: `Bench card ${id}: step ${i}` }));
			} else {
				await admin.request('card/update', { cardId: readyIds[i % 10]!, priority: 4 + i });
			}
			await page.waitForFunction(
				n => (window as unknown as { __applied: Map<number, number> }).__applied.size > n,
				before,
				{ timeout: 5000 },
			);
		}
		worker.close();
		const pairs = await page.evaluate(() => {
			const w = window as unknown as { __arrivals: Map<number, number>; __applied: Map<number, number> };
			return [...w.__applied].map(([seq, at]) => at - (w.__arrivals.get(seq) ?? Number.NaN));
		});
		for (const p of pairs) {
			if (Number.isFinite(p)) {
				latencies.push(p);
			}
		}
		report.add(
			row(
				'live update: event arrives → DOM patched (p95)',
				percentile(latencies, 95),
				'ms',
				{ max: 30 },
				`${latencies.length} events; median ${median(latencies).toFixed(2)} ms, max ${Math.max(...latencies).toFixed(2)} ms`,
			),
		);

		// Scrolling the biggest column one frame at a time.
		const scroll = await page.evaluate(async frames => {
			const columns = [...document.querySelectorAll<HTMLElement>('.column-scroll')];
			const scroller = columns.sort((a, b) => b.scrollHeight - a.scrollHeight)[0];
			if (scroller === undefined) {
				throw new Error('no column');
			}
			let longTasks = 0;
			const obs = new PerformanceObserver(list => (longTasks += list.getEntries().length));
			obs.observe({ entryTypes: ['longtask'] });
			const deltas: number[] = [];
			const work: number[] = [];
			let last = performance.now();
			await new Promise<void>(resolve => {
				let n = 0;
				const step = (now: number): void => {
					deltas.push(now - last);
					last = now;
					// Dispatching the scroll event synchronously times the board's own work for this frame.
					const t = performance.now();
					scroller.scrollTop += 150;
					scroller.dispatchEvent(new Event('scroll'));
					work.push(performance.now() - t);
					if (++n < frames) {
						requestAnimationFrame(step);
					} else {
						resolve();
					}
				};
				requestAnimationFrame(step);
			});
			obs.disconnect();
			const rendered = scroller.querySelectorAll('.card').length;
			return { deltas: deltas.slice(1), work, longTasks, rows: Math.round(scroller.scrollHeight / 100), rendered };
		}, scrollFrames);
		report.add(
			row(
				'scroll: frame time (p95)',
				percentile(scroll.deltas, 95),
				'ms',
				{ max: 20 },
				`${scroll.deltas.length} frames over a ${scroll.rows}-card column, 150 px per frame; median ${median(scroll.deltas).toFixed(1)} ms`,
			),
		);
		const slow = scroll.deltas.filter(d => d > 20).length;
		report.add(
			row(
				'scroll: frames that missed a vsync (> 20 ms)',
				(100 * slow) / scroll.deltas.length,
				'%',
				undefined,
				`${slow} of ${scroll.deltas.length}`,
			),
		);
		report.add(
			row(
				'scroll: board work per frame (p95)',
				percentile(scroll.work, 95),
				'ms',
				{ max: 4 },
				`re-rendering the column's window; median ${median(scroll.work).toFixed(2)} ms, max ${Math.max(...scroll.work).toFixed(1)} ms`,
			),
		);
		report.add(row('scroll: long tasks (> 50 ms)', scroll.longTasks, 'count', undefined, 'GC or CPU contention'));
		report.add(
			row('scroll: card elements in that column while scrolling', scroll.rendered, 'count', undefined, 'virtualised'),
		);
		report.note(
			`Headless Chromium with --disable-gpu on a ${cpus().length}-core machine shared with other work (load average ${loadavg()[0]?.toFixed(1)} at the end); frame times include software compositing and vary with that load, the board's own work per frame does not.`,
		);
		await context.close();
		admin.close();
		await hub.stop();
		rmSync(join(dataDir, '..'), { recursive: true, force: true });
		stopped = true;
		await benchFleet(browser, report, quick);
	} finally {
		await browser.close();
		if (!stopped) {
			admin.close();
			await hub.stop();
			rmSync(join(dataDir, '..'), { recursive: true, force: true });
		}
	}
	report.finish();
}

main().catch((e: unknown) => {
	console.error(e);
	process.exitCode = 1;
});
