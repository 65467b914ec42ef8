/** Readiness at the edges: waiting, deferred and claimable, as the claim and every face decide them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	isClaimable,
	isDeferred,
	isWaiting,
	readinessOf,
	refStateWord,
	stateWord,
	unmetDependencies,
} from '../../core/rules/claimable';
import { describeNothingClaimable } from '../../core/rules/claim';
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

	it('a ready card is exactly one of ready, waiting, deferred; waiting is said first', () => {
		const words = (over: Parameters<typeof makeCard>[0]) => {
			const card = makeCard(over);
			return [readinessOf(card, now), stateWord(card, now)];
		};
		assert.deepEqual(words({ id: 'A1' }), ['claimable', 'ready']);
		assert.deepEqual(words({ id: 'A1', unmetDeps: 1 }), ['waiting', 'waiting']);
		assert.deepEqual(words({ id: 'A1', deferUntil: at(1) }), ['deferred', 'deferred']);
		assert.deepEqual(words({ id: 'A1', unmetDeps: 1, deferUntil: at(1) }), ['waiting', 'waiting']);
		assert.deepEqual(words({ id: 'A1', status: 'claimed', unmetDeps: 1 }), [null, 'claimed']);
		assert.deepEqual(words({ id: 'A1', status: 'review' }), [null, 'review']);
	});

	it('a dependency ref says waiting like its card; one without the readiness fields reads as its status', () => {
		assert.equal(refStateWord({ status: 'ready', unmetDeps: 2, deferUntil: null }, now), 'waiting');
		assert.equal(refStateWord({ status: 'ready', deferUntil: at(5) }, now), 'deferred');
		assert.equal(refStateWord({ status: 'ready' }, now), 'ready');
		assert.deepEqual(
			unmetDependencies([
				{ id: 'D1', status: 'done' },
				{ id: 'D2', status: 'review' },
				{ id: 'D3', status: 'ready' },
			]).map(d => d.id),
			['D2', 'D3'],
		);
	});
});

describe('nothing claimable', () => {
	const none = {
		readyTotal: 0,
		waiting: 0,
		deferred: 0,
		claimed: 0,
		blocked: 0,
		needCapabilities: 0,
		missingCapabilities: [],
		otherPhase: 0,
	};

	it('says the backlog is empty only when no project has a claimable card', () => {
		assert.equal(describeNothingClaimable(none), 'No cards are ready: the backlog has nothing left to do.');
		assert.equal(
			describeNothingClaimable({
				...none,
				project: null,
				otherProjects: [
					{ project: 'web', count: 4 },
					{ project: 'api', count: 1 },
				],
			}),
			"No cards without a project are ready; 5 claimable cards are in other projects (web 4, api 1): claim with project '*' or project web.",
		);
		assert.equal(
			describeNothingClaimable({ ...none, waiting: 1, project: 'web', otherProjects: [{ project: 'api', count: 1 }] }),
			"Nothing claimable: 1 ready card waits on dependencies; 1 claimable card is in other projects (api 1): claim with project '*' or project api.",
		);
	});
});
