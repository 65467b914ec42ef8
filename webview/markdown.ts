/**
 * Card bodies as safe HTML. Raw HTML inside the markdown is shown as text (escaped before any parser
 * sees it: even an inert DOMParser document reports a CSP violation for `onerror=` attributes), marked
 * renders the rest, DOMPurify removes anything active that markdown itself can produce
 * (`javascript:` links), and remote images become links because the CSP allows only data: images.
 * The only place the board inserts HTML; every other text goes through textContent.
 */
import DOMPurify from 'dompurify';
import { Marked } from 'marked';

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

/** Renders markdown to a sanitised fragment. */
export function renderMarkdown(source: string): DocumentFragment {
	installHooks();
	const html = markdown.parse(source) as string;
	return DOMPurify.sanitize(html, {
		RETURN_DOM_FRAGMENT: true,
		FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed'],
		FORBID_ATTR: ['style', 'class', 'id'],
	});
}
