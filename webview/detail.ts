/**
 * The detail pane of one card: fields, the body and the result as sanitised markdown, the review box
 * (detailReview.ts), a workspace's changes (detailDiff.ts), the messages and the box to post one
 * (conversation.ts), acceptance criteria, dependencies and dependents with the linking form
 * (detailDeps.ts), earlier attempts and the history from 'card/get' (detailLog.ts), plus the legal
 * moves and edit. Card text goes in as text; only markdown is HTML, and only after markdown.ts
 * sanitised it. Messages follow live events.
 */
import { BatonError } from '../core/errors';
import type { BacklogEvent, Card, Message, Result } from '../core/protocol';
import { usageText } from '../core/rules/usage';
import { type ColumnId, columnIds, columnOf, columnTitles } from './columns';
import { Conversation } from './conversation';
import { DependencySections, type DependencyHost } from './detailDeps';
import { DiffSection, type DiffHost } from './detailDiff';
import { linksSection } from './detailLinks';
import { attemptsSection, historySection, section } from './detailLog';
import { resultSection, reviewBox, reviewFacts } from './detailReview';
import { formatRemaining } from './format';
import { renderMarkdown } from './markdown';
import { mergeMessages, messagesOf } from './messageList';
import { planMove } from './moves';
import { scopeFact, waitingOnScope } from './scopeView';
import type { BoardState } from './state';
import { button, el } from './dom';

export interface DetailHost extends DiffHost, DependencyHost {
	state: BoardState;
	getCard(id: string): Promise<Result<'card/get'>>;
	move(cardId: string, to: ColumnId): void;
	edit(card: Card): void;
	/** Posts a message on the card (`card/comment`). */
	comment(cardId: string, text: string): Promise<Message>;
	showError(error: unknown): void;
	/** Only in VS Code: reveal the card in the Backlog tree. */
	revealInTree: ((cardId: string) => void) | undefined;
	/** Called after the pane closed (to give focus back to the board). */
	closed(cardId: string): void;
}

export class DetailPane {
	readonly root: HTMLElement;
	private readonly content: HTMLElement;
	private openId: string | undefined;
	private loadToken = 0;
	private last: Result<'card/get'> | undefined;
	private refreshTimer: ReturnType<typeof setTimeout> | undefined;
	private readonly conversation: Conversation;
	private readonly changes: DiffSection;
	private readonly deps: DependencySections;

	constructor(private readonly host: DetailHost) {
		this.changes = new DiffSection(host);
		this.deps = new DependencySections(
			host,
			id => this.open(id),
			id => this.cardChanged(id),
		);
		this.conversation = new Conversation({
			comment: (cardId, text) => host.comment(cardId, text),
			posted: m => this.addMessages(m.cardId, [m]),
			actor: () => host.state.actor,
		});
		this.root = el('aside', 'detail');
		this.root.setAttribute('aria-label', 'Card details');
		this.root.hidden = true;
		this.root.tabIndex = -1;
		this.content = el('div', 'detail-content');
		this.root.append(this.content);
		this.root.addEventListener('keydown', e => {
			if (e.key === 'Escape' && !e.defaultPrevented) {
				e.preventDefault();
				this.close();
			}
		});
	}

	get cardId(): string | undefined {
		return this.openId;
	}

	/** Opens the card; with `reply`, the cursor goes to the message box (to answer a question). */
	open(id: string, options: { reply?: boolean } = {}): void {
		if (this.openId !== id) {
			this.last = undefined;
		}
		this.openId = id;
		this.root.hidden = false;
		document.body.classList.add('has-detail');
		this.render();
		if (options.reply === true) {
			this.conversation.focusReply();
		} else {
			this.root.focus();
		}
		void this.load();
	}

	/** An event from the feed: messages posted or delivered on the open card show at once. */
	eventArrived(event: BacklogEvent): void {
		const messages = messagesOf(event);
		if (messages.length > 0) {
			this.addMessages(event.cardId, messages);
		}
	}

	private addMessages(cardId: string, messages: readonly Message[]): void {
		if (cardId !== this.openId || this.last === undefined) {
			return;
		}
		this.last = { ...this.last, messages: mergeMessages(this.last.messages, messages) };
		this.render();
	}

