/**
 * The card state machine as a table: every action from every status, legal ones with their
 * resulting status and event, illegal ones with their error code; plus the lease (fencing) rules.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BatonError } from '../../core/errors';
import { checkLease } from '../../core/rules/lease';
import type { CardStatus, ErrorCode } from '../../core/protocol';
import { checkClaimable, describeNothingClaimable } from '../../core/rules/claim';
import { type Action, type CardState, backoffDelaySeconds, decide } from '../../core/rules/stateMachine';

const now = new Date('2026-01-01T12:00:00.000Z');
const later = new Date(now.getTime() + 60_000);

function card(status: CardStatus, extra: Partial<CardState> = {}): CardState {
	const claimed = status === 'claimed';
	return {
		id: 'A4',
		status,
		claimOwner: claimed ? 'codex-2' : null,
		claimEpoch: claimed ? 7 : 6,
		leaseExpiresAt: claimed ? later : null,
		attempts: claimed ? 1 : 0,
		maxAttempts: 3,
		unmetDeps: 0,
		deferUntil: null,
		requires: [],
		progress: null,
		progressNote: null,
		blockedReason: status === 'blocked' ? 'waiting on a human' : null,
		failed: false,
		version: 3,
		review: status === 'review' ? 'human' : 'none',
		completedBy: status === 'review' ? 'codex-2' : null,
		...extra,
	};
}

const holder = 'codex-2';
const actions: Record<string, Action> = {
	claim: { type: 'claim', actor: 'claude-1', ttlSeconds: 300 },
	heartbeat: { type: 'heartbeat', actor: holder, epoch: 7, progress: 50, ttlSeconds: 300 },
	complete: { type: 'complete', actor: holder, epoch: 7, result: 'done' },
	'complete (force)': { type: 'complete', actor: 'human', force: true },
	release: { type: 'release', actor: holder, epoch: 7 },
	'release (force)': { type: 'release', actor: 'human', force: true },
	fail: { type: 'fail', actor: holder, epoch: 7, reason: 'tests fail', backoff: { baseSeconds: 0, maxSeconds: 0 } },
	reclaim: { type: 'reclaim', reason: 'lease expired' },
	disconnect: { type: 'disconnect', reason: 'agent disconnected' },
	block: { type: 'block', reason: 'needs a decision' },
	unblock: { type: 'unblock' },
	reopen: { type: 'reopen' },
	requeue: { type: 'requeue', reason: 'dependency B1 was reopened' },
};

/** status -> action -> resulting status (legal) or error code (illegal). */
const table: Record<CardStatus, Record<string, CardStatus | ErrorCode>> = {
	ready: {
		claim: 'claimed',
		heartbeat: 'lease_lost',
		complete: 'lease_lost',
		'complete (force)': 'done',
		release: 'lease_lost',
		'release (force)': 'invalid_transition',
		fail: 'lease_lost',
		reclaim: 'invalid_transition',
		disconnect: 'invalid_transition',
		block: 'blocked',
		unblock: 'invalid_transition',
		reopen: 'invalid_transition',
		requeue: 'invalid_transition',
	},
	claimed: {
		claim: 'conflict',
		heartbeat: 'claimed',
		complete: 'done',
		'complete (force)': 'done',
		release: 'ready',
		'release (force)': 'ready',
		fail: 'ready',
		reclaim: 'ready',
		disconnect: 'ready',
		block: 'blocked',
		unblock: 'invalid_transition',
		reopen: 'invalid_transition',
		requeue: 'ready',
	},
	// In review and nobody reviewing it: only the review actions (reviewRules.test.ts) move it.
	review: {
		claim: 'invalid_transition',
		heartbeat: 'lease_lost',
		complete: 'invalid_transition',
		'complete (force)': 'invalid_transition',
		release: 'lease_lost',
		'release (force)': 'invalid_transition',
		fail: 'invalid_transition',
		reclaim: 'invalid_transition',
		disconnect: 'invalid_transition',
		block: 'invalid_transition',
		unblock: 'invalid_transition',
		reopen: 'invalid_transition',
		requeue: 'invalid_transition',
	},
	blocked: {
		claim: 'invalid_transition',
		heartbeat: 'lease_lost',
		complete: 'lease_lost',
		'complete (force)': 'done',
		release: 'lease_lost',
		'release (force)': 'invalid_transition',
		fail: 'lease_lost',
		reclaim: 'invalid_transition',
		disconnect: 'invalid_transition',
		block: 'invalid_transition',
		unblock: 'ready',
		reopen: 'invalid_transition',
		requeue: 'invalid_transition',
	},
	done: {
		claim: 'invalid_transition',
		heartbeat: 'lease_lost',
		complete: 'lease_lost',
		'complete (force)': 'invalid_transition',
		release: 'lease_lost',
		'release (force)': 'invalid_transition',
		fail: 'lease_lost',
		reclaim: 'invalid_transition',
		disconnect: 'invalid_transition',
		block: 'invalid_transition',
		unblock: 'invalid_transition',
		reopen: 'ready',
		requeue: 'invalid_transition',
	},
};

