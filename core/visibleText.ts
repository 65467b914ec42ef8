/**
 * Text written by agents (titles, results, comments, reasons, output lines) made safe to show: every
 * character that could steer a terminal or reorder what a reader sees is replaced by a visible escape,
 * so an agent can neither hide text nor forge a line ("\x1b[2K\rAPPROVED" shows as itself).
 * Replaced: C0 controls (U+0000–U+001F, newline and tab kept where the face shows several lines), DEL,
 * C1 controls (U+0080–U+009F, among them the 8-bit CSI), the bidi embeddings, overrides and isolates
 * (U+202A–U+202E, U+2066–U+2069), the bidi marks (U+200E, U+200F, U+061C) and the line and paragraph
 * separators (U+2028, U+2029). ESC becomes `\x1b`, so the sequence after it is plain text.
 * Used by every face: the CLI's human output, `baton run`'s table, the board's webview, VS Code's
 * tree and detail; JSON output keeps the raw value (`jsonVisible` only spells those characters as
 * JSON's own \u escapes). Platform-free; must not change any other character.
 */

/** Characters a face must not show raw (newline and tab are decided by `multiline`). */
// eslint-disable-next-line no-control-regex
const unsafe = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
// eslint-disable-next-line no-control-regex
const unsafeAll = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOf(ch: string): string {
	const named1 = named[ch];
	if (named1 !== undefined) {
		return named1;
	}
	const code = ch.charCodeAt(0);
	return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every unsafe character as a visible escape. `multiline`: newline and tab stay (a body, a
 * comment, a result shown on its own lines); otherwise they are escaped too (a title, a label, a row).
 */
export function visibleText(text: string, options: { multiline?: boolean } = {}): string {
	if (!unsafe.test(text)) {
		return text;
	}
	const multiline = options.multiline === true;
	return text.replace(unsafeAll, ch => (multiline && (ch === '\n' || ch === '\t') ? ch : escapeOf(ch)));
}

/** Characters JSON.stringify leaves raw that a terminal or editor still acts on. */
const jsonUnsafe = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A JSON text (JSON.stringify's output) with the characters above spelled as JSON's `\uXXXX` escapes:
 * it parses to the same value, raw text included, but shows nothing a reader cannot see. Only valid
 * on JSON text, where these characters can only stand inside strings.
 */
export function jsonVisible(json: string): string {
	return json.replace(jsonUnsafe, ch => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
