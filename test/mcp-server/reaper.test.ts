/**
 * The reaper when the store cannot be read (PostgreSQL restarting), on a fake backlog and the test
 * clock: a failed read of the next expiry is retried with backoff, so a lease that expired during the
 * outage is reclaimed once the store answers, without waiting for some later write to pull the timer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Backlog } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import { Reaper } from '../../mcp-server/hub/reaper';

describe('Reaper while the store cannot be read', () => {
	it('asks again with backoff and reclaims the lease that expired meanwhile', async () => {
		const clock = new ManualClock();
		let down = true;
		let reads = 0;
		let reclaims = 0;
		const refused = (): Promise<never> => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
		const backlog = {
			nextLeaseExpiry: () => {
				reads++;
				// One lease, already expired, until it is reclaimed.
				return down ? refused() : Promise.resolve(reclaims === 0 ? new Date(clock.now().getTime() - 1_000) : null);
			},
			reclaim: () => {
				if (down) {
					return refused();
				}
				reclaims++;
				return Promise.resolve({ cards: [{ id: 'c1' }] });
			},
		} as unknown as Backlog;
		const reaper = new Reaper(backlog, undefined, undefined, clock);
		try {
			reaper.rearm();
			// Backoff 100, 200, 400 ms (+5 ms, as for an expiry): reads at 0, 105, 310 and 715 ms, each
			// after a failed reclaim.
			await clock.tick(1_000);
			assert.equal(reclaims, 0);
			assert.equal(reads, 4);
			down = false;
			// The next retry is due 805 ms after the last one, at 1,520 ms.
			await clock.tick(519);
			assert.equal(reclaims, 0);
			await clock.tick(1);
			assert.equal(reclaims, 1, 'the reclaim once the store answers');
			await clock.tick(60_000);
			assert.equal(reclaims, 1);
			assert.equal(clock.pendingTimers, 0, 'nothing left to reclaim: the timer is disarmed, not polling');
		} finally {
			reaper.stop();
		}
	});

	it('fires a few ms after the expiry it was armed for', async () => {
		const clock = new ManualClock();
		const expiry = new Date(clock.now().getTime() + 30_000);
		let reclaimedAt: number | undefined;
		const backlog = {
			nextLeaseExpiry: () => Promise.resolve(reclaimedAt === undefined ? expiry : null),
			reclaim: () => {
				reclaimedAt = clock.now().getTime();
				return Promise.resolve({ cards: [{ id: 'c1' }] });
			},
		} as unknown as Backlog;
		let count = 0;
		const reaper = new Reaper(backlog, n => (count += n), undefined, clock);
		try {
			reaper.rearm();
			await clock.tick(30_004);
			assert.equal(reclaimedAt, undefined);
			await clock.tick(1);
			assert.equal(reclaimedAt, expiry.getTime() + 5);
			assert.equal(count, 1);
		} finally {
			reaper.stop();
		}
	});
});