const statuses: CardStatus[] = ['ready', 'claimed', 'review', 'blocked', 'done'];

describe('state machine', () => {
	for (const status of statuses) {
		for (const [name, action] of Object.entries(actions)) {
			const expected = table[status][name];
			const legal = statuses.includes(expected as CardStatus);
			it(`${name} from ${status}: ${legal ? `-> ${String(expected)}` : `refused (${String(expected)})`}`, () => {
				const before = card(status);
				if (legal) {
					const decision = decide(before, action, now);
					assert.equal(decision.patch.status ?? before.status, expected);
				} else {
					assert.throws(
						() => decide(before, action, now),
						(e: unknown) => BatonError.is(e, expected as ErrorCode) && e.message.includes('A4'),
					);
				}
			});
		}
	}

	it('claim bumps epoch and attempts, sets the lease and clears backoff', () => {
		const d = decide(card('ready', { deferUntil: null, attempts: 1 }), actions.claim!, now);
		assert.equal(d.patch.claimEpoch, 7);
		assert.equal(d.patch.attempts, 2);
		assert.equal(d.patch.claimOwner, 'claude-1');
		assert.deepEqual(d.patch.leaseExpiresAt, new Date(now.getTime() + 300_000));
		assert.equal(d.event, 'claimed');
	});

	it('reclaim bumps the epoch so the old holder is fenced out', () => {
		const d = decide(card('claimed'), actions.reclaim!, now);
		assert.equal(d.patch.claimEpoch, 8);
		assert.equal(d.patch.claimOwner, null);
		assert.equal(d.data.previousOwner, holder);
		assert.equal(d.data.previousEpoch, 7);
	});

	it('reclaim parks a card that used up its attempts', () => {
		const d = decide(card('claimed', { attempts: 3 }), actions.reclaim!, now);
		assert.equal(d.patch.status, 'blocked');
		assert.match(d.patch.blockedReason ?? '', /3 of 3 attempts/);
	});

	it('fail retries with backoff while attempts remain, then parks in blocked with the reason', () => {
		const retry = decide(card('claimed', { attempts: 2 }), { ...actions.fail!, backoffSeconds: 90 } as Action, now);
		assert.equal(retry.patch.status, 'ready');
		assert.deepEqual(retry.patch.deferUntil, new Date(now.getTime() + 90_000));
		assert.equal(retry.data.retry, true);
		const parked = decide(card('claimed', { attempts: 3 }), actions.fail!, now);
		assert.equal(parked.patch.status, 'blocked');
		assert.match(parked.patch.blockedReason ?? '', /failed 3 of 3 attempts; last: tests fail/);
		const noRetry = decide(card('claimed'), { ...actions.fail!, retry: false } as Action, now);
		assert.equal(noRetry.patch.status, 'blocked');
		assert.equal(noRetry.patch.blockedReason, 'tests fail');
		assert.equal(noRetry.patch.failed, true);
	});

	it('a failed card is marked failed with its earlier reasons; a human-parked one is not', () => {
		const parked = decide(
			card('claimed', { attempts: 3 }),
			{ ...actions.fail!, earlierReasons: ['flaky net', 'oom'] } as Action,
			now,
		);
		assert.equal(parked.patch.failed, true);
		assert.equal(parked.patch.blockedReason, 'failed 3 of 3 attempts; last: tests fail; before: flaky net; oom');
		assert.equal(decide(card('claimed', { attempts: 3 }), actions.reclaim!, now).patch.failed, true);
		assert.equal(decide(card('claimed'), actions.block!, now).patch.failed, false);
		assert.equal(decide(card('blocked', { failed: true }), actions.unblock!, now).patch.failed, false);
		const long = decide(
			card('claimed', { attempts: 3 }),
			{ ...actions.fail!, reason: 'x'.repeat(1000), earlierReasons: ['y'.repeat(1000)] } as Action,
			now,
		);
		assert.equal(long.patch.blockedReason?.length, 1000, 'a composed reason stays within the reason limit');
	});

	it('failures back off exponentially by default, capped; an explicit backoff wins; 0 turns it off', () => {
		const policy = { baseSeconds: 30, maxSeconds: 100 };
		assert.deepEqual(
			[1, 2, 3, 4, 60].map(n => backoffDelaySeconds(policy, n)),
			[30, 60, 100, 100, 100],
		);
		assert.equal(backoffDelaySeconds({ baseSeconds: 500, maxSeconds: 100 }, 3), 500, 'a base above the cap is the cap');
		assert.equal(backoffDelaySeconds({ baseSeconds: 0, maxSeconds: 100 }, 3), 0);
		const fail = { ...actions.fail!, backoff: policy } as Action;
		const second = decide(card('claimed', { attempts: 2 }), fail, now);
		assert.deepEqual(second.patch.deferUntil, new Date(now.getTime() + 60_000));
		assert.equal(second.data.backoffSeconds, 60);
		const explicit = decide(card('claimed', { attempts: 2 }), { ...fail, backoffSeconds: 0 } as Action, now);
		assert.equal(explicit.patch.deferUntil, null);
	});

	it('a release gives the attempt back; a disconnect (a crash) does not', () => {
		assert.equal(decide(card('claimed', { attempts: 2 }), actions.release!, now).patch.attempts, 1);
		assert.equal(decide(card('claimed', { attempts: 2 }), actions['release (force)']!, now).patch.attempts, 1);
		assert.equal(decide(card('claimed', { attempts: 2 }), actions.disconnect!, now).patch.attempts, undefined);
	});

	it('requeue fences the holder out without counting the attempt', () => {
		const d = decide(card('claimed', { attempts: 2 }), actions.requeue!, now);
		assert.equal(d.patch.claimEpoch, 8);
		assert.equal(d.patch.attempts, 1);
		assert.equal(d.event, 'released');
		assert.equal(d.data.previousOwner, holder);
		assert.equal(d.data.reason, 'dependency B1 was reopened');
	});

	it('the holder cannot complete a card whose dependencies are not all done', () => {
		assert.throws(
			() => decide(card('claimed', { unmetDeps: 1 }), actions.complete!, now),
			(e: unknown) => BatonError.is(e, 'invalid_transition') && e.message.includes('1 unfinished dependency'),
		);
	});

	it('logs a heartbeat only when progress or the note changes', () => {
		const renew = decide(card('claimed'), { type: 'heartbeat', actor: holder, epoch: 7, ttlSeconds: 60 }, now);
		assert.equal(renew.event, null);
		assert.deepEqual(renew.patch.leaseExpiresAt, new Date(now.getTime() + 60_000));
		const same = decide(card('claimed', { progress: 50 }), actions.heartbeat!, now);
		assert.equal(same.event, null);
		assert.deepEqual(same.patch.progressAt, now);
		assert.equal(decide(card('claimed'), actions.heartbeat!, now).event, 'heartbeat');
	});

	it('force complete of a held card fences the holder and records it', () => {
		const d = decide(card('claimed'), actions['complete (force)']!, now);
		assert.equal(d.patch.claimEpoch, 8);
		assert.equal(d.data.forced, true);
		assert.equal(d.data.previousOwner, holder);
	});

	it('force complete refuses a card whose dependencies are not done', () => {
		assert.throws(
			() => decide(card('ready', { unmetDeps: 2 }), actions['complete (force)']!, now),
			(e: unknown) => BatonError.is(e, 'invalid_transition') && e.message.includes('2 unfinished dependencies'),
		);
	});
});

