/** Pure agent health and stall rules, table-driven at the threshold edges. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { agentHealth, isStalled } from '../../core/health';
import { defaultHealthThresholds } from '../../core/protocol';

const now = new Date('2026-01-01T12:00:00.000Z');
const ago = (s: number): Date => new Date(now.getTime() - s * 1000);

describe('agentHealth', () => {
	const cases: [number, string][] = [
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
		it(`is ${health} after ${seconds} s`, () => {
			assert.equal(agentHealth(ago(seconds), now, defaultHealthThresholds), health);
		});
	}

	it('follows configured thresholds', () => {
		const t = { healthySeconds: 5, lateSeconds: 10, staleSeconds: 20, stallSeconds: 60 };
		assert.equal(agentHealth(ago(6), now, t), 'late');
		assert.equal(agentHealth(ago(21), now, t), 'dead');
	});
});

describe('isStalled', () => {
	it('flags a held card without progress for stallSeconds', () => {
		assert.equal(isStalled('claimed', ago(900), now, defaultHealthThresholds), true);
		assert.equal(isStalled('claimed', ago(899), now, defaultHealthThresholds), false);
	});

	it('never flags cards nobody holds', () => {
		assert.equal(isStalled('ready', ago(10_000), now, defaultHealthThresholds), false);
		assert.equal(isStalled('claimed', null, now, defaultHealthThresholds), false);
	});
});
