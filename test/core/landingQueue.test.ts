/**
 * The landing queue in the store, on real PGlite and PostgreSQL: one turn per project and base at a
 * time, in the order entries joined, lines of other bases independent; a card is in the line once (a
 * second live holder is refused); a dead holder's entries (no beat for 30 s) are dropped by the next
 * turn-taker and never block the line; a deleted card leaves it. On PostgreSQL, two backlogs on one
 * schema (two hubs) take turns for 24 cards of one base at once: never two landings at a time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Backlog, type OpContext } from '../../core/backlog';
import { landingStaleMs } from '../../core/backlog/landingQueue';
import { ManualClock } from '../../core/clock';
import { backlogForSuite, openTestBacklog, storeKinds } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const human: OpContext = { actor: 'cli:alice' };
const entry = (cardId: string, holder: string, base = 'main') => ({
	cardId,
	project: 'web',
	base,
	holder,
	actor: 'cli:alice',
});

for (const store of storeKinds) {
	describe(`the landing queue on ${store}`, () => {
		let b: Backlog;
		const clock = new ManualClock('2026-12-01T10:00:00.000Z');
		backlogForSuite(store, { clock }, t => {
			b = t.backlog;
		});

		it('gives one turn per base at a time, in the order entries joined; another base is its own line', async () => {
			await b.create(human, {
				cards: ['q1', 'q2', 'q3', 'q4'].map(id => ({ id, title: `Card ${id}`, project: 'web' })),
			});
			const q = b.landingQueue;
			await q.join(entry('q1', 'hub-a'));
			clock.advance(1);
			await q.join(entry('q2', 'hub-b'));
			clock.advance(1);
			await q.join(entry('q3', 'hub-a'));
			await q.join(entry('q4', 'hub-b', 'release'));
			assert.equal(await q.take('q2', 'hub-b'), 'wait', 'q1 joined first');
			assert.equal(await q.take('q1', 'hub-a'), 'turn');
			assert.equal(await q.take('q1', 'hub-a'), 'turn', 'a turn held is still its turn');
			assert.equal(await q.take('q3', 'hub-a'), 'wait');
			assert.equal(await q.take('q4', 'hub-b'), 'turn', 'another base lands meanwhile');
			assert.deepEqual(
				(await q.list('web')).map(e => [e.base, e.place, e.cardId, e.state, e.title]),
				[
					['main', 1, 'q1', 'landing', 'Card q1'],
					['main', 2, 'q2', 'waiting', 'Card q2'],
					['main', 3, 'q3', 'waiting', 'Card q3'],
					['release', 1, 'q4', 'landing', 'Card q4'],
				],
			);
			await q.leave('q1', 'hub-a');
			assert.equal(await q.take('q3', 'hub-a'), 'wait', 'q2 is next');
			assert.equal(await q.take('q2', 'hub-b'), 'turn');
			for (const [id, holder] of [
				['q2', 'hub-b'],
				['q4', 'hub-b'],
			] as const) {
				await q.leave(id, holder);
			}
			assert.equal(await q.take('q3', 'hub-a'), 'turn');
			await q.leave('q3', 'hub-a');
			assert.deepEqual(await q.list(), []);
		});

		it('refuses a card another live holder has in the line; its own holder joins again', async () => {
			await b.create(human, { cards: [{ id: 'd1', title: 'Twice', project: 'web' }] });
			const q = b.landingQueue;
			await q.join(entry('d1', 'hub-a'));
			await refused(q.join(entry('d1', 'hub-b')), 'conflict', /in the landing queue of main by another approval/);
			await q.join(entry('d1', 'hub-a'));
			assert.deepEqual(
				(await q.list()).map(e => e.cardId),
				['d1'],
			);
			await q.leave('d1', 'hub-b'); // not its entry: nothing happens
			assert.equal((await q.list()).length, 1);
			await q.leave('d1', 'hub-a');
		});

		it("drops a dead holder's entries at the next turn, so a dead hub never blocks its line", async () => {
			await b.create(human, { cards: ['s1', 's2'].map(id => ({ id, title: id, project: 'web' })) });
			const q = b.landingQueue;
			await q.join(entry('s1', 'dead-hub'));
			assert.equal(await q.take('s1', 'dead-hub'), 'turn');
			clock.advance(1);
			await q.join(entry('s2', 'live-hub'));
			assert.equal(await q.take('s2', 'live-hub'), 'wait', 's1 lands (its hub beat a second ago)');
			clock.advance(landingStaleMs / 1000 - 0.5);
			await q.beat('live-hub');
			clock.advance(1);
			assert.deepEqual(
				(await q.list()).map(e => e.cardId),
				['s2'],
				'the list leaves the dead entry out',
			);
			assert.equal(await q.take('s2', 'live-hub'), 'turn');
			assert.equal(await q.take('s1', 'dead-hub'), 'out', 'its entry was dropped');
			await q.leave('s2', 'live-hub');
		});

		it('a deleted card leaves the line', async () => {
			await b.create(human, { cards: [{ id: 'x1', title: 'Deleted', project: 'web' }] });
			await b.landingQueue.join(entry('x1', 'hub-a'));
			await b.delete(human, { cardId: 'x1' });
			assert.deepEqual(await b.landingQueue.list(), []);
		});
	});
}

describe('two hubs on one PostgreSQL', () => {
	it('take turns for 24 cards of one base at once, never two landings at a time', async () => {
		const first = await openTestBacklog('postgres');
		const second = await Backlog.open(first.options);
		try {
			const ids = Array.from({ length: 24 }, (_, i) => `t${i}`);
			await first.backlog.create(human, { cards: ids.map(id => ({ id, title: id, project: 'web' })) });
			let landing = 0;
			let most = 0;
			const order: string[] = [];
			await Promise.all(
				ids.map(async (id, i) => {
					const q = (i % 2 === 0 ? first.backlog : second).landingQueue;
					const holder = i % 2 === 0 ? 'hub-a' : 'hub-b';
					await q.join(entry(id, holder));
					while ((await q.take(id, holder)) !== 'turn') {
						await new Promise(r => setTimeout(r, 5));
					}
					landing++;
					most = Math.max(most, landing);
					order.push(id);
					await new Promise(r => setTimeout(r, 3));
					landing--;
					await q.leave(id, holder);
				}),
			);
			assert.equal(most, 1, 'one landing at a time across both hubs');
			assert.deepEqual([...order].sort(), [...ids].sort(), 'every card had its turn');
			assert.deepEqual(await first.backlog.landingQueue.list(), []);
		} finally {
			await second.close();
			await first.cleanup();
		}
	});
});