describe('lease checks', () => {
	const held = card('claimed');
	const refused = (fn: () => void, code: ErrorCode, text: RegExp): void => {
		assert.throws(fn, (e: unknown) => BatonError.is(e, code) && text.test(e.message));
	};

	it('accepts the holder with its epoch, or with no epoch', () => {
		checkLease(held, holder, 7, now, 'complete');
		checkLease(held, holder, undefined, now, 'complete');
	});

	it('names the holder and both epochs when another agent presents a lease', () => {
		refused(
			() => checkLease(held, 'codex-1', 6, now, 'complete'),
			'lease_lost',
			/^Card A4 is leased to agent codex-2 \(epoch 7\); your lease has epoch 6\. Call claim for new work\.$/,
		);
	});

	it('refuses the holder presenting a superseded epoch', () => {
		refused(() => checkLease(held, holder, 6, now, 'heartbeat'), 'lease_lost', /epoch 7; your lease has epoch 6/);
	});

	it('refuses an expired lease even before the reaper runs', () => {
		refused(() => checkLease(held, holder, 7, later, 'heartbeat'), 'lease_lost', /expired at/);
	});

	it('tells a former holder its card was freed', () => {
		refused(
			() => checkLease(card('ready', { claimEpoch: 8 }), holder, 7, now, 'complete'),
			'lease_lost',
			/epoch 8.*epoch 7/,
		);
	});
});

