/**
 * What the board says when the backlog really is empty (loaded, no card at all, no filter hiding
 * any): how to make the first cards, from here, from an agent or from a terminal. Shown only after
 * the first snapshot is drawn, so a board still connecting never looks like an empty backlog. Text
 * only; it decides nothing and sends nothing (New card is the caller's).
 */
import { el } from './dom';

export class EmptyBoard {
	readonly root = el('section', 'board-empty');

	constructor(newCard: () => void) {
		this.root.hidden = true;
		this.root.setAttribute('aria-labelledby', 'board-empty-title');
		const title = el('h2', 'board-empty-title', 'The backlog is empty');
		title.id = 'board-empty-title';
		const create = el('button', 'btn btn-primary', 'New card');
		create.type = 'button';
		create.title = 'Create a card (N)';
		create.addEventListener('click', newCard);
		const head = el('div', 'board-empty-head');
		head.append(title, create);
		const first = el('p', 'board-empty-text');
		first.append(
			'Create the first card here (New card, or press N), or ask an agent to plan the work: it breaks a goal into cards with its ',
			el('code', '', 'create'),
			' tool.',
		);
		const cli = el('p', 'board-empty-text');
		cli.append(
			'From a terminal: ',
			el('code', '', 'baton create "Title"'),
			', a whole plan with ',
			el('code', '', 'baton create --file plan.json'),
			', or bring cards over with ',
			el('code', '', 'baton import --from backlog-md PATH'),
			' (also beads and Taskmaster).',
		);
		this.root.append(head, first, cli);
	}

	/** Shown when the loaded backlog holds no card and no filter is set. */
	update(empty: boolean): void {
		this.root.hidden = !empty;
	}
}
