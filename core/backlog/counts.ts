/**
 * card/stats and the text filter of card/list, both without reading every card (migration
 * 0012): stats sums the maintained delta rows of card_counts and asks small partial indexes for the
 * few time-dependent counts; the text filter finds candidates through card_text's trigram index and
 * checks them against the card itself. Reads only, except folding card_counts' delta rows when many
 * have piled up; no status changes here.
 */
import { type StallView, agentHealth, isCardStalled } from '../rules/health';
import type { AgentHealth, CardStatus, HealthThresholds, Result } from '../protocol';
import type { Db } from '../store/db';
import { listedLastSeen } from './agents';
import { claimableSql, deferredSql, heldByTreeSql, pausedSql } from './claimableSql';
import { countScopeWaits } from './scopes';
import { num, present } from './values';

/** Delta rows stats tolerates before it folds them (hub upkeep folds too, every ~5,000 writes). */
const foldAbove = 2_000;

/**
 * The counts of card/stats. `project` narrows them as a claim is narrowed (claimScope in scopes.ts):
 * a project id counts its cards and those with none, null only those with none, '*' or undefined all.
 */
export async function cardStats(
	db: Db,
	now: Date,
	thresholds: HealthThresholds,
	project?: string | null,
): Promise<Result<'card/stats'>> {
	const params: unknown[] = [now];
	// Unnarrowed, the statement is the same text as before, so its plans are too.
	const mine =
		project === undefined || project === '*'
			? ''
			: project === null
				? ' AND project IS NULL'
				: ` AND (project IS NULL OR project = $${params.push(project)})`;
	// Each part reads a few rows: card_counts' delta rows, then the claimed (lease), deferred and
	// ready-age partial indexes (claimed cards are one per working agent) and the events' primary key.
	const [row] = await db.query<Record<string, unknown>>(
		`SELECT
			coalesce(sum(n) FILTER (WHERE bucket = 'open'), 0) AS open,
			coalesce(sum(n) FILTER (WHERE bucket = 'review'), 0) AS review,
			coalesce(sum(n) FILTER (WHERE bucket = 'blocked'), 0) AS blocked,
			coalesce(sum(n) FILTER (WHERE bucket = 'done'), 0) AS done,
			coalesce(sum(n) FILTER (WHERE needs_input), 0) AS needs_input,
			coalesce(sum(n) FILTER (WHERE bucket = 'open' AND waiting), 0) AS open_waiting,
			count(*) AS delta_rows,
			(SELECT count(*) FROM cards WHERE status = 'claimed'${mine}) AS claimed,
			(SELECT count(*) FROM cards WHERE status = 'claimed' AND unmet_deps > 0${mine}) AS claimed_waiting,
			(SELECT count(*) FROM cards WHERE ${deferredSql('$1')}${mine}) AS deferred,
			(SELECT count(*) FROM cards WHERE ${heldByTreeSql()}${mine}) AS tree_held,
			(SELECT count(*) FROM cards WHERE EXISTS (SELECT 1 FROM pauses) AND ${claimableSql('$1')} AND ${pausedSql()}${mine}) AS paused,
			(SELECT baton_ts(min(created_at)) FROM cards WHERE status = 'ready'${mine}) AS oldest_ready,
			(SELECT count(*) FROM cards WHERE status = 'claimed' AND lease_expires_at <= $1${mine}) AS expired,
			(SELECT json_agg(json_build_object('owner', claim_owner, 'progressAt', baton_ts(progress_at),
				'claimedAt', baton_ts(claimed_at), 'leaseExpiresAt', baton_ts(lease_expires_at)))
				FROM cards WHERE status = 'claimed'${mine}) AS claimed_cards,
			(SELECT count(*) FROM cards WHERE status = 'claimed' AND (scope <> '{}' OR reserved <> '{}')) AS scoped_claims,
			(SELECT coalesce(max(seq), 0) FROM events) AS last_seq
		 FROM card_counts${mine === '' ? '' : ` WHERE true${mine}`}`,
		params,
	);
	const r = present(row);
	// Ready and claimed cards share card_counts' bucket 'open' (migration 0012: claims fire no trigger).
	const counts = {
		ready: num(r.open) - num(r.claimed),
		claimed: num(r.claimed),
		review: num(r.review),
		blocked: num(r.blocked),
		done: num(r.done),
	};
	// Ready cards waiting on dependencies (claimed ones share card_counts' 'open' bucket).
	const depsWaiting = num(r.open_waiting) - num(r.claimed_waiting);
	if (num(r.delta_rows) > foldAbove) {
		await foldCounts(db);
	}
	const agents: Record<AgentHealth, number> = { healthy: 0, late: 0, stale: 0, dead: 0 };
	const healthOf = new Map<string, AgentHealth>();
	// Ended agents holding nothing are not counted: 500 closed sessions are not 500 agents.
	for (const a of await listedLastSeen(db)) {
		const health = agentHealth(a.lastSeen, now, thresholds);
		healthOf.set(a.id, health);
		agents[health]++;
	}
	// Stalled is health.ts's rule, not SQL's: quiet since the progress (or the claim), the lease still
	// running, the holder alive. Claimed cards are few (one per working agent).
	const claimedCards = (r.claimed_cards ?? []) as (Omit<StallView, 'status' | 'claimOwner'> & { owner: string })[];
	const stalled = claimedCards.filter(c =>
		isCardStalled({ ...c, status: 'claimed', claimOwner: c.owner }, healthOf.get(c.owner), now, thresholds),
	).length;
	const deferred = num(r.deferred);
	const paused = num(r.paused);
	// Ready cards kept back by another claim's files are not claimable (cards_live_scope_idx: usually none).
	const scopeWaiting = num(r.scoped_claims) === 0 ? 0 : await countScopeWaits(db, now, project);
	// Each ready card counted once, under the word it shows (core/rules/claimGuards.ts's order): waiting
	// (dependencies, open children, a waiting ancestor, files), deferred, paused; the rest claimable.
	const waiting = depsWaiting + num(r.tree_held) + scopeWaiting;
	const oldest = r.oldest_ready as string | null;
	return {
		counts,
		total: counts.ready + counts.claimed + counts.review + counts.blocked + counts.done,
		needsInput: num(r.needs_input),
		waiting,
		deferred,
		paused,
		claimable: counts.ready - waiting - deferred - paused,
		oldestReadyAt: oldest,
		oldestReadyAgeSeconds: oldest === null ? null : Math.max(0, (now.getTime() - Date.parse(oldest)) / 1000),
		expiredClaims: num(r.expired),
		stalledClaims: stalled,
		agents,
		lastSeq: num(r.last_seq),
	};
}

