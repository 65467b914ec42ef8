/**
 * The check before review in core, on real PGlite and PostgreSQL: a completion to review with the
 * project's check starts it in the same write (`checks` running), approval and an agent's review claim
 * are refused while it runs, a pass keeps the card in review (approvable, event `checks_finished`), a
 * failure or a timeout sends it back to an agent as a failed attempt (ready with the command, exit
 * code and tail as the hand-over; parked once its attempts are spent), an outcome of a run the card no
 * longer waits for is refused, and a card with no check behaves as before.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import type { BacklogEvent, Card } from '../../core/protocol';
import type { ChecksOutcome } from '../../core/rules/checks';
import { backlogForSuite, storeKinds } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const human: OpContext = { actor: 'vscode:alice' };
const author: OpContext = { actor: 'claude-1' };
const hub: OpContext = { actor: 'baton' };
const reviewer: OpContext = { actor: 'codex-2', session: 's-codex-2' };

const failing: ChecksOutcome = {
	state: 'failed',
	exitCode: 1,
	tail: 'not ok 1 - parses\nReferenceError: parse is not defined',
	durationMs: 12_400,
	timeoutSeconds: 600,
};

let counter = 0;

for (const kind of storeKinds) {
	describe(`checks before review on ${kind}`, () => {
		let b: Backlog;
		const committed: BacklogEvent[] = [];
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');
		backlogForSuite(kind, { clock }, t => {
			b = t.backlog;
			b.onCommitted(events => committed.push(...events));
		});
		const get = async (id: string): Promise<Card> => (await b.get(human, { cardId: id })).card;
		const lastEvent = (id: string) => committed.filter(e => e.cardId === id).at(-1);

		async function completed(
			check: string | undefined,
			opts: { maxAttempts?: number; review?: 'human' | 'agent' } = {},
		) {
			const id = `ck${++counter}`;
			await b.create(human, {
				cards: [
					{
						id,
						title: 'Port the parser',
						review: opts.review ?? 'human',
						maxAttempts: opts.maxAttempts ?? 3,
						priority: 5_000 + counter,
					},
				],
			});
			const claimed = await b.claim(author, { cardId: id });
			const done = await b.complete(author, { cardId: id, epoch: claimed.lease?.epoch }, check);
			return { id, card: done.card };
		}

		it('complete starts the check in its own write; approve and review claims wait for it', async () => {
			const { id, card } = await completed('npm test', { review: 'agent' });
			assert.equal(card.status, 'review');
			assert.equal(card.checks?.state, 'running');
			assert.equal(card.checks.command, 'npm test');
			assert.equal(card.checks.startedAt, '2026-03-01T09:00:00.000Z');
			assert.equal(lastEvent(id)?.type, 'review_requested');
			assert.equal(lastEvent(id)?.data.card?.checks?.state, 'running', 'the event carries the running check');
			const seq = (await b.stats(human, {})).lastSeq;
			await refused(
				b.review(human, { cardId: id, approve: true }, 'human'),
				'invalid_transition',
				/checks still running for ck\d+/,
			);
			await refused(
				b.checkApproval(human, { cardId: id, approve: true }, 'human'),
				'invalid_transition',
				/checks still running/,
			);
			await refused(
				b.claim(reviewer, { cardId: id, review: true, capabilities: ['review'] }),
				'invalid_transition',
				/checks still running/,
			);
			const none = await b.claim(reviewer, { review: true, capabilities: ['review'] });
			assert.equal(none.card, null, 'review work never hands out a card whose check runs');
			assert.equal((await b.stats(human, {})).lastSeq, seq, 'nothing written');
		});

		it('a passing check keeps the card in review, now approvable; event checks_finished', async () => {
			const { id, card } = await completed('npm test');
			const passed = await b.checks.finish(hub, id, card.checks?.startedAt ?? '', {
				state: 'passed',
				exitCode: 0,
				tail: 'ok 12 tests',
				durationMs: 12_000,
				timeoutSeconds: 600,
			});
			assert.equal(passed.status, 'review');
			assert.deepEqual(passed.checks, {
				command: 'npm test',
				state: 'passed',
				exitCode: 0,
				tail: 'ok 12 tests',
				startedAt: '2026-03-01T09:00:00.000Z',
				endedAt: '2026-03-01T09:00:00.000Z',
				durationMs: 12_000,
			});
			const event = lastEvent(id);
			assert.equal(event?.type, 'checks_finished');
			assert.equal(event.actor, 'baton');
			assert.deepEqual([event.data.state, event.data.exitCode, event.data.durationMs], ['passed', 0, 12_000]);
			const approved = await b.review(human, { cardId: id, approve: true }, 'human');
			assert.equal(approved.card.status, 'done');
		});

		it('a failing check sends the card back to an agent as a failed attempt, with the hand-over', async () => {
			const { id, card } = await completed('npm test');
			const back = await b.checks.finish(hub, id, card.checks?.startedAt ?? '', failing);
			assert.equal(back.status, 'ready');
			assert.equal(back.completedBy, null);
			assert.equal(back.attempts, 1, 'the claim counted the attempt; nothing given back');
			assert.equal(back.checks?.state, 'failed');
			assert.equal(back.checks.exitCode, 1);
			assert.match(back.handoff ?? '', /^The check `npm test` exited 1 on your completed work \(12s\)/);
			assert.match(back.handoff ?? '', /ReferenceError: parse is not defined$/);
			const event = lastEvent(id);
			assert.equal(event?.type, 'checks_finished');
			assert.deepEqual([event.data.state, event.data.exitCode, event.data.retry], ['failed', 1, true]);
			assert.equal(event.data.previousOwner, author.actor);
			const shown = await b.get(human, { cardId: id });
			assert.equal(shown.attempts.at(-1)?.outcome, 'checks failed');
			assert.equal(back.deferUntil, '2026-03-01T09:00:30.000Z', "the failed attempt's retry backoff");
			clock.advance(30);
			const again = await b.claim(author, { cardId: id });
			assert.equal(again.handoff, back.handoff, 'the next agent starts from the check output');
			// Completed again: the new run replaces the failed one.
			const redone = await b.complete(author, { cardId: id, epoch: again.lease?.epoch }, 'npm test');
			assert.equal(redone.card.checks?.state, 'running');
			assert.equal(redone.card.checks.tail, undefined);
		});

		it('a timed-out check on the last attempt parks the card as failed', async () => {
			const { id, card } = await completed('npm test', { maxAttempts: 1 });
			const parked = await b.checks.finish(hub, id, card.checks?.startedAt ?? '', {
				state: 'timed_out',
				exitCode: null,
				tail: 'still waiting for the database',
				durationMs: 600_000,
				timeoutSeconds: 600,
			});
			assert.equal(parked.status, 'blocked');
			assert.equal(parked.failed, true);
			assert.match(
				parked.blockedReason ?? '',
				/^checks failed after 1 of 1 attempts: `npm test` timed out after 600 s/,
			);
			assert.equal(parked.checks?.state, 'timed_out');
			assert.equal(parked.checks.exitCode, null);
			assert.equal(lastEvent(id)?.data.retry, false);
		});

		it('an exit of 127 names the missing command', async () => {
			const { id, card } = await completed('./no-such-check');
			const back = await b.checks.finish(hub, id, card.checks?.startedAt ?? '', {
				...failing,
				exitCode: 127,
				tail: 'sh: 1: ./no-such-check: not found',
			});
			assert.match(back.handoff ?? '', /`\.\/no-such-check` exited 127 \(the command was not found\)/);
		});

		it('an outcome the card no longer waits for is refused and changes nothing', async () => {
			const { id, card } = await completed('npm test');
			await refused(b.checks.finish(hub, id, '2020-01-01T00:00:00.000Z', failing), 'conflict', /no longer waits/);
			await b.review(human, { cardId: id, approve: false, note: 'Rename it first' }, 'human');
			const before = await get(id);
			await refused(b.checks.finish(hub, id, card.checks?.startedAt ?? '', failing), 'conflict', /it is ready/);
			assert.equal((await get(id)).version, before.version);
		});

		it('running() lists the cards whose check runs; a card with no check behaves as before', async () => {
			const { id } = await completed('npm test');
			assert.ok((await b.checks.running()).some(c => c.id === id));
			const plain = await completed(undefined);
			assert.equal(plain.card.status, 'review');
			assert.equal(plain.card.checks, undefined);
			assert.ok(!(await b.checks.running()).some(c => c.id === plain.id));
			assert.equal((await b.review(human, { cardId: plain.id, approve: true }, 'human')).card.status, 'done');
		});
	});
}
