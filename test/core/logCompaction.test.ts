/**
 * The bounded event log on both stores: compaction keeps every state change and, of the
 * progress events, the newest N per card, the last one of each attempt and none older than D days;
 * it never deletes the log's newest event or an unsettled one, moves the horizon to the highest seq it
 * deleted, and loses no state change while claims, heartbeats and completes run alongside it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Backlog } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import { settledPrefix } from '../../core/backlog/logCompaction';
import type { BacklogEvent, EventType } from '../../core/protocol';
import { openTestBacklog, storeKinds, type TestBacklog } from '../helpers/backlog';

const human = { actor: 'human' };
let counter = 0;
const prefix = (): string => `c${++counter}-`;

/** Every event of the log, read page by page. */
async function allEvents(b: Backlog): Promise<BacklogEvent[]> {
	const out: BacklogEvent[] = [];
	for (let after = 0; ;) {
		const page = await b.listEvents({ afterSeq: after, limit: 1000 });
		out.push(...page.events);
		const last = page.events.at(-1);
		if (last === undefined) {
			return out;
		}
		after = last.seq;
	}
}

function countByType(events: readonly BacklogEvent[], cardId?: string): Partial<Record<EventType, number>> {
	const out: Partial<Record<EventType, number>> = {};
	for (const e of events) {
		if (cardId === undefined || e.cardId === cardId) {
			out[e.type] = (out[e.type] ?? 0) + 1;
		}
	}
	return out;
}

describe('settledPrefix', () => {
	it('stops at the first unsettled row and never takes the newest event', () => {
		const rows = [1, 2, 3, 4].map(seq => ({ seq, settled: seq !== 3 }));
		assert.deepEqual(settledPrefix(rows, 10), { end: 2, full: false });
		assert.deepEqual(
			settledPrefix(
				rows.map(r => ({ ...r, settled: true })),
				10,
			),
			{ end: 4, full: true },
		);
		assert.deepEqual(
			settledPrefix(
				rows.map(r => ({ ...r, settled: true })),
				4,
			),
			{ end: 3, full: false },
		);
		assert.deepEqual(settledPrefix([], 4), { end: -1, full: true });
	});
});

