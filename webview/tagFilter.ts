/**
 * The board's epic and label choices: two selects in the toolbar ("All epics" and each
 * card with children, "All labels" and each label in use) and the empty state when they hide every
 * card ("No cards match epic WEB-1, label ui — clear epic and label"). The choices are rebuilt only
 * when the set of epics or labels changed (CardIndex.version), and a choice survives every redraw,
 * the rebuilds included; a browser tab remembers it in localStorage, VS Code in the webview's state
 * (main.ts saves the filter). Owns only its elements and the choice; main.ts applies it.
 */
import type { BoardState } from './state';
import { el } from './dom';

const storageKey = 'baton.board.tags';

export interface TagChoice {
	epic: string;
	label: string;
}

export class TagFilter {
	readonly epicSelect = el('select', 'input filter-epic');
	readonly labelSelect = el('select', 'input filter-label');
	/** Shown when the choice hides every card. */
	readonly empty = el('p', 'tag-empty');
	private readonly emptyText = el('span', '');
	private readonly clearButton = el('button', 'btn btn-link', 'clear epic and label');
	private choice: TagChoice = { epic: '', label: '' };
	private builtFor = -1;

	constructor(
		private readonly host: 'vscode' | 'browser',
		private readonly changed: () => void,
	) {
		this.epicSelect.setAttribute('aria-label', 'Show one epic and its children');
		this.labelSelect.setAttribute('aria-label', 'Show the cards with one label');
		this.clearButton.type = 'button';
		this.empty.append(this.emptyText, ' — ', this.clearButton);
		this.empty.hidden = true;
		if (host === 'browser') {
			this.restore(readStored());
		}
		this.epicSelect.addEventListener('change', () => this.choose({ ...this.choice, epic: this.epicSelect.value }));
		this.labelSelect.addEventListener('change', () => this.choose({ ...this.choice, label: this.labelSelect.value }));
		this.clearButton.addEventListener('click', () => this.choose({ epic: '', label: '' }));
	}

	get value(): TagChoice {
		return this.choice;
	}

	/** The choice remembered (localStorage, or VS Code's webview state; undefined: none); applied by the caller. */
	restore(stored: object | null | undefined): void {
		if (stored === undefined) {
			return;
		}
		const saved: Record<string, unknown> = { ...stored };
		this.choice = {
			epic: typeof saved.epic === 'string' ? saved.epic : '',
			label: typeof saved.label === 'string' ? saved.label : '',
		};
		this.builtFor = -1;
	}

	/** Rebuilds the choices when epics or labels came or went; shows the empty state when nothing shows. */
	update(state: BoardState, shown: number): void {
		const index = state.index;
		if (this.builtFor !== index.version) {
			this.builtFor = index.version;
			const epics = index.parents().map(id => {
				const title = state.get(id)?.title;
				return [id, title === undefined ? id : `${id} — ${title.length > 40 ? `${title.slice(0, 40)}…` : title}`];
			});
			fill(this.epicSelect, 'All epics', epics, this.choice.epic);
			fill(
				this.labelSelect,
				'All labels',
				index.labels().map(l => [l, l]),
				this.choice.label,
			);
		}
		const { epic, label } = this.choice;
		const words = [epic === '' ? '' : `epic ${epic}`, label === '' ? '' : `label ${label}`].filter(w => w !== '');
		this.empty.hidden = words.length === 0 || state.size === 0 || shown > 0;
		this.emptyText.textContent = `No cards match ${words.join(', ')}`;
	}

	private choose(choice: TagChoice): void {
		this.choice = choice;
		this.epicSelect.value = choice.epic;
		this.labelSelect.value = choice.label;
		if (this.host === 'browser') {
			try {
				localStorage.setItem(storageKey, JSON.stringify(choice));
			} catch {
				// Storage can be disabled (private windows, policies): the choice then lasts for this tab.
			}
		}
		this.changed();
	}
}

/** Refills a select; the current choice stays an option even when no card has it any more. */
function fill(select: HTMLSelectElement, all: string, entries: string[][], current: string): void {
	if (current !== '' && !entries.some(([v]) => v === current)) {
		entries.unshift([current, current]);
	}
	const options = [['', all], ...entries].map(([value = '', text]) => {
		const o = el('option', '', text);
		o.value = value;
		return o;
	});
	select.replaceChildren(...options);
	select.value = current;
	select.hidden = entries.length === 0;
}

function readStored(): object | null {
	try {
		return JSON.parse(localStorage.getItem(storageKey) ?? 'null') as object | null;
	} catch {
		return null;
	}
}
