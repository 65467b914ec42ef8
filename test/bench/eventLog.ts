/**
 * The bounded event log: a year of simulated fleet activity, about 1,000,000 events,
 * compacted with the default policy (the newest 50 progress events per card, none older than 90 days),
 * on a PGlite data dir in process. 30,000 cards over 365 days, each created, claimed, given 8–47
 * progress heartbeats (every 50th a long one of 300) 30 s apart, and completed; the events are written
 * with SQL (as the hub would have, with a ~300-byte card snapshot each). Reported: the compaction's
 * time, the events before and after, the data dir's size before, after compaction + VACUUM (what the
 * hub's maintenance runs) and after VACUUM FULL of the events table (which only an operator runs: it
 * locks the table), and the claim+complete latency of an agent working while compaction runs next to
 * it, against the same loop with no compaction.
 * Standalone: `node --import tsx test/bench/eventLog.ts [--quick]`.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { Backlog } from '../../core/backlog';
import type { Db } from '../../core/store/db';
import { median, percentile, Reporter, row } from './report';

const quick = process.argv.includes('--quick');
const cards = quick ? 3_000 : 30_000;
const yearMs = 365 * 86_400_000;

function dirMb(dir: string): number {
	let bytes = 0;
	for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
		if (entry.isFile()) {
			bytes += statSync(join(entry.parentPath, entry.name)).size;
		}
	}
	return bytes / 1e6;
}

/** Writes the year: per card created, claimed, its heartbeats and completed, in seq order by time. */
async function simulateYear(db: Db, now: number): Promise<number> {
	const start = new Date(now - yearMs).toISOString();
	const step = yearMs / cards / 1000; // seconds between card starts
	const batch = 1_000;
	for (let from = 0; from < cards; from += batch) {
		await db.query(
			`INSERT INTO events (seq, at, card_id, actor, type, data)
			 SELECT (SELECT coalesce(max(seq), 0) FROM events) + row_number() OVER (ORDER BY e.at, e.k), e.at, e.card_id, e.actor, e.type,
				json_build_object('card', json_build_object('id', e.card_id, 'title', 'Simulated card ' || e.card_id,
					'status', CASE WHEN e.type = 'completed' THEN 'done' WHEN e.type = 'created' THEN 'ready' ELSE 'claimed' END,
					'claimEpoch', 1, 'claimOwner', e.actor, 'progress', e.n,
					'progressNote', CASE WHEN e.type = 'heartbeat' THEN 'step ' || e.n || ': editing src/module' || e.i || '.ts and running its tests' END,
					'priority', 0, 'phase', null, 'requires', '[]'::json, 'dependsOn', '[]'::json))
			 FROM (
				SELECT c.i, 'Y' || c.i AS card_id, 'agent-' || (c.i % 64) AS actor, s.k, s.n,
					CASE WHEN s.k = 0 THEN 'created' WHEN s.k = 1 THEN 'claimed' WHEN s.k = c.beats + 2 THEN 'completed' ELSE 'heartbeat' END AS type,
					$1::timestamptz + make_interval(secs => c.i * $2::float8 + s.k * 30) AS at
				FROM (SELECT i, CASE WHEN i % 50 = 0 THEN 300 ELSE 8 + (i * 7919) % 40 END AS beats
					FROM generate_series($3::int, $4::int) i) c
				CROSS JOIN LATERAL (SELECT k, greatest(k - 1, 0) AS n FROM generate_series(0, c.beats + 2) k) s
			 ) e`,
			[start, step, from, Math.min(cards, from + batch) - 1],
		);
	}
	const [r] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
	return r?.n ?? 0;
}

/**
 * claim+complete ms of one agent, `rounds` times, each round 0–4 ms after the last (a timer, as a
 * request from a socket arrives), so it lands anywhere in a compaction batch, not only between two.
 */
