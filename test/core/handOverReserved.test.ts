/**
 * Every claim starts with no reservations: the one-statement claim (hotSql.ts) clears
 * `reserved` when it takes a card, and so must complete {next}'s hand-over, which on PostgreSQL is the
 * function baton_hand_over (migration 0011 had left it out). A ready card that still lists reserved
 * files (imported from an export that had them) shows the difference: before the fix, the card the
 * hand-over gave the next agent came with files it never asked for. Real PGlite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import { backlogForSuite, storeKinds } from '../helpers/backlog';
import { makeCard } from '../helpers/cards';

const human: OpContext = { actor: 'vscode:alice' };
const agent: OpContext = { actor: 'claude-code-1' };

for (const kind of storeKinds) {
	describe(`a claim's reservations start empty on ${kind}`, () => {
		let b: Backlog;
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');
		backlogForSuite(kind, { clock }, t => {
			b = t.backlog;
		});

		it('complete {next} hands over a card without the reservations it was stored with', async () => {
			await b.importCards(human, {
				cards: [
					makeCard({ id: 'H2', priority: 5, reserved: ['src/legacy/**'] }),
					makeCard({ id: 'H3', priority: 1, reserved: ['lock:db'] }),
				],
			});
			await b.create(human, { cards: [{ id: 'H1', title: 'first', priority: 9 }] });
			const first = await b.claim(agent, {});
			assert.equal(first.card?.id, 'H1');
			const done = await b.complete(agent, { cardId: 'H1', epoch: first.lease?.epoch, next: {} });
			assert.equal(done.next?.card?.id, 'H2');
			assert.deepEqual(done.next.card.reserved, []);
			assert.deepEqual((await b.get(human, { cardId: 'H2' })).card.reserved, []);
			// The plain claim says the same.
			await b.complete(agent, { cardId: 'H2', epoch: done.next.lease?.epoch });
			const third = await b.claim(agent, {});
			assert.equal(third.card?.id, 'H3');
			assert.deepEqual(third.card.reserved, []);
		});
	});
}
