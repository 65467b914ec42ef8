/**
 * The reaper when the store cannot be read (PostgreSQL restarting), on a fake backlog: a failed read
 * of the next expiry is retried with backoff, so a lease that expired during the outage is reclaimed
 * once the store answers, without waiting for some later write to pull the timer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Backlog } from '../../core/backlog';
import { Reaper } from '../../mcp-server/hub/reaper';
import { sleep, waitFor } from '../helpers/hub';

describe('Reaper while the store cannot be read', () => {
	it('asks again with backoff and reclaims the lease that expired meanwhile', async () => {
		let down = true;
		let reads = 0;
		let reclaims = 0;
		const refused = (): Promise<never> => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
		const backlog = {
			nextLeaseExpiry: () => {
				reads++;
				// One lease, already expired, until it is reclaimed.
				return down ? refused() : Promise.resolve(reclaims === 0 ? new Date(Date.now() - 1_000) : null);
			},
			reclaim: () => {
				if (down) {
					return refused();
				}
				reclaims++;
				return Promise.resolve({ cards: [{ id: 'c1' }] });
			},
		} as unknown as Backlog;
		const reaper = new Reaper(backlog);
		try {
			reaper.rearm();
			await sleep(300);
			assert.equal(reclaims, 0);
			down = false;
			await waitFor(() => reclaims === 1, 5_000, 'the reclaim once the store answers');
			assert.ok(reads >= 2, `${reads} reads of the next expiry`);
			await sleep(200);
			assert.equal(reclaims, 1, 'nothing left to reclaim: the timer is disarmed, not polling');
		} finally {
			reaper.stop();
		}
	});
});
