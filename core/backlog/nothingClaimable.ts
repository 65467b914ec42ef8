/**
 * Why a claim found nothing (the final answer of `card/claim`): the ready, waiting, deferred, held and
 * blocked cards within the asked-for phase and project, the capabilities the claimer lacks, claimable
 * cards of other projects (named, with how to take them) and the scope waits, in the words of
 * core/rules/claim.ts. Must not: write, pick or claim a card, or restate what claimable means
 * (claimableSql.ts's texts do).
 */
import { type UnclaimableCounts, describeNothingClaimable } from '../rules/claim';
import type { Queryable } from '../store/db';
import { claimableSql, deferredSql, heldByTreeSql, ofProjectSql, waitingSql } from './claimableSql';
import { type ScopeWaits, describeScopeWaits, projectParam } from './scopes';
import { num, present } from './values';

/** The reason nothing is claimable for a claimer with `caps` in `phase` and `project` at `now`. */
export async function nothingClaimable(
	tx: Queryable,
	caps: string[],
	phase: string | undefined,
	project: string | null | undefined,
	now: Date,
	waits: ScopeWaits,
): Promise<string> {
	// Counts within the asked-for phase and project; cards elsewhere are only mentioned when they
	// would be claimable (other phases) or not at all (other projects are not this agent's business).
	const [row] = await tx.query<Record<string, unknown>>(
		`SELECT
			count(*) FILTER (WHERE mine AND status = 'ready') AS ready_total,
			count(*) FILTER (WHERE mine AND ${waitingSql()}) AS waiting,
			count(*) FILTER (WHERE mine AND ${heldByTreeSql()} AND open_children > 0) AS open_parents,
			count(*) FILTER (WHERE mine AND ${heldByTreeSql()} AND open_children = 0) AS held_by_parents,
			count(*) FILTER (WHERE mine AND ${deferredSql('$1')}) AS deferred,
			count(*) FILTER (WHERE mine AND ${claimableSql('$1')} AND NOT requires <@ $2::text[]) AS need_caps,
			count(*) FILTER (WHERE NOT mine AND ${claimableSql('$1')} AND requires <@ $2::text[]) AS other_phase,
			count(*) FILTER (WHERE mine AND status = 'claimed') AS claimed,
			count(*) FILTER (WHERE mine AND status = 'blocked') AS blocked
		 FROM (SELECT *, ($3::text IS NULL OR phase = $3) AS mine FROM cards WHERE ${ofProjectSql('$4')}) c`,
		[now, caps, phase ?? null, projectParam(project)],
	);
	const r = present(row);
	const needCaps = num(r.need_caps);
	const missing =
		needCaps > 0
			? (
					await tx.query<{ cap: string }>(
						`SELECT DISTINCT cap FROM cards, unnest(requires) AS cap
						 WHERE ${claimableSql('$3')} AND ($2::text IS NULL OR phase = $2) AND ${ofProjectSql('$4')}
							AND NOT cap = ANY($1::text[]) ORDER BY cap LIMIT 5`,
						[caps, phase ?? null, now, projectParam(project)],
					)
				).map(x => x.cap)
			: [];
	// Claimable cards of other projects are named, with how to take them: an agent (or a CLI run
	// outside any repository) that sees none of its own should not read "nothing left to do".
	const others =
		projectParam(project) === '*'
			? []
			: await tx.query<{ project: string; n: unknown }>(
					`SELECT project, count(*) AS n FROM cards
					 WHERE ${claimableSql('$1')} AND requires <@ $2::text[] AND ($3::text IS NULL OR phase = $3)
						AND project IS NOT NULL AND project IS DISTINCT FROM $4::text
					 GROUP BY project ORDER BY count(*) DESC, project`,
					[now, caps, phase ?? null, project ?? null],
				);
	const counts: UnclaimableCounts = {
		project,
		otherProjects: others.map(o => ({ project: o.project, count: num(o.n) })),
		readyTotal: num(r.ready_total),
		waiting: num(r.waiting),
		openParents: num(r.open_parents),
		heldByParents: num(r.held_by_parents),
		deferred: num(r.deferred),
		claimed: num(r.claimed),
		blocked: num(r.blocked),
		needCapabilities: needCaps,
		missingCapabilities: missing,
		otherPhase: num(r.other_phase),
		scopeWaits: describeScopeWaits(waits),
	};
	return describeNothingClaimable(counts);
}
