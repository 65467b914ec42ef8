/**
 * The card tables in drizzle (core/store/schema.ts re-exports them): cards with their claim, listing
 * and review indexes, the dependency edges, the maintained counts and the text search rows; and `at`,
 * the timestamp column every schema file uses. A description of what the migrations build, checked
 * by test/core/schema.test.ts: it runs nothing and must not drift from the SQL (the migrations win).
 */
import { sql } from 'drizzle-orm';
import {
	bigint,
	boolean,
	check,
	foreignKey,
	index,
	integer,
	jsonb,
	pgTable,
	primaryKey,
	text,
	timestamp,
	uniqueIndex,
} from 'drizzle-orm/pg-core';

/** The timestamp column of every table (timestamptz). */
export const at = (): ReturnType<typeof timestamp> => timestamp({ withTimezone: true });

export const cards = pgTable(
	'cards',
	{
		id: text().primaryKey(),
		title: text().notNull(),
		body: text().notNull().default(''),
		phase: text(),
		priority: integer().notNull().default(0),
		status: text({ enum: ['ready', 'claimed', 'review', 'blocked', 'done'] })
			.notNull()
			.default('ready'),
		requires: text()
			.array()
			.notNull()
			.default(sql`'{}'`),
		/** Sorted copy of this card's edges, for cheap reads; `edges` is the source of truth. */
		dependsOn: text()
			.array()
			.notNull()
			.default(sql`'{}'`),
		/** Dependencies not done yet: maintained at create/link/unlink/complete/reopen/import. */
		unmetDeps: integer().notNull().default(0),
		claimOwner: text(),
		/** The session whose connection claimed it (migration 0017); NULL: the agent id's lease. */
		claimSession: text(),
		claimedAt: at(),
		leaseExpiresAt: at(),
		leaseTtlSeconds: integer(),
		claimEpoch: integer().notNull().default(0),
		attempts: integer().notNull().default(0),
		maxAttempts: integer().notNull().default(3),
		deferUntil: at(),
		progress: integer(),
		progressNote: text(),
		progressAt: at(),
		result: text(),
		blockedReason: text(),
		/** Blocked by used-up attempts (or the agent giving up), not parked by a human (migration 0008). */
		failed: boolean().notNull().default(false),
		/** Per-card overrides of the backlog settings; NULL = the setting. */
		backoffSeconds: integer(),
		stallReleaseSeconds: integer(),
		/** Unique where set (a partial index: most cards have none). */
		idempotencyKey: text(),
		acceptance: text()
			.array()
			.notNull()
			.default(sql`'{}'`),
		version: integer().notNull().default(1),
		createdAt: at().notNull(),
		updatedAt: at().notNull(),
		/** Who must approve a completion before it counts as done (migration 0010). */
		review: text({ enum: ['none', 'human', 'agent'] })
			.notNull()
			.default('none'),
		/** The agent whose completed work is under review; it may never approve it. */
		completedBy: text(),
		/** The reviewer's "request changes" note, handed to the next claimer. */
		handoff: text(),
		/** An agent's question (a message with question = true) is waiting for an answer. */
		needsInput: boolean().notNull().default(false),
		/** The project it belongs to; null = none (migration 0011). */
		project: text(),
		/** Path globs from the project root and `lock:` names its work touches. */
		scope: text()
			.array()
			.notNull()
			.default(sql`'{}'`),
		/** What the holder reserved while it works; emptied when the claim ends. */
		reserved: text()
			.array()
			.notNull()
			.default(sql`'{}'`),
		/** Its branch and git worktree (protocol CardWorkspace, migration 0020); NULL = none. */
		workspace: jsonb(),
		/** The project's check on its completed work (protocol CardChecks, migration 0029); NULL = none ran. */
		checks: jsonb(),
		/** Its labels, sorted (migration 0022). */
		labels: text()
			.array()
			.notNull()
			.default(sql`'{}'`),
		/** The card it is part of; null = none (migration 0023). */
		parent: text(),
		/** Completes by itself when its last open child is done. */
		autoClose: boolean().notNull().default(false),
		/** Children not done, kept by triggers (migration 0023). */
		openChildren: integer().notNull().default(0),
		/** Links that do not block (migration 0024): related (on both cards), duplicated, found while holding. */
		related: text()
			.array()
			.notNull()
			.default(sql`'{}'`),
		duplicates: text()
			.array()
			.notNull()
			.default(sql`'{}'`),
		discoveredFrom: text(),
		/** Its own base branch (migration 0025); null = the project's. */
		base: text(),
		/** Who may claim it (migration 0026): an agent id or kind:K; null = anyone. */
		assignee: text(),
		/** The dispatched agent holding it (protocol CardDispatch); null when no supervisor's seat does. */
		dispatch: jsonb(),
		/** Some ancestor waits on a dependency, kept by triggers (migration 0028); out of the claim indexes. */
		treeWaits: boolean().notNull().default(false),
	},
	t => [
		// Keyed by -priority so only the claim's own queries can use it (migration 0006).
		index('cards_claim_idx')
			.on(sql`(-priority)`, t.createdAt, t.id)
			.where(sql`status = 'ready' AND unmet_deps = 0 AND open_children = 0 AND NOT tree_waits`),
		index('cards_claim_phase_idx')
			.on(t.phase, sql`(-priority)`, t.createdAt, t.id)
			.where(sql`status = 'ready' AND unmet_deps = 0 AND open_children = 0 AND NOT tree_waits AND phase IS NOT NULL`),
		// PostgreSQL's DESC is NULLS FIRST; drizzle's desc() alone would write NULLS LAST.
		index('cards_order_idx').on(t.priority.desc().nullsFirst(), t.createdAt, t.id),
		index('cards_blocked_idx')
			.on(t.priority.desc().nullsFirst(), t.createdAt, t.id)
			.where(sql`status = 'blocked'`),
		index('cards_lease_idx')
			.on(t.leaseExpiresAt)
			.where(sql`status = 'claimed'`),
		index('cards_owner_idx')
			.on(t.claimOwner)
			.where(sql`claim_owner IS NOT NULL`),
		index('cards_defer_idx')
			.on(t.deferUntil)
			.where(sql`status = 'ready' AND defer_until IS NOT NULL`),
		uniqueIndex('cards_idempotency_key_idx')
			.on(t.idempotencyKey)
			.where(sql`idempotency_key IS NOT NULL`),
		index('cards_review_idx')
			.on(t.priority.desc().nullsFirst(), t.createdAt, t.id)
			.where(sql`status = 'review'`),
		index('cards_live_scope_idx')
			.on(t.project)
			.where(sql`status = 'claimed' AND (scope <> '{}' OR reserved <> '{}')`),
		// Open labelled cards, for /metrics' count by label (migration 0022).
		index('cards_labeled_idx')
			.on(t.id)
			.where(sql`labels <> '{}' AND status <> 'done'`),
		index('cards_dispatch_idx')
			.on(t.project)
			.where(sql`dispatch IS NOT NULL`),
		index('cards_parent_idx')
			.on(t.parent)
			.where(sql`parent IS NOT NULL`),
		index('cards_project_idx')
			.on(t.project)
			.where(sql`project IS NOT NULL`),
		// Done newest first, a page at a time (the board's and tree's Done column; migration 0014).
		index('cards_done_recent_idx')
			.on(t.updatedAt.desc().nullsFirst(), t.id.desc().nullsFirst())
			.where(sql`status = 'done'`),
		index('cards_ready_age_idx')
			.on(t.createdAt)
			.where(sql`status = 'ready'`),
		check('cards_status_check', sql`status IN ('ready', 'claimed', 'review', 'blocked', 'done')`),
		check('cards_review_check', sql`review IN ('none', 'human', 'agent')`),
	],
);

