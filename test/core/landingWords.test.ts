/**
 * The landing queue's words (core/rules/landing.ts), the ones the board and VS Code's tree show:
 * ordinals, a card's place, the longer line with the base and who approved it, and a line's count.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { LandingEntry } from '../../core/protocol';
import { landingByCard, landingCount, landingLine, landingText, ordinal } from '../../core/rules/landing';

const entry = (cardId: string, state: LandingEntry['state'], place: number): LandingEntry => ({
	cardId,
	title: `Work ${cardId}`,
	project: 'github.com/acme/web',
	base: 'main',
	state,
	place,
	actor: 'vscode:ana',
	queuedAt: '2026-12-08T01:00:00.000Z',
});

describe('the landing queue’s words', () => {
	it('numbers places in English', () => {
		assert.deepEqual([1, 2, 3, 4, 10, 11, 12, 13, 21, 22, 23, 101, 111, 112].map(ordinal), [
			'1st',
			'2nd',
			'3rd',
			'4th',
			'10th',
			'11th',
			'12th',
			'13th',
			'21st',
			'22nd',
			'23rd',
			'101st',
			'111th',
			'112th',
		]);
	});

	it('says Landing now, or the waiting card’s place, and the longer line with the base and approver', () => {
		assert.equal(landingText(entry('A', 'landing', 1)), 'Landing now');
		assert.equal(landingText(entry('B', 'waiting', 2)), 'Waiting to land · 2nd');
		// The line's first entry before it takes its turn is 1st, not "Landing now".
		assert.equal(landingText(entry('C', 'waiting', 1)), 'Waiting to land · 1st');
		assert.equal(landingLine(entry('A', 'landing', 1)), 'Landing now on main · approved by vscode:ana');
		assert.equal(
			landingLine(entry('B', 'waiting', 3)),
			'Waiting to land on main · 3rd in line · approved by vscode:ana',
		);
	});

	it('counts a line, leaving out what is none, and indexes entries by card', () => {
		const line = [entry('A', 'landing', 1), entry('B', 'waiting', 2), entry('C', 'waiting', 3)];
		assert.equal(landingCount(line), '1 landing · 2 waiting');
		assert.equal(landingCount(line.slice(0, 1)), '1 landing');
		assert.equal(landingCount(line.slice(1)), '2 waiting');
		assert.equal(landingCount([]), '');
		assert.equal(landingByCard(line).get('B')?.place, 2);
	});
});
