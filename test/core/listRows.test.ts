/**
 * card/listRows ("a lighter list row") on real PGlite and PostgreSQL: every page is the page
 * card/list gives for the same params — the same cards in the same order, the same nextCursor and
 * waitsOn — each card cut to protocol CardRow's fields and nothing else, whatever the filter, order or
 * cursor (the ready page's prepared statement, the general page, recent order, text, label, parent,
 * project), and a cursor of one continues the other.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import { type Card, CardRow, type Params } from '../../core/protocol';
import { openTestBacklog, storeKinds, type TestBacklog } from '../helpers/backlog';

const human: OpContext = { actor: 'vscode:alice' };
const agent: OpContext = { actor: 'claude-code-1' };
const rowKeys = Object.keys(CardRow.shape).sort();
/** What holds a ready card back: present only when it holds (core/backlog/cardHolds.ts). */
const holdKeys = new Set(['openChildren', 'treeWaits', 'paused', 'filesHeldBy']);

/** A full card cut to its row's fields (those it has). */
function rowOf(card: Card): Record<string, unknown> {
	return Object.fromEntries(rowKeys.filter(k => k in card).map(k => [k, card[k as keyof Card]]));
}

for (const kind of storeKinds) {
	describe(`card/listRows on ${kind}`, () => {
		let t: TestBacklog;
		let b: Backlog;
		const clock = new ManualClock('2026-05-01T09:00:00.000Z');

		before(async () => {
			t = await openTestBacklog(kind, { clock });
			b = t.backlog;
			await b.create(human, {
				cards: [
					{ id: 'epic', title: 'Epic', body: 'A long body '.repeat(200), labels: ['api'], autoClose: true },
					{ id: 'c1', title: 'Child one', parent: 'epic', priority: 2, labels: ['api', 'db'] },
					{ id: 'c2', title: 'Child two', parent: 'epic', dependsOn: ['c1'], acceptance: ['works'] },
					{ id: 'cap', title: 'Needs a GPU', requires: ['gpu'], project: 'web', phase: 'build' },
					{ id: 'later', title: 'Deferred', deferUntil: '2026-05-02T00:00:00.000Z', priority: 5 },
					{ id: 'rev', title: 'Reviewed', review: 'human', priority: 1 },
					{ id: 'ask', title: 'Has a question', priority: 3 },
					{ id: 'bad', title: 'Fails', maxAttempts: 1, priority: 4 },
					...Array.from({ length: 12 }, (_, i) => ({ id: `p${String(i).padStart(2, '0')}`, title: `Plain ${i}` })),
				],
			});
			clock.advance(1000);
			const bad = await b.claim(agent, { cardId: 'bad' });
			await b.fail(agent, { cardId: 'bad', epoch: bad.lease!.epoch, reason: 'broke', retry: false });
			await b.claim(agent, { cardId: 'ask' });
			await b.comment(agent, { cardId: 'ask', text: 'Which API?', question: true });
			const rev = await b.claim(agent, { cardId: 'rev' });
			await b.complete(agent, { cardId: 'rev', epoch: rev.lease!.epoch, result: 'done' });
			for (const id of ['p00', 'p01', 'p02']) {
				clock.advance(1);
				const c = await b.claim(agent, { cardId: id });
				await b.complete(agent, { cardId: id, epoch: c.lease!.epoch });
			}
		});
		after(async () => {
			await t.cleanup();
		});

		/** Every page of both for the params, compared page by page. */
		async function same(params: Params<'card/list'>): Promise<number> {
			let cursor: string | undefined;
			let seen = 0;
			do {
				const p = { ...params, ...(cursor === undefined ? {} : { cursor }) };
				const full = await b.list(human, p);
				const rows = await b.listRows(human, p);
				assert.deepEqual(
					rows.cards.map(c => c.id),
					full.cards.map(c => c.id),
					JSON.stringify(p),
				);
				assert.deepEqual(rows.cards, full.cards.map(rowOf), JSON.stringify(p));
				assert.equal(rows.nextCursor, full.nextCursor, JSON.stringify(p));
				assert.deepEqual(rows.waitsOn, full.waitsOn, JSON.stringify(p));
				for (const row of rows.cards) {
					assert.deepEqual(
						Object.keys(row)
							.filter(k => !holdKeys.has(k))
							.sort(),
						rowKeys.filter(k => !holdKeys.has(k)),
						'every row has all of its fields, no more',
					);
					CardRow.strict().parse(row);
				}
				seen += rows.cards.length;
				cursor = rows.nextCursor;
			} while (cursor !== undefined);
			return seen;
		}

		it('is card/list cut to the row, for every filter, order and cursor', async () => {
			assert.equal(await same({}), 20);
			assert.equal(await same({ limit: 3 }), 20);
			assert.equal(await same({ readyOnly: true }), 11);
			assert.equal(await same({ readyOnly: true, limit: 5 }), 11);
			assert.equal(await same({ readyOnly: true, limit: 2, project: 'web' }), 11);
			assert.equal(await same({ status: 'done', order: 'recent', limit: 2 }), 3);
			assert.equal(await same({ order: 'recent', limit: 7 }), 20);
			assert.equal(await same({ status: ['claimed', 'blocked'] }), 2);
			assert.equal(await same({ status: 'review' }), 1);
			assert.equal(await same({ text: 'child' }), 2);
			assert.equal(await same({ label: 'api', limit: 1 }), 2);
			assert.equal(await same({ parent: 'epic' }), 2);
			assert.equal(await same({ phase: 'build' }), 1);
			assert.equal(await same({ owner: agent.actor }), 1);
			assert.equal(await same({ project: 'other', limit: 4 }), 19);
		});

		it('carries what an agent picks by, and none of the long texts', async () => {
			const { cards, waitsOn } = await b.listRows(human, { limit: 100 });
			const byId = new Map(cards.map(c => [c.id, c]));
			assert.deepEqual(waitsOn, { c2: ['c1'] });
			assert.deepEqual(
				{ ...byId.get('c2') },
				{
					id: 'c2',
					title: 'Child two',
					status: 'ready',
					priority: 0,
					phase: null,
					requires: [],
					dependsOn: ['c1'],
					unmetDeps: 1,
					deferUntil: null,
					claimOwner: null,
					review: 'none',
					failed: false,
					needsInput: false,
					project: null,
					labels: [],
					parent: 'epic',
					assignee: null,
				},
			);
			assert.equal(byId.get('later')!.deferUntil, '2026-05-02T00:00:00.000Z');
			assert.deepEqual(byId.get('cap')!.requires, ['gpu']);
			assert.equal(byId.get('cap')!.project, 'web');
			assert.equal(byId.get('bad')!.failed, true);
			assert.equal(byId.get('ask')!.needsInput, true);
			assert.equal(byId.get('ask')!.claimOwner, agent.actor);
			assert.equal(byId.get('rev')!.review, 'human');
			assert.deepEqual(byId.get('c1')!.labels, ['api', 'db']);
			for (const row of cards) {
				assert.ok(!('body' in row) && !('acceptance' in row) && !('result' in row), row.id);
			}
		});

		it('a cursor of either continues the other', async () => {
			const rows = await b.listRows(human, { limit: 4 });
			const full = await b.list(human, { limit: 4 });
			assert.equal(rows.nextCursor, full.nextCursor);
			const next = await b.list(human, { limit: 4, cursor: rows.nextCursor! });
			const nextRows = await b.listRows(human, { limit: 4, cursor: full.nextCursor! });
			assert.deepEqual(
				nextRows.cards.map(c => c.id),
				next.cards.map(c => c.id),
			);
		});
	});
}
