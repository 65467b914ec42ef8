/**
 * The board's toolbar: the filter box and phase choice, New card, the needs-input count (cards whose
 * agent asked a question nobody answered; a click opens the first at its reply box) and the summary
 * (cards, agents alive; while the hub is away, that it is offline and reconnecting instead of counts
 * it cannot know). Builds and updates its elements from BoardState; what the controls do is the
 * caller's (main.ts wires them). Text only, never HTML.
 */
import { isAlive } from '../core/rules/health';
import type { ConnectionState } from '../core/protocol/rpc';
import type { BoardState } from './state';
import { el } from './dom';

export class Toolbar {
	readonly root = el('header', 'toolbar');
	readonly filterInput = el('input', 'input filter-text');
	readonly phaseSelect = el('select', 'input filter-phase');
	readonly newButton = el('button', 'btn btn-primary', 'New card');
	/** "2 questions": hidden when no card needs input. */
	readonly needsInputButton = el('button', 'btn needs-input-count');
	private readonly summary = el('span', 'summary');
	private connection: ConnectionState = 'connecting';
	/** The first snapshot is drawn: the counts mean something. */
	private loaded = false;

	constructor() {
		this.filterInput.type = 'search';
		this.filterInput.placeholder = 'Filter by id or title  ( / )';
		this.filterInput.setAttribute('aria-label', 'Filter cards by id or title');
		this.phaseSelect.setAttribute('aria-label', 'Filter by phase');
		this.newButton.type = 'button';
		this.newButton.title = 'Create a card (N)';
		this.needsInputButton.type = 'button';
		this.needsInputButton.hidden = true;
		this.summary.setAttribute('aria-live', 'polite');
		this.summary.textContent = 'Connecting…';
		this.updatePhases([], '');
		this.root.append(
			el('h1', 'brand', 'Baton'),
			this.filterInput,
			this.phaseSelect,
			this.newButton,
			this.needsInputButton,
			this.summary,
		);
	}

	updatePhases(phases: readonly string[], current: string): void {
		const all = el('option', '', 'All phases');
		all.value = '';
		const options = [all];
		for (const p of phases) {
			const o = el('option', '', p);
			o.value = p;
			options.push(o);
		}
		this.phaseSelect.replaceChildren(...options);
		this.phaseSelect.value = current;
	}

	/**
	 * The hub connection changed: offline, the agents' liveness is unknown (the hub reports it), so the
	 * summary says offline instead of the last counts; the next updateSummary shows them again.
	 */
	setConnection(s: ConnectionState): void {
		this.connection = s;
		this.summary.dataset.connection = s;
		if (s !== 'connected' || !this.loaded) {
			this.summary.textContent = connectionWords[s];
		}
	}

	/** `total`: every card of the backlog (the board holds only some done ones). */
	updateSummary(state: BoardState, total: number): void {
		this.loaded = true;
		if (this.connection !== 'connected') {
			this.summary.textContent = connectionWords[this.connection];
		} else {
			this.summary.textContent = summaryText(state, total);
		}
		const asking = state.needsInput().length;
		this.needsInputButton.hidden = asking === 0;
		this.needsInputButton.textContent = asking === 1 ? '1 question' : `${asking.toLocaleString()} questions`;
		this.needsInputButton.title = 'Agents asked and wait for your answer: open the first to reply';
		this.needsInputButton.setAttribute(
			'aria-label',
			`${asking} card${asking === 1 ? ' needs' : 's need'} your input. Open the first to reply.`,
		);
	}
}

const connectionWords: Readonly<Record<ConnectionState, string>> = {
	connecting: 'Connecting…',
	connected: 'Loading cards…', // until the first snapshot is drawn
	offline: 'Offline · reconnecting…',
	closed: 'Disconnected · reload to reconnect',
};

function summaryText(state: BoardState, total: number): string {
	const agents = [...state.agents.values()];
	const now = Date.now();
	const alive = agents.filter(a => isAlive(state.healthOf(a.id, now) ?? a.health)).length;
	return `${total.toLocaleString()} ${total === 1 ? 'card' : 'cards'} · ${alive} of ${agents.length} agents alive`;
}
