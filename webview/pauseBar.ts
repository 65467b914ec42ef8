/**
 * Pausing the line from the board: one banner row per pause under the toolbar ("Paused:
 * everything — paused by ann: deploy freeze", with a Resume button) and the toolbar's Pause button,
 * which asks first (with an optional reason) and then sends `pause/set {scope: 'all'}`. The pauses
 * come from `pause/list`, read at start and after each `paused` / `resumed` event; until the first
 * answer the button waits (disabled). It draws and asks; the hub decides and refuses.
 */
import { pauseTarget, pauseText } from '../core/rules/dispatched';
import type { Pause } from '../core/protocol';
import type { RpcClient } from '../core/protocol/rpc';
import { askText } from './dialog';
import { button, el } from './dom';

export class PauseBar {
	/** The banner rows (hidden while nothing is paused). */
	readonly root = el('div', 'banner banner-pause');
	readonly button = button('Pause', 'btn', () => void this.pauseAll());
	/** Loads sent so far: only the latest one's answer is drawn. */
	private loads = 0;

	constructor(
		/** The board's client (made after the layout that holds this bar). */
		private readonly hub: () => RpcClient,
		private readonly showError: (e: unknown) => void,
		/** The pauses changed: the cards they hold back are redrawn. */
		private readonly changed: (pauses: readonly Pause[]) => void,
	) {
		this.root.setAttribute('role', 'status');
		this.root.hidden = true;
		this.button.title = 'Pause: no agent claims any card until you resume';
		this.button.disabled = true;
	}

	/** Reads the pauses again (at start, and after each paused / resumed event). */
	async load(): Promise<void> {
		const n = ++this.loads;
		try {
			const { pauses } = await this.hub().request('pause/list', {});
			if (n === this.loads) {
				this.draw(pauses);
			}
		} catch (e) {
			this.showError(e);
		}
	}

	private draw(pauses: readonly Pause[]): void {
		this.root.replaceChildren(
			...pauses.map(p => {
				const row = el('div', 'pause-row');
				const resume = button('Resume', 'btn', () => void this.resume(p));
				resume.setAttribute('aria-label', `Resume ${pauseTarget(p)}`);
				row.append(el('span', 'banner-text', `Paused: ${pauseTarget(p)} — ${pauseText(p)}`), resume);
				return row;
			}),
		);
		this.root.hidden = pauses.length === 0;
		const all = pauses.some(p => p.scope === 'all');
		this.button.disabled = all;
		this.button.title = all ? 'Everything is paused' : 'Pause: no agent claims any card until you resume';
		this.changed(pauses);
	}

	private async pauseAll(): Promise<void> {
		const reason = await askText(
			'Pause every card?',
			'No agent claims any card until you resume; running agents finish theirs. Why? (optional)',
			'Pause',
			500,
			true,
		);
		if (reason === undefined) {
			return;
		}
		await this.send(() => this.hub().request('pause/set', { scope: 'all', ...(reason === '' ? {} : { reason }) }));
	}

	private async resume(p: Pause): Promise<void> {
		await this.send(() =>
			this.hub().request('pause/clear', { scope: p.scope, ...(p.target === null ? {} : { target: p.target }) }),
		);
	}

	private async send(request: () => Promise<unknown>): Promise<void> {
		try {
			await request();
			await this.load();
		} catch (e) {
			this.showError(e);
		}
	}
}
