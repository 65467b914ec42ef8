/**
 * The detail pane of one card: fields, the body as sanitised markdown, acceptance criteria,
 * dependencies and dependents (clickable), earlier attempts and the history from 'card/get', plus
 * the legal moves, edit and dependency linking. Card text goes in as text; only the body is HTML,
 * and only after markdown.ts sanitised it.
 */
import { BatonError } from '../core/errors';
import type { BacklogEvent, Card, CardRef, Result } from '../core/protocol';
import { renderMarkdown } from './markdown';
import { planMove } from './moves';
import { type BoardState, type ColumnId, columnIds, columnOf, columnTitles, formatRemaining } from './state';

export interface DetailHost {
	state: BoardState;
	getCard(id: string): Promise<Result<'card/get'>>;
	link(cardId: string, dependsOn: string): Promise<void>;
	unlink(cardId: string, dependsOn: string): Promise<void>;
	move(cardId: string, to: ColumnId): void;
	edit(card: Card): void;
	showError(error: unknown): void;
	/** Only in VS Code: reveal the card in the Backlog tree. */
	revealInTree: ((cardId: string) => void) | undefined;
	/** Called after the pane closed (to give focus back to the board). */
	closed(cardId: string): void;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
	const e = document.createElement(tag);
	e.className = className;
	if (text !== undefined) {
		e.textContent = text;
	}
	return e;
}

function button(label: string, className: string, onClick: () => void): HTMLButtonElement {
	const b = el('button', className, label);
	b.type = 'button';
	b.addEventListener('click', onClick);
	return b;
}

function section(title: string): { root: HTMLElement; body: HTMLElement } {
	const root = el('section', 'detail-section');
	const h = el('h3', 'detail-heading', title);
	const body = el('div', 'detail-section-body');
	root.append(h, body);
	return { root, body };
}

function describeEvent(e: BacklogEvent): string {
	const bits: string[] = [e.type];
	if (e.data.reason !== undefined) {
		bits.push(`— ${e.data.reason}`);
	}
	if (e.data.result !== undefined) {
		bits.push(`— ${e.data.result}`);
	}
	if (e.data.forced === true) {
		bits.push('(forced)');
	}
	if (e.data.dependsOn !== undefined) {
		bits.push(e.data.dependsOn.join(', '));
	}
	return bits.join(' ');
}

export class DetailPane {
	readonly root: HTMLElement;
	private readonly content: HTMLElement;
	private openId: string | undefined;
	private loadToken = 0;
	private last: Result<'card/get'> | undefined;
	private refreshTimer: ReturnType<typeof setTimeout> | undefined;
	private linkForm: { cardId: string; form: HTMLElement } | undefined;

