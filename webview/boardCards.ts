/**
 * The cards the board holds and how they show: the hub's cards with the optimistic versions on top,
 * each card's last event seq, what is kept as cards come and go (phases in use, the cards that need a
 * human's input, children and labels: cardIndex.ts), and one sorted list per column under the filter
 * and Done's boundary, patched incrementally (binary-search insert/remove: columnLists.ts), so an event
 * touching one card costs O(log n) plus a splice, never a re-sort of 50,000 cards. The primitives that
 * put, remove and move a card add what they touched to the Change they are given. Which change to
 * apply (an event, our result, a page, an optimistic move) is state.ts's; pure logic: no DOM, no
 * transport.
 */
import { type DoneBoundary, isBelowBoundary } from '../core/rules/donePages';
import type { Card } from '../core/protocol';
import { type Change, emptyChange } from './change';
import { type ColumnLists, insertIntoList, refillLists, removeFromList } from './columnLists';
import { type ColumnId, columnOrder } from './columns';
import { CardIndex } from './cardIndex';
import { type Filter, matchesFilter } from './filter';

export class BoardCards {
	/** Cards as the hub last told us. */
	protected readonly real = new Map<string, Card>();
	/** Optimistic versions of cards with a request in flight; shown instead of the real card. */
	protected readonly overlay = new Map<string, Card>();
	/** Seq of the last event applied per card: a response older than it must not overwrite the card. */
	protected readonly cardSeq = new Map<string, number>();
	protected readonly lists: ColumnLists = { ready: [], inProgress: [], review: [], blocked: [], done: [] };
	protected phaseCounts = new Map<string, number>();
	/** Cards whose agent asked a question nobody answered yet (`needsInput`), as the hub last said. */
	protected readonly asking = new Set<string>();
	private filterValue: Required<Filter> = { text: '', phase: '', blocked: 'all', projects: [], epic: '', label: '' };
	/** Children by parent and labels in use, kept as cards come and go. */
	readonly index = new CardIndex();
	/** Bumped whenever a card the hub reported changes: derived lists (projects, live claims) cache on it. */
	version = 0;
	private filterNeedle = '';
	/** Done shows the cards down to the last one of the pages loaded so far; null: every done card is here. */
	private doneBoundary: DoneBoundary | null = null;
	/** Cards deleted since the load: a Done page read before the deletion must not bring one back. */
	protected readonly deleted = new Set<string>();

	get size(): number {
		return this.real.size;
	}

	get filter(): Filter {
		return this.filterValue;
	}

	/** The card as shown (optimistic version while a request is in flight). */
	get(id: string): Card | undefined {
		return this.overlay.get(id) ?? this.real.get(id);
	}

	/** The card as the hub last reported it. */
	getReal(id: string): Card | undefined {
		return this.real.get(id);
	}

	isPending(id: string): boolean {
		return this.overlay.has(id);
	}

	/** The visible (filtered, sorted) cards of a column. */
	column(id: ColumnId): readonly Card[] {
		return this.lists[id];
	}

	/** Ids of the cards that need a human's input (an unanswered question), oldest change first. */
	needsInput(): string[] {
		return [...this.asking];
	}

	/** Every card as the hub last reported it. */
	cards(): IterableIterator<Card> {
		return this.real.values();
	}

	/** Every phase in use, sorted. */
	phases(): string[] {
		return [...this.phaseCounts.keys()].sort((a, b) => a.localeCompare(b));
	}

	/** Seq of the last event applied to this card (0 if none since load). */
	eventSeqOf(id: string): number {
		return this.cardSeq.get(id) ?? 0;
	}

	setFilter(filter: Filter): Change {
		this.filterValue = {
			text: filter.text,
			phase: filter.phase,
			blocked: filter.blocked ?? 'all',
			projects: filter.projects ?? [],
			epic: filter.epic ?? '',
			label: filter.label ?? '',
		};
		this.filterNeedle = filter.text.trim().toLowerCase();
		return this.rebuildLists();
	}

	matches(card: Card): boolean {
		if (card.status === 'done' && isBelowBoundary(card, this.doneBoundary)) {
			return false;
		}
		return matchesFilter(card, this.filterValue, this.filterNeedle);
	}

	/** Where Done stops (the last card of the loaded pages), and re-lists Done against it. */
	setDoneBoundary(boundary: DoneBoundary | null): Change {
		this.doneBoundary = boundary;
		const change = emptyChange();
		const list: Card[] = [];
		for (const id of new Set([...this.real.keys(), ...this.overlay.keys()])) {
			const card = this.get(id);
			if (card?.status === 'done' && this.matches(card)) {
				list.push(card);
			}
		}
		this.lists.done = list.sort(columnOrder.done);
		change.columns.add('done');
		return change;
	}

	/** Dependencies of a card that are not done yet (ids we do not know are listed as unknown). */
	waitingOn(card: Card): { id: string; title: string | undefined }[] {
		const out: { id: string; title: string | undefined }[] = [];
		for (const dep of card.dependsOn) {
			const d = this.real.get(dep);
			if (d?.status !== 'done') {
				out.push({ id: dep, title: d?.title });
			}
		}
		return out;
	}

	protected putReal(next: Card, shownBefore: Card | undefined, change: Change): void {
		const prev = this.real.get(next.id);
		this.version++;
		// A new project joins the project choice the same way a new phase joins the phase choice.
		change.phases ||= (prev?.project ?? null) !== (next.project ?? null);
		if (prev?.phase !== next.phase) {
			if (prev !== undefined) {
				this.countPhase(prev.phase, -1);
			}
			this.countPhase(next.phase, 1);
			change.phases = true;
		}
		this.real.set(next.id, next);
		this.index.set(next.id, next);
		this.trackAsking(next.id, next.needsInput === true);
		this.moveShown(shownBefore, this.get(next.id) ?? next, change);
	}

	protected removeReal(id: string, shownBefore: Card | undefined, change: Change): void {
		const prev = this.real.get(id);
		this.version++;
		if (prev !== undefined) {
			this.countPhase(prev.phase, -1);
			change.phases = true;
		}
		this.real.delete(id);
		this.index.set(id, undefined);
		this.deleted.add(id);
		this.cardSeq.delete(id);
		this.trackAsking(id, false);
		if (shownBefore !== undefined) {
			removeFromList(this.lists, shownBefore, change);
		}
		change.cards.add(id);
	}

	/** Replaces the shown version of a card in the column lists. */
	protected moveShown(before: Card | undefined, after: Card, change: Change): void {
		if (before !== undefined) {
			removeFromList(this.lists, before, change);
		}
		if (this.matches(after)) {
			insertIntoList(this.lists, after, change);
		}
		change.cards.add(after.id);
	}

	protected rebuildLists(): Change {
		const shown: Card[] = [];
		for (const id of new Set([...this.real.keys(), ...this.overlay.keys()])) {
			const card = this.get(id);
			if (card !== undefined && this.matches(card)) {
				shown.push(card);
			}
		}
		return refillLists(this.lists, shown);
	}

	protected trackAsking(id: string, asking: boolean): void {
		if (asking) {
			this.asking.add(id);
		} else {
			this.asking.delete(id);
		}
	}

	protected countPhase(phase: string | null, delta: number): void {
		if (phase === null) {
			return;
		}
		const n = (this.phaseCounts.get(phase) ?? 0) + delta;
		if (n <= 0) {
			this.phaseCounts.delete(phase);
		} else {
			this.phaseCounts.set(phase, n);
		}
	}
}
