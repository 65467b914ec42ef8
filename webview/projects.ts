/**
 * The board's project choice: a select in the toolbar with "All projects", the
 * workspace's projects when the VS Code host named several, and each project seen among the cards;
 * and the empty state when the choice hides every card ("No cards in github.com/acme/web — show all
 * projects"). In VS Code the host's view/projects message sets it (the workspace's projects, or All
 * when the user switched the extension to every project); in a browser tab it starts at All projects
 * and remembers the choice in localStorage. Owns only its elements and the choice; main.ts applies it.
 */
import { el } from './dom';

const storageKey = 'baton.board.project';
/** The select's value for "every project of the workspace" (several workspace folders). */
const workspaceValue = '\u0000workspace';

export class ProjectPicker {
	readonly select = el('select', 'input filter-project');
	/** Shown when the choice hides every card. */
	readonly empty = el('p', 'project-empty');
	private readonly emptyText = el('span', '');
	private readonly showAllButton = el('button', 'btn btn-link', 'show all projects');
	private workspace: string[] = [];
	private value = '';

	constructor(
		private readonly host: 'vscode' | 'browser',
		private readonly changed: () => void,
	) {
		this.select.setAttribute('aria-label', 'Show the cards of one project');
		this.showAllButton.type = 'button';
		this.empty.append(this.emptyText, ' — ', this.showAllButton);
		this.empty.hidden = true;
		if (host === 'browser') {
			this.value = readStored();
		}
		this.select.addEventListener('change', () => this.choose(this.select.value));
		this.showAllButton.addEventListener('click', () => this.choose(''));
	}

	/** The projects to show; empty: all. */
	get selected(): string[] {
		if (this.value === workspaceValue) {
			return [...this.workspace];
		}
		return this.value === '' ? [] : [this.value];
	}

	/** "github.com/acme/web" or "a, b": the choice in words, or undefined for All projects. */
	get label(): string | undefined {
		const s = this.selected;
		return s.length === 0 ? undefined : s.join(', ');
	}

	/** The VS Code host's word: the workspace's projects, and whether the user chose every project. */
	setWorkspace(workspace: readonly string[], showAll: boolean): void {
		this.workspace = [...workspace];
		const next =
			showAll || workspace.length === 0 ? '' : workspace.length === 1 ? (workspace[0] ?? '') : workspaceValue;
		this.value = next;
		this.changed();
	}

	/** Refreshes the options (projects seen) and the empty state. */
	update(seen: readonly string[], cards: number, shown: number): void {
		const option = (value: string, text: string) => {
			const o = el('option', '', text);
			o.value = value;
			return o;
		};
		const options = [option('', 'All projects')];
		if (this.workspace.length > 1) {
			options.push(option(workspaceValue, `This workspace (${this.workspace.join(', ')})`));
		}
		const projects = new Set([...seen, ...this.workspace]);
		if (this.value !== '' && this.value !== workspaceValue) {
			projects.add(this.value);
		}
		for (const p of [...projects].sort((a, b) => a.localeCompare(b))) {
			options.push(option(p, p));
		}
		this.select.replaceChildren(...options);
		this.select.value = this.value;
		this.select.hidden = projects.size === 0;
		const label = this.label;
		this.empty.hidden = label === undefined || cards === 0 || shown > 0;
		this.emptyText.textContent = `No cards in ${label ?? ''}`;
	}

	private choose(value: string): void {
		this.value = value;
		if (this.host === 'browser') {
			try {
				localStorage.setItem(storageKey, value);
			} catch {
				// Storage can be disabled (private windows, policies): the choice then lasts for this tab.
			}
		}
		this.changed();
	}
}

function readStored(): string {
	try {
		return localStorage.getItem(storageKey) ?? '';
	} catch {
		return '';
	}
}
