/**
 * The review desk's rules (extension/reviewQueue.ts) under plain node: which cards this human may
 * review and in what order, the status bar's counts, and notifications only for what is new — never
 * for what was already so at connect, never for the human's own completion, once per occurrence.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Card } from '../../core/protocol';
import { DeskTracker, deskSummary, questionNewsText, reviewNewsText, toReview } from '../../extension/reviewQueue';

const me = 'vscode:ann';
let clock = 0;
function card(id: string, over: Partial<Card> = {}): Card {
	clock++;
	return {
		id,
		title: `Card ${id}`,
		status: 'ready',
		claimOwner: null,
		completedBy: null,
		needsInput: false,
		updatedAt: new Date(Date.UTC(2026, 10, 25, 9, 0, clock)).toISOString(),
		...over,
	} as Card;
}
const inReview = (id: string, by = 'claude-1', over: Partial<Card> = {}) =>
	card(id, { status: 'review', completedBy: by, ...over });

describe('review queue', () => {
	it('lists cards in review oldest first, without the human’s own completions, held ones last', () => {
		const old = inReview('OLD');
		const held = inReview('HELD', 'codex-2', { claimOwner: 'reviewer-3' });
		const mine = inReview('MINE', me);
		const young = inReview('YOUNG');
		assert.deepEqual(
			toReview([young, mine, held, old, card('R')], me).map(c => c.id),
			['OLD', 'YOUNG', 'HELD'],
		);
	});

	it('summarises "N to review · M questions" and lists the cards in the tooltip', () => {
		assert.equal(deskSummary([card('A'), inReview('MINE', me)], me), undefined, 'nothing to show');
		const s = deskSummary([inReview('A'), card('Q', { status: 'claimed', needsInput: true })], me);
		assert.ok(s);
		assert.equal(s.text, '1 to review · 1 question');
		assert.match(s.tooltip, /A — Card A \(by claude-1\)/);
		assert.match(s.tooltip, /Needs input:\n {2}Q — Card Q/);
		assert.equal(deskSummary([inReview('A'), inReview('B')], me)?.text, '2 to review');
	});

	it('announces cards entering review and new questions once, after a baseline', () => {
		const t = new DeskTracker();
		const before = [inReview('OLD'), card('Q0', { needsInput: true })];
		assert.deepEqual(t.look(before, me), { reviews: [], questions: [] }, 'what is there at connect is the baseline');
		const now = [...before, inReview('NEW'), inReview('OWN', me), card('Q1', { status: 'claimed', needsInput: true })];
		const news = t.look(now, me);
		assert.deepEqual(
			news.reviews.map(c => c.id),
			['NEW'],
			'not the human’s own completion',
		);
		assert.deepEqual(
			news.questions.map(c => c.id),
			['Q1'],
		);
		assert.deepEqual(t.look(now, me), { reviews: [], questions: [] }, 'never twice');
		// Sent back, worked on, completed again: a new occurrence.
		t.look(before, me);
		assert.deepEqual(
			t.look(now, me).reviews.map(c => c.id),
			['NEW'],
		);
		t.reset();
		assert.deepEqual(t.look(now, me), { reviews: [], questions: [] }, 'a reconnect is a new baseline');
	});

	it('words one card, or a burst in one sentence', () => {
		assert.equal(reviewNewsText([inReview('A')]), 'A “Card A” is ready for your review (completed by claude-1).');
		const burst = ['A', 'B', 'C', 'D', 'E'].map(id => inReview(id));
		assert.equal(reviewNewsText(burst), '5 cards are ready for your review: A, B, C and 2 more.');
		const q = card('Q', { needsInput: true });
		assert.equal(
			questionNewsText([q], { from: 'claude-1', text: 'v1 or\nv2 API?' }),
			'claude-1 asks on Q: v1 or v2 API?',
		);
		assert.equal(questionNewsText([q]), 'An agent asks a question on Q “Card Q”.');
		assert.equal(questionNewsText([q, card('R')]), 'Agents ask questions on 2 cards: Q, R.');
	});
});
