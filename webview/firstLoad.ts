/**
 * The board before its first snapshot is drawn: the columns say what it waits for
 * (connecting, offline, loading) instead of counting 0 cards, and the choices that have nothing to
 * choose from yet are disabled; afterwards the connection only changes the banner and the header.
 * Decides what the parts show, never what the board loads or sends.
 */
import type { ConnectionState } from '../core/protocol/rpc';
import type { Banners } from './banners';
import type { BoardView } from './render';
import type { Toolbar } from './toolbar';

export interface FirstLoadParts {
	banners: Banners;
	toolbar: Toolbar;
	view: BoardView;
	/** The selects and buttons to disable until the first snapshot is drawn. */
	controls: readonly (HTMLSelectElement | HTMLButtonElement | undefined)[];
	/** Redraws the header's counts (once connected again after the first snapshot). */
	updateSummary(): void;
}

const waiting: Readonly<Record<ConnectionState, string>> = {
	connecting: 'Connecting…',
	connected: 'Loading cards…',
	offline: 'Offline: waiting for the hub…',
	closed: 'Disconnected: reload to connect again.',
};

export class FirstLoad {
	/** The first snapshot was drawn (a resync's reload keeps the cards on screen: no placeholder again). */
	drawn = false;

	constructor(private readonly parts: FirstLoadParts) {
		this.enable(false);
	}

	/** The hub connection changed. */
	connection(s: ConnectionState): void {
		const { banners, toolbar, view } = this.parts;
		banners.showConnection(s);
		toolbar.setConnection(s);
		if (!this.drawn) {
			view.setPlaceholder(waiting[s]);
		} else if (s === 'connected') {
			this.parts.updateSummary();
		}
	}

	/** The first snapshot is about to be drawn: the columns show cards, the choices work. */
	draw(): void {
		if (!this.drawn) {
			this.drawn = true;
			this.parts.view.setPlaceholder(undefined);
			this.enable(true);
		}
	}

	private enable(on: boolean): void {
		for (const control of this.parts.controls) {
			if (control !== undefined) {
				control.disabled = !on;
			}
		}
	}
}
