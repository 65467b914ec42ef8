/**
 * Epics' progress as the faces show it ("3 / 5 done"): card/get's children roll-up per epic,
 * fetched when a face first shows the epic and fetched again when one of its children is created,
 * deleted, moves to another parent or crosses done. Neither the board nor the tree holds every done
 * card (Done loads by pages), so the counts are the hub's, never a count of the cards at hand. No DOM,
 * no vscode, no clock of its own beyond one coalescing timer: the faces pass how to fetch a roll-up
 * and what to redraw when one changed.
 */

/** An epic's children: how many, and how many of them are done. */
export interface Rollup {
	total: number;
	done: number;
}

/** "3 / 5 done". */
export function rollupText(r: Rollup): string {
	return `${r.done} / ${r.total} done`;
}

/** The fields of a card a roll-up depends on. */
interface ChildFields {
	parent?: string | null | undefined;
	status: string;
}

export class EpicRollups {
	/** Fetched roll-ups; null: the card has no children (or could not be read). */
	private readonly known = new Map<string, Rollup | null>();
	private readonly queued = new Set<string>();
	/** Per child seen in the feed: its parent and whether it was done ("P1\ntrue"). */
	private readonly seen = new Map<string, string>();
	private timer: ReturnType<typeof setTimeout> | undefined;

	constructor(
		/** card/get's `children` counts, or null when the card has none. */
		private readonly fetch: (id: string) => Promise<Rollup | null>,
		/** Roll-ups that changed: the faces redraw the epics and their children. */
		private readonly changed: (ids: string[]) => void,
	) {}

	/** The roll-up as last fetched; undefined when not fetched yet (it is asked for now). */
	get(id: string): Rollup | null | undefined {
		const r = this.known.get(id);
		if (r === undefined) {
			this.ask(id);
		}
		return r;
	}

	/** A card changed (undefined: deleted): the epics whose counts that may change are fetched again. */
	cardChanged(id: string, card: ChildFields | undefined): void {
		const before = this.seen.get(id);
		const parent = card?.parent ?? null;
		const now = parent === null ? undefined : `${parent}\n${card?.status === 'done'}`;
		if (now === before) {
			return;
		}
		if (now === undefined) {
			this.seen.delete(id);
		} else {
			this.seen.set(id, now);
		}
		// A child seen for the first time may be new, or a done one this face never loaded: ask again.
		for (const p of new Set([before?.split('\n')[0], parent])) {
			if (p != null && this.known.has(p)) {
				this.ask(p);
			}
		}
	}

	/** A roll-up read elsewhere (the detail pane's card/get). */
	put(id: string, r: Rollup | null): void {
		const before = this.known.get(id);
		this.known.set(id, r);
		if (before?.total !== r?.total || before?.done !== r?.done) {
			this.changed([id]);
		}
	}

	/** After a resync: every roll-up is fetched again when next shown. */
	clear(): void {
		this.known.clear();
		this.seen.clear();
	}

	dispose(): void {
		clearTimeout(this.timer);
		this.queued.clear();
	}

	private ask(id: string): void {
		this.queued.add(id);
		// Coalesces a burst (a plan's children completing, a first render of many epics) into one pass.
		this.timer ??= setTimeout(() => void this.drain(), 100);
	}

	/** Fetches the queued roll-ups one at a time, so a board of many epics does not flood the hub. */
	private async drain(): Promise<void> {
		const changed: string[] = [];
		for (let id = first(this.queued); id !== undefined; id = first(this.queued)) {
			this.queued.delete(id);
			const before = this.known.get(id);
			// Set before the answer: a render meanwhile does not ask again.
			this.known.set(id, before ?? null);
			const r = await this.fetch(id).catch(() => null);
			this.known.set(id, r);
			if (before?.total !== r?.total || before?.done !== r?.done) {
				changed.push(id);
			}
		}
		this.timer = undefined;
		if (changed.length > 0) {
			this.changed(changed);
		}
	}
}

function first(set: ReadonlySet<string>): string | undefined {
	for (const v of set) {
		return v;
	}
	return undefined;
}
