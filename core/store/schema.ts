/**
 * The tables declared in drizzle (camelCase keys, snake_case columns via `casing: 'snake_case'`): a
 * reviewed, typed picture of what the SQL migrations build. The migrations are the source of truth
 * that runs; test/core/schema.test.ts has drizzle-kit render this file as DDL and checks that it builds
 * the same columns, defaults, indexes and constraints, names included. The cold paths that go through
 * drizzle (core/store/orm.ts: the webhooks' rows in core/backlog/hookStore.ts) read and write by it;
 * the hot paths' SQL is hand-written and shared by both drivers (docs/architecture.md, the store).
 */
import { sql } from 'drizzle-orm';
import {
	bigint,
	boolean,
	check,
	foreignKey,
	index,
	integer,
	json,
	jsonb,
	pgTable,
	primaryKey,
	text,
	timestamp,
	uniqueIndex,
} from 'drizzle-orm/pg-core';

const at = (): ReturnType<typeof timestamp> => timestamp({ withTimezone: true });

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
	},
	t => [
		// Keyed by -priority so only the claim's own queries can use it (migration 0006).
		index('cards_claim_idx')
			.on(sql`(-priority)`, t.createdAt, t.id)
			.where(sql`status = 'ready' AND unmet_deps = 0 AND open_children = 0`),
		index('cards_claim_phase_idx')
			.on(t.phase, sql`(-priority)`, t.createdAt, t.id)
			.where(sql`status = 'ready' AND unmet_deps = 0 AND open_children = 0 AND phase IS NOT NULL`),
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

export const events = pgTable(
	'events',
	{
		seq: bigint({ mode: 'number' }).primaryKey(),
		at: at().notNull(),
		cardId: text().notNull(),
		actor: text().notNull(),
		type: text().notNull(),
		data: json().notNull(),
	},
	t => [index('events_card_idx').on(t.cardId, t.seq)],
);

export const agents = pgTable('agents', {
	id: text().primaryKey(),
	name: text().notNull(),
	client: text().notNull(),
	capabilities: text()
		.array()
		.notNull()
		.default(sql`'{}'`),
	host: text(),
	pid: integer(),
	lastSeenAt: at().notNull(),
	registeredAt: at().notNull(),
	/** When its last connection closed (migration 0017); NULL while connected. */
	endedAt: at(),
});

export const requestLog = pgTable(
	'request_log',
	{
		key: text().primaryKey(),
		method: text().notNull(),
		result: json().notNull(),
		at: at().notNull(),
	},
	t => [index('request_log_at_idx').on(t.at)],
);

export const batonMigrations = pgTable('baton_migrations', {
	version: integer().primaryKey(),
	name: text().notNull(),
	appliedAt: at().notNull().defaultNow(),
});

/** The hash of the stored functions last applied (migrations/functions.sql): one row. */
export const batonFunctions = pgTable('baton_functions', {
	hash: text().primaryKey(),
	appliedAt: at().notNull().defaultNow(),
});

/** Backlog-wide policies (core/protocol/index.ts Settings), one row per key. */
export const settings = pgTable('settings', {
	key: text().primaryKey(),
	value: json().notNull(),
});

/** The next number of each readable-id prefix (issue 31, migration 0024). */
export const idCounters = pgTable('id_counters', {
	prefix: text().primaryKey(),
	next: integer().notNull(),
});

/** The id prefix set for a project with `baton settings --id-prefix` (migration 0024). */
export const idPrefixes = pgTable('id_prefixes', {
	project: text().primaryKey(),
	prefix: text().notNull(),
});

/** Messages on a card (migration 0009), numbered 1, 2, 3… per card in posting order. */
export const messages = pgTable(
	'messages',
	{
		cardId: text().notNull(),
		id: integer().notNull(),
		/** Who posted it (the wire's `from`). */
		actor: text().notNull(),
		text: text().notNull(),
		question: boolean().notNull().default(false),
		at: at().notNull(),
		/** When the card's holder got it in a tool result (its inbox); null = not yet (migration 0010). */
		deliveredAt: at(),
	},
	t => [
		index('messages_undelivered_idx')
			.on(t.cardId)
			.where(sql`delivered_at IS NULL`),
		primaryKey({ name: 'messages_pkey', columns: [t.cardId, t.id] }),
		foreignKey({ name: 'messages_card_id_fkey', columns: [t.cardId], foreignColumns: [cards.id] }).onDelete('cascade'),
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

/**
 * The event log's compaction state (migration 0013, core/backlog/logCompaction.ts): one row, the
 * horizon (the highest seq compaction deleted) and the two rules' cursors.
 */
export const logState = pgTable(
	'log_state',
	{
		id: boolean().primaryKey().default(true),
		horizon: bigint({ mode: 'number' }).notNull().default(0),
		agedThrough: bigint({ mode: 'number' }).notNull().default(0),
		countedThrough: bigint({ mode: 'number' }).notNull().default(0),
	},
	() => [check('log_state_id_check', sql`id`)],
);

/**
 * Outgoing webhooks (migration 0015, core/backlog/hookStore.ts): the receiver, its secret (never
 * returned by a list), the event filter, the delivery cursor, the retry state and the delivering hub's lease.
 */
export const webhooks = pgTable('webhooks', {
	id: text().primaryKey(),
	url: text().notNull(),
	secret: text().notNull(),
	/** Event types wanted; empty = all. */
	events: text()
		.array()
		.notNull()
		.default(sql`'{}'`),
	createdAt: at().notNull(),
	createdBy: text().notNull(),
	/** The highest seq this hook is done with (delivered, filtered out or reported skipped). */
	cursor: bigint({ mode: 'number' }).notNull().default(0),
	delivered: bigint({ mode: 'number' }).notNull().default(0),
	lastDeliveredAt: at(),
	failures: integer().notNull().default(0),
	failingSince: at(),
	lastError: text(),
	nextAttemptAt: at(),
	logNo: bigint({ mode: 'number' }).notNull().default(0),
	leaseOwner: text(),
	leaseUntil: at(),
	/** Why the hook sends nothing (a restore pauses every hook it brings back); null = it delivers (0017). */
	paused: text(),
	/** Which copy of the hook this is, part of every delivery id; made anew by a restore (0017). */
	instance: text()
		.notNull()
		.default(sql`substr(md5(random()::text || clock_timestamp()::text), 1, 8)`),
});

/** A hook's recent attempts, the newest 50 kept (migration 0015). */
export const webhookDeliveries = pgTable(
	'webhook_deliveries',
	{
		hookId: text().notNull(),
		n: bigint({ mode: 'number' }).notNull(),
		seq: bigint({ mode: 'number' }).notNull(),
		attempt: integer().notNull(),
		at: at().notNull(),
		outcome: text({ enum: ['delivered', 'failed', 'skipped'] }).notNull(),
		status: integer(),
		error: text(),
		ms: integer(),
	},
	t => [
		primaryKey({ name: 'webhook_deliveries_pkey', columns: [t.hookId, t.n] }),
		foreignKey({
			name: 'webhook_deliveries_hook_id_fkey',
			columns: [t.hookId],
			foreignColumns: [webhooks.id],
		}).onDelete('cascade'),
		check('webhook_deliveries_outcome_check', sql`outcome IN ('delivered', 'failed', 'skipped')`),
	],
);

/**
 * Per-project workspace settings (migration 0020, protocol ProjectSettings): worktrees on claim, the
 * base branch, how approval lands, push, the setup command, WIP retention and the repository root per host.
 */
export const projectSettings = pgTable(
	'project_settings',
	{
		project: text().primaryKey(),
		worktrees: boolean().notNull().default(false),
		base: text(),
		land: text({ enum: ['squash', 'merge', 'rebase', 'none'] })
			.notNull()
			.default('squash'),
		push: boolean().notNull().default(false),
		setup: text(),
		setupTimeoutSeconds: integer().notNull().default(600),
		wipDays: integer().notNull().default(30),
		roots: jsonb()
			.notNull()
			.default(sql`'{}'`),
	},
	() => [check('project_settings_land_check', sql`land IN ('squash', 'merge', 'rebase', 'none')`)],
);

export const tables = {
	cards,
	edges,
	events,
	agents,
	requestLog,
	batonMigrations,
	batonFunctions,
	settings,
	idCounters,
	idPrefixes,
	messages,
	cardCounts,
	cardText,
	logState,
	webhooks,
	webhookDeliveries,
	projectSettings,
} as const;
