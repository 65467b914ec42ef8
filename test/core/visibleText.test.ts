/**
 * core/visibleText.ts: agent-written text as every face shows it. Terminal controls, C1 controls, bidi
 * overrides and isolates become visible escapes (newline and tab kept only where a face shows several
 * lines); every other character, emoji and accents included, is left alone; `jsonVisible` spells the
 * same characters as JSON escapes, so the JSON parses back to the raw text.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { jsonVisible, visibleText } from '../../core/visibleText';

describe('visibleText', () => {
	it('shows a forged line and a bidi override as escapes', () => {
		assert.equal(visibleText('done\x1b[2K\rAPPROVED'), 'done\\x1b[2K\\rAPPROVED');
		assert.equal(visibleText('invoice\u202Efdp.exe'), 'invoice\\u202efdp.exe');
		assert.equal(visibleText('a\u2066b\u2069c\u200ed\u061c'), 'a\\u2066b\\u2069c\\u200ed\\u061c');
		assert.equal(visibleText('8-bit CSI \u009b2K and NEL \u0085'), '8-bit CSI \\x9b2K and NEL \\x85');
		assert.equal(visibleText('bell\x07 del\x7f nul\0'), 'bell\\x07 del\\x7f nul\\x00');
		assert.equal(visibleText('line\u2028sep'), 'line\\u2028sep');
	});

	it('keeps newline and tab only where the face shows several lines', () => {
		assert.equal(visibleText('a\nb\tc'), 'a\\nb\\tc');
		assert.equal(visibleText('a\nb\tc\r\n', { multiline: true }), 'a\nb\tc\\r\n');
	});

	it('leaves every other character alone, and is the identity on safe text', () => {
		const safe = 'Écrire le parseur — “v2” 🚀 日本語 <b>x</b> \\x1b as typed';
		assert.equal(visibleText(safe), safe);
		assert.equal(visibleText(''), '');
	});

	it('spells the same characters as JSON escapes, which parse back to the raw text', () => {
		const raw = { title: 'x\x1b[2K\rAPPROVED \u202Egnp \u0085' };
		const json = jsonVisible(JSON.stringify(raw));
		// eslint-disable-next-line no-control-regex
		assert.doesNotMatch(json, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
		assert.deepEqual(JSON.parse(json), raw);
	});
});
