/** Readiness at the edges: waiting, deferred and claimable, as the claim and every face decide them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { isClaimable, isDeferred, isWaiting } from '../../core/claimable';
import { makeCard } from '../helpers/cards';

const now = Date.parse('2026-01-01T12:00:00.000Z');
const at = (ms: number) => new Date(now + ms).toISOString();

describe('readiness', () => {
	it('a ready card with unmet dependencies waits and is not claimable', () => {
		const card = makeCard({ id: 'A1', unmetDeps: 1 });
		assert.equal(isWaiting(card), true);
		assert.equal(isClaimable(card, now), false);
		assert.equal(isClaimable({ ...card, unmetDeps: 0 }, now), true);
	});

	it('a deferred card is claimable again at exactly deferUntil', () => {
		assert.equal(isDeferred(makeCard({ id: 'A1', deferUntil: at(1) }), now), true);
		assert.equal(isClaimable(makeCard({ id: 'A1', deferUntil: at(1) }), now), false);
		assert.equal(isDeferred(makeCard({ id: 'A1', deferUntil: at(0) }), now), false);
		assert.equal(isClaimable(makeCard({ id: 'A1', deferUntil: at(0) }), now), true);
		assert.equal(isClaimable(makeCard({ id: 'A1', deferUntil: at(0) }), new Date(now)), true);
	});

	it('only ready cards wait, are deferred or are claimable', () => {
		for (const status of ['claimed', 'blocked', 'done'] as const) {
			const card = makeCard({ id: 'A1', status, unmetDeps: 2, deferUntil: at(60_000) });
			assert.deepEqual([isWaiting(card), isDeferred(card, now), isClaimable(card, now)], [false, false, false]);
		}
	});
});
