/**
 * Fleet scale: what a big backlog costs a read and a small one costs the laptop. (1) The
 * hub's resident memory with ten cards, idle, after a first start and after a reopen. (2) card/stats
 * and card/list {text} at 100,000 cards (the benchmark data set, 150 cards done and 150 claimed), in
 * process on PGlite and through the hub from an outside client, where its targets are set.
 * Standalone: `node --import tsx test/bench/size.ts [--quick]` (needs `npm run build`). Measures only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { Backlog } from '../../core/backlog';
import type { RpcClient } from '../../core/protocol/rpc';
import { cardBatches } from './dataset';
import { connect, rssOf, startHub } from './hubProcess';
import { Reporter, row, timedP50 } from './report';

const quick = process.argv.includes('--quick');
const size = quick ? 10_000 : 100_000;
const idleMs = quick ? 2_000 : 8_000;
const reads = quick ? 10 : 40;
const scale = `${size.toLocaleString('en')} cards`;

/** The texts searched: one card's words, words in no card, and a word in every card (context). */
const texts = {
	rare: `Card ${size - 7} of`,
	none: 'no such words here',
	everywhere: 'benchmark',
};

/** p50 of `n` timed calls after 3 warm-up calls. */
function p50(n: number, fn: () => Promise<unknown>): Promise<number> {
	return timedP50(n, fn, 3);
}

async function idleRss(report: Reporter, temp: string): Promise<void> {
	const dir = join(temp, 'small');
	for (const phase of ['first start', 'reopen'] as const) {
		const hub = await startHub(dir);
		try {
			if (phase === 'first start') {
				const client = await connect(dir);
				const cards = Array.from({ length: 10 }, (_, i) => ({ title: `Small card ${i}` }));
				await client.request('card/create', { cards });
				client.close();
			}
			await new Promise(r => setTimeout(r, idleMs));
			const { currentMb, peakMb } = rssOf(hub.pid);
			const note = `VmRSS after ${idleMs / 1000} s idle; peak (VmHWM) ${Math.round(peakMb)} MB`;
			report.add(
				row(
					`hub idle RSS, ten cards, after a ${phase}`,
					currentMb,
					'MB',
					phase === 'first start' ? { max: 150 } : undefined,
					note,
				),
			);
		} finally {
			await hub.stop();
		}
	}
}

async function build(dir: string): Promise<void> {
	const backlog = await Backlog.open({ pgliteDir: dir });
	try {
		for (const batch of cardBatches(size)) {
			await backlog.create({ actor: 'bench' }, { cards: batch });
		}
		for (let i = 0; i < 300; i++) {
			const ctx = { actor: `agent-${i % 10}` };
			const { card, lease } = await backlog.claim(ctx, { ttlSeconds: 3600 });
			if (card !== null && lease !== null && i % 2 === 0) {
				await backlog.complete(ctx, { cardId: card.id, epoch: lease.epoch });
			}
		}
		await backlog.maintenance();
	} finally {
		await backlog.close();
	}
}

async function inProcess(report: Reporter, dir: string): Promise<void> {
	const backlog = await Backlog.open({ pgliteDir: dir });
	const ctx = { actor: 'bench' };
	try {
		const found = (await backlog.list(ctx, { text: texts.rare })).cards.length;
		if (found !== 1) {
			throw new Error(`the rare text found ${found} cards`);
		}
		report.add(row(`stats p50, in process (${scale})`, await p50(reads, () => backlog.stats(ctx, {})), 'ms'));
		for (const [which, text] of Object.entries(texts)) {
			const ms = await p50(reads, () => backlog.list(ctx, { text }));
			report.add(
				row(
					`text filter p50, ${which === 'rare' ? 'one card' : which === 'none' ? 'no card' : 'every card (first page)'}, in process`,
					ms,
					'ms',
					undefined,
					`"${text}"`,
				),
			);
		}
	} finally {
		await backlog.close();
	}
}

async function throughHub(report: Reporter, dir: string): Promise<void> {
	const hub = await startHub(dir);
	let client: RpcClient | undefined;
	try {
		// The hub's start-up maintenance (VACUUM (ANALYZE): ~0.5 s at 100k) runs just after it answers;
		// measure the steady state after it.
		await new Promise(r => setTimeout(r, quick ? 1_000 : 5_000));
		client = await connect(dir);
		const c = client;
		const stats = await p50(reads, () => c.request('card/stats', {}));
		report.add(
			row(`stats p50 through the hub (${scale})`, stats, 'ms', { max: 10 }, 'an outside RpcClient over the socket'),
		);
		for (const [which, text] of Object.entries(texts)) {
			const ms = await p50(reads, () => c.request('card/list', { text }));
			const label = which === 'rare' ? 'one card' : which === 'none' ? 'no card' : 'every card (first page)';
			report.add(
				row(
					`text filter p50 through the hub, ${label}`,
					ms,
					'ms',
					which === 'everywhere' ? undefined : { max: 30 },
					`"${text}"`,
				),
			);
		}
	} finally {
		client?.close();
		await hub.stop();
	}
}

async function main(): Promise<void> {
	const report = new Reporter('size');
	const temp = mkdtempSync('/tmp/bt-size-');
	try {
		await idleRss(report, temp);
		// A hub on data dir D keeps its PGlite store in D/pgdata (core/paths.ts).
		const dir = join(temp, 'big');
		await build(join(dir, 'pgdata'));
		await inProcess(report, join(dir, 'pgdata'));
		await throughHub(report, dir);
		report.note(
			`${size.toLocaleString('en')} cards of the benchmark data set (dataset.ts), 150 done, 150 claimed, after maintenance; p50 of ${reads} calls after 3 warm-up calls.`,
		);
	} finally {
		rmSync(temp, { recursive: true, force: true });
	}
	report.finish();
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
