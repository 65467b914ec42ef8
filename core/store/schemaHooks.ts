/**
 * The outgoing webhooks' tables in drizzle (core/store/schema.ts re-exports them): the hooks and their
 * recent deliveries, which core/backlog/hookStore.ts reads and writes through core/store/orm.ts. A
 * description of what migration 0015 (and 0017) build, checked by test/core/schema.test.ts; it must
 * not drift from the SQL (the migrations win) and delivers nothing (the hub's webhooks.ts does).
 */
import { sql } from 'drizzle-orm';
import { bigint, check, foreignKey, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { at } from './schemaCards';

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
