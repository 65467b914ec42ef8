/**
 * One vocabulary for a card's state, computed by core/rules/claimable.ts and the backlog
 * on real PGlite and PostgreSQL: a ready card is exactly one of ready (claimable now), waiting or
 * deferred, and the stats add up to those words; a list names only the dependencies a card still
 * waits on; card/get's dependencies carry enough to say `waiting` for a waiting one; list, stats and
 * claim narrow by project with one rule (null: only cards without one); and a claim that finds
 * nothing in its project names the claimable cards of other projects and how to take them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { refStateWord, stateWord } from '../../core/rules/claimable';
import { ManualClock } from '../../core/clock';
import { backlogForSuite, storeKinds } from '../helpers/backlog';

const human: OpContext = { actor: 'vscode:alice' };
const agent: OpContext = { actor: 'claude-code-1' };
const web = 'github.com/acme/web';
const api = 'github.com/acme/api';

for (const kind of storeKinds) {
	describe(`derived words on ${kind}`, () => {
		let b: Backlog;
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');
		backlogForSuite(kind, { clock }, t => {
			b = t.backlog;
		});

		it('a waiting card says waiting everywhere, and its WAITS never name a done dependency', async () => {
			await b.create(human, {
				cards: [
					{ id: 'D1', title: 'first dependency', priority: 50 },
					{ id: 'D2', title: 'second dependency', priority: 40 },
					{ id: 'W1', title: 'waits on both', dependsOn: ['D1', 'D2'] },
					{ id: 'W2', title: 'waits on the waiting one', dependsOn: ['W1'] },
				],
			});
			await b.complete(human, { cardId: 'D1', force: true });
			const now = clock.now();
			const page = await b.list(human, { status: 'ready' });
			const words = Object.fromEntries(page.cards.map(c => [c.id, stateWord(c, now)]));
			assert.deepEqual(words, { D2: 'ready', W1: 'waiting', W2: 'waiting' });
			// D1 is done: W1 waits only on D2.
			assert.deepEqual(page.waitsOn, { W1: ['D2'], W2: ['W1'] });
			// show's dependency lines: W2's dependency W1 is waiting, not "ready".
			const shown = await b.get(human, { cardId: 'W2' });
			assert.deepEqual(
				shown.dependencies.map(d => [d.id, refStateWord(d, now)]),
				[['W1', 'waiting']],
			);
			const w1 = await b.get(human, { cardId: 'W1' });
			assert.deepEqual(
				w1.dependencies.map(d => [d.id, refStateWord(d, now)]),
				[
					['D1', 'done'],
					['D2', 'ready'],
				],
			);
			assert.deepEqual(
				w1.dependents.map(d => [d.id, refStateWord(d, now)]),
				[['W2', 'waiting']],
			);
			// A list with no waiting card carries no waitsOn.
			assert.equal((await b.list(human, { readyOnly: true })).waitsOn, undefined);
		});

		it('a deferred card says deferred until its deferUntil, and stats add up to the words', async () => {
			await b.create(human, { cards: [{ id: 'F1', title: 'fails once', priority: 90 }] });
			const claimed = await b.claim(agent, { cardId: 'F1' });
			await b.fail(agent, { cardId: 'F1', epoch: claimed.lease?.epoch, reason: 'flaky', backoffSeconds: 60 });
			const now = clock.now();
			const card = (await b.get(human, { cardId: 'F1' })).card;
			assert.equal(stateWord(card, now), 'deferred');
			const listed = (await b.list(human, { status: 'ready' })).cards;
			const count = (word: string): number => listed.filter(c => stateWord(c, now) === word).length;
			const stats = await b.stats(human, {});
			assert.deepEqual(
				[stats.claimable, stats.waiting, stats.deferred, stats.counts.ready],
				[count('ready'), count('waiting'), count('deferred'), listed.length],
			);
			clock.advance(60);
			assert.equal(stateWord(card, clock.now()), 'ready');
		});

		it('list, stats and claim narrow by project with one rule; null is only cards without one', async () => {
			await b.create(human, {
				cards: [
					{ id: 'P1', title: 'web one', project: web },
					{ id: 'P2', title: 'web two', project: web },
					{ id: 'P3', title: 'api one', project: api },
				],
			});
			const ids = async (project: string | null): Promise<string[]> =>
				(await b.list(human, { status: 'ready', project })).cards.map(c => c.id).sort();
			const none = ['D2', 'F1', 'W1', 'W2'];
			assert.deepEqual(await ids(null), none);
			assert.deepEqual(await ids(web), [...none, 'P1', 'P2'].sort());
			const all = await b.stats(human, {});
			const mine = await b.stats(human, { project: null });
			const withWeb = await b.stats(human, { project: web });
			assert.deepEqual(await b.stats(human, { project: '*' }), all);
			assert.equal(mine.counts.ready, none.length);
			assert.equal(withWeb.counts.ready, none.length + 2);
			assert.equal(all.counts.ready, none.length + 3);
			assert.equal(all.claimable - mine.claimable, 3);
			assert.equal(mine.total, (await b.list(human, { project: null, limit: 500 })).cards.length);
		});

		it('a claim with nothing in its project names the other projects and how to take them', async () => {
			// Take the claimable cards without a project (F1's backoff is over, then D2); W1 and W2 wait.
			assert.equal((await b.claim(agent, { project: null })).card?.id, 'F1');
			assert.equal((await b.claim(agent, { project: null })).card?.id, 'D2');
			const nothing = await b.claim(agent, { project: null });
			assert.equal(nothing.card, null);
			assert.match(
				nothing.reason ?? '',
				/3 claimable cards are in other projects \(github\.com\/acme\/web 2, github\.com\/acme\/api 1\): claim with project '\*' or project github\.com\/acme\/web/,
			);
			assert.doesNotMatch(nothing.reason ?? '', /nothing left to do/);
			// With every card of its own done, it still names them instead of "nothing left to do".
			for (const id of ['D2', 'W1', 'W2', 'F1']) {
				await b.complete(human, { cardId: id, force: true });
			}
			const empty = await b.claim(agent, { project: null });
			assert.equal(
				empty.reason,
				"No cards without a project are ready; 3 claimable cards are in other projects (github.com/acme/web 2, github.com/acme/api 1): claim with project '*' or project github.com/acme/web.",
			);
			// Any project: no such note.
			assert.equal((await b.claim(agent, { project: '*' })).card?.project !== null, true);
		});
	});
}
