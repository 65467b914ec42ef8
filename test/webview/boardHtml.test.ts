/** core/formats/boardHtml.ts: the page both hosts serve, its CSP, and refusal of values that could break out of it. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { boardCsp, boardPageHtml } from '../../core/formats/boardHtml';
import { BatonError } from '../../core/errors';

const base = {
	nonce: 'c2VjcmV0LW5vbmNlLTEyMzQ1Ng==',
	scriptUri: '/board/board.js',
	styleUri: '/board/board.css',
	cspSource: "'self'",
	connectSrc: 'ws://127.0.0.1:4100 ws://localhost:4100',
	host: 'browser' as const,
};

describe('boardPageHtml', () => {
	it('builds a strict CSP: scripts by nonce only, no inline styles, connect only to the hub', () => {
		assert.equal(
			boardCsp(base),
			"default-src 'none'; img-src 'self' data:; style-src 'self'; script-src 'nonce-c2VjcmV0LW5vbmNlLTEyMzQ1Ng=='; " +
				"connect-src ws://127.0.0.1:4100 ws://localhost:4100; base-uri 'none'; form-action 'none'",
		);
		const html = boardPageHtml(base);
		assert.ok(html.includes('content="default-src &#39;none&#39;; img-src'));
		assert.ok(html.includes('<script nonce="c2VjcmV0LW5vbmNlLTEyMzQ1Ng==" src="/board/board.js"></script>'));
		assert.ok(html.includes('<link rel="stylesheet" href="/board/board.css">'));
		assert.ok(html.includes('<body data-host="browser">'));
		assert.doesNotMatch(html, /style="/, 'no inline style attribute (it would need unsafe-inline)');
		assert.doesNotMatch(html, /<style/);
		assert.equal(html.match(/<script/g)?.length, 1, 'one script, the nonced bundle');
	});

	it('marks the VS Code host and escapes the title and URIs', () => {
		const html = boardPageHtml({
			...base,
			host: 'vscode',
			cspSource: 'https://*.vscode-cdn.net',
			connectSrc: "'none'",
			scriptUri: 'https://file+.vscode-resource.vscode-cdn.net/x/board.js?a=1&b="2"',
			title: '<Baton> & "friends"',
		});
		assert.ok(html.includes('<body data-host="vscode">'));
		assert.ok(html.includes('<title>&#60;Baton&#62; &#38; &#34;friends&#34;</title>'));
		assert.ok(html.includes('board.js?a=1&#38;b=&#34;2&#34;"'));
		assert.ok(html.includes('connect-src &#39;none&#39;'));
	});

	it('refuses a nonce or source list that could change the policy, naming what is wrong', () => {
		const refused = (o: Partial<typeof base>, pattern: RegExp): void => {
			assert.throws(
				() => boardPageHtml({ ...base, ...o }),
				(e: unknown) => BatonError.is(e, 'invalid_input') && pattern.test(e.message),
			);
		};
		refused({ nonce: 'short' }, /nonce must be 16–128/);
		refused({ nonce: "abcdefghijklmnop'; script-src *" }, /nonce/);
		refused({ connectSrc: "ws://x; script-src 'unsafe-inline'" }, /connectSrc .* is not a CSP source list/);
		refused({ cspSource: 'https://a.test,https://b.test' }, /cspSource/);
		refused({ host: 'electron' as 'browser' }, /host must be "browser" or "vscode"/);
	});
});