/** card_id depends on dep_id (no foreign key on dep_id: an import may bring the dependency later). */
export const edges = pgTable(
	'edges',
	{
		cardId: text().notNull(),
		depId: text().notNull(),
	},
	// Named as PostgreSQL named the migration's inline constraints (drizzle would name them otherwise).
	t => [
		primaryKey({ name: 'edges_pkey', columns: [t.cardId, t.depId] }),
		foreignKey({ name: 'edges_card_id_fkey', columns: [t.cardId], foreignColumns: [cards.id] }).onDelete('cascade'),
		index('edges_dep_idx').on(t.depId),
	],
);

/**
 * card/stats' counts as delta rows (migration 0012, core/backlog/counts.ts): kept by triggers on
 * cards, summed by stats, folded by baton_fold_counts(). `bucket` is the status, with ready and
 * claimed sharing 'open'; `project` (0016) is the cards' project, for /metrics. No key: rows are
 * only inserted and folded.
 */
export const cardCounts = pgTable('card_counts', {
	bucket: text().notNull(),
	waiting: boolean().notNull(),
	needsInput: boolean().notNull(),
	n: bigint({ mode: 'number' }).notNull(),
	project: text(),
});

/** Each card's `id ⏎ title ⏎ body` for card/list {text}, under a trigram index (migration 0012). */
export const cardText = pgTable(
	'card_text',
	{
		id: text().primaryKey(),
		doc: text().notNull(),
	},
	t => [index('card_text_trgm_idx').using('gin', t.doc.op('gin_trgm_ops'))],
);
