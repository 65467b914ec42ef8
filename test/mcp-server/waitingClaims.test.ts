/**
 * One clock on the claim path: a waiting claim's deadline and its sleep until the next
 * deferred card run on the hub's Clock, the one the backlog decides with, so a ManualClock drives
 * them. Before, they read Date.now() and armed real timers: a claim waiting 30 s on a ManualClock
 * answered only after 30 real seconds, whatever the backlog's clock said. Real PGlite backlog; the
 * connection is only asked whether it closed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import { WaitingClaims } from '../../mcp-server/hub/waitingClaims';
import { openTestBacklog, type TestBacklog } from '../helpers/backlog';
import { waitFor } from '../helpers/hub';

const human: OpContext = { actor: 'vscode:alice' };
const agent: OpContext = { actor: 'claude-code-1' };

describe('waiting claims on the hub clock', () => {
	let t: TestBacklog;
	let b: Backlog;
	const clock = new ManualClock('2026-03-01T09:00:00.000Z');
	let claims: WaitingClaims;
	const answered: boolean[] = [];

	before(async () => {
		t = await openTestBacklog('pglite', { clock });
		b = t.backlog;
		claims = new WaitingClaims(
			b,
			() => false,
			(_s, got) => answered.push(got),
			clock,
		);
	});
	after(async () => {
		await t.cleanup();
	});

	it('answers with the reason when the clock passes the deadline', { timeout: 10_000 }, async () => {
		const pending = claims.claim({ closed: false }, agent, { waitSeconds: 30 });
		await waitFor(() => clock.pendingTimers === 1, 5_000, 'the claim to sleep on the clock');
		clock.advance(30);
		const result = await pending;
		assert.equal(result.card, null);
		assert.match(result.reason ?? '', /nothing left to do/);
		assert.deepEqual(answered, [false]);
	});

	it('wakes when the next deferred card comes due on the clock, and takes it', { timeout: 10_000 }, async () => {
		await b.create(human, { cards: [{ id: 'R1', title: 'retry me' }] });
		const first = await b.claim(agent, { cardId: 'R1' });
		await b.fail(agent, { cardId: 'R1', epoch: first.lease?.epoch, reason: 'flaky', backoffSeconds: 20 });
		const pending = claims.claim({ closed: false }, agent, { waitSeconds: 60 });
		await waitFor(() => clock.pendingTimers === 1, 5_000, 'the claim to sleep until R1 is due');
		clock.advance(21);
		const result = await pending;
		assert.equal(result.card?.id, 'R1');
		assert.equal(clock.pendingTimers, 0, 'its timer is cleared');
	});
});
