/**
 * Lifecycle correctness on real PGlite and PostgreSQL: the DAG invariant under reopen and link, the
 * forced reopen and what its dependents' holders are told, failure bookkeeping (a release gives the
 * attempt back, failures back off exponentially, a card that used up its attempts is marked failed with
 * its reasons) and the stall policy. Fake clock, no sleeps.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import type { Card } from '../../core/protocol';
import { openTestBacklog, storeKinds, type TestBacklog } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const alice: OpContext = { actor: 'alice' };
const bob: OpContext = { actor: 'bob' };
const human: OpContext = { actor: 'vscode:human' };

let counter = 0;
const prefix = (): string => `l${++counter}-`;

for (const kind of storeKinds) {
	describe(`lifecycle on ${kind}`, () => {
		let t: TestBacklog;
		let b: Backlog;
		const clock = new ManualClock('2026-05-01T09:00:00.000Z');
		const card = async (id: string): Promise<Card> => (await b.get(human, { cardId: id })).card;

		before(async () => {
			t = await openTestBacklog(kind, { clock, defaultTtlSeconds: 120 });
			b = t.backlog;
		});
		after(async () => {
			await t.cleanup();
		});

		describe('reopen keeps the dependency gate', () => {
			it('refuses to reopen a card whose dependents are claimed or done, naming them, and changes nothing', async () => {
				const p = prefix();
				await b.create(alice, {
					cards: [
						{ id: `${p}A`, title: 'A' },
						{ id: `${p}B`, title: 'B', dependsOn: [`${p}A`] },
						{ id: `${p}C`, title: 'C', dependsOn: [`${p}A`] },
					],
				});
				await b.complete(human, { cardId: `${p}A`, force: true });
				await b.claim(bob, { cardId: `${p}B` });
				await b.complete(human, { cardId: `${p}C`, force: true });
				const seq = await b.lastSeq();
				const e = await refused(
					b.reopen(human, { cardId: `${p}A` }),
					'has_dependents',
					new RegExp(`${p}B \\(claimed by bob\\), ${p}C \\(done\\) were built on it\\. Reopen with force`),
				);
				assert.deepEqual((e.data as { dependents: string[] }).dependents, [`${p}B`, `${p}C`]);
				assert.equal(await b.lastSeq(), seq, 'a refused reopen logs nothing');
				assert.equal((await card(`${p}A`)).status, 'done');
				assert.equal((await card(`${p}B`)).status, 'claimed');
			});

			it('forced: the claimed dependent waits again and its holder learns why; the done one is flagged', async () => {
				const p = prefix();
				await b.create(alice, {
					cards: [
						{ id: `${p}A`, title: 'A' },
						{ id: `${p}B`, title: 'B', dependsOn: [`${p}A`] },
						{ id: `${p}C`, title: 'C', dependsOn: [`${p}A`] },
						{ id: `${p}D`, title: 'D', dependsOn: [`${p}A`] },
					],
				});
				await b.complete(human, { cardId: `${p}A`, force: true });
				const held = await b.claim(bob, { cardId: `${p}B` });
				const epoch = held.lease?.epoch ?? -1;
				await b.complete(human, { cardId: `${p}C`, force: true });
				const seq = await b.lastSeq();

				const out = await b.reopen(human, { cardId: `${p}A`, reason: 'the schema was wrong', force: true });
				assert.equal(out.card.status, 'ready');
				assert.deepEqual(out.requeued, [`${p}B`]);
				assert.deepEqual(out.flagged, [`${p}C`]);

				const bCard = await card(`${p}B`);
				assert.equal(bCard.status, 'ready');
				assert.equal(bCard.unmetDeps, 1, 'B waits for A again');
				assert.equal(bCard.claimOwner, null);
				assert.equal(bCard.attempts, 0, 'losing the claim to a reopen does not use up an attempt');
				assert.equal((await card(`${p}D`)).unmetDeps, 1, 'a ready dependent waits again');

				// The former holder's next call: lease_lost, with what ended its claim.
				const lost = await refused(b.heartbeat(bob, { cardId: `${p}B`, epoch }), 'lease_lost');
				assert.match(lost.message, new RegExp(`dependency ${p}A was reopened \\(the schema was wrong\\)`));
				await refused(b.complete(bob, { cardId: `${p}B`, epoch }), 'lease_lost', /was reopened/);
				await refused(b.claim(bob, { cardId: `${p}B` }), 'invalid_transition', /waits on 1 unfinished dependency/);

				const events = await b.eventsAfter(seq, 20);
				assert.deepEqual(
					events.map(e => [e.type, e.cardId]),
					[
						['reopened', `${p}A`],
						['released', `${p}B`],
						['updated', `${p}C`],
					],
				);
				assert.equal(events[0]?.data.forced, true);
				assert.equal(events[2]?.data.builtOnReopened, `${p}A`);
				assert.match(events[2].data.reason ?? '', /built on .*A, which was reopened/);
				const history = (await b.get(human, { cardId: `${p}C` })).history;
				assert.ok(
					history.some(h => h.data.builtOnReopened === `${p}A`),
					'the flag is in the done card’s history',
				);
			});

			it('reopens without force when the dependents are only ready', async () => {
				const p = prefix();
				await b.create(alice, {
					cards: [
						{ id: `${p}A`, title: 'A' },
						{ id: `${p}B`, title: 'B', dependsOn: [`${p}A`] },
					],
				});
				await b.complete(human, { cardId: `${p}A`, force: true });
				assert.equal((await card(`${p}B`)).unmetDeps, 0);
				await b.reopen(human, { cardId: `${p}A` });
				assert.equal((await card(`${p}B`)).unmetDeps, 1);
			});

			it('refuses to make a claimed or done card wait on an unfinished one', async () => {
				const p = prefix();
				await b.create(alice, {
					cards: [
						{ id: `${p}X`, title: 'X' },
						{ id: `${p}Y`, title: 'Y' },
						{ id: `${p}Z`, title: 'Z' },
						{ id: `${p}W`, title: 'W' },
					],
				});
				await b.claim(bob, { cardId: `${p}X` });
				await b.complete(human, { cardId: `${p}Y`, force: true });
				const seq = await b.lastSeq();
				await refused(
					b.link(human, { cardId: `${p}X`, dependsOn: `${p}Z` }),
					'invalid_transition',
					/is claimed by agent bob; it cannot start waiting on .*Z, which is not done\. Release it first/,
				);
				await refused(
					b.link(human, { cardId: `${p}Y`, dependsOn: `${p}Z` }),
					'invalid_transition',
					/is done; it cannot depend on .*Z, which is not done\. Reopen it first/,
				);
				assert.equal(await b.lastSeq(), seq);
				assert.deepEqual((await card(`${p}X`)).dependsOn, []);
				// A done dependency is fine for either.
				await b.complete(human, { cardId: `${p}W`, force: true });
				await b.link(human, { cardId: `${p}X`, dependsOn: `${p}W` });
				assert.equal((await card(`${p}X`)).unmetDeps, 0);
			});
		});

		describe('failure bookkeeping', () => {
			it('a voluntary release gives the attempt back', async () => {
				const p = prefix();
				await b.create(alice, { cards: [{ id: `${p}r`, title: 'r', maxAttempts: 1 }] });
				for (let i = 0; i < 3; i++) {
					const c = await b.claim(bob, { cardId: `${p}r` });
					assert.equal(c.card?.attempts, 1);
					const released = await b.release(bob, { cardId: `${p}r`, epoch: c.lease?.epoch, reason: 'busy' });
					assert.equal(released.card.attempts, 0);
				}
			});

			it('failures back off exponentially by the backlog setting, capped, and per card', async () => {
				const p = prefix();
				const settings = await b.updateSettings(human, { backoffSeconds: 10, backoffMaxSeconds: 25 });
				assert.deepEqual(settings, {
					backoffSeconds: 10,
					backoffMaxSeconds: 25,
					stallReleaseSeconds: 0,
					review: 'none',
					progressEventsPerCard: 50,
					progressEventDays: 90,
					agentRetentionDays: 7,
					idPrefix: 'CARD',
					maxHeld: null,
					agingHours: null,
				});
				assert.deepEqual(await b.settings(), settings);
				await b.create(alice, {
					cards: [
						{ id: `${p}f`, title: 'flaky', maxAttempts: 5 },
						{ id: `${p}g`, title: 'own policy', maxAttempts: 5, backoffSeconds: 0 },
					],
				});
				const delays: number[] = [];
				for (let i = 0; i < 4; i++) {
					const c = await b.claim(bob, { cardId: `${p}f` });
					const failed = await b.fail(bob, { cardId: `${p}f`, epoch: c.lease?.epoch, reason: `red ${i}` });
					delays.push((Date.parse(failed.card.deferUntil ?? '') - clock.now().getTime()) / 1000);
					clock.advance(30);
				}
				assert.deepEqual(delays, [10, 20, 25, 25]);
				const g = await b.claim(bob, { cardId: `${p}g` });
				const gFailed = await b.fail(bob, { cardId: `${p}g`, epoch: g.lease?.epoch, reason: 'red' });
				assert.equal(gFailed.card.deferUntil, null, "a card's own backoff of 0 turns it off");
				assert.equal(gFailed.card.backoffSeconds, 0);
				await b.updateSettings(human, { backoffSeconds: 30, backoffMaxSeconds: 3600 });
			});

			it('a card that used up its attempts is failed with its last reasons, unlike a parked one', async () => {
				const p = prefix();
				await b.create(alice, {
					cards: [
						{ id: `${p}f`, title: 'f', maxAttempts: 2, backoffSeconds: 0 },
						{ id: `${p}h`, title: 'h' },
					],
				});
				const one = await b.claim(bob, { cardId: `${p}f` });
				await b.fail(bob, { cardId: `${p}f`, epoch: one.lease?.epoch, reason: 'oom' });
				const two = await b.claim(bob, { cardId: `${p}f` });
				const parked = await b.fail(bob, { cardId: `${p}f`, epoch: two.lease?.epoch, reason: 'timeout' });
				assert.equal(parked.card.status, 'blocked');
				assert.equal(parked.card.failed, true);
				assert.equal(parked.card.blockedReason, 'failed 2 of 2 attempts; last: timeout; before: oom');
				const humanParked = await b.block(human, { cardId: `${p}h`, reason: 'needs a decision' });
				assert.equal(humanParked.card.failed, false);
				const retried = await b.unblock(human, { cardId: `${p}f` });
				assert.equal(retried.card.failed, false);
				assert.equal(retried.card.blockedReason, null);
			});
		});

		describe('stall policy', () => {
			it('releases a claim without progress for the card’s stallReleaseSeconds, with a hand-over note', async () => {
				// Let every earlier test's lease run out, so the next timer is this test's alone.
				clock.advance(3600);
				await b.reclaim({ actor: 'hub' }, {});
				assert.equal(await b.nextLeaseExpiry(), null);
				const p = prefix();
				await b.create(alice, {
					cards: [
						{ id: `${p}s`, title: 'stalls', stallReleaseSeconds: 60 },
						{ id: `${p}n`, title: 'never', stallReleaseSeconds: 0 },
					],
				});
				const s = await b.claim(bob, { cardId: `${p}s`, ttlSeconds: 3600 });
				await b.claim(alice, { cardId: `${p}n`, ttlSeconds: 3600 });
				const due = await b.nextLeaseExpiry();
				assert.equal(due?.toISOString(), new Date(clock.now().getTime() + 60_000).toISOString());
				assert.equal(b.stallDueAt(s.card), due.toISOString(), 'the hub’s hint agrees with the store');
				clock.advance(40);
				await b.heartbeat(bob, { cardId: `${p}s`, epoch: s.lease?.epoch, progress: 10 }); // progress resets it
				clock.advance(40);
				assert.deepEqual((await b.reclaim({ actor: 'hub' }, {})).cards, []);
				clock.advance(21);
				const { cards } = await b.reclaim({ actor: 'hub' }, {});
				assert.deepEqual(
					cards.map(c => [c.id, c.status]),
					[[`${p}s`, 'ready']],
				);
				const { attempts } = await b.get(human, { cardId: `${p}s` });
				assert.equal(attempts[0]?.outcome, 'reclaimed');
				assert.match(attempts[0].reason ?? '', /no progress for 60 s \(stall policy\)/);
				assert.equal((await card(`${p}n`)).status, 'claimed', 'a card whose policy is 0 is never released');
				await refused(b.heartbeat(bob, { cardId: `${p}s`, epoch: s.lease?.epoch }), 'lease_lost', /stall policy/);
			});

			it('the backlog setting applies to cards without their own', async () => {
				const p = prefix();
				await b.updateSettings(human, { stallReleaseSeconds: 30 });
				await b.create(alice, { cards: [{ id: `${p}d`, title: 'default policy' }] });
				await b.claim(bob, { cardId: `${p}d`, ttlSeconds: 3600 });
				clock.advance(31);
				const { cards } = await b.reclaim({ actor: 'hub' }, {});
				assert.ok(cards.some(c => c.id === `${p}d`));
				await b.updateSettings(human, { stallReleaseSeconds: 0 });
				// Leave no claim behind for later tests' reclaims.
				await b.reclaim(human, {});
			});
		});
	});
}
