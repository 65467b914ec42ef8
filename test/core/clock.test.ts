/**
 * The test clock's timers: they fire when the clock is advanced past them, in due order, each seeing
 * its own due time as `now()`; `tick` lets the promises a firing starts settle before the next one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ManualClock, sleep, systemClock } from '../../core/clock';

describe('ManualClock timers', () => {
	it('fires due timers in due order, then arming order, at their own time', () => {
		const clock = new ManualClock('2026-01-01T00:00:00.000Z');
		const fired: string[] = [];
		const at = (name: string) => () => fired.push(`${name}@${clock.now().getTime() % 100_000}`);
		clock.setTimeout(at('c'), 300);
		clock.setTimeout(at('a'), 100);
		clock.setTimeout(at('b'), 100);
		clock.setTimeout(at('late'), 5_000);
		clock.advance(1);
		assert.deepEqual(fired, ['a@100', 'b@100', 'c@300']);
		assert.equal(clock.now().toISOString(), '2026-01-01T00:00:01.000Z');
		assert.equal(clock.pendingTimers, 1);
	});

	it('fires timers armed by a firing when they fall due within the same advance', () => {
		const clock = new ManualClock();
		const fired: number[] = [];
		clock.setTimeout(() => {
			fired.push(1);
			clock.setTimeout(() => fired.push(2), 200);
		}, 100);
		clock.advance(0.2);
		assert.deepEqual(fired, [1]);
		clock.advance(0.1);
		assert.deepEqual(fired, [1, 2]);
	});

	it('repeats intervals and forgets cleared timers', () => {
		const clock = new ManualClock();
		let ticks = 0;
		const interval = clock.setInterval(() => ticks++, 250);
		const never = clock.setTimeout(() => assert.fail('cleared'), 100);
		clock.clearTimer(never);
		clock.advance(1);
		assert.equal(ticks, 4);
		clock.clearTimer(interval);
		clock.advance(1);
		assert.equal(ticks, 4);
		assert.equal(clock.pendingTimers, 0);
	});

	it('tick lets the work a timer starts finish before the next timer fires', async () => {
		const clock = new ManualClock();
		const log: string[] = [];
		clock.setTimeout(() => {
			void (async () => {
				await Promise.resolve();
				await Promise.resolve();
				log.push('read done');
				clock.setTimeout(() => log.push('retry'), 50);
			})();
		}, 100);
		clock.setTimeout(() => log.push('second'), 120);
		await clock.tick(200);
		assert.deepEqual(log, ['read done', 'second', 'retry']);
	});

	it('resolves sleep() when advanced past it', async () => {
		const clock = new ManualClock();
		let woke = false;
		const slept = sleep(clock, 1_000).then(() => (woke = true));
		await clock.tick(999);
		assert.equal(woke, false);
		await clock.tick(1);
		await slept;
		assert.equal(woke, true);
	});
});

describe('systemClock timers', () => {
	it('fires and clears real timers', async () => {
		const cleared = systemClock.setTimeout(() => assert.fail('cleared'), 1);
		systemClock.clearTimer(cleared);
		systemClock.clearTimer(undefined);
		let ticks = 0;
		const interval = systemClock.setInterval(() => ticks++, 1, { unref: true });
		await sleep(systemClock, 20);
		systemClock.clearTimer(interval);
		assert.ok(ticks > 0);
	});
});
