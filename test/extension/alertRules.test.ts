/**
 * The notification rules (extension/alertRules.ts) under plain node: a card that turns failed and an
 * agent that dies holding cards are announced once, when it happens — never for what was already so
 * at connect, never twice — and again after they were resolved and happened anew.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Card } from '../../core/protocol';
import { type AgentSnapshot, AlertTracker, alertText } from '../../extension/alertRules';

function card(id: string, over: Partial<Card> = {}): Card {
	return { id, title: `Card ${id}`, status: 'ready', blockedReason: null, failed: false, ...over } as Card;
}
const failed = (id: string): Card =>
	card(id, { status: 'blocked', failed: true, blockedReason: 'attempt 3 of 3 failed: tests red; attempt 2: timeout' });
const parked = (id: string): Card => card(id, { status: 'blocked', blockedReason: 'waiting for legal' });
const agent = (id: string, health: AgentSnapshot['health'], cards: string[]): AgentSnapshot => ({
	agent: { id, name: `Agent ${id}` },
	health,
	cards: cards.map(c => ({ id: c })),
});

describe('fleet alert rules', () => {
	it('announces a card that turns failed once, and not a card parked by a human', () => {
		const t = new AlertTracker();
		assert.deepEqual(t.cards([failed('OLD'), card('A'), card('B')]), [], 'what was failed at connect is the baseline');
		const alerts = t.cards([failed('OLD'), failed('A'), parked('B')]);
		assert.deepEqual(
			alerts.map(a => (a.kind === 'cardFailed' ? a.cardId : '')),
			['A'],
		);
		assert.match(alertText(alerts[0] ?? assert.fail()), /^Card A “Card A” failed: attempt 3 of 3 failed: tests red/);
		assert.deepEqual(t.cards([failed('OLD'), failed('A'), parked('B')]), [], 'not twice');
		assert.deepEqual(t.cards([failed('OLD'), card('A'), parked('B')]), [], 'retried');
		assert.equal(t.cards([failed('OLD'), failed('A'), parked('B')]).length, 1, 'failed again: announced again');
	});

	it('announces an agent that dies holding cards, not one that dies idle or was dead at connect', () => {
		const t = new AlertTracker();
		assert.deepEqual(t.agents([agent('gone', 'dead', ['X']), agent('a', 'healthy', ['A1', 'A2'])]), []);
		assert.deepEqual(t.agents([agent('gone', 'dead', ['X']), agent('a', 'late', ['A1', 'A2'])]), []);
		const alerts = t.agents([agent('gone', 'dead', ['X']), agent('a', 'dead', ['A1', 'A2']), agent('b', 'dead', [])]);
		assert.equal(alerts.length, 1);
		assert.equal(
			alertText(alerts[0] ?? assert.fail()),
			'Agent Agent a stopped responding while holding 2 cards (A1, A2).',
		);
		assert.deepEqual(t.agents([agent('a', 'dead', ['A1', 'A2'])]), [], 'not twice');
	});

	it('starts a new baseline after a reset (reconnect, another data dir)', () => {
		const t = new AlertTracker();
		t.cards([card('A')]);
		t.reset();
		assert.deepEqual(t.cards([failed('A')]), []);
		const many = alertText({ kind: 'agentDied', agentId: 'z', name: 'z', cardIds: ['1', '2', '3', '4', '5'] });
		assert.match(many, /holding 5 cards \(1, 2, 3 and 2 more\)/);
	});
});
