/**
 * The SQL side of core/rules/claimable.ts: the one text of "claimable now", "waiting", "deferred" and "of
 * the claimer's project" that every statement needing it uses (hotSql.ts's picks, hand-over and ready
 * page, claimCycle.ts's reasons, cards.ts's readyOnly list, counts.ts's stats, scopes.ts's scope-wait count). The texts keep the
 * shapes the partial indexes match (cards_claim_idx: `status = 'ready' AND unmet_deps = 0`). Text
 * only: it runs nothing. The stored function baton_hand_over (migrations/functions.sql) restates them, as stored functions must.
 */

/** A column of `alias` ('' for the statement's only table, or e.g. 'cards.'). */
const col = (alias: string, name: string): string => `${alias}${name}`;

/**
 * Ready, every dependency done, not deferred at `now` (a placeholder or expression), no open child and
 * no ancestor waiting on a dependency (issue 31: baton_ancestor_waits walks up from the parent, so only
 * a child pays for it).
 */
export function claimableSql(now: string, alias = ''): string {
	return `${col(alias, 'status')} = 'ready' AND ${col(alias, 'unmet_deps')} = 0 AND ${col(alias, 'open_children')} = 0
			AND (${col(alias, 'defer_until')} IS NULL OR ${col(alias, 'defer_until')} <= ${now})
			AND (${col(alias, 'parent')} IS NULL OR NOT baton_ancestor_waits(${col(alias, 'parent')}))`;
}

/** Ready, dependencies done, but held back by the tree: open children, or an ancestor that waits (issue 31). */
export function heldByTreeSql(alias = ''): string {
	return `${col(alias, 'status')} = 'ready' AND ${col(alias, 'unmet_deps')} = 0
			AND (${col(alias, 'open_children')} > 0
				OR (${col(alias, 'parent')} IS NOT NULL AND baton_ancestor_waits(${col(alias, 'parent')})))`;
}

/** Ready but waiting on a dependency that is not done (said before deferred, as claimable.ts does). */
export function waitingSql(alias = ''): string {
	return `${col(alias, 'status')} = 'ready' AND ${col(alias, 'unmet_deps')} > 0`;
}

/** Ready, every dependency done, deferred past `now`. */
export function deferredSql(now: string, alias = ''): string {
	return `${col(alias, 'status')} = 'ready' AND ${col(alias, 'unmet_deps')} = 0 AND ${col(alias, 'defer_until')} > ${now}`;
}

/** The claimer's project (a text placeholder): '*' any, null only cards without one, else its own and those. */
export function ofProjectSql(project: string): string {
	return `(${project}::text = '*' OR project IS NULL OR project = ${project}::text)`;
}
