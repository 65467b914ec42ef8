/**
 * The detail pane's Dependencies and Dependents sections: each ref a button that opens it in the pane,
 * Unlink on a dependency, and the "depends on" form, kept across re-renders of the same card. Card text
 * goes in as text. It fetches nothing (the pane passes its card/get answer) and decides nothing about
 * the card: linking and unlinking go through the host, and the pane re-renders after.
 */
import type { Card, CardRef, Result } from '../core/protocol';
import { refWord } from './columns';
import { section } from './detailLog';
import { button, el } from './dom';
import type { BoardState } from './state';

/** What the sections need of the board: the cards, link and unlink, and where errors go. */
export interface DependencyHost {
	state: BoardState;
	link(cardId: string, dependsOn: string): Promise<void>;
	unlink(cardId: string, dependsOn: string): Promise<void>;
	showError(error: unknown): void;
}

export class DependencySections {
	private linkForm: { cardId: string; form: HTMLElement } | undefined;

	constructor(
		private readonly host: DependencyHost,
		/** Opens a card in the pane. */
		private readonly open: (id: string) => void,
		/** A link or unlink of this card went through: the pane re-renders and fetches it again. */
		private readonly changed: (cardId: string) => void,
	) {}

	/** The pane closed: the next card gets a fresh form. */
	forget(): void {
		this.linkForm = undefined;
	}

	/** The Dependencies section: card/get's refs (or the state's while it loads), Unlink, the link form. */
	dependencies(card: Card, got: Result<'card/get'> | undefined): HTMLElement {
		const s = section('Dependencies');
		const refs: CardRef[] =
			got?.dependencies ??
			card.dependsOn.map(id => {
				const d = this.host.state.get(id);
				return d === undefined
					? { id, title: '', status: 'ready' }
					: { id, title: d.title, status: d.status, unmetDeps: d.unmetDeps, deferUntil: d.deferUntil };
			});
		if (refs.length === 0) {
			s.body.append(el('p', 'muted', 'No dependencies.'));
		} else {
			s.body.append(this.refList(refs, card.id));
		}
		s.body.append(this.linkFormFor(card.id));
		return s.root;
	}

	/** The Dependents section: the cards that wait on this one (from card/get). */
	dependents(got: Result<'card/get'> | undefined): HTMLElement {
		const dependents = section('Dependents');
		const deps = got?.dependents ?? [];
		if (deps.length === 0) {
			dependents.body.append(el('p', 'muted', got === undefined ? 'Loading…' : 'No card waits on this one.'));
		} else {
			dependents.body.append(this.refList(deps, undefined));
		}
		return dependents.root;
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
					this.changed(cardId);
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
				el('span', `ref-status status-${r.status}`, refWord(r, Date.now())),
			);
			if (unlinkFrom !== undefined) {
				const un = button('Unlink', 'btn btn-small', () => {
					this.host.unlink(unlinkFrom, r.id).then(
						() => this.changed(unlinkFrom),
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
