/**
 * What the board knows of its cards' tree and labels, kept as BoardState adds, changes and
 * drops cards, so no redraw scans 50,000 cards: each parent's children held here, and how many cards
 * carry each label. Pure: no DOM, no transport. The roll-up a face shows ("3 / 5 done") is the hub's
 * (core/protocol/epicRollups.ts); the children here are only a fallback until it arrives.
 */
import type { Card } from '../core/protocol';

export class CardIndex {
	private readonly childrenOf = new Map<string, Map<string, Card>>();
	private readonly parentOf = new Map<string, string>();
	private readonly labelsOf = new Map<string, readonly string[]>();
	private readonly labelCount = new Map<string, number>();
	/** Bumped when the set of epics or labels changes: the filter's choices are rebuilt on it. */
	version = 0;

	clear(): void {
		this.childrenOf.clear();
		this.parentOf.clear();
		this.labelsOf.clear();
		this.labelCount.clear();
		this.version++;
	}

	/** Records `card` under id (undefined: the card is gone). */
	set(id: string, card: Card | undefined): void {
		const before = this.parentOf.get(id);
		const parent = card?.parent ?? undefined;
		if (before !== undefined && before !== parent) {
			const siblings = this.childrenOf.get(before);
			siblings?.delete(id);
			if (siblings?.size === 0) {
				this.childrenOf.delete(before);
				this.version++;
			}
		}
		if (parent === undefined || card === undefined) {
			this.parentOf.delete(id);
		} else {
			this.parentOf.set(id, parent);
			let children = this.childrenOf.get(parent);
			if (children === undefined) {
				children = new Map();
				this.childrenOf.set(parent, children);
				this.version++;
			}
			children.set(id, card);
		}
		const labels = card?.labels ?? [];
		const old = this.labelsOf.get(id) ?? [];
		if (old.length > 0 || labels.length > 0) {
			this.countLabels(old, -1);
			this.countLabels(labels, 1);
			if (labels.length === 0) {
				this.labelsOf.delete(id);
			} else {
				this.labelsOf.set(id, labels);
			}
		}
	}

	/** The children of `id` the board holds (live ones all; done ones as far as Done is loaded). */
	children(id: string): Iterable<Card> {
		return this.childrenOf.get(id)?.values() ?? [];
	}

	isParent(id: string): boolean {
		return this.childrenOf.has(id);
	}

	/** Ids of the cards that have children here, sorted. */
	parents(): string[] {
		return [...this.childrenOf.keys()].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
	}

	/** Labels in use, sorted. */
	labels(): string[] {
		return [...this.labelCount.keys()].sort((a, b) => a.localeCompare(b));
	}

	private countLabels(labels: readonly string[], delta: number): void {
		for (const l of labels) {
			const n = (this.labelCount.get(l) ?? 0) + delta;
			if (n <= 0) {
				this.labelCount.delete(l);
				this.version++;
			} else {
				if (!this.labelCount.has(l)) {
					this.version++;
				}
				this.labelCount.set(l, n);
			}
		}
	}
}
