/**
 * The extension's copy of the cards (hubConnection.ts owns one): every live card and Done by pages
 * (doneCache.ts), loaded from a snapshot and kept current by the event feed; after a resync the
 * snapshot is loaded again while the events that arrive meanwhile are held and applied after it. It
 * never connects, retries or subscribes: the connection hands it the client and the events.
 */
import type { LogOutputChannel } from 'vscode';
import { isCardless } from '../core/rules/dispatched';
import { loadLiveCards } from '../core/rules/donePages';
import type { BacklogEvent, Card, Params, Result } from '../core/protocol';
import type { RpcClient } from '../core/protocol/rpc';
import { DoneCache } from './doneCache';

/** Which cards changed; `reset` means the whole set was reloaded. */
export interface CardsChange {
	ids: ReadonlySet<string>;
	reset: boolean;
}

export class LiveCards {
	readonly map = new Map<string, Card>();
	/** Done's pages and counts: the cache holds only the newest done cards. */
	readonly done = new DoneCache(this.map);
	/** Events held while the snapshot reloads after a resync (undefined: not reloading). */
	private held: BacklogEvent[] | undefined;

	constructor(
		private readonly log: LogOutputChannel,
		/** Which cards changed, after each event and each load. */
		private readonly changed: (change: CardsChange) => void,
	) {}

	/** An event of the feed: applied at once, or held while a resync reloads the snapshot. */
	onEvent(e: BacklogEvent): void {
		if (isCardless(e)) {
			return; // a pause or a run: no card changed (dispatchWatch.ts reads those)
		}
		if (this.held === undefined) {
			this.apply(e);
		} else {
			this.held.push(e);
		}
	}

	/** Every live card, but Done newest first and by pages (doneCache.ts). */
	async load(client: RpcClient, doneLimit: number): Promise<void> {
		const list = (p: Params<'card/list'>): Promise<Result<'card/list'>> => client.request('card/list', p);
		const cards = await loadLiveCards(list);
		this.map.clear();
		for (const card of cards) {
			this.map.set(card.id, card);
		}
		await this.done.load(list, () => client.request('card/stats', {}), Math.max(1, doneLimit));
		this.changed({ ids: new Set(), reset: true });
	}

	/**
	 * Reloads the snapshot after a resync. Events that arrive meanwhile are held and applied after it,
	 * in order: each carries its card's state after it, so the last one of a card wins either way.
	 */
	async resync(client: RpcClient, doneLimit: number): Promise<void> {
		if (this.held !== undefined) {
			return;
		}
		this.held = [];
		this.log.info('Baton: the hub compacted events this window had not seen; reloading the cards.');
		try {
			await this.load(client, doneLimit);
		} catch (e) {
			this.log.warn(`Reloading after a resync failed: ${e instanceof Error ? e.message : String(e)}`);
		} finally {
			const held = this.held;
			this.held = undefined;
			for (const e of held) {
				this.apply(e);
			}
		}
	}

	private apply(e: BacklogEvent): void {
		this.done.beforeEvent(e);
		const ids = new Set<string>([e.cardId]);
		const card = e.data.card;
		if (card === null) {
			this.map.delete(e.cardId);
		} else {
			const known = this.map.get(card.id);
			// A replay right after the snapshot can carry an older copy than the snapshot itself.
			if (known === undefined || card.updatedAt >= known.updatedAt || card.version > known.version) {
				this.map.set(card.id, card);
			}
		}
		for (const r of e.data.readiness ?? []) {
			const other = this.map.get(r.id);
			if (other && other.unmetDeps !== r.unmetDeps) {
				this.map.set(r.id, { ...other, unmetDeps: r.unmetDeps });
				ids.add(r.id);
			}
		}
		this.changed({ ids, reset: false });
	}
}
