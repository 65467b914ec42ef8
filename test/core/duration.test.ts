/**
 * The one duration text: the tree rounded to the nearest second and the board cut down,
 * so the same lease read "4m 05s" in one and "4m 04s" in the other. One function, cut down.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { formatDuration } from '../../core/duration';
import { formatRemaining } from '../../webview/format';

describe('formatDuration', () => {
	it('cuts down to whole units and never shows more time than is left', () => {
		assert.equal(formatDuration(4_999), '4s');
		assert.equal(formatDuration(245_600), '4m 05s', 'the tree said 4m 06s: it rounded');
		assert.equal(formatDuration(59_999), '59s');
		assert.equal(formatDuration(3_720_000), '1h 02m');
		assert.equal(formatDuration(47 * 3_600_000 + 59 * 60_000), '47h 59m');
		assert.equal(formatDuration(48 * 3_600_000), '2d');
		assert.equal(formatDuration(-5_000), '0s');
	});

	it('is the text of the board countdowns', () => {
		assert.equal(formatRemaining(245_600), '4m 05s left');
		assert.equal(formatRemaining(-30_500), 'expired 30s ago');
	});
});
