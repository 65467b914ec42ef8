/**
 * The Changes section of the detail pane: for a card with a workspace, its branch against its
 * base from `card/diff` — a summary line, the changed files with +/− counts (each a button that jumps to
 * its diff, or loads it when the cut patch left it out) and the unified diff (diffView.ts). Loading,
 * empty, error and landed states are sentences. The section keeps its elements across the pane's
 * re-renders and asks the hub again only when the branch may have moved (a new head or status), or on
 * Refresh. All text goes in as text. It decides nothing about the card.
 */
import type { Card, CardDiffResult, DiffFile } from '../core/protocol';
import { section } from './detailLog';
import { countsElement, renderPatch, statusWords } from './diffView';
import { button, el } from './dom';

export interface DiffHost {
	diff(cardId: string, paths?: string[]): Promise<CardDiffResult>;
}

/** The workspace fields the section reads (Card.workspace). */
type Workspace = NonNullable<Card['workspace']>;

const kb = (bytes: number): string => `${Math.round(bytes / 1024)} KB`;

export class DiffSection {
	private shown: { key: string; root: HTMLElement } | undefined;
	private token = 0;

	constructor(private readonly host: DiffHost) {}

	/** The pane closed: the next open asks the hub again (a working agent may have committed meanwhile). */
	forget(): void {
		this.shown = undefined;
		this.token++;
	}

	/** The section for `card`, or undefined when it has no workspace. */
	render(card: Card): HTMLElement | undefined {
		const ws = card.workspace;
		if (ws === undefined) {
			this.shown = undefined;
			return undefined;
		}
		const key = `${card.id}\n${card.status}\n${ws.head ?? ''}\n${ws.landed?.commit ?? ''}`;
		if (this.shown?.key === key) {
			return this.shown.root;
		}
		const s = section('Changes');
		s.root.classList.add('diff-section');
		s.root.setAttribute('aria-busy', 'true');
		this.shown = { key, root: s.root };
		if (ws.landed !== undefined) {
			s.root.removeAttribute('aria-busy');
			s.body.append(
				el(
					'p',
					'diff-summary',
					`Landed into ${ws.base} (${ws.landed.mode}, commit ${ws.landed.commit.slice(0, 12)}); its branch was removed.`,
				),
			);
			return s.root;
		}
		s.body.append(el('p', 'muted diff-loading', `Loading the changes of ${ws.branch}…`));
		void this.load(card.id, ws, s.body, s.root);
		return s.root;
	}

	private async load(cardId: string, ws: Workspace, body: HTMLElement, root: HTMLElement): Promise<void> {
		const token = ++this.token;
		root.setAttribute('aria-busy', 'true');
		let d: CardDiffResult;
		try {
			d = await this.host.diff(cardId);
		} catch (e) {
			if (token === this.token) {
				root.removeAttribute('aria-busy');
				body.replaceChildren(
					el('p', 'diff-error', e instanceof Error ? e.message : String(e)),
					this.refreshButton(cardId, ws, body, root),
				);
			}
			return;
		}
		if (token !== this.token) {
			return;
		}
		root.removeAttribute('aria-busy');
		body.replaceChildren(...this.content(d, ws, body, root));
	}

	/** Asks the hub again (an agent may have committed since), in the same place. */
	private refreshButton(cardId: string, ws: Workspace, body: HTMLElement, root: HTMLElement): HTMLElement {
		const b = button('Refresh', 'btn btn-small diff-refresh', () => {
			body.replaceChildren(el('p', 'muted diff-loading', `Loading the changes of ${ws.branch}…`));
			void this.load(cardId, ws, body, root);
		});
		b.title = 'Ask for the branch again';
		return b;
	}

	private content(d: CardDiffResult, ws: Workspace, body: HTMLElement, root: HTMLElement): HTMLElement[] {
		const ins = d.files.reduce((n, f) => n + (f.insertions ?? 0), 0);
		const del = d.files.reduce((n, f) => n + (f.deletions ?? 0), 0);
		const head = el('div', 'diff-head');
		head.append(
			el(
				'p',
				'diff-summary',
				d.files.length === 0
					? `${d.branch} changes nothing since it left ${d.base} yet.`
					: `${d.files.length} ${d.files.length === 1 ? 'file' : 'files'} changed, +${ins} −${del} · ${d.branch} → ${d.base} (${d.head.slice(0, 8)})`,
			),
			this.refreshButton(d.cardId, ws, body, root),
		);
		if (d.files.length === 0) {
			return [head];
		}
		// Element ids by the file's place in the list: paths may hold any character.
		const places = new Map(d.files.map((f, i) => [f.path, i]));
		const ids = (path: string) => `diff-file-${String(places.get(path) ?? path.replace(/[^\w-]/g, '_'))}`;
		const patch = renderPatch(d.patch, d.files, ids);
		const out: HTMLElement[] = [head];
		if (d.truncated) {
			out.push(
				el(
					'p',
					'diff-cut',
					`The diff is ${kb(d.patchBytes)}: only its first ${kb(new TextEncoder().encode(d.patch).length)} are shown. Choose a file below to see its diff, or read it all with git diff ${d.base}...${d.branch} in ${ws.root}.`,
				),
			);
		}
		out.push(this.fileList(d, patch, ids), patch.root);
		return out;
	}

	private fileList(
		d: CardDiffResult,
		patch: { root: HTMLElement; shown: Set<string> },
		ids: (p: string) => string,
	): HTMLElement {
		const ul = el('ul', 'diff-file-list');
		ul.setAttribute('aria-label', `Files changed by ${d.cardId}`);
		for (const f of d.files) {
			const li = el('li', 'diff-file-item');
			const open = button(f.path, 'btn-link diff-file-link', () => void this.jump(d, f, patch, ids));
			open.title = f.oldPath === undefined ? `Show the diff of ${f.path}` : `Renamed from ${f.oldPath}`;
			li.append(el('span', `diff-status diff-status--${f.status}`, statusWords[f.status]), open, countsElement(f));
			ul.append(li);
		}
		return ul;
	}

	/** Shows `f`'s block (loading it alone when the cut patch left it out) and moves focus to it. */
	private async jump(
		d: CardDiffResult,
		f: DiffFile,
		patch: { root: HTMLElement; shown: Set<string> },
		ids: (p: string) => string,
	): Promise<void> {
		const existing = document.getElementById(ids(f.path));
		if (existing !== null) {
			focusBlock(existing);
			return;
		}
		const waiting = el('p', 'muted diff-loading', `Loading the diff of ${f.path}…`);
		patch.root.append(waiting);
		try {
			const one = await this.host.diff(d.cardId, [f.path]);
			const part = renderPatch(one.patch, one.files, ids);
			waiting.replaceWith(...Array.from(part.root.children));
			part.shown.forEach(p => patch.shown.add(p));
			const block = document.getElementById(ids(f.path));
			if (block !== null) {
				focusBlock(block);
			}
		} catch (e) {
			waiting.className = 'diff-error';
			waiting.textContent = e instanceof Error ? e.message : String(e);
		}
	}
}

function focusBlock(block: HTMLElement): void {
	if (block instanceof HTMLDetailsElement) {
		block.open = true;
	}
	const summary = block.querySelector('summary');
	(summary ?? block).focus();
	block.scrollIntoView({ block: 'start' });
}
