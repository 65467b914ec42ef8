/**
 * Labels through the Backlog on real PGlite and PostgreSQL: create and edit store them
 * sorted without duplicates, list filters by one, claim {labels} takes only a card with one of them
 * (and says so when there is none), /metrics' count reads open cards by label; a bad label is refused
 * with one clear error and changes nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { Label, Labels } from '../../core/protocol';
import { backlogForSuite, storeKinds } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const human: OpContext = { actor: 'vscode:alice' };
const agent: OpContext = { actor: 'claude-code-1' };

for (const kind of storeKinds) {
	describe(`labels on ${kind}`, () => {
		let b: Backlog;
		backlogForSuite(kind, {}, t => {
			b = t.backlog;
		});

		it('stores labels sorted and unique, edits them, and lists by one', async () => {
			const { cards } = await b.create(human, {
				cards: [
					{ id: 'L1', title: 'ui work', labels: ['ui', 'area:web', 'ui'] },
					{ id: 'L2', title: 'api work', labels: ['api'] },
					{ id: 'L3', title: 'plain' },
				],
			});
			assert.deepEqual(
				cards.map(c => c.labels),
				[['area:web', 'ui'], ['api'], []],
			);
			const edited = await b.update(human, { cardId: 'L3', labels: ['team/web', 'api'] });
			assert.deepEqual(edited.card.labels, ['api', 'team/web']);
			const api = await b.list(human, { label: 'api' });
			assert.deepEqual(api.cards.map(c => c.id).sort(), ['L2', 'L3']);
			const byLabel = await b.countsByLabel();
			assert.deepEqual(
				byLabel.map(l => [l.label, l.n]),
				[
					['api', 2],
					['area:web', 1],
					['team/web', 1],
					['ui', 1],
				],
			);
		});

		it('claims only a card with one of the labels, and says why when none has them', async () => {
			await b.create(human, {
				cards: [
					{ id: 'C-hi', title: 'best, unlabelled', priority: 100 },
					{ id: 'C-ui', title: 'ui', priority: 1, labels: ['ui'] },
				],
			});
			const got = await b.claim(agent, { labels: ['ui', 'docs'] });
			assert.ok(got.card !== null);
			assert.ok(got.card.labels?.includes('ui'), `claimed ${got.card.id}`);
			const none = await b.claim(agent, { labels: ['docs'] });
			assert.equal(none.card, null);
			assert.match(none.reason ?? '', /^No claimable card has the label docs\. /);
			const plain = await b.claim(agent, {});
			assert.equal(plain.card?.id, 'C-hi');
		});

		it('complete {next: {labels}} claims the next card as claim {labels} would', async () => {
			await b.create(human, {
				cards: [
					{ id: 'N-ui1', title: 'ui one', phase: 'next-labels', priority: 50, labels: ['ui'] },
					{ id: 'N-hi', title: 'best, api', phase: 'next-labels', priority: 40, labels: ['api'] },
					{ id: 'N-ui2', title: 'ui two', phase: 'next-labels', priority: 1, labels: ['ui'] },
				],
			});
			const first = await b.claim(agent, { phase: 'next-labels', labels: ['ui'] });
			assert.equal(first.card?.id, 'N-ui1');
			const done = await b.complete(agent, {
				cardId: 'N-ui1',
				epoch: first.lease?.epoch,
				next: { phase: 'next-labels', labels: ['ui'] },
			});
			assert.ok(done.next !== undefined);
			assert.equal(done.next.card?.id, 'N-ui2');
			const last = await b.complete(agent, {
				cardId: 'N-ui2',
				epoch: done.next.lease?.epoch,
				next: { phase: 'next-labels', labels: ['ui'] },
			});
			assert.ok(last.next !== undefined);
			assert.equal(last.next.card, null);
			assert.match(last.next.reason ?? '', /^No claimable card has the label ui\. /);
			assert.equal((await b.get(human, { cardId: 'N-hi' })).card.status, 'ready');
		});

		it('refuses a bad label with one clear error and changes nothing', async () => {
			await b.create(human, { cards: [{ id: 'B1', title: 'x', labels: ['ok'] }] });
			const bad = await refused(b.update(human, { cardId: 'B1', labels: ['has space'] }), 'invalid_input');
			assert.match(bad.message, /Card B1: the label "has space" is not valid/);
			const many = Array.from({ length: 17 }, (_, i) => `l${i}`);
			const tooMany = await refused(
				b.create(human, { cards: [{ id: 'B2', title: 'x', labels: many }] }),
				'invalid_input',
			);
			assert.match(tooMany.message, /at most 16/);
			await refused(b.create(human, { cards: [{ id: 'B3', title: 'x', labels: ['x'.repeat(33)] }] }), 'invalid_input');
			assert.deepEqual((await b.get(human, { cardId: 'B1' })).card.labels, ['ok']);
			assert.equal((await b.list(human, { text: 'B2' })).cards.length, 0);
			// The wire schema refuses the same before anything reaches the hub.
			assert.equal(Label.safeParse('has space').success, false);
			assert.equal(Label.safeParse('area:web/ui_x-1').success, true);
			assert.equal(Labels.safeParse(many).success, false);
		});
	});
}
