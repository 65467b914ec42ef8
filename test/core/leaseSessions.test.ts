/**
 * Lease sessions, in core on real PGlite and PostgreSQL: a lease belongs to the session that claimed it.
 * Another session, even under the same agent id and with the right epoch, cannot heartbeat, complete,
 * release, fail or reserve it, on the hot paths (claim, heartbeat, complete, complete {next}) and the
 * general ones (claim by id, release, fail, a review's lease) alike, and its pings renew nothing of it;
 * every refusal changes nothing. A claim without a session (the CLI) stays the agent id's, and a
 * human's force still overrides.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import type { Card } from '../../core/protocol';
import { backlogForSuite, storeKinds } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const human: OpContext = { actor: 'vscode:alice' };
const mine: OpContext = { actor: 'alpha', session: 'session-one-0123456789' };
const other: OpContext = { actor: 'alpha', session: 'session-two-0123456789' };
const noSession: OpContext = { actor: 'alpha' };
const otherSession = /in another session/;

let counter = 0;

for (const kind of storeKinds) {
	describe(`leases belong to their session on ${kind}`, () => {
		let b: Backlog;
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');
		backlogForSuite(kind, { clock }, t => {
			b = t.backlog;
		});

		const get = async (id: string): Promise<Card> => (await b.get(human, { cardId: id })).card;

		async function card(extra: { review?: 'agent' } = {}): Promise<string> {
			const id = `s${++counter}`;
			// The highest priority so far: a claim without an id picks this one.
			await b.create(human, { cards: [{ id, title: `Card ${id}`, priority: 10_000 + counter, ...extra }] });
			return id;
		}

		/** Every holder call from `who`, each refused with lease_lost naming the other session. */
		async function assertAllRefused(who: OpContext, id: string, epoch: number): Promise<void> {
			const before = await get(id);
			for (const e of [epoch, undefined]) {
				const epochArg = e === undefined ? {} : { epoch: e };
				await refused(b.heartbeat(who, { cardId: id, progress: 50, ...epochArg }), 'lease_lost', otherSession);
				await refused(b.complete(who, { cardId: id, result: 'not mine', ...epochArg }), 'lease_lost', otherSession);
				await refused(b.release(who, { cardId: id, ...epochArg }), 'lease_lost', otherSession);
				await refused(b.fail(who, { cardId: id, reason: 'not mine', ...epochArg }), 'lease_lost', otherSession);
				await refused(b.reserve(who, { cardId: id, paths: ['src/x.ts'], ...epochArg }), 'lease_lost', otherSession);
			}
			const after = await get(id);
			assert.equal(after.status, 'claimed');
			assert.equal(after.claimOwner, 'alpha');
			assert.equal(after.claimEpoch, before.claimEpoch);
			assert.equal(after.version, before.version, 'a refused call changes nothing');
			assert.equal(after.progress, null);
		}

		it("a claim on the hot path is its session's: the other session is refused everything", async () => {
			const id = await card();
			const claimed = await b.claim(mine, {});
			assert.equal(claimed.card?.id, id);
			const epoch = claimed.lease?.epoch ?? -1;
			await assertAllRefused(other, id, epoch);
			await assertAllRefused(noSession, id, epoch);
			const beat = await b.heartbeat(mine, { cardId: id, progress: 40 });
			assert.equal(beat.card.progress, 40);
			const done = await b.complete(mine, { cardId: id, epoch, result: 'mine' });
			assert.equal(done.card.status, 'done');
		});

		it("a claim by id (the general path) is its session's too; release and fail work for it", async () => {
			const id = await card();
			const claimed = await b.claim(mine, { cardId: id });
			await assertAllRefused(other, id, claimed.lease?.epoch ?? -1);
			assert.equal((await b.release(mine, { cardId: id })).card.status, 'ready');
			const again = await b.claim(mine, { cardId: id });
			await assertAllRefused(other, id, again.lease?.epoch ?? -1);
			assert.equal((await b.fail(mine, { cardId: id, reason: 'flaky' })).card.status, 'ready');
		});

		it('complete {next} hands the next card to the same session', async () => {
			const first = await card();
			const claimed = await b.claim(mine, { cardId: first });
			const second = await card();
			const done = await b.complete(mine, { cardId: first, epoch: claimed.lease?.epoch, next: {} });
			assert.equal(done.next?.card?.id, second);
			await assertAllRefused(other, second, done.next.lease?.epoch ?? -1);
			assert.equal((await b.complete(mine, { cardId: second })).card.status, 'done');
		});

		it("another session's pings renew nothing of this session's leases", async () => {
			const id = await card();
			await b.claim(mine, { cardId: id, ttlSeconds: 60 });
			const expiry = (await get(id)).leaseExpiresAt;
			clock.advance(10);
			assert.equal((await b.ping(other)).renewed, 0);
			assert.equal((await get(id)).leaseExpiresAt, expiry);
			assert.equal((await b.ping(mine)).renewed, 1);
			assert.notEqual((await get(id)).leaseExpiresAt, expiry);
			await b.complete(mine, { cardId: id });
		});

		it("a claim without a session (the CLI) stays the agent id's: another connection of it may act", async () => {
			const id = await card();
			const claimed = await b.claim(noSession, { cardId: id });
			await b.heartbeat({ actor: 'alpha' }, { cardId: id, progress: 10, epoch: claimed.lease?.epoch });
			// A session of the same agent may too: nobody bound this lease to a session.
			assert.equal((await b.complete(other, { cardId: id, epoch: claimed.lease?.epoch })).card.status, 'done');
		});

		it("a human's force overrides a session's lease, and fences the session out", async () => {
			const id = await card();
			const claimed = await b.claim(mine, { cardId: id });
			const done = await b.complete(human, { cardId: id, force: true, result: 'done by hand' });
			assert.equal(done.card.status, 'done');
			await refused(b.heartbeat(mine, { cardId: id, epoch: claimed.lease?.epoch }), 'lease_lost');
		});

		it("a review lease is the reviewing session's: the same agent id in another session cannot approve", async () => {
			const id = await card({ review: 'agent' });
			const author: OpContext = { actor: 'author', session: 'author-session-0123456789' };
			await b.claim(author, { cardId: id });
			await b.complete(author, { cardId: id, result: 'ready for review' });
			const reviewer: OpContext = { actor: 'rev', session: 'review-session-0123456789' };
			const impostor: OpContext = { actor: 'rev', session: 'impostor-session-01234567' };
			const taken = await b.claim(reviewer, { cardId: id, review: true, capabilities: ['review'] });
			const epoch = taken.lease?.epoch;
			await refused(b.review(impostor, { cardId: id, approve: true, epoch }, 'agent'), 'lease_lost', otherSession);
			await refused(b.release(impostor, { cardId: id, epoch }), 'lease_lost', otherSession);
			assert.equal((await get(id)).status, 'review');
			assert.equal((await get(id)).claimOwner, 'rev');
			const approved = await b.review(reviewer, { cardId: id, approve: true, epoch }, 'agent');
			assert.equal(approved.card.status, 'done');
		});
	});
}
