/**
 * Drag and drop of cards with pointer events (not HTML5 drag and drop, whose events VS Code's
 * webview host intercepts for file drops and which cannot show the insertion point in a virtualised
 * list). A press that moves less than a few pixels is a click; Escape cancels a drag.
 */
import type { BoardView } from './render';
import type { ColumnId } from './columns';

export interface DropTarget {
	column: ColumnId;
	/** Insertion index in the target column's visible list. */
	index: number;
}

export interface DragCallbacks {
	onDrop(cardId: string, target: DropTarget): void;
	onClick(cardId: string): void;
}

const threshold = 5;
/** Distance from a column's top/bottom edge (px) that scrolls it while dragging. */
const edge = 40;

interface Drag {
	cardId: string;
	source: HTMLElement;
	pointerId: number;
	startX: number;
	startY: number;
	offsetX: number;
	offsetY: number;
	ghost: HTMLElement | undefined;
	target: DropTarget | undefined;
}

export class DragController {
	private drag: Drag | undefined;

	constructor(
		private readonly view: BoardView,
		private readonly callbacks: DragCallbacks,
	) {
		const root = view.root;
		root.addEventListener('pointerdown', e => this.down(e));
		root.addEventListener('pointermove', e => this.move(e));
		root.addEventListener('pointerup', e => this.up(e));
		root.addEventListener('pointercancel', () => this.cancel());
		root.addEventListener('lostpointercapture', () => {
			if (this.drag?.ghost !== undefined) {
				this.cancel();
			}
		});
		document.addEventListener('keydown', e => {
			if (e.key === 'Escape' && this.drag?.ghost !== undefined) {
				e.preventDefault();
				e.stopPropagation();
				this.cancel();
			}
		});
	}

	get dragging(): boolean {
		return this.drag?.ghost !== undefined;
	}

	private down(e: PointerEvent): void {
		if (e.button !== 0 || !(e.target instanceof Element)) {
			return;
		}
		const card = e.target.closest<HTMLElement>('.card');
		const id = card?.dataset.id;
		if (card === null || id === undefined) {
			return;
		}
		const rect = card.getBoundingClientRect();
		this.drag = {
			cardId: id,
			source: card,
			pointerId: e.pointerId,
			startX: e.clientX,
			startY: e.clientY,
			offsetX: e.clientX - rect.left,
			offsetY: e.clientY - rect.top,
			ghost: undefined,
			target: undefined,
		};
	}

	private move(e: PointerEvent): void {
		const d = this.drag;
		if (d?.pointerId !== e.pointerId) {
			return;
		}
		if (d.ghost === undefined) {
			if (Math.hypot(e.clientX - d.startX, e.clientY - d.startY) < threshold) {
				return;
			}
			this.start(d);
		}
		e.preventDefault();
		if (d.ghost !== undefined) {
			d.ghost.style.transform = `translate(${e.clientX - d.offsetX}px, ${e.clientY - d.offsetY}px)`;
		}
		this.autoScroll(e.clientX, e.clientY);
		this.setTarget(this.view.targetAt(e.clientX, e.clientY));
	}

	private up(e: PointerEvent): void {
		const d = this.drag;
		if (d?.pointerId !== e.pointerId) {
			return;
		}
		if (d.ghost === undefined) {
			this.drag = undefined;
			this.callbacks.onClick(d.cardId);
			return;
		}
		const target = this.view.targetAt(e.clientX, e.clientY);
		this.finish();
		if (target !== undefined) {
			this.callbacks.onDrop(d.cardId, target);
		}
	}

	private start(d: Drag): void {
		const ghost = d.source.cloneNode(true) as HTMLElement;
		ghost.classList.add('card-ghost');
		ghost.removeAttribute('tabindex');
		ghost.setAttribute('aria-hidden', 'true');
		ghost.style.width = `${d.source.getBoundingClientRect().width}px`;
		document.body.append(ghost);
		d.ghost = ghost;
		d.source.classList.add('card--dragging');
		document.body.classList.add('is-dragging');
		try {
			this.view.root.setPointerCapture(d.pointerId);
		} catch {
			// The pointer is already gone (released between down and move): the next up/cancel ends it.
		}
	}

	private setTarget(target: DropTarget | undefined): void {
		const d = this.drag;
		if (d === undefined) {
			return;
		}
		const prev = d.target;
		if (prev?.column === target?.column && prev?.index === target?.index) {
			return;
		}
		if (prev !== undefined) {
			this.view.columns[prev.column].root.classList.remove('drop-target');
			this.view.columns[prev.column].showMarker(undefined);
		}
		d.target = target;
		if (target !== undefined) {
			this.view.columns[target.column].root.classList.add('drop-target');
			// Only Ready is ordered by hand (priority); elsewhere the column decides the place.
			this.view.columns[target.column].showMarker(target.column === 'ready' ? target.index : undefined);
		}
	}

	private autoScroll(x: number, y: number): void {
		const t = this.view.targetAt(x, y);
		if (t === undefined) {
			return;
		}
		const scroller = this.view.columns[t.column].scroller;
		const r = scroller.getBoundingClientRect();
		if (y < r.top + edge) {
			scroller.scrollTop -= 20;
		} else if (y > r.bottom - edge) {
			scroller.scrollTop += 20;
		}
	}

	private finish(): void {
		const d = this.drag;
		this.setTarget(undefined);
		this.drag = undefined;
		if (d === undefined) {
			return;
		}
		d.ghost?.remove();
		// The source node may have been recycled for another card while the column scrolled.
		for (const n of this.view.root.querySelectorAll('.card--dragging')) {
			n.classList.remove('card--dragging');
		}
		document.body.classList.remove('is-dragging');
		if (this.view.root.hasPointerCapture(d.pointerId)) {
			this.view.root.releasePointerCapture(d.pointerId);
		}
	}

	private cancel(): void {
		this.finish();
	}
}
