/**
 * The Messages section of the detail pane: the card's messages, newest last, each with
 * who, when, a question marker and when its holder got it; and the box to post one (a reply when an
 * agent asked), sent with the button or Ctrl/Cmd+Enter, with the 4 KiB limit shown as you type and a
 * refusal shown under the box with the text kept. Message text is markdown through markdown.ts (the
 * only HTML); everything else goes in as text. It keeps no messages of its own (the pane passes them)
 * and talks to the hub only through its host.
 */
import type { Card, Message } from '../core/protocol';
import { renderMarkdown } from './markdown';
import { composerState } from './messageList';
import { el } from './dom';

export interface ConversationHost {
	/** Posts a message on the card; resolves with it as the hub stored it. */
	comment(cardId: string, text: string): Promise<Message>;
	/** A post succeeded: the pane merges the message in. */
	posted(message: Message): void;
	/** Our actor id (HelloOk.actor), to say "you". */
	actor(): string | undefined;
}

interface Composer {
	cardId: string;
	form: HTMLFormElement;
	label: HTMLLabelElement;
	input: HTMLTextAreaElement;
	count: HTMLElement;
	send: HTMLButtonElement;
	error: HTMLElement;
	sending: boolean;
}

function time(iso: string, className: string, text: string): HTMLTimeElement {
	const t = el('time', className, text);
	t.dateTime = iso;
	t.title = new Date(iso).toLocaleString();
	return t;
}

export class Conversation {
	private composer: Composer | undefined;
	/** The composer's card and messages as last rendered (for the label and the button). */
	private shown: { card: Card; messages: readonly Message[] } | undefined;

	constructor(private readonly host: ConversationHost) {}

	/** The Messages section for `card`; `messages` undefined while card/get is on its way. */
	render(card: Card, messages: readonly Message[] | undefined): HTMLElement {
		const root = el('section', 'detail-section conversation');
		root.append(el('h3', 'detail-heading', messages === undefined ? 'Messages' : `Messages (${messages.length})`));
		if (messages === undefined) {
			root.append(el('p', 'muted', 'Loading…'));
		} else if (messages.length === 0) {
			root.append(el('p', 'muted', 'No messages yet.'));
		} else {
			const ol = el('ol', 'messages');
			ol.setAttribute('aria-label', `Messages on ${card.id}, oldest first`);
			for (const m of messages) {
				ol.append(this.renderMessage(card, m));
			}
			root.append(ol);
		}
		this.shown = { card, messages: messages ?? [] };
		root.append(this.composerFor(card.id).form);
		this.updateComposer();
		return root;
	}

	/** Puts the cursor in the message box (after "Reply" from the toolbar's needs-input count). */
	focusReply(): void {
		this.composer?.input.focus();
		this.composer?.input.scrollIntoView({ block: 'nearest' });
	}

	private renderMessage(card: Card, m: Message): HTMLElement {
		const li = el('li', m.question ? 'message message--question' : 'message');
		const head = el('div', 'message-head');
		const me = this.host.actor();
		head.append(el('span', 'message-from', m.from === me ? `${m.from} (you)` : m.from));
		head.append(time(m.at, 'message-time', new Date(m.at).toLocaleString()));
		if (m.question) {
			const q = el('span', 'flag flag-question', 'question');
			q.title = 'The agent asked this and waits for an answer';
			head.append(q);
		}
		if (m.deliveredAt !== null && m.deliveredAt !== undefined) {
			head.append(
				time(m.deliveredAt, 'message-delivered', `delivered ${new Date(m.deliveredAt).toLocaleTimeString()}`),
			);
		} else if (card.status === 'claimed' && card.claimOwner !== null && card.claimOwner !== m.from) {
			const wait = el('span', 'message-pending', 'not delivered yet');
			wait.title = `${card.claimOwner} gets it with its next tool call`;
			head.append(wait);
		}
		const body = el('div', 'markdown message-text');
		body.append(renderMarkdown(m.text));
		li.append(head, body);
		return li;
	}

	/** The composer of `cardId`, kept across re-renders so live events never eat what is being typed. */
	private composerFor(cardId: string): Composer {
		if (this.composer?.cardId === cardId) {
			return this.composer;
		}
		const form = el('form', 'message-form');
		const id = `message-input-${cardId}`;
		const label = el('label', 'field-label message-label');
		label.htmlFor = id;
		const input = el('textarea', 'input message-input');
		input.id = id;
		input.name = 'message';
		input.rows = 3;
		input.placeholder = 'Markdown. Ctrl+Enter (⌘+Enter) sends.';
		const foot = el('div', 'message-foot');
		const count = el('span', 'message-count');
		count.id = `${id}-count`;
		input.setAttribute('aria-describedby', count.id);
		const send = el('button', 'btn btn-primary message-send', 'Send');
		send.type = 'submit';
		foot.append(count, send);
		const error = el('p', 'message-error');
		error.setAttribute('role', 'alert');
		error.hidden = true;
		form.append(label, input, foot, error);
		const composer: Composer = { cardId, form, label, input, count, send, error, sending: false };
		input.addEventListener('input', () => this.updateComposer());
		input.addEventListener('keydown', e => {
			if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
				e.preventDefault();
				void this.submit(composer);
			}
		});
		form.addEventListener('submit', e => {
			e.preventDefault();
			void this.submit(composer);
		});
		this.composer = composer;
		return composer;
	}

	private updateComposer(): void {
		const c = this.composer;
		const shown = this.shown;
		if (c === undefined || shown?.card.id !== c.cardId) {
			return;
		}
		const s = composerState(shown.card, shown.messages, c.input.value, this.host.actor());
		c.label.textContent = s.label;
		c.send.textContent = c.sending ? 'Sending…' : s.send;
		c.send.disabled = c.sending || !s.canSend;
		c.count.textContent = s.over ? `${s.count}: too long, shorten it to send` : s.count;
		c.count.classList.toggle('message-count--over', s.over);
		c.input.setAttribute('aria-invalid', String(s.over));
	}

	private async submit(c: Composer): Promise<void> {
		const text = c.input.value;
		const shown = this.shown;
		if (c.sending || shown === undefined) {
			return;
		}
		if (!composerState(shown.card, shown.messages, text).canSend) {
			this.showError(c, text.trim() === '' ? 'Type a message first.' : 'The message is over 4 KiB; shorten it.');
			return;
		}
		c.sending = true;
		c.error.hidden = true;
		this.updateComposer();
		try {
			const message = await this.host.comment(c.cardId, text);
			// Clear only what was sent: the human may have kept typing while it was on its way.
			if (c.input.value === text) {
				c.input.value = '';
			}
			this.host.posted(message);
		} catch (e) {
			this.showError(c, `Not sent: ${e instanceof Error ? e.message : String(e)}`);
		} finally {
			c.sending = false;
			this.updateComposer();
		}
	}

	private showError(c: Composer, text: string): void {
		c.error.textContent = text;
		c.error.hidden = false;
	}
}
