/**
 * The check before review in the words of every face, pure: core's summary ("checks passed (npm test,
 * 12 s)"), the board's badge (running / passed / failed, only in review or on a card a failure sent
 * back) and the VS Code tree row's description; a card without checks shows none of them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { defaultHealthThresholds } from '../../core/protocol';
import { checksSummary } from '../../core/rules/checks';
import { cardSummary } from '../../extension/cardText';
import { checksBadge } from '../../webview/checksView';
import { makeCard } from '../helpers/cards';

const startedAt = '2026-03-01T09:00:00.000Z';

describe('checks words', () => {
	it('core says how the check went, the same for every face', () => {
		assert.equal(checksSummary({ command: 'npm test', state: 'running', startedAt }), 'checks running (npm test)');
		assert.equal(
			checksSummary({ command: 'npm test', state: 'passed', startedAt, exitCode: 0, durationMs: 12_400 }),
			'checks passed (npm test, 12 s)',
		);
		assert.equal(
			checksSummary({ command: 'npm test', state: 'failed', startedAt, exitCode: 1, durationMs: 3_000 }),
			'checks failed (npm test, exit 1, 3 s)',
		);
		assert.equal(
			checksSummary({ command: 'npm test', state: 'timed_out', startedAt, exitCode: null, durationMs: 600_000 }),
			'checks timed out (npm test, 600 s)',
		);
	});

	it("the board's badge and the tree's description show it in review and on a card sent back", () => {
		const review = makeCard({
			id: 'A1',
			status: 'review',
			checks: { command: 'npm test', state: 'running', startedAt },
		});
		assert.deepEqual(checksBadge(review), {
			name: 'checks-running',
			label: 'checks running',
			title: 'checks running (npm test)',
		});
		assert.match(
			cardSummary(review, Date.parse(startedAt), defaultHealthThresholds, undefined),
			/checks running \(npm test\)/,
		);
		const back = makeCard({
			id: 'A2',
			status: 'ready',
			checks: { command: 'npm test', state: 'timed_out', startedAt, exitCode: null, durationMs: 600_000 },
		});
		assert.equal(checksBadge(back)?.name, 'checks-failed');
		assert.equal(checksBadge(back)?.label, 'checks timed out');
		assert.equal(checksBadge({ ...back, status: 'done' }), undefined, 'a done card no longer shows them');
		const plain = makeCard({ id: 'A3', status: 'review' });
		assert.equal(checksBadge(plain), undefined);
		assert.doesNotMatch(cardSummary(plain, Date.parse(startedAt), defaultHealthThresholds, undefined), /checks/);
	});
});
