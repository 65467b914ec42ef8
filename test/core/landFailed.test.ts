/**
 * The core half of "done means landed" on real PGlite and PostgreSQL: `landFailed`, the holder's
 * completion of a card that lands by itself whose landing failed, sends the card back to ready with
 * why as the hand-over (event `land_conflicted` with the files), its attempt ending as `landing
 * conflicted` with why; a failed attempt, it parks in blocked past maxAttempts; only the holder's
 * lease may do it (another agent or a stale epoch changes nothing); the dependents keep waiting and
 * the next claimer reads the hand-over. Also `passesChecks`, the predicate `baton approve
 * --all-passing` applies.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import type { BacklogEvent, Card } from '../../core/protocol';
import { passesChecks } from '../../core/rules/review';
import { backlogForSuite, storeKinds } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const human: OpContext = { actor: 'vscode:alice' };
const holder: OpContext = { actor: 'claude-1', session: 's-claude-1' };
const other: OpContext = { actor: 'codex-2', session: 's-codex-2' };

let counter = 0;

for (const kind of storeKinds) {
	describe(`a completion that did not land, on ${kind}`, () => {
		let b: Backlog;
		const committed: BacklogEvent[] = [];
		backlogForSuite(kind, { clock: new ManualClock('2026-03-01T09:00:00.000Z') }, t => {
			b = t.backlog;
			b.onCommitted(events => committed.push(...events));
		});

		async function claimed(maxAttempts = 3): Promise<{ a: string; dep: string; epoch: number }> {
			const a = `lf${++counter}`;
			const dep = `${a}-dep`;
			await b.create(human, {
				cards: [
					{ id: a, title: 'Port the parser', review: 'none', maxAttempts, priority: 1_000 + counter },
					{ id: dep, title: 'Use the parser', dependsOn: [a] },
				],
			});
			const c = await b.claim(holder, { cardId: a });
			return { a, dep, epoch: c.lease?.epoch ?? -1 };
		}
		const get = async (id: string): Promise<Card> => (await b.get(human, { cardId: id })).card;

		it('goes back to ready with the hand-over and the files; the dependent keeps waiting; the next claim reads it', async () => {
			const { a, dep, epoch } = await claimed();
			const handoff = 'rebase `baton/x` on `main`: conflicts in a.txt';
			const back = await b.landFailed(holder, a, { epoch, handoff, files: ['a.txt'] });
			assert.equal(back.status, 'ready');
			assert.equal(back.claimOwner, null);
			assert.equal(back.handoff, handoff);
			const event = committed.filter(e => e.cardId === a).at(-1);
			assert.equal(event?.type, 'land_conflicted');
			assert.deepEqual(event.data.files, ['a.txt']);
			assert.equal(event.data.reason, handoff);
			assert.equal((await get(dep)).status, 'ready');
			assert.ok(!(await b.list(human, { readyOnly: true })).cards.some(c => c.id === dep), 'the dependent waits');
			const ended = (await b.get(human, { cardId: a })).attempts.find(t => t.epoch === epoch);
			assert.equal(ended?.outcome, 'landing conflicted');
			assert.equal(ended.reason, handoff);
			assert.notEqual(ended.endedAt, null);
			const again = await b.claim(other, { cardId: a });
			assert.equal(again.card?.handoff, handoff);
		});

		it('only the holder, with its epoch, sends it back: anything else changes nothing', async () => {
			const { a, epoch } = await claimed();
			const before = await get(a);
			await refused(b.landFailed(other, a, { epoch, handoff: 'x', files: [] }), 'lease_lost');
			await refused(b.landFailed(holder, a, { epoch: epoch + 1, handoff: 'x', files: [] }), 'lease_lost');
			assert.deepEqual(await get(a), before);
		});

		it('is a failed attempt: past maxAttempts the card parks in blocked with why', async () => {
			const { a, epoch } = await claimed(1);
			const back = await b.landFailed(holder, a, { epoch, handoff: 'nothing to land', files: [] });
			assert.equal(back.status, 'blocked');
			assert.equal(back.failed, true);
			assert.match(back.blockedReason ?? '', /failed 1 of 1 attempts; last: nothing to land/);
		});
	});
}

describe('passesChecks', () => {
	it('passes a card with no check record or a passed one, and nothing else', () => {
		assert.equal(passesChecks({ id: 'a' }), true);
		assert.equal(passesChecks({ id: 'a', checks: null }), true);
		assert.equal(passesChecks({ id: 'a', checks: { state: 'passed' } }), true);
		for (const state of ['running', 'failed', 'timed_out']) {
			assert.equal(passesChecks({ id: 'a', checks: { state } }), false, state);
		}
	});
});
