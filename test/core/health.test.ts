/**
 * Pure agent health and stall rules, table-driven at the threshold edges. These are the boundaries
 * every face shows (hub, Backlog and Agents trees, status bar, board): each bound belongs to the
 * worse state, so at exactly stallSeconds without progress a card is stalled.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { agentHealth, isAgentStalled, isAlive, isCardStalled, isQuiet } from '../../core/rules/health';
import { type AgentHealth, agentHealths, defaultHealthThresholds as t } from '../../core/protocol';
import { makeCard } from '../helpers/cards';

const now = new Date('2026-01-01T12:00:00.000Z');
const ago = (s: number): Date => new Date(now.getTime() - s * 1000);
const iso = (s: number): string => ago(s).toISOString();

describe('agentHealth', () => {
	const cases: [number, AgentHealth][] = [
		[0, 'healthy'],
		[29.9, 'healthy'],
		[30, 'late'],
		[99.9, 'late'],
		[100, 'stale'],
		[299.9, 'stale'],
		[300, 'dead'],
		[86_400, 'dead'],
	];
	for (const [seconds, health] of cases) {
		it(`is ${health} after ${seconds} s, from a Date, an ISO string or epoch ms alike`, () => {
			assert.equal(agentHealth(ago(seconds), now, t), health);
			assert.equal(agentHealth(iso(seconds), now.getTime(), t), health);
			assert.equal(agentHealth(ago(seconds).getTime(), now.toISOString(), t), health);
		});
	}

	it('follows configured thresholds', () => {
		const custom = { healthySeconds: 5, lateSeconds: 10, staleSeconds: 20, stallSeconds: 60 };
		assert.equal(agentHealth(ago(6), now, custom), 'late');
		assert.equal(agentHealth(ago(21), now, custom), 'dead');
	});

	it('reads an unparsable lastSeenAt as dead', () => {
		assert.equal(agentHealth('not a date', now, t), 'dead');
	});
});

describe('isAlive', () => {
	it('is true for healthy and late only', () => {
		assert.deepEqual(
			agentHealths.filter(h => isAlive(h)),
			['healthy', 'late'],
		);
	});
});

describe('isQuiet and isCardStalled', () => {
	const held = (quietSeconds: number, over: Parameters<typeof makeCard>[0] = { id: 'A1' }) =>
		makeCard({
			status: 'claimed',
			claimOwner: 'agent-1',
			claimedAt: iso(quietSeconds + 60),
			progressAt: iso(quietSeconds),
			leaseExpiresAt: new Date(now.getTime() + 60_000).toISOString(),
			...over,
		});

	it('flags a held card at exactly stallSeconds without progress, not a millisecond before', () => {
		assert.equal(isQuiet(held(900), now, t.stallSeconds), true);
		assert.equal(isQuiet(held(899.999), now, t.stallSeconds), false);
		assert.equal(isCardStalled(held(900), 'healthy', now, t), true);
		assert.equal(isCardStalled(held(899.999), 'healthy', now, t), false);
	});

	it('counts from the claim when the holder never reported progress', () => {
		const never = held(0, { id: 'A1', progressAt: null, claimedAt: iso(900) });
		assert.equal(isCardStalled(never, 'healthy', now, t), true);
		assert.equal(isCardStalled({ ...never, claimedAt: iso(899) }, 'healthy', now, t), false);
	});

	it('never flags cards nobody holds', () => {
		assert.equal(isQuiet(makeCard({ id: 'R', status: 'ready', progressAt: iso(10_000) }), now, t.stallSeconds), false);
		assert.equal(isQuiet(held(0, { id: 'A1', progressAt: null, claimedAt: null }), now, t.stallSeconds), false);
	});

	it('calls a card held by a stale or dead agent by its holder, not stalled', () => {
		assert.equal(isCardStalled(held(5_000), 'late', now, t), true);
		assert.equal(isCardStalled(held(5_000), 'stale', now, t), false);
		assert.equal(isCardStalled(held(5_000), 'dead', now, t), false);
	});

	it('judges by the card alone when the holder is not known', () => {
		assert.equal(isCardStalled(held(900), undefined, now, t), true);
	});

	it('calls a card whose lease ran out expired, not stalled (expired at exactly leaseExpiresAt)', () => {
		const at = (leaseExpiresAt: string) => held(5_000, { id: 'A1', leaseExpiresAt });
		assert.equal(isCardStalled(at(now.toISOString()), 'healthy', now, t), false);
		assert.equal(isCardStalled(at(new Date(now.getTime() + 1).toISOString()), 'healthy', now, t), true);
	});

	it('marks an agent stalled only while it is alive and holds a stalled card', () => {
		const quiet = [held(900)];
		assert.equal(isAgentStalled('healthy', quiet, now, t), true);
		assert.equal(isAgentStalled('late', quiet, now, t), true);
		assert.equal(isAgentStalled('stale', quiet, now, t), false);
		assert.equal(isAgentStalled('dead', quiet, now, t), false);
		assert.equal(isAgentStalled('healthy', [held(10)], now, t), false);
		assert.equal(isAgentStalled('healthy', [], now, t), false);
	});
});
