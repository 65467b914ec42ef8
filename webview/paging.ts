/**
 * What the board loads, and when: Ready, In progress, In review and Blocked in full; Done
 * newest first, a page at a time as the user scrolls to its end (`card/list {status: 'done', order:
 * 'recent'}`), with the filter's text, phase and single project sent along so a search reaches every
 * done card, not only the loaded ones (core/rules/donePages.ts: the boundary and the counts). Requests and
 * bookkeeping only: no DOM, no rendering; BoardState decides what the columns show.
 */
import { boundaryAfter } from '../core/rules/donePages';
import type { Params, Result } from '../core/protocol';
import type { Change } from './change';
import type { Filter } from './filter';
import type { BoardState } from './state';

/** Done cards per page: a few screens of the column, one small frame (~100 KB). */
export const donePageSize = 200;
type ListFn = (params: Params<'card/list'>) => Promise<Result<'card/list'>>;

/** The Done query for a filter: what the hub can filter itself (text, phase, one project). */
export function doneQuery(filter: Filter): Params<'card/list'> {
	const text = filter.text.trim();
	const projects = filter.projects ?? [];
	return {
		status: 'done',
		order: 'recent',
		limit: donePageSize,
		...(text === '' ? {} : { text: text.slice(0, 200) }),
		...(filter.phase === '' ? {} : { phase: filter.phase }),
		// An epic's children and a label: the epic itself shows when loaded (it is no child).
		...(filter.epic === undefined || filter.epic === '' ? {} : { parent: filter.epic }),
		...(filter.label === undefined || filter.label === '' ? {} : { label: filter.label }),
		// The hub's project filter keeps cards with no project, as the board's does; several projects
		// are filtered here instead.
		...(projects.length === 1 && projects[0] !== undefined ? { project: projects[0] } : {}),
	};
}

export interface DonePagerHost {
	list: ListFn;
	state: BoardState;
	queue(change: Change): void;
	showError(e: unknown): void;
	/** A page arrived or loading started or stopped: the column's footer and count are redrawn. */
	changed(): void;
}

/** Done's pages for the current filter: the cursor, whether more exist, and one request at a time. */
export class DonePager {
	private cursor: string | undefined;
	private exhausted = false;
	private inFlight: Promise<void> | undefined;
	private queryKey = '';
	private query: Params<'card/list'> = doneQuery({ text: '', phase: '' });
	/** Bumped by reset(): a page of an older query is dropped when it arrives. */
	private generation = 0;

	constructor(private readonly host: DonePagerHost) {}

	/** More done cards exist beyond the loaded pages (for this filter). */
	get more(): boolean {
		return !this.exhausted;
	}

	get loading(): boolean {
		return this.inFlight !== undefined;
	}

	/** Starts over for `filter` if it changes what the hub is asked; resolves when the first page is in. */
	reset(filter: Filter, force = false): Promise<void> {
		const query = doneQuery(filter);
		const key = JSON.stringify(query);
		if (!force && key === this.queryKey) {
			return this.inFlight ?? Promise.resolve();
		}
		this.generation++;
		this.queryKey = key;
		this.query = query;
		this.cursor = undefined;
		this.exhausted = false;
		this.inFlight = undefined;
		return this.loadMore();
	}

	/** Loads the next page, unless one is on its way or none is left. */
	loadMore(): Promise<void> {
		if (this.exhausted) {
			return Promise.resolve();
		}
		this.inFlight ??= this.fetch(this.generation).finally(() => {
			this.inFlight = undefined;
			this.host.changed();
		});
		this.host.changed();
		return this.inFlight;
	}

	private async fetch(generation: number): Promise<void> {
		let page: Result<'card/list'>;
		try {
			page = await this.host.list(this.cursor === undefined ? this.query : { ...this.query, cursor: this.cursor });
		} catch (e) {
			if (generation === this.generation) {
				this.host.showError(e);
			}
			return;
		}
		if (generation !== this.generation) {
			return;
		}
		this.cursor = page.nextCursor;
		this.exhausted = page.nextCursor === undefined;
		this.host.queue(this.host.state.addDonePage(page.cards, boundaryAfter(page.cards, page.nextCursor)));
	}
}
