/**
 * When a lease has run out, at the edge: the rule the hub fences with and every face shows. At the
 * very instant leaseExpiresAt the lease is over.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { isLeaseExpired } from '../../core/rules/lease';
import { makeCard } from '../helpers/cards';

const now = Date.parse('2026-01-01T12:00:00.000Z');
const held = (leaseEndsInMs: number) =>
	makeCard({
		id: 'A1',
		status: 'claimed',
		claimOwner: 'agent-1',
		leaseExpiresAt: new Date(now + leaseEndsInMs).toISOString(),
	});

describe('isLeaseExpired', () => {
	it('is expired at exactly leaseExpiresAt and after, not a millisecond before', () => {
		assert.equal(isLeaseExpired(held(0), now), true);
		assert.equal(isLeaseExpired(held(-1), now), true);
		assert.equal(isLeaseExpired(held(1), now), false);
	});

	it('reads core rows (Dates) and wire cards (ISO strings) the same way', () => {
		const row = { status: 'claimed' as const, claimOwner: 'a1', leaseExpiresAt: new Date(now) };
		assert.equal(isLeaseExpired(row, new Date(now)), true);
		assert.equal(isLeaseExpired(held(0), new Date(now).toISOString()), true);
		assert.equal(isLeaseExpired({ ...row, leaseExpiresAt: new Date(now + 1) }, now), false);
	});

	it('never calls a card without a lease expired', () => {
		assert.equal(isLeaseExpired({ ...held(-60_000), status: 'ready' }, now), false);
		assert.equal(isLeaseExpired({ ...held(0), leaseExpiresAt: null }, now), false);
	});
});
