/**
 * Card bodies as safe HTML. Raw HTML inside the markdown is shown as text (escaped before any parser
 * sees it: even an inert DOMParser document reports a CSP violation for `onerror=` attributes), marked
 * renders the rest, DOMPurify removes anything active that markdown itself can produce
 * (`javascript:` links), and remote images become links because the CSP allows only data: images.
 * A card's one-line summary (a done card's result in its column) is the same markdown without links
 * or images (the card is a drag handle; the detail pane has them), cached by source so recycled rows
 * and the clock's refreshes do not parse it again. The only place the board inserts HTML; every
 * other text goes through textContent.
 */
import DOMPurify from 'dompurify';
import { Marked } from 'marked';

import { shown } from './dom';

const escapeHtml = (s: string): string =>
	s.replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

const markdown = new Marked({
	gfm: true,
	breaks: false,
	async: false,
	renderer: {
		html: ({ text }) => escapeHtml(text),
	},
});

let hooked = false;

function installHooks(): void {
	if (hooked) {
		return;
	}
	hooked = true;
	DOMPurify.addHook('afterSanitizeAttributes', node => {
		if (node.tagName === 'A') {
			node.setAttribute('target', '_blank');
			node.setAttribute('rel', 'noopener noreferrer');
		}
		if (node.tagName === 'IMG') {
			const src = node.getAttribute('src') ?? '';
			if (!src.startsWith('data:image/')) {
				const link = document.createElement('a');
				link.href = src;
				link.textContent = node.getAttribute('alt') ?? src;
				link.setAttribute('target', '_blank');
				link.setAttribute('rel', 'noopener noreferrer');
				node.replaceWith(link);
			}
		}
	});
}

const forbidden = ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed'];

/** Renders markdown to a sanitised fragment. */
export function renderMarkdown(source: string): DocumentFragment {
	installHooks();
	const html = markdown.parse(shown(source)) as string;
	return DOMPurify.sanitize(html, {
		RETURN_DOM_FRAGMENT: true,
		FORBID_TAGS: forbidden,
		FORBID_ATTR: ['style', 'class', 'id'],
	});
}

/** Summaries kept (a Done column's rendered rows, and then some); the oldest go first. */
const summaryCacheSize = 300;
const summaries = new Map<string, DocumentFragment>();

/**
 * A card's summary line: the markdown sanitised as renderMarkdown does, links and images reduced to
 * their text; a fresh copy of a cached fragment. The caller lays its blocks out on one line (CSS).
 */
export function renderMarkdownSummary(source: string): DocumentFragment {
	let cached = summaries.get(source);
	if (cached === undefined) {
		installHooks();
		const html = markdown.parse(shown(source)) as string;
		cached = DOMPurify.sanitize(html, {
			RETURN_DOM_FRAGMENT: true,
			FORBID_TAGS: [...forbidden, 'a', 'img'],
			FORBID_ATTR: ['style', 'class', 'id'],
		});
		if (summaries.size >= summaryCacheSize) {
			const oldest = summaries.keys().next();
			if (oldest.done !== true) {
				summaries.delete(oldest.value);
			}
		}
		summaries.set(source, cached);
	}
	return cached.cloneNode(true) as DocumentFragment;
}
