/**
 * The board's DOM helpers: an element with a class and, optionally, its text (set as text, never
 * parsed as HTML, its control characters and bidi overrides as visible escapes: core/visibleText.ts),
 * and a plain button. Board modules build their elements with them; no state, no transport.
 */
import { visibleText } from '../core/visibleText';

/** Text an agent may have written, as the board shows it: newlines kept, no control character raw. */
export function shown(text: string): string {
	return visibleText(text, { multiline: true });
}

export function el<K extends keyof HTMLElementTagNameMap>(
	tag: K,
	className: string,
	text?: string,
): HTMLElementTagNameMap[K] {
	const e = document.createElement(tag);
	e.className = className;
	if (text !== undefined) {
		e.textContent = shown(text);
	}
	return e;
}

/** A plain button (type "button", so it never submits a form) that runs `onClick`. */
export function button(label: string, className: string, onClick: () => void): HTMLButtonElement {
	const b = el('button', className, label);
	b.type = 'button';
	b.addEventListener('click', onClick);
	return b;
}
