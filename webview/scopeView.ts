/**
 * What the board shows of a card's scope: the compact chip ("src/auth/** +2", every
 * entry in its title), the facts line of the detail pane, and, for a ready card whose scope meets a
 * live claim of its project, "waits on files held by AUTH-3 (claude-code-1)". The rule is core's
 * (core/scope/conflicts.ts, the hub and the tree use the same); this module only caches the live
 * scopes per state version so a render does not scan every card for every row. Text only, no DOM.
 */
import type { Card } from '../core/protocol';
import {
	type LiveScopes,
	type ScopeConflict,
	liveScope,
	liveScopesOf,
	scopeWait,
	scopeWaitText,
} from '../core/scope/conflicts';
import type { BoardState } from './state';

/** The chip of a card with a scope (or reserved entries while claimed), or undefined. */
export function scopeChip(card: Card): { label: string; title: string } | undefined {
	const scope = card.status === 'claimed' ? liveScope(card) : (card.scope ?? []);
	const first = scope[0];
	if (first === undefined) {
		return undefined;
	}
	const label = scope.length === 1 ? first : `${first} +${scope.length - 1}`;
	return { label, title: `Scope${card.project ? ` in ${card.project}` : ''}: ${scope.join(', ')}` };
}

/** "src/auth/**, package.json · reserved: docs/**" for the detail pane, or undefined without a scope. */
export function scopeFact(card: Card): string | undefined {
	const scope = card.scope ?? [];
	const reserved = card.status === 'claimed' ? (card.reserved ?? []) : [];
	if (scope.length === 0 && reserved.length === 0) {
		return undefined;
	}
	return [scope.join(', '), reserved.length > 0 ? `reserved: ${reserved.join(', ')}` : ''].filter(Boolean).join(' · ');
}

let cached: { state: BoardState; version: number; live: LiveScopes } | undefined;

/** The live scopes of the claimed cards, cached per state version. */
function liveClaims(state: BoardState): LiveScopes {
	if (cached?.state !== state || cached.version !== state.version) {
		cached = { state, version: state.version, live: liveScopesOf(state.cards()) };
	}
	return cached.live;
}

/** The live claim a ready card waits on for its files, with the sentence to show, or undefined. */
export function waitingOnScope(state: BoardState, card: Card): { wait: ScopeConflict; text: string } | undefined {
	if (card.status !== 'ready' || (card.scope ?? []).length === 0) {
		return undefined;
	}
	const wait = scopeWait(card, liveClaims(state));
	return wait === undefined ? undefined : { wait, text: scopeWaitText(wait) };
}

/** Every project among the cards, sorted. */
export function projectsSeen(state: BoardState): string[] {
	const seen = new Set<string>();
	for (const c of state.cards()) {
		if (c.project != null) {
			seen.add(c.project);
		}
	}
	return [...seen].sort((a, b) => a.localeCompare(b));
}