for (const kind of storeKinds) {
	describe(`event log compaction on ${kind}`, () => {
		let t: TestBacklog;
		let b: Backlog;
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');

		before(async () => {
			t = await openTestBacklog(kind, { clock, defaultTtlSeconds: 3600 });
			b = t.backlog;
		});
		after(async () => {
			await t.cleanup();
		});

		/** Claims `cardId` as `agent` and sends `beats` heartbeats that each change the progress note. */
		async function work(cardId: string, agent: string, beats: number): Promise<number> {
			const { lease } = await b.claim({ actor: agent }, { cardId });
			assert.ok(lease);
			for (let i = 1; i <= beats; i++) {
				await b.heartbeat({ actor: agent }, { cardId, epoch: lease.epoch, note: `${agent} step ${i}` });
				clock.advance(1);
			}
			return lease.epoch;
		}

		it('keeps the newest progress events per card, the last of each attempt and every state change', async () => {
			const p = prefix();
			await b.create(human, {
				cards: [
					{ id: `${p}a`, title: 'busy' },
					{ id: `${p}b`, title: 'quiet' },
				],
			});
			const first = await work(`${p}a`, 'ann', 30);
			await b.release({ actor: 'ann' }, { cardId: `${p}a`, epoch: first, reason: 'handing over' });
			const second = await work(`${p}a`, 'bob', 70);
			await work(`${p}b`, 'cat', 10);
			const before = countByType(await allEvents(b), `${p}a`);
			assert.equal(before.heartbeat, 100);

			clock.advance(120); // every event above is settled now
			const report = await b.compactLog();
			assert.equal(report.deleted, 49, '100 progress events − the newest 50 − the last of the first attempt');

			const events = await allEvents(b);
			const after = countByType(events, `${p}a`);
			assert.equal(after.heartbeat, 51);
			for (const type of ['created', 'claimed', 'released'] as const) {
				assert.equal(after[type], before[type], `every ${type} event is kept`);
			}
			assert.equal(countByType(events, `${p}b`).heartbeat, 10, 'a card under the limit keeps all of its own');
			const kept = events
				.filter(e => e.cardId === `${p}a` && e.type === 'heartbeat')
				.map(e => e.data.card?.progressNote);
			assert.equal(kept[0], 'ann step 30', "the first attempt's last progress survives");
			assert.equal(kept[1], 'bob step 21');
			assert.equal(kept.at(-1), 'bob step 70');

			const { attempts } = await b.get(human, { cardId: `${p}a` });
			assert.equal(attempts[0]?.progressNote, 'ann step 30', 'the attempt summary still shows where it stopped');
			assert.equal(attempts[1]?.progressNote, 'bob step 70');
			await b.complete({ actor: 'bob' }, { cardId: `${p}a`, epoch: second });

			const listed = await b.listEvents({ limit: 1 });
			assert.equal(listed.horizon, report.horizon);
			assert.ok(report.horizon > 0);
			assert.equal(await b.logHorizon(), report.horizon);
			const again = await b.compactLog();
			assert.equal(again.deleted, 0, 'a second pass finds nothing new');
			assert.equal(again.horizon, report.horizon);
		});

		it('drops progress older than the age limit, and leaves unsettled events alone', async () => {
			const p = prefix();
			await b.updateSettings(human, { progressEventDays: 2 });
			try {
				await b.create(human, {
					cards: [
						{ id: `${p}old`, title: 'old' },
						{ id: `${p}new`, title: 'new' },
					],
				});
				await work(`${p}old`, 'dee', 5);
				clock.advance(3 * 86_400);
				await work(`${p}new`, 'fay', 1);
				const report = await b.compactLog();
				assert.ok(report.deleted >= 5);
				const notes = (await allEvents(b))
					.filter(e => e.cardId.startsWith(p) && e.type === 'heartbeat')
					.map(e => e.data.card?.progressNote);
				assert.deepEqual(notes, ['fay step 1'], 'the five old ones are gone, the unsettled new one stays');
			} finally {
				await b.updateSettings(human, { progressEventDays: 90 });
			}
		});

		it('applies a lowered per-card limit to cards compacted before', async () => {
			const p = prefix();
			await b.create(human, { cards: [{ id: `${p}a`, title: 'idle since' }] });
			await work(`${p}a`, 'gus', 8);
			clock.advance(120);
			await b.compactLog();
			await b.create(human, { cards: [{ id: `${p}z`, title: 'after' }] });
			await b.updateSettings(human, { progressEventsPerCard: 3 });
			try {
				clock.advance(120);
				await b.compactLog();
				const beats = (await allEvents(b)).filter(e => e.cardId === `${p}a` && e.type === 'heartbeat');
				assert.equal(beats.length, 3, 'the idle card was compacted again under the new limit');
			} finally {
				await b.updateSettings(human, { progressEventsPerCard: 50 });
			}
		});

		it('honours a smaller per-card limit and never deletes the newest event of the log', async () => {
			const p = prefix();
			await b.updateSettings(human, { progressEventsPerCard: 2 });
			try {
				await b.create(human, { cards: [{ id: `${p}a`, title: 'last' }] });
				await work(`${p}a`, 'eve', 6);
				clock.advance(120);
				const last = await b.lastSeq();
				await b.compactLog({ settleMs: 0 });
				assert.equal(await b.lastSeq(), last, 'the newest event stays, so PGlite never reuses its seq');
				const beats = (await allEvents(b)).filter(e => e.cardId === `${p}a` && e.type === 'heartbeat');
				assert.deepEqual(
					beats.map(e => e.data.card?.progressNote),
					['eve step 5', 'eve step 6'],
				);
			} finally {
				await b.updateSettings(human, { progressEventsPerCard: 50 });
			}
		});

		it('loses no state change while agents claim, beat and complete alongside it', async () => {
			const p = prefix();
			const cards = 60;
			await b.updateSettings(human, { progressEventsPerCard: 3 });
			try {
				await b.create(human, {
					cards: Array.from({ length: cards }, (_, i) => ({ id: `${p}${String(i).padStart(3, '0')}`, title: `w${i}` })),
				});
				const done: string[] = [];
				let stop = false;
				let batches = 0;
				let deleted = 0;
				const pause = async (): Promise<void> => {
					batches++;
					await new Promise(resolve => setTimeout(resolve, 0));
				};
				const compactor = (async () => {
					while (!stop) {
						deleted += (await b.compactLog({ settleMs: 0, batch: 10, pause })).deleted;
					}
				})();
				// Each call arrives in a task of its own, as requests from sockets do: PGlite runs a query
				// synchronously, so back-to-back awaits alone would never let the compactor's pause end.
				const arrive = (): Promise<void> => new Promise(resolve => setImmediate(resolve));
				const agents = Array.from({ length: 6 }, async (_, a) => {
					const actor = { actor: `w${a}` };
					for (; ; await arrive()) {
						const { card, lease } = await b.claim(actor, {});
						if (card === null || lease === null || !card.id.startsWith(p)) {
							return;
						}
						for (let i = 0; i < 8; i++) {
							await arrive();
							await b.heartbeat(actor, { cardId: card.id, epoch: lease.epoch, progress: i * 10 });
						}
						await b.complete(actor, { cardId: card.id, epoch: lease.epoch });
						done.push(card.id);
					}
				});
				await Promise.all(agents);
				const batchesWhileWorking = batches;
				stop = true;
				await compactor;
				await b.compactLog({ settleMs: 0 });

				assert.equal(done.length, cards);
				assert.equal(new Set(done).size, cards, 'no card was completed twice');
				assert.ok(
					batchesWhileWorking > 10 && deleted > 0,
					`compaction ran alongside (${batchesWhileWorking} batches, ${deleted} deleted)`,
				);
				const events = (await allEvents(b)).filter(e => e.cardId.startsWith(p));
				const counts = countByType(events);
				assert.equal(counts.created, cards);
				assert.equal(counts.claimed, cards);
				assert.equal(counts.completed, cards);
				assert.ok((counts.heartbeat ?? 0) <= cards * 3, 'at most three progress events per card remain');
				for (const e of events.filter(x => x.type === 'completed')) {
					assert.equal(e.data.card?.status, 'done');
				}
				const seqs = events.map(e => e.seq);
				assert.deepEqual(
					seqs,
					[...seqs].sort((x, y) => x - y),
					'the log is still in seq order',
				);
			} finally {
				await b.updateSettings(human, { progressEventsPerCard: 50 });
			}
		});
	});
}
