/**
 * Which workspace files live claims hold, as the Explorer's decorations and the edit
 * warning need it: each workspace root gets an index (core/scope/match.ts) of the live scopes of the
 * cards of its project and of the cards without one, and a file is looked up by its path relative to
 * the root it is in (inside a card's worktree, `.baton/worktrees/<ID>/`, relative to that worktree). Also the tooltip text ("Held by claude-code-1 for AUTH-3 — Session cookie
 * hardening") and the project filter the tree, status bar and board share. Pure: no vscode import,
 * no I/O (the roots come from workspaceProjects.ts), so test/extension/heldFiles.test.ts runs it in
 * plain Node and the bench times it.
 */
import { sep } from 'node:path';
import type { Card } from '../core/protocol';
import { liveScope } from '../core/scope/conflicts';
import { ScopeIndex } from '../core/scope/match';
import { visibleText } from '../core/visibleText';

/** A folder scopes are relative to: a repository root (or a workspace folder outside git), and its project. */
export interface ProjectRoot {
	/** Absolute file-system path. */
	root: string;
	/** Its project id; undefined outside git (then only cards without a project apply there). */
	project: string | undefined;
}

/** Whether a card shows under a project filter: `projects` undefined or empty shows every card. */
export function inProjects(card: Pick<Card, 'project'>, projects: readonly string[] | undefined): boolean {
	const p = card.project ?? null;
	return p === null || projects === undefined || projects.length === 0 || projects.includes(p);
}

/** "Held by claude-code-1 for AUTH-3 — Session cookie hardening". */
export function heldText(card: Pick<Card, 'id' | 'title' | 'claimOwner'>): string {
	return visibleText(`Held by ${card.claimOwner ?? 'an agent'} for ${card.id} — ${card.title}`);
}

/** What a held file shows: a badge, the tooltip, and the cards that hold it (for the edit warning). */
export interface HeldDecoration {
	badge: string;
	tooltip: string;
	holders: Card[];
}

const worktreesFolder = '.baton/worktrees/';

/**
 * A path inside a card's worktree (`.baton/worktrees/<ID>/src/a.ts`) as the repository path it
 * is a copy of (`src/a.ts`), so scopes cover the worktrees' files as they cover the checkout's: the
 * commit guard refuses a worktree's commit of a path another live claim holds. Other paths unchanged.
 */
export function worktreeRelative(rel: string): string {
	if (!rel.startsWith(worktreesFolder)) {
		return rel;
	}
	const slash = rel.indexOf('/', worktreesFolder.length);
	return slash < 0 ? rel : rel.slice(slash + 1);
}

/** The badge of a held file: one character, the same for every holder (the tooltip names them). */
export const heldBadge = '●';

/** The live scopes of a set of cards, indexed per workspace root; rebuilt when claims change. */
export class HeldFiles {
	private readonly live: { card: Card; scope: string[] }[] = [];
	private built: { prefix: string; index: ScopeIndex<Card> }[] | undefined;
	/** A string that changes exactly when a live scope does: who holds what, per epoch. */
	readonly signature: string;

	constructor(
		cards: Iterable<Card>,
		private readonly roots: readonly ProjectRoot[],
	) {
		const live = this.live;
		for (const card of cards) {
			const scope = liveScope(card);
			if (scope.length > 0) {
				live.push({ card, scope });
			}
		}
		live.sort((a, b) => a.card.id.localeCompare(b.card.id));
		this.signature = live
			.map(
				({ card, scope }) =>
					`${card.id}@${card.claimEpoch}:${card.project ?? ''}:${card.claimOwner ?? ''}:${card.title}:${scope.join(',')}`,
			)
			.join('|');
	}

	/** The indexes, compiled on first use: a rebuild whose signature did not change compiles nothing. */
	private get indexes(): { prefix: string; index: ScopeIndex<Card> }[] {
		this.built ??= this.roots.map(({ root, project }) => {
			const index = new ScopeIndex<Card>();
			for (const { card, scope } of this.live) {
				const p = card.project ?? null;
				// A card without a project applies to every root; one with a project only to that project's.
				if (p === null || p === project) {
					index.add(card, scope);
				}
			}
			// The root with its trailing separator: a path below it starts with exactly this.
			return { prefix: root.endsWith(sep) ? root : root + sep, index };
		});
		return this.built;
	}

	/** Globs indexed over all roots (the bench reports it). */
	get size(): number {
		return this.indexes.reduce((n, i) => n + i.index.size, 0);
	}

	/** The cards whose live scope covers the file at `fsPath` (absolute), each once. */
	holdersOf(fsPath: string): Card[] {
		let out: Card[] | undefined;
		for (const { prefix, index } of this.indexes) {
			// String prefix, not path.relative (which resolves both paths: 40 % of a 50k-file pass).
			if (index.size === 0 || fsPath.length <= prefix.length || !fsPath.startsWith(prefix)) {
				continue;
			}
			const rel = fsPath.slice(prefix.length);
			// A file-system path below the root has no empty or "." segment: the index may skip that check.
			for (const card of index.match(worktreeRelative(sep === '/' ? rel : rel.split(sep).join('/')), true)) {
				if (out === undefined) {
					out = [card];
				} else if (!out.includes(card)) {
					out.push(card);
				}
			}
		}
		return out ?? [];
	}

	/** The decoration of the file at `fsPath`, or undefined when no live claim holds it. */
	decorationOf(fsPath: string): HeldDecoration | undefined {
		const holders = this.holdersOf(fsPath);
		if (holders.length === 0) {
			return undefined;
		}
		return { badge: heldBadge, tooltip: holders.map(heldText).join('\n'), holders };
	}
}
