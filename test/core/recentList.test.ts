/**
 * card/list in recent order (the board and tree page Done newest first) on real PGlite and
 * PostgreSQL: pages follow updatedAt, then id, descending; a cursor continues exactly after the last
 * card with no duplicate and no gap, also when cards change between pages; filters still apply; a
 * cursor of the other order is refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import type { Card } from '../../core/protocol';
import { openTestBacklog, storeKinds, type TestBacklog } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const human: OpContext = { actor: 'vscode:alice' };
const agent: OpContext = { actor: 'claude-code-1' };

const newestFirst = (a: Card, b: Card): number =>
	a.updatedAt === b.updatedAt ? (a.id < b.id ? 1 : -1) : a.updatedAt < b.updatedAt ? 1 : -1;

for (const kind of storeKinds) {
	describe(`card/list order recent on ${kind}`, () => {
		let t: TestBacklog;
		let b: Backlog;
		const clock = new ManualClock('2026-05-01T09:00:00.000Z');

		before(async () => {
			t = await openTestBacklog(kind, { clock });
			b = t.backlog;
			const cards = Array.from({ length: 30 }, (_, i) => ({
				id: `d${String(i).padStart(2, '0')}`,
				title: i % 3 === 0 ? `Fizz ${i}` : `Card ${i}`,
				phase: i % 2 === 0 ? 'build' : 'test',
			}));
			await b.create(human, { cards: [...cards, { id: 'open1', title: 'Still ready' }] });
			for (const [i, c] of cards.entries()) {
				// Pairs finish in the same millisecond, so ties are broken by id.
				if (i % 2 === 0) {
					clock.advance(1);
				}
				await b.claim(agent, { cardId: c.id });
				await b.complete(agent, { cardId: c.id, result: 'ok' });
			}
		});
		after(async () => {
			await t.cleanup();
		});

		async function pages(limit: number, extra: { text?: string; phase?: string } = {}): Promise<Card[][]> {
			const out: Card[][] = [];
			let cursor: string | undefined;
			do {
				const p = await b.list(human, {
					status: 'done',
					order: 'recent',
					limit,
					...extra,
					...(cursor ? { cursor } : {}),
				});
				out.push(p.cards);
				cursor = p.nextCursor;
			} while (cursor !== undefined);
			return out;
		}

		it('pages done cards newest first, ties by id descending, with no duplicate or gap', async () => {
			const all = (await pages(7)).flat();
			assert.equal(all.length, 30);
			assert.equal(new Set(all.map(c => c.id)).size, 30);
			assert.ok(all.every(c => c.status === 'done'));
			assert.deepEqual(
				all.map(c => c.id),
				[...all].sort(newestFirst).map(c => c.id),
			);
			assert.deepEqual(
				all.slice(0, 4).map(c => c.id),
				['d29', 'd28', 'd27', 'd26'],
			);
			const sizes = (await pages(7)).map(p => p.length);
			assert.deepEqual(sizes, [7, 7, 7, 7, 2]);
		});

		it('continues after the cursor when a card of a later page changes meanwhile: it moves up, never twice', async () => {
			const first = await b.list(human, { status: 'done', order: 'recent', limit: 10 });
			assert.ok(first.nextCursor);
			clock.advance(5);
			await b.update(human, { cardId: 'd03', title: 'Fizz 3, retitled' });
			const rest: Card[] = [];
			let cursor: string | undefined = first.nextCursor;
			while (cursor !== undefined) {
				const p = await b.list(human, { status: 'done', order: 'recent', limit: 10, cursor });
				rest.push(...p.cards);
				cursor = p.nextCursor;
			}
			const seen = [...first.cards, ...rest].map(c => c.id);
			assert.equal(new Set(seen).size, seen.length, 'no duplicates');
			assert.ok(!rest.some(c => c.id === 'd03'), 'the changed card is above the cursor now');
			const top = await b.list(human, { status: 'done', order: 'recent', limit: 1 });
			assert.equal(top.cards[0]?.id, 'd03');
			assert.equal(top.cards[0].title, 'Fizz 3, retitled');
		});

		it('applies the text and phase filters in recent order', async () => {
			const fizz = (await pages(3, { text: 'fizz' })).flat();
			assert.deepEqual(
				fizz.map(c => c.id),
				['d03', 'd27', 'd24', 'd21', 'd18', 'd15', 'd12', 'd09', 'd06', 'd00'],
			);
			const build = (await pages(4, { phase: 'build' })).flat();
			assert.equal(build.length, 15);
			assert.ok(build.every(c => c.phase === 'build'));
			assert.deepEqual(
				build.map(c => c.id),
				[...build].sort(newestFirst).map(c => c.id),
			);
		});

		it('orders other statuses too, and refuses a cursor of the other order', async () => {
			const mixed = await b.list(human, { status: ['ready', 'done'], order: 'recent', limit: 50 });
			assert.equal(mixed.cards.length, 31);
			assert.equal(mixed.cards.at(-1)?.id, 'open1', 'the untouched ready card changed first');
			const byPriority = await b.list(human, { status: 'done', limit: 2 });
			assert.ok(byPriority.nextCursor);
			await refused(b.list(human, { status: 'done', order: 'recent', cursor: byPriority.nextCursor }), 'invalid_input');
			const recent = await b.list(human, { status: 'done', order: 'recent', limit: 2 });
			assert.ok(recent.nextCursor);
			await refused(b.list(human, { status: 'done', cursor: recent.nextCursor }), 'invalid_input');
		});
	});
}
