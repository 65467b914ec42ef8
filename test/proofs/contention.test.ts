/**
 * Contention proof: 16 workers claim and complete 2,000 cards with a random DAG until none is left (half
 * of them handing over with complete {next}) —
 * on PostgreSQL through 16 Backlog instances on 16 connections, on PGlite through 16 concurrent async
 * callers. The event log is then checked: each card completed exactly once, claimed/completed
 * alternate per card with increasing epochs (never held by two at once), and no card was claimed
 * before every dependency was completed. A load proof (2,000 cards, 16 connections), so it runs in
 * `npm run test:proofs`, not in the fast unit suite.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Backlog } from '../../core/backlog';
import type { BacklogEvent, ClaimResult, CreateCardInput } from '../../core/protocol';
import { openTestBacklog } from '../helpers/backlog';

const cardCount = 2000;
const workerCount = 16;

/** A random DAG: card i may depend on up to 3 earlier cards (30% have dependencies). */
function randomPlan(seed: number): CreateCardInput[] {
	let state = seed;
	const random = (): number => {
		// mulberry32: reproducible, so a failure can be replayed with the printed seed
		state = (state + 0x6d2b79f5) | 0;
		let t = Math.imul(state ^ (state >>> 15), 1 | state);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
	return Array.from({ length: cardCount }, (_, i) => {
		const deps = new Set<string>();
		if (i > 0 && random() < 0.3) {
			const n = 1 + Math.floor(random() * 3);
			for (let k = 0; k < n; k++) {
				deps.add(`k${Math.floor(random() * i)}`);
			}
		}
		return {
			id: `k${i}`,
			title: `card ${i}`,
			priority: Math.floor(random() * 5),
			...(deps.size > 0 ? { dependsOn: [...deps] } : {}),
		};
	});
}

interface WorkerStats {
	completed: number;
	emptyClaims: number;
	/** Cards this worker got from `complete {next}` rather than from `claim`. */
	handedOver: number;
}

async function drain(backlogs: Backlog[], observer: Backlog): Promise<WorkerStats[]> {
	let finished = false;
	return Promise.all(
		Array.from({ length: workerCount }, async (_, w) => {
			const b = backlogs[w % backlogs.length]!;
			const ctx = { actor: `worker-${w}` };
			const stats: WorkerStats = { completed: 0, emptyClaims: 0, handedOver: 0 };
			// Odd workers hand over with complete {next}: finish one card and claim the next in one statement.
			const handOver = w % 2 === 1;
			let carried: ClaimResult | undefined;
			while (!finished) {
				const { card, lease } = carried?.card != null ? carried : await b.claim(ctx, {});
				carried = undefined;
				if (card === null || lease === null) {
					stats.emptyClaims++;
					const s = await observer.stats(ctx, {});
					if (s.counts.ready + s.counts.claimed === 0) {
						finished = true;
					} else {
						// Others hold the cards this one waits on; let them finish.
						await new Promise(resolve => setTimeout(resolve, 2));
					}
					continue;
				}
				const done = await b.complete(ctx, {
					cardId: card.id,
					epoch: lease.epoch,
					result: `by ${ctx.actor}`,
					...(handOver ? { next: {} } : {}),
				});
				stats.completed++;
				if (done.next?.card != null) {
					carried = done.next;
					stats.handedOver++;
				}
			}
			return stats;
		}),
	);
}

async function allEvents(b: Backlog, afterSeq: number): Promise<BacklogEvent[]> {
	const events: BacklogEvent[] = [];
	for (let seq = afterSeq; ;) {
		const page = await b.eventsAfter(seq, 1000);
		if (page.length === 0) {
			return events;
		}
		events.push(...page);
		seq = page.at(-1)?.seq ?? seq;
	}
}

/** Checks the log; returns the counts it printed. */
function verify(label: string, plan: CreateCardInput[], events: BacklogEvent[], workers: WorkerStats[]): void {
	const byCard = new Map<string, BacklogEvent[]>();
	for (const e of events) {
		const list = byCard.get(e.cardId) ?? [];
		list.push(e);
		byCard.set(e.cardId, list);
	}
	const completedAt = new Map<string, number>();
	let claims = 0;
	let completes = 0;
	for (const card of plan) {
		const id = card.id!;
		const log = (byCard.get(id) ?? []).filter(e => e.type === 'claimed' || e.type === 'completed');
		let lastEpoch = 0;
		log.forEach((e, i) => {
			// claimed, completed, claimed, completed … : a second claim before a complete would be a double hold.
			assert.equal(e.type, i % 2 === 0 ? 'claimed' : 'completed', `${label}: ${id} events out of order`);
			const epoch = e.data.card?.claimEpoch ?? -1;
			if (e.type === 'claimed') {
				assert.ok(epoch > lastEpoch, `${label}: ${id} epoch did not increase`);
				lastEpoch = epoch;
				claims++;
			} else {
				completes++;
				completedAt.set(id, e.seq);
			}
		});
		assert.equal(log.filter(e => e.type === 'completed').length, 1, `${label}: ${id} completed ${log.length} times`);
	}
	// Never claimed before all its dependencies were done.
	for (const card of plan) {
		const claim = (byCard.get(card.id!) ?? []).find(e => e.type === 'claimed');
		for (const dep of card.dependsOn ?? []) {
			assert.ok(
				claim !== undefined && (completedAt.get(dep) ?? Infinity) < claim.seq,
				`${label}: ${card.id!} claimed before its dependency ${dep} was completed`,
			);
		}
	}
	const edges = plan.reduce((n, c) => n + (c.dependsOn?.length ?? 0), 0);
	const perWorker = workers.map(w => w.completed);
	assert.ok(
		workers.some(w => w.handedOver > 0),
		`${label}: the hand-over workers took cards through complete with next`,
	);
	assert.equal(
		perWorker.reduce((a, b) => a + b, 0),
		cardCount,
	);
	console.log(
		`${label}: ${cardCount} cards, ${edges} dependency edges, ${workerCount} workers; ${claims} claims, ${completes} completes, ` +
			`0 double holds, 0 early claims; per worker ${Math.min(...perWorker)}–${Math.max(...perWorker)} completes, ` +
			`${workers.reduce((n, w) => n + w.emptyClaims, 0)} empty claims, ` +
			`${workers.reduce((n, w) => n + w.handedOver, 0)} cards taken by complete with next`,
	);
}

async function seed(b: Backlog, plan: CreateCardInput[]): Promise<void> {
	for (let i = 0; i < plan.length; i += 1000) {
		await b.create({ actor: 'planner' }, { cards: plan.slice(i, i + 1000) });
	}
}

describe('contention', () => {
	it('PostgreSQL: 16 connections drain 2,000 cards with a random DAG, each completed exactly once', async () => {
		const seedValue = Date.now() % 100_000;
		const plan = randomPlan(seedValue);
		const t = await openTestBacklog('postgres');
		const workers = await Promise.all(
			Array.from({ length: workerCount }, () => Backlog.open({ ...t.options, poolSize: 1 })),
		);
		try {
			await seed(t.backlog, plan);
			const start = await t.backlog.lastSeq();
			const started = performance.now();
			const stats = await drain(workers, t.backlog);
			const seconds = (performance.now() - started) / 1000;
			verify(`PostgreSQL (seed ${seedValue})`, plan, await allEvents(t.backlog, start), stats);
			console.log(
				`PostgreSQL: drained in ${seconds.toFixed(1)} s (${Math.round(cardCount / seconds)} claim+complete/s)`,
			);
		} finally {
			await Promise.all(workers.map(w => w.close()));
			await t.cleanup();
		}
	});

	it('PGlite: 16 concurrent callers drain 2,000 cards with a random DAG, each completed exactly once', async () => {
		const seedValue = (Date.now() + 1) % 100_000;
		const plan = randomPlan(seedValue);
		const t = await openTestBacklog('pglite');
		try {
			await seed(t.backlog, plan);
			const start = await t.backlog.lastSeq();
			const started = performance.now();
			const stats = await drain([t.backlog], t.backlog);
			const seconds = (performance.now() - started) / 1000;
			verify(`PGlite (seed ${seedValue})`, plan, await allEvents(t.backlog, start), stats);
			// PGlite's seqs are gap-free, also while hot statements take the next seq from the store.
			const seqs = (await allEvents(t.backlog, 0)).map(e => e.seq);
			assert.deepEqual(
				seqs,
				Array.from({ length: seqs.length }, (_, i) => i + 1),
				'PGlite seqs are 1..N without a gap or a repeat',
			);
			console.log(
				`PGlite: drained in ${seconds.toFixed(1)} s (${Math.round(cardCount / seconds)} claim+complete/s); seqs 1..${seqs.length} without a gap`,
			);
		} finally {
			await t.cleanup();
		}
	});
});