	close(): void {
		const id = this.openId;
		this.openId = undefined;
		this.last = undefined;
		this.deps.forget();
		this.changes.forget();
		this.loadToken++;
		this.root.hidden = true;
		document.body.classList.remove('has-detail');
		this.content.replaceChildren();
		if (id !== undefined) {
			this.host.closed(id);
		}
	}

	/** The open card (or one it shows) changed: re-render now from state, re-fetch history soon. */
	cardChanged(id: string): void {
		if (this.openId === undefined) {
			return;
		}
		const related =
			id === this.openId ||
			this.last?.dependencies.some(d => d.id === id) === true ||
			this.last?.dependents.some(d => d.id === id) === true ||
			this.host.state.get(id)?.parent === this.openId;
		if (!related) {
			return;
		}
		this.render();
		clearTimeout(this.refreshTimer);
		this.refreshTimer = setTimeout(() => void this.load(), 150);
	}

	private async load(): Promise<void> {
		const id = this.openId;
		if (id === undefined) {
			return;
		}
		const token = ++this.loadToken;
		try {
			const result = await this.host.getCard(id);
			if (token === this.loadToken) {
				// An event may have brought a message (or a delivery) this answer was too early to see.
				const known = this.last?.card.id === id ? this.last.messages : [];
				this.last = { ...result, messages: mergeMessages(known, result.messages) };
				this.render();
			}
		} catch (e) {
			if (token !== this.loadToken) {
				return;
			}
			if (BatonError.is(e, 'not_found')) {
				this.close();
			}
			this.host.showError(e);
		}
	}

	private render(): void {
		const id = this.openId;
		if (id === undefined) {
			return;
		}
		const card = this.host.state.get(id) ?? this.last?.card;
		const c = this.content;
		const scroll = c.scrollTop;
		// Re-rendering detaches the focused control; give focus back if it survives (the link form does).
		const focused = c.contains(document.activeElement) ? document.activeElement : null;
		c.replaceChildren();
		const head = el('div', 'detail-head');
		const idEl = el('span', 'detail-id', id);
		const status = el(
			'span',
			`detail-status status-${card?.status ?? 'unknown'}`,
			card === undefined ? '' : columnTitles[columnOf(card.status)],
		);
		const close = button('✕', 'btn btn-icon detail-close', () => this.close());
		close.setAttribute('aria-label', 'Close details (Escape)');
		close.title = 'Close (Escape)';
		head.append(idEl, status);
		if (card?.needsInput === true) {
			const asking = el('span', 'flag flag-input', 'needs input');
			asking.title = 'An agent asked a question: reply below';
			head.append(asking);
		}
		head.append(close);
		c.append(head);
		if (card === undefined) {
			c.append(el('p', 'detail-loading', 'Loading…'));
			return;
		}
		const title = el('h2', 'detail-title', card.title);
		title.id = 'detail-title';
		this.root.setAttribute('aria-labelledby', title.id);
		c.append(title);
		c.append(this.renderFacts(card));
		const state = this.host.state;
		const review = reviewBox(card, state.actor, Date.now(), (cardId, to) => this.host.move(cardId, to), {
			entry: state.landing.get(card.id),
			returned: state.landingReturns.get(card.id),
		});
		if (review !== undefined) {
			c.append(review);
		}
		c.append(this.renderActions(card));

		const body = section('Description');
		if (card.body.trim() === '') {
			body.body.append(el('p', 'muted', 'No description.'));
		} else {
			const md = el('div', 'markdown');
			md.append(renderMarkdown(card.body));
			body.body.append(md);
		}
		c.append(body.root);
		const result = resultSection(card);
		if (result !== undefined) {
			c.append(result);
		}
		const changes = this.changes.render(card);
		if (changes !== undefined) {
			c.append(changes);
		}
		c.append(this.conversation.render(card, this.last?.card.id === id ? this.last.messages : undefined));

		const acc = section('Acceptance criteria');
		if (card.acceptance.length === 0) {
			acc.body.append(el('p', 'muted', 'None yet. Edit the card to add some.'));
		} else {
			const ul = el('ul', 'acceptance');
			for (const a of card.acceptance) {
				ul.append(el('li', '', a));
			}
			acc.body.append(ul);
		}
		c.append(acc.root);
		c.append(this.deps.dependencies(card, this.last));
		const links = linksSection(card, this.last?.card.id === id ? this.last : undefined, to => this.open(to));
		if (links !== undefined) {
			c.append(links);
		}

		c.append(this.deps.dependents(this.last));

		if (this.last !== undefined && this.last.attempts.length > 0) {
			c.append(attemptsSection(this.last.attempts));
		}
		c.append(historySection(this.last?.history));
		c.scrollTop = scroll;
		if (focused instanceof HTMLElement && focused.isConnected) {
			focused.focus({ preventScroll: true });
		}
	}

