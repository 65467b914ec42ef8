/**
 * Links that do not block through the Backlog on real PGlite and PostgreSQL: related cards
 * are kept on both (an import's too) and removed from both, duplicates on the duplicating card; neither changes
 * readiness; a card created by an agent while it holds another records it as discoveredFrom and takes
 * its parent unless it names one; unknown ids and a card linked to itself are refused, nothing changed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import type { BacklogEvent } from '../../core/protocol';
import { backlogForSuite, storeKinds } from '../helpers/backlog';
import { makeCard } from '../helpers/cards';
import { refused } from '../helpers/refused';

const human: OpContext = { actor: 'vscode:alice' };
const agent: OpContext = { actor: 'claude-code-1' };

for (const kind of storeKinds) {
	describe(`links that do not block on ${kind}`, () => {
		let b: Backlog;
		const committed: BacklogEvent[] = [];
		backlogForSuite(kind, {}, t => {
			b = t.backlog;
			b.onCommitted(events => committed.push(...events));
		});
		const get = async (id: string) => (await b.get(human, { cardId: id })).card;

		it('keeps related on both cards, duplicates on one, and neither blocks', async () => {
			await b.create(human, {
				cards: [
					{ id: 'R1', title: 'one' },
					{ id: 'R2', title: 'two' },
					{ id: 'R3', title: 'three' },
				],
			});
			const linked = await b.link(human, { cardId: 'R1', related: ['R2'], duplicates: ['R3'] });
			assert.deepEqual(linked.card.related, ['R2']);
			assert.deepEqual(linked.card.duplicates, ['R3']);
			assert.deepEqual((await get('R2')).related, ['R1']);
			assert.deepEqual((await get('R3')).related, []);
			assert.equal(linked.card.unmetDeps, 0);
			const ready = await b.list(human, { readyOnly: true });
			assert.deepEqual(ready.cards.map(c => c.id).sort(), ['R1', 'R2', 'R3']);
			const again = await b.link(human, { cardId: 'R2', related: ['R1'] });
			assert.deepEqual(again.card.related, ['R1']);
			const unlinked = await b.unlink(human, { cardId: 'R2', related: ['R1'] });
			assert.deepEqual(unlinked.card.related, []);
			assert.deepEqual((await get('R1')).related, []);
		});

		it('gives imported related links back to the cards they name, imported with them or before', async () => {
			await b.create(human, { cards: [{ id: 'I0', title: 'already here' }] });
			await b.importCards(human, {
				cards: [makeCard({ id: 'I1', related: ['I0', 'I2'] }), makeCard({ id: 'I2', related: [] })],
			});
			assert.deepEqual((await get('I1')).related, ['I0', 'I2']);
			assert.deepEqual((await get('I2')).related, ['I1']);
			assert.deepEqual((await get('I0')).related, ['I1']);
			const told = committed.find(e => e.cardId === 'I0' && e.type === 'updated');
			assert.deepEqual(told?.data.card?.related, ['I1']);
		});

		it('records the card an agent holds as discoveredFrom, with its parent, on what it creates', async () => {
			await b.create(human, {
				cards: [
					{ id: 'D-E', title: 'epic', phase: 'disc' },
					{ id: 'D-1', title: 'child', phase: 'disc', parent: 'D-E' },
					{ id: 'D-O', title: 'other epic', phase: 'disc-x' },
				],
			});
			const held = await b.claim(agent, { cardId: 'D-1' });
			assert.ok(held.card !== null);
			const made = await b.create(agent, {
				cards: [
					{ id: 'D-2', title: 'found while doing D-1' },
					{ id: 'D-3', title: 'found, elsewhere', parent: 'D-O' },
				],
			});
			assert.deepEqual(
				made.cards.map(c => [c.id, c.discoveredFrom, c.parent]),
				[
					['D-2', 'D-1', 'D-E'],
					['D-3', 'D-1', 'D-O'],
				],
			);
			const byHuman = await b.create(human, { cards: [{ id: 'D-4', title: 'plain' }] });
			assert.equal(byHuman.cards[0]?.discoveredFrom, null);
		});

		it('refuses unknown ids and a card linked to itself, changing nothing', async () => {
			await b.create(human, { cards: [{ id: 'X1', title: 'x' }] });
			await refused(b.link(human, { cardId: 'X1', related: ['nope'] }), 'not_found', /nope/);
			await refused(b.link(human, { cardId: 'X1', duplicates: ['X1'] }), 'invalid_input', /itself/);
			await refused(b.link(human, { cardId: 'X1' }), 'invalid_input', /dependsOn, related or duplicates/);
			const x = await get('X1');
			assert.deepEqual([x.related, x.duplicates, x.version], [[], [], 1]);
		});
	});
}
