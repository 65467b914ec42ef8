/**
 * The board's state and move rules in node: column lists kept sorted incrementally, events, optimistic
 * moves, the review gate's moves, the needs-input set and a card's messages as the detail keeps them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { type Agent, type Message, defaultHealthThresholds } from '../../core/protocol';
import { type ColumnId, columnOrder } from '../../webview/columns';
import { formatRemaining } from '../../webview/format';
import { composerState, mergeMessages, messagesOf } from '../../webview/messageList';
import { planMove, priorityForDrop, withAnswer } from '../../webview/moves';
import { keyboardTarget } from '../../webview/reviewMoves';
import { projectsSeen } from '../../webview/scopeView';
import { BoardState } from '../../webview/state';
import { makeCard, makeEvent } from './fixtures';

const ids = (state: BoardState, col: ColumnId): string[] => state.column(col).map(c => c.id);

describe('BoardState', () => {
	it('sorts Ready by priority then age, and puts each status in its column', () => {
		const s = new BoardState();
		s.load([
			makeCard({ id: 'a', priority: 1 }),
			makeCard({ id: 'b', priority: 5 }),
			makeCard({ id: 'c', priority: 1 }),
			makeCard({ id: 'd', status: 'claimed', claimOwner: 'x', claimedAt: '2026-01-01T00:00:00.000Z' }),
			makeCard({ id: 'e', status: 'blocked', blockedReason: 'waiting for keys' }),
			makeCard({ id: 'f', status: 'done' }),
		]);
		assert.deepEqual(ids(s, 'ready'), ['b', 'a', 'c']);
		assert.deepEqual(ids(s, 'inProgress'), ['d']);
		assert.deepEqual(ids(s, 'blocked'), ['e']);
		assert.deepEqual(ids(s, 'done'), ['f']);
		assert.equal(s.size, 6);
	});

	it('moves a card between columns on an event and reports only the touched columns', () => {
		const s = new BoardState();
		const a = makeCard({ id: 'a' });
		s.load([a, makeCard({ id: 'b', status: 'done' })]);
		const claimed = { ...a, status: 'claimed' as const, claimOwner: 'agent-1', claimedAt: '2026-01-02T00:00:00.000Z' };
		const change = s.applyEvent(makeEvent(1, 'claimed', claimed));
		assert.deepEqual([...change.columns].sort(), ['inProgress', 'ready']);
		assert.deepEqual([...change.cards], ['a']);
		assert.deepEqual(ids(s, 'ready'), []);
		assert.deepEqual(ids(s, 'inProgress'), ['a']);
		assert.equal(s.get('a')?.claimOwner, 'agent-1');
	});

	it('applies a commented event by its card: the card stays where it is, the seq moves on', () => {
		const s = new BoardState();
		const a = makeCard({ id: 'a', status: 'claimed', claimOwner: 'agent-1', claimedAt: '2026-01-01T00:00:00.000Z' });
		s.load([a]);
		const commented = makeEvent(3, 'commented', a);
		commented.data.message = {
			id: 1,
			cardId: 'a',
			from: 'vscode:alice',
			text: 'use v2',
			question: false,
			at: commented.at,
		};
		s.applyEvent(commented);
		assert.deepEqual(s.get('a'), a);
		assert.deepEqual(ids(s, 'inProgress'), ['a']);
		assert.equal(s.applyEvent(makeEvent(3, 'commented', a)).cards.size, 0, 'a replay of seq 3 is ignored');
	});

	it('ignores an event it has already applied (resume overlap)', () => {
		const s = new BoardState();
		const a = makeCard({ id: 'a' });
		s.load([a]);
		s.applyEvent(makeEvent(5, 'updated', { ...a, title: 'new' }));
		const change = s.applyEvent(makeEvent(5, 'updated', { ...a, title: 'old replay' }));
		assert.equal(change.cards.size, 0);
		assert.equal(s.get('a')?.title, 'new');
	});

	it('applies readiness changes to other cards and drops deleted ones', () => {
		const s = new BoardState();
		const dep = makeCard({ id: 'dep', status: 'claimed', claimOwner: 'x', claimedAt: '2026-01-01T00:00:00.000Z' });
		const waiter = makeCard({ id: 'w', dependsOn: ['dep'], unmetDeps: 1 });
		s.load([dep, waiter]);
		assert.equal(s.markers(s.get('w')!, Date.now()).waiting, true);
		assert.deepEqual(s.waitingOn(s.get('w')!), [{ id: 'dep', title: 'Card dep' }]);
		const change = s.applyEvent(
			makeEvent(
				1,
				'completed',
				{ ...dep, status: 'done', claimOwner: null },
				{ readiness: [{ id: 'w', unmetDeps: 0 }] },
			),
		);
		assert.ok(change.cards.has('w'));
		assert.equal(s.get('w')?.unmetDeps, 0);
		assert.equal(s.markers(s.get('w')!, Date.now()).waiting, false);
		assert.deepEqual(s.waitingOn(s.get('w')!), []);
		s.applyEvent(makeEvent(2, 'deleted', null, { cardId: 'w' }));
		assert.equal(s.get('w'), undefined);
		assert.deepEqual(ids(s, 'ready'), []);
	});

	it('merges late live pages sorted, without overwriting what events changed or deleted', () => {
		const s = new BoardState();
		s.load([makeCard({ id: 'a', priority: 5 }), makeCard({ id: 'c', priority: 1 })], false);
		// Events about cards of pages not loaded yet: a rename, a deletion, a readiness change.
		s.applyEvent(makeEvent(1, 'updated', makeCard({ id: 'b', priority: 3, title: 'New' })));
		s.applyEvent(makeEvent(2, 'deleted', null, { cardId: 'd' }));
		s.applyEvent(makeEvent(3, 'completed', null, { cardId: 'z', readiness: [{ id: 'e', unmetDeps: 0 }] }));
		const change = s.addLivePage([
			makeCard({ id: 'b', priority: 3, title: 'Old' }),
			makeCard({ id: 'd', priority: 2 }),
			makeCard({ id: 'e', priority: 4, dependsOn: ['z'], unmetDeps: 1 }),
			makeCard({ id: 'f', priority: 1 }),
		]);
		assert.ok(change.columns.has('ready'));
		assert.deepEqual(ids(s, 'ready'), ['a', 'e', 'b', 'c', 'f']);
		assert.equal(s.get('b')?.title, 'New');
		assert.equal(s.get('d'), undefined);
		assert.equal(s.get('e')?.unmetDeps, 0);
		s.liveLoaded();
	});

	it('shows an optimistic move at once and rolls it back to the hub state on refusal', () => {
		const s = new BoardState();
		s.load([makeCard({ id: 'a' }), makeCard({ id: 'b' })]);
		s.optimistic('a', { status: 'claimed', claimOwner: 'me', claimedAt: '2026-01-03T00:00:00.000Z' });
		assert.equal(s.isPending('a'), true);
		assert.deepEqual(ids(s, 'inProgress'), ['a']);
		assert.deepEqual(ids(s, 'ready'), ['b']);
		const change = s.rollback('a');
		assert.deepEqual([...change.columns].sort(), ['inProgress', 'ready']);
		assert.deepEqual(ids(s, 'ready'), ['a', 'b']);
		assert.deepEqual(ids(s, 'inProgress'), []);
		assert.equal(s.isPending('a'), false);
	});

	it('lets an event win over an optimistic move (an agent claimed it first)', () => {
		const s = new BoardState();
		const a = makeCard({ id: 'a' });
		s.load([a]);
		s.optimistic('a', { status: 'done' });
		s.applyEvent(makeEvent(3, 'claimed', { ...a, status: 'claimed', claimOwner: 'agent-7', claimedAt: a.createdAt }));
		assert.equal(s.isPending('a'), false);
		assert.deepEqual(ids(s, 'inProgress'), ['a']);
		assert.deepEqual(ids(s, 'done'), []);
		// The late refusal of our request changes nothing: the hub's state is already shown.
		s.rollback('a');
		assert.equal(s.get('a')?.claimOwner, 'agent-7');
	});

	it('does not let a response overwrite a newer event', () => {
		const s = new BoardState();
		const a = makeCard({ id: 'a' });
		s.load([a]);
		const sentAt = s.eventSeqOf('a');
		s.applyEvent(makeEvent(9, 'updated', { ...a, title: 'from the event' }));
		s.applyResult({ ...a, title: 'stale response' }, sentAt);
		assert.equal(s.get('a')?.title, 'from the event');
		s.applyResult({ ...a, title: 'fresh response' }, s.eventSeqOf('a'));
		assert.equal(s.get('a')?.title, 'fresh response');
	});

	it('filters by text and phase and keeps filtering on incremental updates', () => {
		const s = new BoardState();
		const a = makeCard({ id: 'auth-1', title: 'Login form', phase: 'alpha' });
		s.load([
			a,
			makeCard({ id: 'b', title: 'Billing', phase: 'beta' }),
			makeCard({ id: 'c', title: 'Logout', phase: 'alpha' }),
		]);
		assert.deepEqual(s.phases(), ['alpha', 'beta']);
		s.setFilter({ text: 'LOG', phase: '' });
		assert.deepEqual(ids(s, 'ready'), ['auth-1', 'c']);
		s.setFilter({ text: 'log', phase: 'alpha' });
		s.applyEvent(makeEvent(1, 'updated', { ...a, title: 'Sign-in form' }));
		// auth-1 matched by its title only, so the rename drops it from the filtered list.
		assert.deepEqual(ids(s, 'ready'), ['c']);
		s.setFilter({ text: '', phase: '' });
		assert.deepEqual(ids(s, 'ready'), ['auth-1', 'b', 'c']);
	});

	it('keeps 5,000 cards sorted under 2,000 random events, equal to a fresh sort', () => {
		const s = new BoardState();
		const cards = Array.from({ length: 5000 }, (_, i) => makeCard({ id: `c${i}`, priority: i % 17 }));
		s.load(cards);
		let seed = 42;
		const rnd = (n: number): number => {
			seed = (seed * 1103515245 + 12345) % 2 ** 31;
			return seed % n;
		};
		const statuses = ['ready', 'claimed', 'blocked', 'done'] as const;
		for (let seq = 1; seq <= 2000; seq++) {
			const card = s.getReal(`c${rnd(5000)}`)!;
			const status = statuses[rnd(4)]!;
			const at = new Date(Date.UTC(2026, 1, 1, 0, 0, seq)).toISOString();
			s.applyEvent(
				makeEvent(seq, 'updated', {
					...card,
					status,
					priority: rnd(40) - 20,
					claimedAt: status === 'claimed' ? at : null,
					updatedAt: at,
				}),
			);
		}
		let total = 0;
		for (const col of ['ready', 'inProgress', 'blocked', 'done'] as const) {
			const list = [...s.column(col)];
			total += list.length;
			assert.deepEqual(
				list.map(c => c.id),
				[...list].sort(columnOrder[col]).map(c => c.id),
				`${col} stays sorted`,
			);
		}
		assert.equal(total, 5000);
	});

	it('flags expired leases and stalled holders', () => {
		const s = new BoardState();
		const now = Date.parse('2026-01-01T01:00:00.000Z');
		const expired = makeCard({
			id: 'e',
			status: 'claimed',
			claimOwner: 'x',
			claimedAt: '2026-01-01T00:00:00.000Z',
			leaseExpiresAt: '2026-01-01T00:59:00.000Z',
		});
		const stalled = makeCard({
			id: 's',
			status: 'claimed',
			claimOwner: 'x',
			claimedAt: '2026-01-01T00:00:00.000Z',
			progressAt: '2026-01-01T00:30:00.000Z',
			leaseExpiresAt: '2026-01-01T01:05:00.000Z',
		});
		s.load([expired, stalled]);
		assert.deepEqual(s.markers(expired, now), { waiting: false, deferred: false, expired: true, stalled: false });
		assert.deepEqual(s.markers(stalled, now), { waiting: false, deferred: false, expired: false, stalled: true });
		assert.equal(formatRemaining(125_000), '2m 05s left');
		assert.equal(formatRemaining(-30_000), 'expired 30s ago');
	});

	// The boundaries core/rules/health.ts and core/rules/lease.ts define, as the board shows them: the Backlog and
	// Agents trees call the same functions, so the two faces cannot disagree on a card again.
	describe('markers agree with the core rules', () => {
		const now = Date.parse('2026-01-01T01:00:00.000Z');
		const iso = (ms: number) => new Date(now + ms).toISOString();
		const agent = (id: string, lastSeenAgoMs: number): Agent => ({
			id,
			name: id,
			client: 'mcp',
			capabilities: [],
			host: null,
			pid: null,
			lastSeenAt: iso(-lastSeenAgoMs),
			status: 'working',
			cards: [],
			health: 'healthy',
			// What the hub reports: it does not look at health, so the board must not trust it for a card.
			stalled: true,
			connected: true,
		});
		const held = (id: string, owner: string, quietMs: number, leaseLeftMs = 60_000) =>
			makeCard({
				id,
				status: 'claimed',
				claimOwner: owner,
				claimedAt: iso(-quietMs - 1000),
				progressAt: iso(-quietMs),
				leaseExpiresAt: iso(leaseLeftMs),
			});
		const stallMs = defaultHealthThresholds.stallSeconds * 1000;

		it('is stalled at exactly stallSeconds without progress, not a millisecond before', () => {
			const s = new BoardState();
			s.setAgents([agent('live', 0)]);
			assert.equal(s.markers(held('a', 'live', stallMs), now).stalled, true);
			assert.equal(s.markers(held('b', 'live', stallMs - 1), now).stalled, false);
		});

		it('does not call a dead or stale agent’s card stalled, whatever the hub’s agent flag says', () => {
			const s = new BoardState();
			const staleMs = defaultHealthThresholds.staleSeconds * 1000;
			s.setAgents([agent('dead', staleMs), agent('stale', staleMs - 1), agent('late', 30_000)]);
			assert.equal(s.healthOf('dead', now), 'dead');
			assert.equal(s.healthOf('stale', now), 'stale');
			assert.equal(s.markers(held('d', 'dead', stallMs * 2), now).stalled, false);
			assert.equal(s.markers(held('s', 'stale', stallMs * 2), now).stalled, false);
			assert.equal(s.markers(held('l', 'late', stallMs * 2), now).stalled, true);
			// The agent's flag is about some card of it; a card with fresh progress is not stalled.
			assert.equal(s.markers(held('f', 'late', 10_000), now).stalled, false);
		});

		it('derives health from lastSeenAt at render time, not from the last agents notice', () => {
			const s = new BoardState();
			s.setAgents([agent('a', 0)]);
			assert.equal(s.healthOf('a', now), 'healthy');
			assert.equal(s.healthOf('a', now + defaultHealthThresholds.staleSeconds * 1000), 'dead');
			assert.equal(s.healthOf('unknown', now), undefined);
		});

		it('is expired at exactly leaseExpiresAt, and an expired card is not also stalled', () => {
			const s = new BoardState();
			s.setAgents([agent('live', 0)]);
			const atEnd = held('e', 'live', stallMs * 2, 0);
			assert.deepEqual(s.markers(atEnd, now), { waiting: false, deferred: false, expired: true, stalled: false });
			assert.equal(s.markers(held('e2', 'live', 0, 1), now).expired, false);
		});

		it('is deferred until exactly deferUntil', () => {
			const s = new BoardState();
			assert.equal(s.markers(makeCard({ id: 'x', deferUntil: iso(1) }), now).deferred, true);
			assert.equal(s.markers(makeCard({ id: 'y', deferUntil: iso(0) }), now).deferred, false);
		});
	});
});

describe('planMove', () => {
	const ctx = { actor: 'board:alice', nowMs: Date.parse('2026-01-01T01:00:00.000Z'), waitingOn: [] };

	it('claims a ready card as the human', () => {
		const plan = planMove(makeCard({ id: 'a' }), 'inProgress', ctx);
		assert.ok(plan.kind === 'request');
		assert.deepEqual(plan.request, { method: 'card/claim', params: { cardId: 'a' } });
		assert.equal(plan.optimistic.claimOwner, 'board:alice');
	});

	it('refuses illegal drops with a reason', () => {
		const waiting = planMove(makeCard({ id: 'w', unmetDeps: 1 }), 'inProgress', {
			...ctx,
			waitingOn: ['dep (Build API)'],
		});
		assert.deepEqual(waiting, {
			kind: 'refuse',
			reason: 'w waits on dep (Build API); it can be claimed once they are done.',
		});
		const r = planMove(makeCard({ id: 'a' }), 'done', ctx);
		assert.ok(r.kind === 'refuse');
		assert.match(r.reason, /only a claimed card can be completed/);
		assert.equal(planMove(makeCard({ id: 'd', status: 'done' }), 'blocked', ctx).kind, 'refuse');
		assert.equal(planMove(makeCard({ id: 'b', status: 'blocked' }), 'inProgress', ctx).kind, 'refuse');
		assert.deepEqual(planMove(makeCard({ id: 'a' }), 'ready', ctx), { kind: 'none' });
	});

	it('forces completion of an agent-held card only after confirmation, and not for our own', () => {
		const held = makeCard({
			id: 'h',
			status: 'claimed',
			claimOwner: 'codex-2',
			leaseExpiresAt: '2026-01-01T01:05:00.000Z',
		});
		const plan = planMove(held, 'done', ctx);
		assert.ok(plan.kind === 'request');
		assert.deepEqual(plan.request, { method: 'card/complete', params: { cardId: 'h', force: true } });
		assert.match(plan.confirm ?? '', /held by codex-2/);
		const mine = planMove({ ...held, claimOwner: 'board:alice' }, 'done', ctx);
		assert.ok(mine.kind === 'request');
		assert.deepEqual(mine.request, { method: 'card/complete', params: { cardId: 'h' } });
		assert.equal(mine.confirm, undefined);
	});

	it('picks release, reclaim, unblock or reopen for a move back to Ready', () => {
		const held = makeCard({
			id: 'h',
			status: 'claimed',
			claimOwner: 'codex-2',
			leaseExpiresAt: '2026-01-01T00:05:00.000Z',
		});
		const methodOf = (card: ReturnType<typeof makeCard>): string | undefined => {
			const p = planMove(card, 'ready', ctx);
			return p.kind === 'request' ? p.request.method : undefined;
		};
		assert.equal(methodOf(held), 'card/reclaim');
		assert.equal(methodOf({ ...held, claimOwner: 'board:alice' }), 'card/release');
		assert.equal(methodOf(makeCard({ id: 'b', status: 'blocked' })), 'card/unblock');
		assert.equal(methodOf(makeCard({ id: 'd', status: 'done' })), 'card/reopen');
		const expiredPlan = planMove(held, 'ready', ctx);
		assert.ok(expiredPlan.kind === 'request');
		assert.equal(expiredPlan.confirm, undefined, 'an expired lease needs no confirmation');
	});

	it('asks for a reason before blocking', () => {
		const plan = planMove(makeCard({ id: 'a' }), 'blocked', ctx);
		assert.ok(plan.kind === 'request');
		assert.equal(plan.request.method, 'card/block');
		assert.match(plan.askReason ?? '', /Why is a blocked/);
	});
});

describe('priorityForDrop', () => {
	const list = [
		makeCard({ id: 'p9', priority: 9 }),
		makeCard({ id: 'p5', priority: 5 }),
		makeCard({ id: 'p4', priority: 4 }),
		makeCard({ id: 'p0', priority: 0 }),
	];
	const after = (card: ReturnType<typeof makeCard>, index: number): string[] => {
		const p = priorityForDrop(list, card, index);
		assert.notEqual(p, undefined);
		const moved = { ...card, priority: p! };
		return [...list.filter(c => c.id !== card.id), moved].sort(columnOrder.ready).map(c => c.id);
	};

	it('lands the card at the chosen index', () => {
		const p0 = list[3]!;
		assert.deepEqual(after(p0, 0), ['p0', 'p9', 'p5', 'p4']);
		assert.deepEqual(after(p0, 1), ['p9', 'p0', 'p5', 'p4']);
		assert.deepEqual(after(list[0]!, 3), ['p5', 'p4', 'p0', 'p9']);
		// Between 5 and 4 there is no integer: ties fall back to age order, older first.
		assert.deepEqual(after(p0, 2), ['p9', 'p5', 'p0', 'p4']);
	});

	it('returns undefined when the card already sits there', () => {
		assert.equal(priorityForDrop(list, list[1]!, 1), undefined);
	});
});

describe('review gate and questions', () => {
	const ctx = { actor: 'board:alice', nowMs: Date.parse('2026-01-01T01:00:00.000Z'), waitingOn: [] };
	const inReview = makeCard({ id: 'r', status: 'review', review: 'human', completedBy: 'claude', version: 7 });

	it('puts a card in review in In review, oldest first, and tracks the cards that need input', () => {
		const s = new BoardState();
		const a = makeCard({ id: 'a', status: 'claimed', claimOwner: 'claude', claimedAt: '2026-01-01T00:00:00.000Z' });
		s.load([
			{ ...inReview, id: 'r2', updatedAt: '2026-01-01T00:00:09.000Z' },
			{ ...inReview, updatedAt: '2026-01-01T00:00:01.000Z' },
			a,
		]);
		assert.deepEqual(ids(s, 'review'), ['r', 'r2']);
		assert.deepEqual(s.needsInput(), []);
		s.applyEvent(makeEvent(1, 'commented', { ...a, needsInput: true }));
		assert.deepEqual(s.needsInput(), ['a']);
		s.applyEvent(makeEvent(2, 'commented', { ...a, needsInput: false }));
		assert.deepEqual(s.needsInput(), []);
		s.applyEvent(makeEvent(3, 'commented', { ...a, needsInput: true }));
		s.applyEvent(makeEvent(4, 'deleted', null, { cardId: 'a' }));
		assert.deepEqual(s.needsInput(), [], 'a deleted card asks nothing');
		s.load([{ ...a, needsInput: true }]);
		assert.deepEqual(s.needsInput(), ['a']);
	});

	it('approves on Done with the version the human saw, and asks for the note on Ready', () => {
		const approve = planMove(inReview, 'done', ctx);
		assert.ok(approve.kind === 'request');
		assert.deepEqual(approve.request, {
			method: 'card/review',
			params: { cardId: 'r', approve: true, version: 7 },
		});
		assert.equal(approve.confirm, undefined);
		assert.equal(approve.optimistic.status, 'done');
		const changes = planMove(inReview, 'ready', ctx);
		assert.ok(changes.kind === 'request');
		assert.match(changes.askReason ?? '', /What should change in r\?/);
		assert.equal(changes.askConfirm, 'Request changes');
		assert.deepEqual(withAnswer(changes.request, 'add tests'), {
			method: 'card/review',
			params: { cardId: 'r', approve: false, note: 'add tests', version: 7 },
		});
		assert.equal(changes.optimistic.status, 'ready');
		const last = planMove({ ...inReview, attempts: 3, maxAttempts: 3 }, 'ready', ctx);
		assert.ok(last.kind === 'request');
		assert.equal(last.optimistic.status, 'blocked', 'past maxAttempts it parks');
		assert.match(last.askReason ?? '', /parks in Blocked/);
	});

	it('confirms before taking a review from a reviewing agent, unless its lease ran out', () => {
		const held = { ...inReview, claimOwner: 'reviewer-1', leaseExpiresAt: '2026-01-01T01:05:00.000Z' };
		const plan = planMove(held, 'done', ctx);
		assert.ok(plan.kind === 'request');
		assert.match(plan.confirm ?? '', /reviewer-1 is reviewing r/);
		const expired = planMove({ ...held, leaseExpiresAt: '2026-01-01T00:59:00.000Z' }, 'done', ctx);
		assert.ok(expired.kind === 'request');
		assert.equal(expired.confirm, undefined);
	});

	it('refuses to review your own work and moves that make no sense for In review', () => {
		const own = planMove({ ...inReview, completedBy: 'board:alice' }, 'done', ctx);
		assert.ok(own.kind === 'refuse');
		assert.match(own.reason, /You completed r, so you cannot review it/);
		for (const to of ['inProgress', 'blocked'] as const) {
			const r = planMove(inReview, to, ctx);
			assert.ok(r.kind === 'refuse');
			assert.match(r.reason, /r is in review: approve it \(move it to Done\) or request changes/);
		}
		for (const card of [
			makeCard({ id: 'x' }),
			makeCard({ id: 'x', status: 'done' }),
			makeCard({ id: 'x', status: 'claimed', claimOwner: 'claude', review: 'human' }),
			makeCard({ id: 'x', status: 'claimed', claimOwner: 'board:alice', review: 'none' }),
		]) {
			assert.equal(planMove(card, 'review', ctx).kind, 'refuse', `${card.status} ${card.claimOwner ?? ''}`);
		}
	});

	it('submits our own claim of a card that needs review, and says a forced completion skips it', () => {
		const mine = makeCard({ id: 'm', status: 'claimed', claimOwner: 'board:alice', review: 'human' });
		for (const to of ['review', 'done'] as const) {
			const plan = planMove(mine, to, ctx);
			assert.ok(plan.kind === 'request');
			assert.equal(plan.label, 'Submit m for review');
			assert.deepEqual(plan.request, { method: 'card/complete', params: { cardId: 'm' } });
			assert.equal(plan.optimistic.status, 'review');
		}
		const theirs = planMove({ ...mine, claimOwner: 'claude' }, 'done', ctx);
		assert.ok(theirs.kind === 'request');
		assert.match(theirs.confirm ?? '', /It skips the review\./);
		assert.equal(theirs.optimistic.status, 'done');
	});

	it('moves by keyboard from In review to Done or Ready, and passes over In review when it cannot land', () => {
		assert.equal(keyboardTarget(inReview, 1, ctx), 'done');
		assert.equal(keyboardTarget(inReview, -1, ctx), 'ready');
		const theirs = makeCard({ id: 'c', status: 'claimed', claimOwner: 'claude', review: 'human' });
		assert.equal(keyboardTarget(theirs, 1, ctx), 'blocked');
		assert.equal(keyboardTarget({ ...theirs, claimOwner: 'board:alice' }, 1, ctx), 'review');
		assert.equal(keyboardTarget(makeCard({ id: 'b', status: 'blocked' }), -1, ctx), 'inProgress');
		assert.equal(keyboardTarget(makeCard({ id: 'a' }), 1, ctx), 'inProgress');
		assert.equal(keyboardTarget(makeCard({ id: 'a' }), -1, ctx), undefined);
	});
});

describe('messages in the detail pane', () => {
	const msg = (id: number, fields: Partial<Message> = {}): Message => ({
		id,
		cardId: 'a',
		from: 'claude',
		text: `m${id}`,
		question: false,
		at: `2026-01-01T00:00:0${id}.000Z`,
		deliveredAt: null,
		...fields,
	});

	it('merges by id, oldest first, and never forgets a message or a delivery', () => {
		const delivered = msg(2, { deliveredAt: '2026-01-01T00:01:00.000Z' });
		const merged = mergeMessages([msg(3), delivered], [msg(1), msg(2)]);
		assert.deepEqual(
			merged.map(m => [m.id, m.deliveredAt]),
			[
				[1, null],
				[2, '2026-01-01T00:01:00.000Z'],
				[3, null],
			],
		);
	});

	it('takes the message of a commented event and the messages of a delivered one', () => {
		const card = makeCard({ id: 'a' });
		const commented = makeEvent(1, 'commented', card);
		commented.data.message = msg(1);
		assert.deepEqual(messagesOf(commented), [msg(1)]);
		const delivered = makeEvent(2, 'delivered', card);
		delivered.data.messages = [msg(1, { deliveredAt: '2026-01-01T00:02:00.000Z' })];
		assert.equal(messagesOf(delivered)[0]?.deliveredAt, '2026-01-01T00:02:00.000Z');
		assert.deepEqual(messagesOf(makeEvent(3, 'claimed', card)), []);
	});

	it('labels the box a reply when an agent asked, and counts UTF-8 bytes against 4 KiB', () => {
		const asking = makeCard({ id: 'a', status: 'claimed', claimOwner: 'claude', needsInput: true });
		const reply = composerState(asking, [msg(1, { question: true })], 'Use v2');
		assert.equal(reply.label, "Reply to claude's question");
		assert.equal(reply.send, 'Reply');
		assert.equal(reply.canSend, true);
		const toHolder = composerState({ ...asking, needsInput: false }, [], '');
		assert.match(toHolder.label, /^Message claude/);
		assert.equal(toHolder.canSend, false, 'nothing typed');
		const big = composerState(asking, [], 'é'.repeat(2049));
		assert.equal(big.count, '4,098 / 4,096 bytes');
		assert.equal(big.over, true);
		assert.equal(big.canSend, false);
		assert.equal(composerState(asking, [], 'é'.repeat(2048)).canSend, true);
	});
});

describe('BoardState: projects', () => {
	it('filters by project, always shows cards without one, and lists the projects seen', () => {
		const s = new BoardState();
		s.load([
			makeCard({ id: 'w', project: 'github.com/acme/web' }),
			makeCard({ id: 'a', project: 'github.com/acme/api' }),
			makeCard({ id: 'n', project: null }),
			makeCard({ id: 'old' }),
		]);
		assert.deepEqual(projectsSeen(s), ['github.com/acme/api', 'github.com/acme/web']);
		s.setFilter({ text: '', phase: '', projects: ['github.com/acme/web'] });
		assert.deepEqual(ids(s, 'ready').sort(), ['n', 'old', 'w']);
		s.setFilter({ text: '', phase: '', projects: [] });
		assert.deepEqual(ids(s, 'ready').sort(), ['a', 'n', 'old', 'w']);
		const before = s.version;
		const change = s.applyEvent(
			makeEvent(1, 'updated', makeCard({ id: 'n', project: 'github.com/acme/mobile', version: 2 })),
		);
		assert.equal(change.phases, true, 'a new project refreshes the choice');
		assert.ok(s.version > before);
		assert.deepEqual(projectsSeen(s), ['github.com/acme/api', 'github.com/acme/mobile', 'github.com/acme/web']);
	});
});