	constructor(private readonly host: DetailHost) {
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

	open(id: string): void {
		this.openId = id;
		this.last = undefined;
		this.root.hidden = false;
		document.body.classList.add('has-detail');
		this.render();
		this.root.focus();
		void this.load();
	}

	close(): void {
		const id = this.openId;
		this.openId = undefined;
		this.last = undefined;
		this.linkForm = undefined;
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
			this.last?.dependents.some(d => d.id === id) === true;
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
				this.last = result;
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
		head.append(idEl, status, close);
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
		c.append(this.renderDependencies(card));

		const dependents = section('Dependents');
		const deps = this.last?.dependents ?? [];
		if (deps.length === 0) {
			dependents.body.append(el('p', 'muted', this.last === undefined ? 'Loading…' : 'No card waits on this one.'));
		} else {
			dependents.body.append(this.refList(deps, undefined));
		}
		c.append(dependents.root);

		if (this.last !== undefined && this.last.attempts.length > 0) {
			const att = section('Attempts');
			const ul = el('ul', 'attempts');
			for (const a of this.last.attempts) {
				const bits = [`#${a.epoch} ${a.owner}: ${a.outcome}`];
				if (a.progress !== null) {
					bits.push(`${a.progress}%`);
				}
				if (a.progressNote !== null) {
					bits.push(a.progressNote);
				}
				if (a.reason !== null) {
					bits.push(a.reason);
				}
				ul.append(el('li', '', bits.join(' · ')));
			}
			att.body.append(ul);
			c.append(att.root);
		}

		const hist = section('History');
		if (this.last === undefined) {
			hist.body.append(el('p', 'muted', 'Loading…'));
		} else {
			const ol = el('ol', 'history');
			for (const e of [...this.last.history].reverse()) {
				const li = el('li', 'history-item');
				const time = el('time', 'history-time', new Date(e.at).toLocaleString());
				time.dateTime = e.at;
				li.append(time, el('span', 'history-actor', e.actor), el('span', 'history-what', describeEvent(e)));
				ol.append(li);
			}
			hist.body.append(ol);
		}
		c.append(hist.root);
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
		add('Priority', String(card.priority));
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
		if (card.result !== null) {
			add('Result', card.result);
		}
		if (card.requires.length > 0) {
			add('Requires', card.requires.join(', '));
		}
		add('Attempts', `${card.attempts} of ${card.maxAttempts}`);
		return dl;
	}

	private renderActions(card: Card): HTMLElement {
		const bar = el('div', 'detail-actions');
		bar.setAttribute('role', 'group');
		bar.setAttribute('aria-label', 'Actions');
		const now = Date.now();
		for (const to of columnIds) {
			const plan = planMove(card, to, { actor: this.host.state.actor, nowMs: now, waitingOn: [] });
			if (plan.kind === 'request') {
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

	private renderDependencies(card: Card): HTMLElement {
		const s = section('Dependencies');
		const refs: CardRef[] =
			this.last?.dependencies ??
			card.dependsOn.map(id => {
				const d = this.host.state.get(id);
				return { id, title: d?.title ?? '', status: d?.status ?? 'ready' };
			});
		if (refs.length === 0) {
			s.body.append(el('p', 'muted', 'No dependencies.'));
		} else {
			s.body.append(this.refList(refs, card.id));
		}
		s.body.append(this.linkFormFor(card.id));
		return s.root;
	}

	/**
	 * The "depends on" form, kept across re-renders of the same card: live events re-render the pane
	 * while the human may be typing an id, which must not be lost.
	 */
	private linkFormFor(cardId: string): HTMLElement {
		if (this.linkForm?.cardId === cardId) {
			return this.linkForm.form;
		}
		const form = el('form', 'link-form');
		const label = el('label', 'field-inline');
		label.append(el('span', 'field-label', 'Depends on'));
		const input = el('input', 'input');
		input.name = 'dependsOn';
		input.placeholder = 'card id';
		input.setAttribute('aria-label', `Add a dependency to ${cardId}`);
		label.append(input);
		const add = el('button', 'btn', 'Link');
		add.type = 'submit';
		form.append(label, add);
		form.addEventListener('submit', e => {
			e.preventDefault();
			const dep = input.value.trim();
			if (dep === '') {
				return;
			}
			this.host.link(cardId, dep).then(
				() => {
					input.value = '';
					this.cardChanged(cardId);
				},
				(err: unknown) => this.host.showError(err),
			);
		});
		this.linkForm = { cardId, form };
		return form;
	}

	private refList(refs: readonly CardRef[], unlinkFrom: string | undefined): HTMLElement {
		const ul = el('ul', 'refs');
		for (const r of refs) {
			const li = el('li', 'ref');
			const open = button(r.id, 'btn-link ref-open', () => this.open(r.id));
			open.setAttribute('aria-label', `Open ${r.id}: ${r.title}`);
			li.append(
				open,
				el('span', 'ref-title', r.title),
				el('span', `ref-status status-${r.status}`, columnTitles[columnOf(r.status)]),
			);
			if (unlinkFrom !== undefined) {
				const un = button('Unlink', 'btn btn-small', () => {
					this.host.unlink(unlinkFrom, r.id).then(
						() => this.cardChanged(unlinkFrom),
						(err: unknown) => this.host.showError(err),
					);
				});
				un.setAttribute('aria-label', `Remove dependency on ${r.id}`);
				li.append(un);
			}
			ul.append(li);
		}
		return ul;
	}
}
