/**
 * The SQL side of the claim guards (core/rules/claimGuards.ts): the one text of "claimable now",
 * "waiting", "deferred", "paused" and "of the claimer's project" that every statement needing it uses
 * (hotSql.ts's picks, hand-over and ready page, nothingClaimable.ts's reasons, cardList.ts's lists,
 * counts.ts's stats, scopes.ts's scope-wait count). "Claimable now" is the table's column guards
 * joined (`columnGuardsSql`), in the shapes the partial indexes match (cards_claim_idx: `status =
 * 'ready' AND unmet_deps = 0`). Text only: it runs nothing. The stored function baton_hand_over
 * (migrations/functions.sql) restates them, as stored functions must.
 */
import { columnGuardsSql } from '../rules/claimGuards';

/** A column of `alias` ('' for the statement's only table, or e.g. 'cards.'). */
const col = (alias: string, name: string): string => `${alias}${name}`;

/**
 * Ready, every dependency done, not deferred at `now` (a placeholder or expression), no open child and
 * no ancestor waiting on a dependency (`tree_waits`, kept by migration 0028's triggers; the claim
 * indexes leave out both kinds of held card): the claim guards' column pieces, joined.
 */
export function claimableSql(now: string, alias = ''): string {
	return columnGuardsSql(now, alias);
}

/**
 * Ready and held back by a waiting guard: a dependency not done, an open child or a waiting ancestor
 * (files held by a claim are the caller's to check: their overlap is not SQL's).
 */
export function anyWaitSql(alias = ''): string {
	return `${col(alias, 'status')} = 'ready' AND (${col(alias, 'unmet_deps')} > 0 OR ${col(alias, 'open_children')} > 0
			OR ${col(alias, 'tree_waits')})`;
}

/**
 * A pause that holds the card of `alias` back for every claimer: of everything, its project, its
 * phase or its id (a pause of one agent kind is per claimer: unpausedSql).
 */
export function pausedSql(alias = ''): string {
	return `EXISTS (SELECT 1 FROM pauses pz WHERE pz.scope = 'all' OR (pz.scope = 'card' AND pz.target = ${col(alias, 'id')})
				OR (pz.scope = 'project' AND pz.target = ${col(alias, 'project')}) OR (pz.scope = 'phase' AND pz.target = ${col(alias, 'phase')}))`;
}

/** Ready, dependencies done, but held back by the tree: open children, or an ancestor that waits. */
export function heldByTreeSql(alias = ''): string {
	return `${col(alias, 'status')} = 'ready' AND ${col(alias, 'unmet_deps')} = 0
			AND (${col(alias, 'open_children')} > 0
				OR ${col(alias, 'tree_waits')})`;
}

/** Ready but waiting on a dependency that is not done (said before deferred, as claimable.ts does). */
export function waitingSql(alias = ''): string {
	return `${col(alias, 'status')} = 'ready' AND ${col(alias, 'unmet_deps')} > 0`;
}

/** Ready, no waiting guard holding it (dependencies, children, ancestors), deferred past `now`. */
export function deferredSql(now: string, alias = ''): string {
	return `${col(alias, 'status')} = 'ready' AND ${col(alias, 'unmet_deps')} = 0 AND ${col(alias, 'open_children')} = 0
			AND NOT ${col(alias, 'tree_waits')} AND ${col(alias, 'defer_until')} > ${now}`;
}

/** The claimer's project (a text placeholder): '*' any, null only cards without one, else its own and those. */
export function ofProjectSql(project: string): string {
	return `(${project}::text = '*' OR project IS NULL OR project = ${project}::text)`;
}

/**
 * Whether the line lets `actor` (an agent id placeholder) of kind `kind` (a text placeholder,
 * null when the claimer has none) take the card of `alias` now: no pause covers it (all, its project,
 * phase or id, or the claimer's kind) and it is assigned to nobody, to the claimer or to its kind.
 * Every claim path runs it in the claiming statement itself, so a pause committed before the statement's
 * snapshot is seen (docs/decisions/0107-pause-atomicity.md). With no pause at all the correlated part is never
 * run: `NOT EXISTS (SELECT 1 FROM pauses)` is one InitPlan per statement that an empty table answers.
 * migrations/functions.sql (baton_hand_over) restates it, as stored functions must.
 */
export function lineOpenSql(actor: string, kind: string, alias = ''): string {
	return `${unpausedSql(kind, alias)} AND ${assignedToSql(actor, kind, alias)}`;
}

/**
 * No pause covers the card of `alias` for a claimer of `kind` (part of lineOpenSql). With no pause at
 * all this is one InitPlan that an empty table answers, and nothing else runs (no check per card).
 */
export function unpausedSql(kind: string, alias = ''): string {
	return `(NOT EXISTS (SELECT 1 FROM pauses) OR (NOT EXISTS (SELECT 1 FROM pauses WHERE scope = 'all' OR (scope = 'kind' AND target = ${kind}::text))
			AND NOT EXISTS (SELECT 1 FROM pauses pz WHERE
				(pz.scope = 'card' AND pz.target = ${col(alias, 'id')}) OR (pz.scope = 'project' AND pz.target = ${col(alias, 'project')})
				OR (pz.scope = 'phase' AND pz.target = ${col(alias, 'phase')}))))`;
}

/** The card of `alias` is assigned to nobody, to `actor` or to its `kind` (part of lineOpenSql). */
export function assignedToSql(actor: string, kind: string, alias = ''): string {
	return `(${col(alias, 'assignee')} IS NULL OR ${col(alias, 'assignee')} = ${actor}::text
				OR ${col(alias, 'assignee')} = 'kind:' || ${kind}::text)`;
}

/**
 * The hot claims' extra guard: they take a card only while aging is off (the general path
 * orders by effective priority) and maxHeld is off. The general path counts the cards a claimer holds
 * under a lock on the claimer (checkMaxHeld), which one statement cannot do: its snapshot is taken
 * before any lock it waits for, so two claims of one agent through two hubs on one PostgreSQL would
 * each count the other's card as not yet there. One InitPlan on the settings table: nothing per card.
 */
export const hotGuardSql = `NOT EXISTS (SELECT 1 FROM settings mh WHERE mh.key IN ('agingHours', 'maxHeld') AND json_typeof(mh.value) = 'number')`;

/** Where a card's wait for aging starts: its creation, or the end of its last deferral (a retry's backoff). */
export const agingSinceSql = (alias = ''): string =>
	`greatest(${col(alias, 'created_at')}, coalesce(${col(alias, 'defer_until')}, ${col(alias, 'created_at')}))`;

/**
 * A ready card's effective priority at `now` with aging every `hours` (placeholders): priority plus
 * one per `hours` waited.
 */
export function effectivePrioritySql(now: string, hours: string, alias = ''): string {
	return `(${col(alias, 'priority')} + floor(greatest(extract(epoch FROM ${now}::timestamptz - ${agingSinceSql(alias)}), 0)
		/ 3600 / ${hours}::float8)::int)`;
}