/** How many cards of one project (null: none) are in one status. */
export interface ProjectCount {
	project: string | null;
	status: CardStatus;
	n: number;
}

/**
 * Cards by project and status (/metrics), in one statement that reads card_counts' delta
 * rows (migration 0016 keys them by project) and, to split the shared 'open' bucket, the claimed
 * cards (one per working agent). Pairs with no card are left out.
 */
export async function cardCountsByProject(db: Db): Promise<ProjectCount[]> {
	const rows = await db.query<{ project: string | null; bucket: string; n: unknown; claimed: unknown }>(
		`SELECT c.project, c.bucket, c.n, coalesce(k.claimed, 0) AS claimed
		 FROM (SELECT project, bucket, sum(n) AS n FROM card_counts GROUP BY 1, 2) c
		 LEFT JOIN (SELECT project, count(*) AS claimed FROM cards WHERE status = 'claimed' GROUP BY 1) k
			ON c.bucket = 'open' AND k.project IS NOT DISTINCT FROM c.project`,
	);
	const out: ProjectCount[] = [];
	const add = (project: string | null, status: CardStatus, n: number): void => {
		if (n !== 0) {
			out.push({ project, status, n });
		}
	};
	for (const r of rows) {
		if (r.bucket === 'open') {
			add(r.project, 'ready', num(r.n) - num(r.claimed));
			add(r.project, 'claimed', num(r.claimed));
		} else {
			add(r.project, r.bucket as CardStatus, num(r.n));
		}
	}
	return out;
}

/** Open (not done) cards per label (/metrics): at most `limit` labels, the most used first. */
export interface LabelCount {
	label: string;
	n: number;
}

/** Reads only the open cards that have labels (the partial index cards_labeled_idx, migration 0022). */
export async function openCardsByLabel(db: Db, limit = 200): Promise<LabelCount[]> {
	const rows = await db.query<{ label: string; n: unknown }>(
		`SELECT l AS label, count(*) AS n FROM cards, unnest(labels) AS l
		 WHERE labels <> '{}' AND status <> 'done' GROUP BY l ORDER BY count(*) DESC, l LIMIT $1`,
		[limit],
	);
	return rows.map(r => ({ label: r.label, n: num(r.n) }));
}

/** Folds card_counts' delta rows into one row per key (one statement; safe beside other hubs'). */
export async function foldCounts(db: Db): Promise<void> {
	await db.query('SELECT baton_fold_counts()');
}

/**
 * The text filter's condition: `text` (trimmed) anywhere in the id, title or body, case-insensitive,
 * with `%`, `_` and `\` taken literally. The pattern is written into the statement as a literal, not
 * sent as a parameter: PGlite runs parameters under generic plans (plan_cache_mode), which cannot
 * tell a rare word (the trigram index, then a sort of a few rows) from one in every card (the claim
 * order index, stopping after one page); with the literal the planner sees the pattern and the
 * statistics of card_text. An escape string (E'…'), so its meaning does not hang on the server's
 * standard_conforming_strings.
 */
export function textCondition(text: string): string {
	const like = `%${text.trim().replace(/[\\%_]/g, m => `\\${m}`)}%`;
	const pattern = `E'${like.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
	return (
		`id IN (SELECT id FROM card_text WHERE doc ILIKE ${pattern})` +
		` AND (id ILIKE ${pattern} OR title ILIKE ${pattern} OR body ILIKE ${pattern})`
	);
}
