/**
 * The review gate through the Backlog on real PGlite and PostgreSQL: a complete of a card
 * with review goes to `review` (lease ended, result kept, dependents waiting, event
 * `review_requested`); approve frees the dependents exactly as a plain complete (event `approved`);
 * request changes sends it back to ready with the note as the next claim's `handoff` and as the
 * attempt's reason, counts a failed attempt and parks the card past maxAttempts; agents take review
 * work with `claim {review: true}` under a lease. Every refusal (not in review, own work, no note, no
 * capability, a human-only card, a stale version) changes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import type { BacklogEvent, Card, ReviewMode } from '../../core/protocol';
import { openTestBacklog, storeKinds, type TestBacklog } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const human: OpContext = { actor: 'vscode:alice' };
const author: OpContext = { actor: 'claude-1' };
const reviewer: OpContext = { actor: 'codex-2' };
const reviewCaps = ['review'];

let counter = 0;

for (const kind of storeKinds) {
	describe(`review gate on ${kind}`, () => {
		let t: TestBacklog;
		let b: Backlog;
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');
		const committed: BacklogEvent[] = [];

		before(async () => {
			t = await openTestBacklog(kind, { clock });
			b = t.backlog;
			b.onCommitted(events => committed.push(...events));
		});
		after(async () => {
			await t.cleanup();
		});

		/** A card A with `review` and a dependent B; the author claims A and completes it into review. */
		async function inReview(review: ReviewMode, maxAttempts = 3): Promise<{ a: string; dep: string; card: Card }> {
			const a = `r${++counter}`;
			const dep = `${a}-dep`;
			await b.create(human, {
				cards: [
					{ id: a, title: 'Port the parser', review, maxAttempts, priority: 1_000 + counter },
					{ id: dep, title: 'Use the parser', dependsOn: [a] },
				],
			});
			const claimed = await b.claim(author, { cardId: a });
			const done = await b.complete(author, { cardId: a, epoch: claimed.lease?.epoch, result: 'commit abc1234' });
			return { a, dep, card: done.card };
		}

		const get = async (id: string): Promise<Card> => (await b.get(human, { cardId: id })).card;
		const lastEvent = (id: string): BacklogEvent | undefined => committed.filter(e => e.cardId === id).at(-1);

		it('a complete under review lands in review: lease ended, result kept, dependents wait', async () => {
			const { a, dep, card } = await inReview('human');
			assert.equal(card.status, 'review');
			assert.equal(card.claimOwner, null);
			assert.equal(card.leaseExpiresAt, null);
			assert.equal(card.result, 'commit abc1234');
			assert.equal(card.completedBy, author.actor);
			assert.equal((await get(dep)).unmetDeps, 1, 'the dependent keeps waiting');
			const event = lastEvent(a);
			assert.equal(event?.type, 'review_requested');
			assert.equal(event.data.result, 'commit abc1234');
			// The author is free: its next claim is other work, not this card.
			const next = await b.claim(author, {});
			assert.notEqual(next.card?.id, a);
			if (next.card !== null) {
				await b.release(author, { cardId: next.card.id });
			}
			assert.equal((await b.stats(human, {})).counts.review >= 1, true);
			assert.ok((await b.list(human, { status: 'review' })).cards.some(c => c.id === a));
		});

		it('a person approves work they completed only saying so (--own-work, logged); an agent never', async () => {
			const id = `r${++counter}`;
			await b.create(human, { cards: [{ id, title: 'A conflict Alice resolved herself', review: 'human' }] });
			const claimed = await b.claim(human, { cardId: id });
			await b.complete(human, { cardId: id, epoch: claimed.lease?.epoch, result: 'resolved by hand' });
			await refused(
				b.review(human, { cardId: id, approve: true }, 'human'),
				'conflict',
				/approving it approves your own work: .* `baton approve .* --own-work` \(recorded in its history\)/,
			);
			assert.equal((await get(id)).status, 'review');
			await refused(
				b.review(human, { cardId: id, approve: true, ownWork: true }, 'agent'),
				'conflict',
				/cannot review it/,
			);
			await b.review(human, { cardId: id, approve: true, ownWork: true }, 'human');
			assert.equal((await get(id)).status, 'done');
			assert.equal(lastEvent(id)?.type, 'approved');
			assert.equal(lastEvent(id)?.data.ownWork, true);
			// Someone else's approval never says own work, even when asked to.
			const other = await inReview('human');
			await b.review(human, { cardId: other.a, approve: true, ownWork: true }, 'human');
			assert.equal(lastEvent(other.a)?.data.ownWork, undefined);
		});

		it('a card without review completes to done as before (the one-statement path)', async () => {
			const id = `plain${++counter}`;
			await b.create(human, { cards: [{ id, title: 'Plain', priority: 999_999 }] });
			const claimed = await b.claim(author, { cardId: id });
			const done = await b.complete(author, { cardId: id, epoch: claimed.lease?.epoch });
			assert.equal(done.card.status, 'done');
			assert.equal(lastEvent(id)?.type, 'completed');
		});

		it('approve makes it done and frees its dependents, with event approved', async () => {
			const { a, dep, card } = await inReview('human');
			const approved = await b.review(human, { cardId: a, approve: true, version: card.version }, 'human');
			assert.equal(approved.card.status, 'done');
			assert.deepEqual(approved.unblocked, [dep]);
			assert.equal((await get(dep)).unmetDeps, 0);
			const event = lastEvent(a);
			assert.equal(event?.type, 'approved');
			assert.deepEqual(event.data.readiness, [{ id: dep, unmetDeps: 0 }]);
			const attempts = (await b.get(human, { cardId: a })).attempts;
			assert.equal(attempts.at(-1)?.outcome, 'approved');
			assert.equal(attempts.at(-1)?.result, 'commit abc1234');
		});

		it('request changes: back to ready, same priority, the note handed to the next claim', async () => {
			const { a, dep, card } = await inReview('human');
			const note = 'Use the v2 API, not v1.';
			const sent = await b.review(human, { cardId: a, approve: false, note }, 'human');
			assert.equal(sent.card.status, 'ready');
			assert.equal(sent.card.priority, card.priority);
			assert.equal(sent.card.handoff, note);
			assert.equal(sent.card.result, null);
			assert.deepEqual(sent.unblocked, []);
			assert.equal((await get(dep)).unmetDeps, 1);
			assert.equal(lastEvent(a)?.type, 'changes_requested');
			const shown = await b.get(human, { cardId: a });
			assert.equal(shown.attempts.at(-1)?.outcome, 'changes requested');
			assert.equal(shown.attempts.at(-1)?.reason, note);
			// The next claimer gets the note; the card counts the rejected attempt.
			const again = await b.claim(reviewer, { cardId: a });
			assert.equal(again.handoff, note);
			assert.equal(again.card?.attempts, 2);
			// Its next complete goes to review again and clears the hand-over.
			const back = await b.complete(reviewer, { cardId: a, result: 'v2 now' });
			assert.equal(back.card.status, 'review');
			assert.equal(back.card.handoff, null);
		});

		it('request changes past maxAttempts parks the card in blocked with the note', async () => {
			const { a } = await inReview('human', 1);
			const sent = await b.review(human, { cardId: a, approve: false, note: 'Still wrong' }, 'human');
			assert.equal(sent.card.status, 'blocked');
			assert.equal(sent.card.failed, true);
			assert.match(sent.card.blockedReason ?? '', /changes requested after 1 of 1 attempts: Still wrong/);
		});

		it('refuses, changing nothing: not in review, own work, no note, stale version', async () => {
			const { a, card } = await inReview('human');
			const before = await get(a);
			const seqBefore = (await b.stats(human, {})).lastSeq;
			await refused(b.review(author, { cardId: a, approve: true }, 'human'), 'conflict', /You completed card/);
			await refused(b.review(human, { cardId: a, approve: false }, 'human'), 'invalid_input', /needs a note/);
			await refused(
				b.review(human, { cardId: a, approve: false, note: '  ' }, 'human'),
				'invalid_input',
				/needs a note/,
			);
			await refused(
				b.review(human, { cardId: a, approve: true, version: card.version - 1 }, 'human'),
				'conflict',
				/changed since you looked/,
			);
			await refused(b.review(human, { cardId: 'nope', approve: true }, 'human'), 'not_found', /does not exist/);
			const plain = `p${++counter}`;
			await b.create(human, { cards: [{ id: plain, title: 'Not in review' }] });
			await refused(b.review(human, { cardId: plain, approve: true }, 'human'), 'invalid_transition', /not in review/);
			await refused(b.claim(reviewer, { cardId: a }), 'invalid_transition', /waits for a review/);
			await refused(
				b.complete(author, { cardId: a, force: true }),
				'invalid_transition',
				/Approve it or request changes/,
			);
			assert.deepEqual(await get(a), before);
			// Only the plain card's creation was logged meanwhile.
			assert.equal((await b.stats(human, {})).lastSeq, seqBefore + 1);
		});

		it('agent review: claim {review} needs the capability, never the own work, and holds a lease', async () => {
			const { a, dep } = await inReview('agent');
			await refused(b.claim(reviewer, { review: true }), 'invalid_input', /capability 'review'/);
			await refused(
				b.claim(author, { review: true, capabilities: reviewCaps, cardId: a }),
				'conflict',
				/You completed/,
			);
			// An agent cannot approve without holding the review.
			await refused(b.review(reviewer, { cardId: a, approve: true }, 'agent'), 'invalid_transition', /do not hold/);
			const took = await b.claim(reviewer, { review: true, capabilities: reviewCaps });
			assert.equal(took.card?.id, a);
			assert.equal(took.card.status, 'review');
			assert.equal(took.card.claimOwner, reviewer.actor);
			assert.ok(took.lease !== null);
			// Nobody else takes the same review meanwhile.
			const other = await b.claim({ actor: 'gemini-3' }, { review: true, capabilities: reviewCaps });
			assert.notEqual(other.card?.id, a);
			await refused(
				b.review(reviewer, { cardId: a, approve: true, epoch: took.lease.epoch - 1 }, 'agent'),
				'lease_lost',
				/superseded/,
			);
			// The reviewer's heartbeat keeps the lease.
			await b.heartbeat(reviewer, { cardId: a, epoch: took.lease.epoch, progress: 50 });
			const approved = await b.review(reviewer, { cardId: a, approve: true, epoch: took.lease.epoch }, 'agent');
			assert.equal(approved.card.status, 'done');
			assert.equal(approved.card.claimOwner, null);
			assert.deepEqual(approved.unblocked, [dep]);
			// The review claim was not an attempt at the work.
			assert.equal((await b.get(human, { cardId: a })).attempts.length, 1);
		});

		it('an agent cannot review a card that waits for a human', async () => {
			const { a } = await inReview('human');
			await refused(
				b.claim(reviewer, { review: true, capabilities: reviewCaps, cardId: a }),
				'invalid_transition',
				/human's review/,
			);
			await refused(b.review(reviewer, { cardId: a, approve: true }, 'agent'), 'invalid_transition', /human's review/);
		});

		it('an expired review lease is reclaimed: the card stays in review for the next reviewer', async () => {
			const { a } = await inReview('agent');
			const took = await b.claim(reviewer, { review: true, capabilities: reviewCaps, cardId: a, ttlSeconds: 5 });
			assert.equal(took.card?.claimOwner, reviewer.actor);
			clock.advance(6);
			const reclaimed = await b.reclaim(human, {});
			const card = reclaimed.cards.find(c => c.id === a);
			assert.equal(card?.status, 'review');
			assert.equal(card.claimOwner, null);
			await refused(
				b.review(reviewer, { cardId: a, approve: true, epoch: took.lease?.epoch }, 'agent'),
				'invalid_transition',
				/do not hold/,
			);
			const next = await b.claim({ actor: 'gemini-3' }, { review: true, capabilities: reviewCaps, cardId: a });
			assert.equal(next.card?.claimOwner, 'gemini-3');
			// A human may still decide while an agent reviews: the reviewer is fenced out.
			const approved = await b.review(human, { cardId: a, approve: true }, 'human');
			assert.equal(approved.card.status, 'done');
			assert.equal(lastEvent(a)?.data.previousOwner, 'gemini-3');
		});

		it('the backlog setting gives review to new cards that do not say; update changes it per card', async () => {
			await b.updateSettings(human, { review: 'human' });
			try {
				const id = `s${++counter}`;
				const created = await b.create(human, {
					cards: [
						{ id, title: 'Gated by default' },
						{ id: `${id}-n`, title: 'Opted out', review: 'none' },
					],
				});
				assert.equal(created.cards[0]?.review, 'human');
				assert.equal(created.cards[1]?.review, 'none');
				const edited = await b.update(human, { cardId: id, review: 'agent' });
				assert.equal(edited.card.review, 'agent');
			} finally {
				await b.updateSettings(human, { review: 'none' });
			}
			assert.equal((await b.settings()).review, 'none');
		});
	});
}
