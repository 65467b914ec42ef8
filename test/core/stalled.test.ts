/**
 * "Stalled" is health.ts's rule wherever the backlog reports it: the agent list's
 * `stalled` and stats' `stalledClaims` on real PGlite and PostgreSQL. A claim is stalled when it is
 * quiet (no progress, nor the claim, for stallSeconds), its lease still runs and its holder is alive;
 * the SQL they used before counted a claim whose lease had run out and one held by a dead agent.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import { backlogForSuite, storeKinds } from '../helpers/backlog';

const human: OpContext = { actor: 'vscode:alice' };
const thresholds = { healthySeconds: 30, lateSeconds: 60, staleSeconds: 120, stallSeconds: 100 };

for (const kind of storeKinds) {
	describe(`stalled on ${kind}`, () => {
		let b: Backlog;
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');
		backlogForSuite(kind, { clock, thresholds }, t => {
			b = t.backlog;
		});

		const stalledAgents = async (): Promise<string[]> =>
			(await b.listAgents()).agents.filter(a => a.stalled).map(a => a.id);

		it('counts a quiet claim with a running lease and a live holder, never an expired or a dead one', async () => {
			for (const id of ['quiet-agent', 'short-lease']) {
				await b.registerAgent({ id });
			}
			await b.create(human, {
				cards: [
					{ id: 'S1', title: 'long lease' },
					{ id: 'E1', title: 'short lease' },
				],
			});
			await b.claim({ actor: 'quiet-agent' }, { cardId: 'S1', ttlSeconds: 3600 });
			await b.claim({ actor: 'short-lease' }, { cardId: 'E1', ttlSeconds: 5 });
			clock.advance(99);
			assert.equal((await b.stats(human, {})).stalledClaims, 0, 'quiet for less than stallSeconds');
			clock.advance(1);
			// Both holders say hello (alive) without renewing a lease: E1's ran out 95 s ago.
			for (const id of ['quiet-agent', 'short-lease']) {
				await b.registerAgent({ id });
			}
			assert.equal((await b.stats(human, {})).stalledClaims, 1, 'S1 only: E1 is expired, not stalled');
			assert.deepEqual(await stalledAgents(), ['quiet-agent']);
			// quiet-agent goes silent until dead: its card shows that, not a stall.
			clock.advance(120);
			await b.registerAgent({ id: 'short-lease' });
			assert.equal((await b.listAgents()).agents.find(a => a.id === 'quiet-agent')?.health, 'dead');
			assert.equal((await b.stats(human, {})).stalledClaims, 0);
			assert.deepEqual(await stalledAgents(), []);
		});
	});
}
