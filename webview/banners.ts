/**
 * The board's three banners under the toolbar: the connection (connecting, offline, closed), the
 * store (disk full, PostgreSQL away: up until the hub says otherwise) and errors (a refused move or
 * request, in the hub's words; dismissable, gone after 15 s). Text only; it decides nothing and sends
 * nothing.
 */
import { BatonError } from '../core/errors';
import type { StoreHealth } from '../core/protocol';
import type { ConnectionState } from '../core/protocol/rpc';
import { el } from './dom';

export class Banners {
	readonly connection = el('div', 'banner banner-connection');
	readonly store = el('div', 'banner banner-store');
	readonly error = el('div', 'banner banner-error');
	private readonly errorText = el('span', 'banner-text');
	private errorTimer: number | undefined;
	private readonly connectionText: Record<ConnectionState, string>;

	constructor(host: 'vscode' | 'browser') {
		this.connection.setAttribute('role', 'status');
		this.connection.hidden = true;
		this.store.setAttribute('role', 'alert');
		this.store.hidden = true;
		this.error.setAttribute('role', 'alert');
		this.error.hidden = true;
		const close = el('button', 'btn btn-icon', '✕');
		close.type = 'button';
		close.setAttribute('aria-label', 'Dismiss message');
		close.addEventListener('click', () => this.hideError());
		this.error.append(this.errorText, close);
		this.connectionText = {
			connecting: 'Connecting to the Baton hub…',
			connected: '',
			offline:
				host === 'browser'
					? 'Offline: the Baton hub is unreachable. Reconnecting… If the hub was restarted, run "baton board" for a fresh link.'
					: 'Offline: the Baton hub is unreachable. Reconnecting…',
			closed: 'Disconnected from the Baton hub. Reload to reconnect.',
		};
	}

	get elements(): HTMLElement[] {
		return [this.connection, this.store, this.error];
	}

	showError(error: unknown): void {
		this.errorText.textContent = BatonError.is(error) || error instanceof Error ? error.message : String(error);
		this.error.hidden = false;
		window.clearTimeout(this.errorTimer);
		this.errorTimer = window.setTimeout(() => this.hideError(), 15_000);
	}

	hideError(): void {
		this.error.hidden = true;
	}

	showConnection(s: ConnectionState): void {
		document.body.dataset.connection = s;
		this.connection.textContent = this.connectionText[s];
		this.connection.hidden = s === 'connected';
	}

	showStore(store: StoreHealth): void {
		document.body.dataset.store = store.state;
		const fallback = store.state === 'disk_full' ? 'The disk holding the backlog is full: changes are refused.' : '';
		this.store.textContent = store.state === 'ok' ? '' : (store.message ?? fallback);
		this.store.hidden = store.state === 'ok';
	}
}
