/**
 * The tables declared in drizzle (camelCase keys, snake_case columns via `casing: 'snake_case'`): a
 * reviewed, typed picture of what the SQL migrations build. The migrations are the source of truth
 * that runs; test/core/schema.test.ts has drizzle-kit render this file as DDL and checks that it builds
 * the same columns, defaults, indexes and constraints, names included. The cold paths that go through
 * drizzle (core/store/orm.ts: the webhooks' rows in core/backlog/hookStore.ts) read and write by it;
 * the hot paths' SQL is hand-written and shared by both drivers (docs/decisions/0045-drizzle.md).
 * The tables live in three files: schemaCards.ts (cards, edges, counts, text), schemaHooks.ts
 * (webhooks) and this one (events, agents, the bookkeeping tables, messages, the log's state, project
 * settings, and `tables`, the whole list), re-exported here so importers name only schema.ts.
 */
import { sql } from 'drizzle-orm';
import {
	bigint,
	boolean,
	check,
	doublePrecision,
	foreignKey,
	index,
	integer,
	json,
	jsonb,
	pgTable,
	primaryKey,
	text,
} from 'drizzle-orm/pg-core';
import { at, cardCounts, cardText, cards, edges } from './schemaCards';
import { webhookDeliveries, webhooks } from './schemaHooks';

export { cardCounts, cardText, cards, edges, webhookDeliveries, webhooks };

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

/** The next number of each readable-id prefix (migration 0024). */
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
		/** The check run after complete (migration 0029); null = none. */
		checkCommand: text(),
		checkTimeoutSeconds: integer().notNull().default(600),
		wipDays: integer().notNull().default(30),
		roots: jsonb()
			.notNull()
			.default(sql`'{}'`),
		/** Dispatched agents holding this project's cards at once (migration 0026); null = no limit. */
		seats: integer(),
		/** The same per agent kind: kind -> seats. */
		kindSeats: jsonb()
			.notNull()
			.default(sql`'{}'`),
		/** A review card whose branch stops merging: 'mark' or 'send-back' (migration 0032). */
		onConflict: text().notNull().default('mark'),
	},
	() => [
		check('project_settings_land_check', sql`land IN ('squash', 'merge', 'rebase', 'none')`),
		check('project_settings_on_conflict_check', sql`on_conflict IN ('mark', 'send-back')`),
	],
);

/** Pauses of the line (migration 0026): target '' for scope 'all'. */
export const pauses = pgTable(
	'pauses',
	{
		scope: text().notNull(),
		target: text().notNull().default(''),
		reason: text(),
		pausedBy: text().notNull(),
		at: at().notNull(),
		stop: boolean().notNull().default(false),
	},
	t => [
		primaryKey({ name: 'pauses_pkey', columns: [t.scope, t.target] }),
		check('pauses_scope_check', sql`scope IN ('all', 'project', 'phase', 'card', 'kind')`),
	],
);

/** Supervisor runs (migration 0026), re-registered every 10 s. */
export const runs = pgTable(
	'runs',
	{
		name: text().primaryKey(),
		host: text().notNull(),
		pid: integer().notNull(),
		seats: integer().notNull(),
		kinds: text()
			.array()
			.notNull()
			.default(sql`'{}'`),
		project: text(),
		startedAt: at().notNull(),
		lastSeenAt: at().notNull(),
		stopping: text(),
	},
	() => [check('runs_stopping_check', sql`stopping IN ('drain', 'stop')`)],
);

/** What each attempt cost, as its agent reported it (migration 0030): one row per card and epoch. */
export const attemptUsage = pgTable(
	'attempt_usage',
	{
		cardId: text().notNull(),
		epoch: integer().notNull(),
		kind: text(),
		project: text(),
		inputTokens: bigint({ mode: 'number' }).notNull(),
		outputTokens: bigint({ mode: 'number' }).notNull(),
		costUsd: doublePrecision(),
		updatedAt: at().notNull(),
	},
	t => [
		primaryKey({ name: 'attempt_usage_pkey', columns: [t.cardId, t.epoch] }),
		check('attempt_usage_input_tokens_check', sql`input_tokens >= 0`),
		check('attempt_usage_output_tokens_check', sql`output_tokens >= 0`),
		check('attempt_usage_cost_usd_check', sql`cost_usd >= 0`),
	],
);

/** attempt_usage summed by kind and project ('' for none), kept by each report (migration 0030). */
export const usageTotals = pgTable(
	'usage_totals',
	{
		kind: text().notNull(),
		project: text().notNull(),
		inputTokens: bigint({ mode: 'number' }).notNull(),
		outputTokens: bigint({ mode: 'number' }).notNull(),
		knownCostUsd: doublePrecision().notNull(),
		unknownCost: integer().notNull(),
	},
	t => [primaryKey({ name: 'usage_totals_pkey', columns: [t.kind, t.project] })],
);

/** The landing queue (migration 0031): a project's base branch's line of landings, across hubs. */
export const landingQueue = pgTable(
	'landing_queue',
	{
		cardId: text().primaryKey(),
		project: text().notNull(),
		base: text().notNull(),
		state: text().notNull(),
		holder: text().notNull(),
		actor: text().notNull(),
		queuedAt: at().notNull(),
		startedAt: at(),
		beatAt: at().notNull(),
	},
	t => [
		index('landing_queue_line_idx').on(t.project, t.base, t.queuedAt, t.cardId),
		foreignKey({ name: 'landing_queue_card_id_fkey', columns: [t.cardId], foreignColumns: [cards.id] }).onDelete(
			'cascade',
		),
		check('landing_queue_state_check', sql`state IN ('waiting', 'landing')`),
	],
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
	pauses,
	runs,
	attemptUsage,
	usageTotals,
	landingQueue,
} as const;
