/** The one retry policy: doubling from min to max, starting over after a success. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Backoff, backoffDelay, hubStartBackoff, reconnectBackoff } from '../../core/backoff';

describe('backoff', () => {
	it('waits min after the first failure and doubles up to max', () => {
		assert.deepEqual(
			[1, 2, 3, 4, 5, 6, 7].map(n => backoffDelay(reconnectBackoff, n)),
			[100, 200, 400, 800, 1_600, 2_000, 2_000],
		);
		assert.deepEqual(
			[1, 2, 3, 4, 5].map(n => backoffDelay(hubStartBackoff, n)),
			[25, 50, 100, 100, 100],
		);
		assert.equal(backoffDelay({ minMs: 10, maxMs: 1_000, factor: 3 }, 3), 90);
	});

	it('counts failures in a row and starts over after reset', () => {
		const retry = new Backoff();
		assert.deepEqual([retry.next(), retry.next(), retry.next()], [100, 200, 400]);
		assert.equal(retry.failures, 3);
		retry.reset();
		assert.equal(retry.failures, 0);
		assert.equal(retry.next(), 100);
	});
});
