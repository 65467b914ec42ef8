/**
 * The board page: one HTML document for both hosts, the hub's /board route and the VS Code
 * webview, with a strict CSP (scripts only by nonce, styles only from the stylesheet, no inline
 * anything). Pure string building: no node, no DOM, no vscode; callers supply the URIs and nonce.
 */
import { BatonError } from '../errors';

export type BoardHost = 'browser' | 'vscode';
const boardHosts: readonly string[] = ['browser', 'vscode'];

export interface BoardPageOptions {
	/** Fresh per page load, base64/base64url/hex characters only (it goes into the CSP). */
	nonce: string;
	/** URL of dist/webview/board.js as the page can load it. */
	scriptUri: string;
	/** URL of dist/webview/board.css. */
	styleUri: string;
	/** Source expression allowed for styles and images: the webview's `cspSource` or the hub's origin. */
	cspSource: string;
	/** connect-src: the hub's ws(s) origin in the browser, `'none'` in VS Code (frames go through postMessage). */
	connectSrc: string;
	host: BoardHost;
	title?: string;
}

const nonceShape = /^[A-Za-z0-9+/_=-]{16,128}$/;
/** One CSP source list: host sources, schemes and quoted keywords; no `;` or `,` that could add directives. */
const sourceListShape = /^[A-Za-z0-9'*:/._\-+ [\]]+$/;

function escapeHtml(s: string): string {
	return s.replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`);
}

function checkSources(name: string, value: string): void {
	if (!sourceListShape.test(value)) {
		throw new BatonError(
			'invalid_input',
			`boardPageHtml: ${name} "${value}" is not a CSP source list (letters, digits, quotes, * : / . _ - + and spaces only).`,
		);
	}
}

/** The Content-Security-Policy the board runs under (exported so tests and the hub can check it). */
export function boardCsp(options: Pick<BoardPageOptions, 'nonce' | 'cspSource' | 'connectSrc'>): string {
	return [
		"default-src 'none'",
		`img-src ${options.cspSource} data:`,
		`style-src ${options.cspSource}`,
		`script-src 'nonce-${options.nonce}'`,
		`connect-src ${options.connectSrc}`,
		"base-uri 'none'",
		"form-action 'none'",
	].join('; ');
}

/** Builds the board page. Throws invalid_input for a nonce or source list that could break the CSP. */
export function boardPageHtml(options: BoardPageOptions): string {
	if (!nonceShape.test(options.nonce)) {
		throw new BatonError(
			'invalid_input',
			'boardPageHtml: the nonce must be 16–128 base64/hex characters, fresh for every page (e.g. 32 random bytes in base64).',
		);
	}
	checkSources('cspSource', options.cspSource);
	checkSources('connectSrc', options.connectSrc);
	// Checked at run time too: the hub and the extension may pass a value read from elsewhere.
	if (!boardHosts.includes(options.host)) {
		throw new BatonError('invalid_input', `boardPageHtml: host must be "browser" or "vscode", not "${options.host}".`);
	}
	const csp = boardCsp(options);
	const title = escapeHtml(options.title ?? 'Baton board');
	return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${escapeHtml(options.styleUri)}">
</head>
<body data-host="${options.host}">
<div id="app" class="app" aria-busy="true"><p class="app-loading">Loading the board…</p></div>
<noscript>The Baton board needs JavaScript.</noscript>
<script nonce="${escapeHtml(options.nonce)}" src="${escapeHtml(options.scriptUri)}"></script>
</body>
</html>
`;
}
