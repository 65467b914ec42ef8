/**
 * The core half of landing an approval on real PGlite and PostgreSQL: `checkApproval`
 * refuses exactly what an approval is refused (the same rules, nothing written) and says `replay` for a
 * request key that already has its answer; `landConflict` sends an approvable card back to ready with
 * the conflict as the hand-over (event `land_conflicted` with the files), not as a failed attempt, so
 * it never parks; the dependents keep waiting and the next claimer reads the hand-over.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import type { BacklogEvent, Card, ReviewMode } from '../../core/protocol';
import { backlogForSuite, storeKinds } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const human: OpContext = { actor: 'vscode:alice' };
const author: OpContext = { actor: 'claude-1' };
const reviewerAgent: OpContext = { actor: 'codex-2', session: 's-codex-2' };

let counter = 0;

for (const kind of storeKinds) {
	describe(`landing conflicts and the approval check on ${kind}`, () => {
		let b: Backlog;
		const committed: BacklogEvent[] = [];
		backlogForSuite(kind, { clock: new ManualClock('2026-03-01T09:00:00.000Z') }, t => {
			b = t.backlog;
			b.onCommitted(events => committed.push(...events));
		});

		async function inReview(review: ReviewMode, maxAttempts = 3): Promise<{ a: string; dep: string; card: Card }> {
			const a = `lc${++counter}`;
			const dep = `${a}-dep`;
			await b.create(human, {
				cards: [
					{ id: a, title: 'Port the parser', review, maxAttempts, priority: 1_000 + counter },
					{ id: dep, title: 'Use the parser', dependsOn: [a] },
				],
			});
			const claimed = await b.claim(author, { cardId: a });
			const done = await b.complete(author, { cardId: a, epoch: claimed.lease?.epoch, result: 'done' });
			return { a, dep, card: done.card };
		}
		const get = async (id: string): Promise<Card> => (await b.get(human, { cardId: id })).card;

		it('checkApproval allows what approve allows and refuses what it refuses, writing nothing', async () => {
			const { a, card } = await inReview('human');
			const seq = (await b.stats(human, {})).lastSeq;
			const ok = await b.checkApproval(human, { cardId: a, approve: true }, 'human');
			assert.ok(!ok.replay);
			assert.equal(ok.card.id, a);
			await refused(b.checkApproval(author, { cardId: a, approve: true }, 'human'), 'conflict', /You completed card/);
			await refused(
				b.checkApproval(human, { cardId: a, approve: true, version: card.version - 1 }, 'human'),
				'conflict',
				/changed since you looked/,
			);
			await refused(
				b.checkApproval(reviewerAgent, { cardId: a, approve: true }, 'agent'),
				'invalid_transition',
				/waits for a human's review/,
			);
			await refused(b.checkApproval(human, { cardId: 'nope', approve: true }, 'human'), 'not_found');
			const plain = `p${++counter}`;
			await b.create(human, { cards: [{ id: plain, title: 'Not in review' }] });
			await refused(
				b.checkApproval(human, { cardId: plain, approve: true }, 'human'),
				'invalid_transition',
				/not in review/,
			);
			assert.equal((await get(a)).version, card.version);
			assert.equal((await b.stats(human, {})).lastSeq, seq + 1, 'only the plain card was logged');
		});

		it('checkApproval says replay for a request key that has its answer', async () => {
			const { a } = await inReview('human');
			const keyed = { ...human, requestKey: `key-${a}` };
			await b.review(keyed, { cardId: a, approve: true }, 'human');
			assert.deepEqual(await b.checkApproval(keyed, { cardId: a, approve: true }, 'human'), { replay: true });
			await refused(b.checkApproval(human, { cardId: a, approve: true }, 'human'), 'invalid_transition', /is done/);
		});

		it('landConflict: back to ready with the hand-over, event land_conflicted, not a failed attempt', async () => {
			const { a, dep, card } = await inReview('human', 1);
			const handoff = `rebase \`baton/${a}\` on \`main\`: conflicts in README.md`;
			const back = await b.landConflict(human, { cardId: a, approve: true }, 'human', {
				handoff,
				files: ['README.md'],
			});
			// maxAttempts 1 and one attempt spent: a failed attempt would park it; a conflict does not.
			assert.equal(back.status, 'ready');
			assert.equal(back.handoff, handoff);
			assert.equal(back.attempts, card.attempts);
			assert.equal(back.completedBy, null);
			assert.equal(back.result, null);
			assert.equal((await get(dep)).unmetDeps, 1, 'the dependent keeps waiting');
			const event = committed.filter(e => e.cardId === a).at(-1);
			assert.equal(event?.type, 'land_conflicted');
			assert.equal(event.data.reason, handoff);
			assert.deepEqual(event.data.files, ['README.md']);
			assert.equal(event.data.previousOwner, author.actor);
			const shown = await b.get(human, { cardId: a });
			assert.equal(shown.attempts.at(-1)?.outcome, 'landing conflicted');
			assert.equal(shown.attempts.at(-1)?.reason, handoff);
			const again = await b.claim(author, { cardId: a });
			assert.equal(again.handoff, handoff);
		});

		it('landConflict is refused whenever the approval would be, changing nothing', async () => {
			const { a } = await inReview('human');
			const before = await get(a);
			const conflict = { handoff: 'rebase', files: ['x'] };
			await refused(
				b.landConflict(author, { cardId: a, approve: true }, 'human', conflict),
				'conflict',
				/You completed card/,
			);
			await refused(
				b.landConflict(human, { cardId: a, approve: true, version: before.version + 5 }, 'human', conflict),
				'conflict',
				/changed since you looked/,
			);
			assert.deepEqual(await get(a), before);
		});

		it("an agent reviewer's landing conflict ends its review lease and fences it out", async () => {
			const { a } = await inReview('agent');
			const taken = await b.claim(reviewerAgent, { review: true, cardId: a, capabilities: ['review'] });
			const epoch = taken.lease?.epoch;
			await b.checkApproval(reviewerAgent, { cardId: a, approve: true, epoch }, 'agent');
			const back = await b.landConflict(reviewerAgent, { cardId: a, approve: true, epoch }, 'agent', {
				handoff: 'rebase it',
				files: ['a.txt'],
			});
			assert.equal(back.status, 'ready');
			assert.equal(back.claimOwner, null);
			assert.equal(back.claimEpoch, (epoch ?? 0) + 1);
		});
	});
}