async function agentLoop(backlog: Backlog, rounds: number): Promise<number[]> {
	const ms: number[] = [];
	const actor = { actor: 'bench-agent' };
	for (let i = 0; i < rounds; i++) {
		await new Promise(resolve => setTimeout(resolve, Math.floor(Math.random() * 5)));
		const t = performance.now();
		const { card, lease } = await backlog.claim(actor, {});
		if (card === null || lease === null) {
			throw new Error('the bench ran out of ready cards');
		}
		await backlog.complete(actor, { cardId: card.id, epoch: lease.epoch });
		ms.push(performance.now() - t);
	}
	return ms;
}

async function main(): Promise<void> {
	const report = new Reporter('eventLog');
	const dir = mkdtempSync('/tmp/bt-log-');
	try {
		let backlog = await Backlog.open({ pgliteDir: join(dir, 'pg') });
		const db = (backlog as unknown as { db: Db }).db;
		const t0 = performance.now();
		const events = await simulateYear(db, Date.now());
		console.log(`  wrote ${events} events in ${Math.round(performance.now() - t0)} ms`);
		for (let from = 0; from < 10_000; from += 1_000) {
			const ids = Array.from({ length: 1_000 }, (_, i) => from + i);
			await backlog.create({ actor: 'bench' }, { cards: ids.map(i => ({ id: `W${i}`, title: `work ${i}` })) });
		}
		await db.exec('VACUUM (ANALYZE)');
		await backlog.close();
		const sizeBefore = dirMb(dir);

		backlog = await Backlog.open({ pgliteDir: join(dir, 'pg') });
		const quiet = await agentLoop(backlog, 200);
		const compaction = backlog.compactLog();
		const busy: number[] = [];
		let compacting = true;
		void compaction.finally(() => {
			compacting = false;
		});
		while (compacting) {
			busy.push(...(await agentLoop(backlog, 1)));
		}
		const result = await compaction;
		const t1 = performance.now();
		await backlog.maintenance();
		const vacuumMs = performance.now() - t1;
		const remaining = (await backlog.listEvents({ limit: 1 })).lastSeq;
		const db2 = (backlog as unknown as { db: Db }).db;
		const [left] = await db2.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
		await backlog.close();
		const sizeAfter = dirMb(dir);
		backlog = await Backlog.open({ pgliteDir: join(dir, 'pg') });
		const t2 = performance.now();
		await (backlog as unknown as { db: Db }).db.exec('VACUUM FULL events');
		const fullMs = performance.now() - t2;
		await backlog.close();
		const sizeFull = dirMb(dir);

		report.add(row(`events written for a simulated year`, events, 'events', undefined, `${cards} cards`));
		report.add(
			row(
				'compaction of the year',
				result.ms / 1000,
				's',
				undefined,
				`${result.deleted} progress events deleted in ${result.batches} batches; ${left?.n ?? 0} events left (last seq ${remaining})`,
			),
		);
		report.add(row('VACUUM (ANALYZE) after it (the rest of the maintenance)', vacuumMs / 1000, 's'));
		report.add(row('data dir before', sizeBefore, 'MB'));
		report.add(row('data dir after compaction + VACUUM', sizeAfter, 'MB', undefined, 'space reused, not returned'));
		report.add(
			row(
				'data dir after VACUUM FULL events (operator)',
				sizeFull,
				'MB',
				undefined,
				`${Math.round(fullMs)} ms, table locked`,
			),
		);
		report.add(row('claim+complete p50, no compaction', median(quiet), 'ms', undefined, `${quiet.length} rounds`));
		report.add(
			row('claim+complete p99, no compaction', percentile(quiet, 99), 'ms', undefined, `${quiet.length} rounds`),
		);
		report.add(
			row(
				'claim+complete p50 while compacting',
				median(busy),
				'ms',
				undefined,
				`${busy.length} rounds during the pass`,
			),
		);
		report.add(
			row(
				'claim+complete p99 while compacting',
				percentile(busy, 99),
				'ms',
				{ max: 50 },
				'batches sized to hold the store ~10 ms',
			),
		);
		report.finish();
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