	private renderFacts(card: Card): HTMLElement {
		const dl = el('dl', 'facts');
		const add = (k: string, v: string): void => {
			dl.append(el('dt', '', k), el('dd', '', v));
		};
		// Aging: a waiting card's place in the claim order, from card/get.
		const effective = this.last?.card.id === card.id ? this.last.effectivePriority : undefined;
		add(
			'Priority',
			effective === undefined || effective === card.priority
				? String(card.priority)
				: `${card.priority}, ${effective} with aging (+${effective - card.priority} for waiting)`,
		);
		add('Phase', card.phase ?? '—');
		if (card.status === 'claimed') {
			const owner = card.claimOwner ?? '—';
			const agent = card.claimOwner === null ? undefined : this.host.state.agents.get(card.claimOwner);
			const health = this.host.state.healthOf(card.claimOwner, Date.now());
			add('Owner', agent === undefined ? owner : `${agent.name || agent.id} (${health ?? agent.health})`);
			if (card.leaseExpiresAt !== null) {
				add('Lease', formatRemaining(Date.parse(card.leaseExpiresAt) - Date.now()));
			}
			add('Progress', `${card.progress ?? 0}%${card.progressNote === null ? '' : ` — ${card.progressNote}`}`);
		}
		if (card.status === 'blocked' && card.blockedReason !== null) {
			add(card.failed === true ? 'Failed — last reasons' : 'Blocked because', card.blockedReason);
		}
		reviewFacts(card, add);
		if (card.requires.length > 0) {
			add('Requires', card.requires.join(', '));
		}
		if (card.project != null) {
			add('Project', card.project);
		}
		const scope = scopeFact(card);
		if (scope !== undefined) {
			add('Scope', scope);
		}
		const wait = waitingOnScope(this.host.state, card);
		if (wait !== undefined) {
			add('Waits on', `${wait.text} (${wait.wait.theirs})`);
		}
		add('Attempts', `${card.attempts} of ${card.maxAttempts}`);
		// What its attempts' agents reported (core/rules/usage.ts words), once card/get has answered.
		if (this.last?.card.id === card.id) {
			add('Usage', usageText(this.last.usage));
		}
		return dl;
	}

	private renderActions(card: Card): HTMLElement {
		const bar = el('div', 'detail-actions');
		bar.setAttribute('role', 'group');
		bar.setAttribute('aria-label', 'Actions');
		const now = Date.now();
		// A card in review moves by its verdict only: the review box has Approve and Request changes.
		const labels = new Set<string>();
		for (const to of card.status === 'review' ? [] : columnIds) {
			const plan = planMove(card, to, { actor: this.host.state.actor, nowMs: now, waitingOn: [] });
			// Done and In review both submit a card that needs review: one button.
			if (plan.kind === 'request' && !labels.has(plan.label)) {
				labels.add(plan.label);
				bar.append(button(plan.label, 'btn', () => this.host.move(card.id, to)));
			}
		}
		bar.append(button('Edit', 'btn', () => this.host.edit(card)));
		const reveal = this.host.revealInTree;
		if (reveal !== undefined) {
			bar.append(button('Reveal in tree', 'btn', () => reveal(card.id)));
		}
		return bar;
	}
}
