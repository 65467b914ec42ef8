/**
 * The page byte budget (core/backlog/paging.ts) on real PGlite and PostgreSQL: a list or
 * export page whose cards would pass pageBytes stops early with a cursor, whatever its limit; the
 * cursor leads through every card exactly once, in the page's order (priority, claim order, recent,
 * id); the first card comes even when it alone is over the budget; small cards are not cut.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { pageBytes } from '../../core/backlog/paging';
import { limits, type Card, type Params } from '../../core/protocol';
import { openTestBacklog, storeKinds, type TestBacklog } from '../helpers/backlog';

const human: OpContext = { actor: 'vscode:alice' };
const big = 'x'.repeat(60_000);

for (const kind of storeKinds) {
	describe(`page byte budget on ${kind}`, () => {
		let t: TestBacklog;
		let b: Backlog;

		before(async () => {
			t = await openTestBacklog(kind);
			b = t.backlog;
			// 60 cards of 60 KB (3.6 MB) at three priorities, and 30 small ones.
			await b.create(human, {
				cards: Array.from({ length: 60 }, (_, i) => ({
					id: `big${String(i).padStart(2, '0')}`,
					title: `Big ${i}`,
					body: big,
					priority: i % 3,
				})),
			});
			await b.create(human, {
				cards: Array.from({ length: 30 }, (_, i) => ({
					id: `small${String(i).padStart(2, '0')}`,
					title: `Small ${i}`,
				})),
			});
		});
		after(async () => {
			await t.cleanup();
		});

		/** Every page of a list, following the cursor. */
		async function pages(params: Params<'card/list'>): Promise<Card[][]> {
			const out: Card[][] = [];
			let cursor: string | undefined;
			do {
				const p = await b.list(human, { ...params, ...(cursor === undefined ? {} : { cursor }) });
				out.push(p.cards);
				cursor = p.nextCursor;
			} while (cursor !== undefined);
			return out;
		}

		const bytesOf = (cards: Card[]): number => Buffer.byteLength(JSON.stringify(cards));

		for (const params of [
			{ limit: 1000 },
			{ limit: 1000, readyOnly: true },
			{ limit: 1000, order: 'recent' as const },
			{ limit: 1000, text: 'Big' },
		]) {
			it(`stops pages at the budget and the cursor reads every card once (${JSON.stringify(params)})`, async () => {
				const all = await pages(params);
				const expected = params.text === undefined ? 90 : 60;
				assert.ok(all.length >= 4, `${all.length} pages`);
				for (const page of all) {
					// At most one card's worth over the budget, never one of these cards more.
					assert.ok(bytesOf(page) < pageBytes + 70_000, `a page of ${bytesOf(page)} bytes`);
				}
				const ids = all.flat().map(c => c.id);
				assert.equal(new Set(ids).size, ids.length, 'no card twice');
				assert.equal(ids.length, expected, 'no card missing');
				// The same order as one unbounded read would have (small pages of 10 are under the budget).
				const inTens = (await pages({ ...params, limit: 10 })).flat().map(c => c.id);
				assert.deepEqual(ids, inTens);
			});
		}

		it('small cards fill a page up to its limit', async () => {
			const p = await b.list(human, { text: 'Small', limit: 30 });
			assert.equal(p.cards.length, 30);
			assert.equal(p.nextCursor, undefined);
		});

		it('a page always carries its first card, even one alone over the budget', async () => {
			const huge = 'z'.repeat(limits.bodyBytes - 100);
			await b.create(human, {
				cards: Array.from({ length: 20 }, (_, i) => ({ id: `huge${i}`, title: `Huge ${i}`, body: huge, priority: 9 })),
			});
			const first = await b.list(human, { limit: 1000 });
			assert.ok(first.cards.length >= 1 && first.cards.length < 20, `${first.cards.length} cards`);
			assert.ok(first.nextCursor !== undefined);
		});

		it('export pages stop at the budget too, and the cursor reads every card once', async () => {
			const ids: string[] = [];
			let cursor: string | undefined;
			let pagesRead = 0;
			do {
				const p = await b.exportCards(cursor === undefined ? {} : { cursor });
				assert.ok(bytesOf(p.cards) < pageBytes + 70_000, `an export page of ${bytesOf(p.cards)} bytes`);
				ids.push(...p.cards.map(c => c.id));
				cursor = p.nextCursor;
				pagesRead++;
			} while (cursor !== undefined);
			assert.ok(pagesRead > 4);
			assert.deepEqual(ids, [...ids].sort());
			assert.equal(new Set(ids).size, 110);
		});
	});
}