describe('claimability', () => {
	const refused = (c: CardState, caps: string[] | null, code: ErrorCode, text: RegExp, unmet: string[] = []): void => {
		assert.throws(
			() => checkClaimable(c, 'me', caps, now, unmet),
			(e: unknown) => BatonError.is(e, code) && text.test(e.message),
		);
	};

	it('explains each reason a card cannot be claimed', () => {
		refused(card('claimed'), [], 'conflict', /claimed by agent codex-2 \(epoch 7/);
		refused(
			card('ready', { unmetDeps: 2 }),
			[],
			'invalid_transition',
			/waits on 2 unfinished dependencies \(B1, B2\)/,
			['B1', 'B2'],
		);
		refused(card('ready', { deferUntil: later }), [], 'invalid_transition', /deferred until/);
		refused(
			card('ready', { requires: ['lang:rust', 'os:linux'] }),
			['os:linux'],
			'invalid_transition',
			/\[lang:rust\]/,
		);
		checkClaimable(card('ready', { requires: ['lang:rust'] }), 'me', ['lang:rust', 'x'], now);
	});

	it('summarises why nothing was claimable', () => {
		const reason = describeNothingClaimable({
			readyTotal: 6,
			waiting: 3,
			deferred: 0,
			claimed: 2,
			blocked: 0,
			needCapabilities: 1,
			missingCapabilities: ['lang:rust'],
			otherPhase: 0,
		});
		assert.equal(
			reason,
			'Nothing claimable: 3 ready cards wait on dependencies, 1 needs capabilities you lack [lang:rust], 2 are claimed.',
		);
	});
});
