/**
 * The landing queue on the board: the entries of `landing/queue` (read at load and after every
 * reconnect, since notices missed while offline never come) and of each `{notice: 'landing'}` go into
 * BoardState, so a card in line shows "Landing now" or "Waiting to land · 2nd" (cardView.ts) and its
 * detail who approved it (detailReview.ts); the Review column's head shows "1 landing · 1 waiting" for
 * the projects the board shows. The hand-overs of landings that came back (`returned`, and each
 * `land_conflicted` event's card) let the detail say the card came back from landing. It draws and
 * reads; the queue is the hub's, the words are core/rules/landing.ts's.
 */
import type { BacklogEvent, LandingEntry, LandingReturn } from '../core/protocol';
import type { RpcClient } from '../core/protocol/rpc';
import { landingByCard, landingCount } from '../core/rules/landing';
import type { BoardState } from './state';
import { el } from './dom';

export class LandingView {
	/** "1 landing · 1 waiting", in the Review column's head (hidden while the line is empty). */
	readonly strip = el('span', 'column-landing');
	private entries: readonly LandingEntry[] = [];
	/** Loads sent so far: only the latest one's answer is applied. */
	private loads = 0;

	constructor(
		private readonly state: BoardState,
		/** The cards whose landing words changed: their rows and the open detail are redrawn. */
		private readonly changed: (cardIds: ReadonlySet<string>) => void,
	) {
		this.strip.setAttribute('role', 'status');
		this.strip.hidden = true;
	}

	/** Reads the queue (at load and after a reconnect); a failure leaves the last entries shown. */
	async load(client: RpcClient): Promise<void> {
		const n = ++this.loads;
		const q = await client.request('landing/queue', {});
		if (n === this.loads) {
			this.returned(q.returned);
			this.apply(q.entries);
		}
	}

	/** The hub's entries (a notice, or a load's answer). */
	apply(entries: readonly LandingEntry[]): void {
		const before = this.state.landing;
		const after = landingByCard(entries);
		const touched = new Set<string>();
		for (const id of new Set([...before.keys(), ...after.keys()])) {
			const a = before.get(id);
			const b = after.get(id);
			if (a?.state !== b?.state || a?.place !== b?.place || a?.actor !== b?.actor) {
				touched.add(id);
			}
		}
		this.entries = entries;
		this.state.landing = after;
		this.drawStrip();
		if (touched.size > 0) {
			this.changed(touched);
		}
	}

	/** An event: a landing that came back keeps its hand-over for the detail's words. */
	eventArrived(event: BacklogEvent): void {
		if (event.type === 'land_conflicted' && typeof event.data.card?.handoff === 'string') {
			this.state.landingReturns.set(event.cardId, event.data.card.handoff);
		}
	}

	/** The project filter changed: the strip counts the lines of the projects shown. */
	drawStrip(): void {
		const projects = this.state.filter.projects ?? [];
		const shown = projects.length === 0 ? this.entries : this.entries.filter(e => projects.includes(e.project));
		const words = landingCount(shown);
		this.strip.hidden = words === '';
		this.strip.textContent = words;
		const label = words === '' ? '' : `Landing queue: ${words}`;
		this.strip.title = label === '' ? '' : `${label} (one landing at a time per base branch; baton queue lists them)`;
		this.strip.setAttribute('aria-label', label);
	}

	private returned(returned: readonly LandingReturn[]): void {
		// Newest first: the newest return of a card is the one its hand-over may still say.
		for (const r of [...returned].reverse()) {
			this.state.landingReturns.set(r.cardId, r.reason);
		}
	}
}
