/**
 * Outgoing webhooks in the store (migration 0015): hooks/add, hooks/list and hooks/remove, and the
 * delivering hub's bookkeeping — its lease on a hook, the cursor, the retry state and the bounded
 * delivery log. SQL only: which events a hook sends and when it retries are core/formats/webhook.ts's and the
 * hub's (mcp-server/hub/webhooks.ts); nothing here sends a request. Secrets are read only by
 * `takeLease` (the delivering hub); every list shows a fingerprint.
 */
import { randomBytes } from 'node:crypto';
import { desc, eq, isNull, sql } from 'drizzle-orm';

import { BatonError } from '../errors';
import type { EventType, Hook, HookDelivery, ParsedParams, Result } from '../protocol';
import { deliveryId, secretFingerprint } from '../formats/webhook';
import type { Queryable } from '../store/db';
import { orm } from '../store/orm';
import { webhookDeliveries, webhooks } from '../store/schema';
import type { OpContext, PendingEvent, UnitOfWork } from './unitOfWork';
import { num } from './values';

/** Delivery log rows kept per hook. */
export const deliveryLogRows = 50;

/** A hook as its delivering hub holds it (with the secret). */
export interface LeasedHook {
	id: string;
	/** Which copy of the hook: part of its delivery ids (core/formats/webhook.ts deliveryId). */
	instance: string;
	url: string;
	secret: string;
	events: EventType[];
	cursor: number;
	failures: number;
}

export interface AttemptRecord {
	seq: number;
	attempt: number;
	outcome: HookDelivery['outcome'];
	status?: number | null;
	error?: string | null;
	ms?: number | null;
	/** After a failure: when the next attempt is due. */
	nextAttemptAt?: Date | null;
}

type HookRow = typeof webhooks.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** The log's end: where a new hook starts. */
const lastSeq = sql<number>`(SELECT coalesce(max(seq), 0) FROM events)`;

export class HookStore {
	constructor(private readonly uow: UnitOfWork) {}

	async list(p: ParsedParams<'hooks/list'> = {}): Promise<Result<'hooks/list'>> {
		const db = orm(this.uow.db);
		const rows = await db.select().from(webhooks).orderBy(webhooks.createdAt, webhooks.id);
		const last = await this.uow.db.query<{ s: unknown }>('SELECT coalesce(max(seq), 0) AS s FROM events');
		const recent = p.recent ?? 10;
		const hooks: Hook[] = [];
		for (const row of rows) {
			const log =
				recent === 0
					? []
					: await db
							.select()
							.from(webhookDeliveries)
							.where(eq(webhookDeliveries.hookId, row.id))
							.orderBy(desc(webhookDeliveries.n))
							.limit(recent);
			hooks.push(toHook(row, num(last[0]?.s ?? 0), log.reverse()));
		}
		return { hooks };
	}

	/** A new hook starts at the log's end: it gets the events committed after it was added. */
	async add(ctx: OpContext, p: ParsedParams<'hooks/add'>): Promise<Result<'hooks/add'>> {
		const added = await this.uow.mutate(ctx, 'hooks/add', async (tx, now) => {
			const id = `hk${randomBytes(4).toString('hex')}`;
			const events = [...new Set(p.events ?? [])];
			const [row] = await orm(tx)
				.insert(webhooks)
				.values({ id, url: p.url, secret: p.secret, events, createdAt: now, createdBy: ctx.actor, cursor: lastSeq })
				.returning();
			if (row === undefined) {
				throw new BatonError('internal', 'Adding the hook returned no row; please report this.');
			}
			return { result: { hook: toHook(row, row.cursor, []) }, events: [hookChanged(row, 'added')] };
		});
		// The hook starts after its own `hook_changed` (committed with it, so its seq was not known
		// inside): what it gets is what was committed after it was added. Its worker starts after this.
		const rows = await this.uow.db.query<{ cursor: unknown }>(
			`UPDATE webhooks SET cursor = greatest(cursor, coalesce((SELECT max(seq) FROM events
				WHERE type = 'hook_changed' AND card_id = $2 AND data->'hook'->>'id' = $1), 0))
			 WHERE id = $1 RETURNING cursor`,
			[added.hook.id, hookEventId],
		);
		const cursor = rows[0] === undefined ? added.hook.cursor : num(rows[0].cursor);
		return { hook: { ...added.hook, cursor } };
	}

	async remove(ctx: OpContext, p: ParsedParams<'hooks/remove'>): Promise<Result<'hooks/remove'>> {
		return this.uow.mutate(ctx, 'hooks/remove', async tx => {
			const [row] = await orm(tx).delete(webhooks).where(eq(webhooks.id, p.id)).returning();
			if (row === undefined) {
				throw new BatonError('not_found', `No hook ${p.id}. baton hooks lists them.`);
			}
			return { result: { hook: toHook(row, row.cursor, []) }, events: [hookChanged(row, 'removed')] };
		});
	}

	/** Lets a paused hook deliver again, from its cursor on. */
	async resume(ctx: OpContext, p: ParsedParams<'hooks/resume'>): Promise<Result<'hooks/resume'>> {
		return this.uow.mutate(ctx, 'hooks/resume', async tx => {
			const [row] = await orm(tx).update(webhooks).set({ paused: null }).where(eq(webhooks.id, p.id)).returning();
			if (row === undefined) {
				throw new BatonError('not_found', `No hook ${p.id}. baton hooks lists them.`);
			}
			const last = await tx.query<{ s: unknown }>('SELECT coalesce(max(seq), 0) AS s FROM events');
			return { result: { hook: toHook(row, num(last[0]?.s ?? 0), []) }, events: [hookChanged(row, 'resumed')] };
		});
	}

	/** Ids of every hook that delivers (the delivering hub starts a worker per id; paused ones get none). */
	async ids(): Promise<string[]> {
		const rows = await orm(this.uow.db)
			.select({ id: webhooks.id })
			.from(webhooks)
			.where(isNull(webhooks.paused))
			.orderBy(webhooks.id);
		return rows.map(r => r.id);
	}

	/**
	 * Takes or renews `owner`'s lease on the hook for `seconds` (the database's clock, so hubs' clocks
	 * need not agree) and returns it with its secret and cursor; null when the hook is gone or another
	 * hub's lease still runs.
	 */
	async takeLease(id: string, owner: string, seconds: number): Promise<LeasedHook | null> {
		const rows = await this.uow.db.query<LeasedHook>(
			`UPDATE webhooks SET lease_owner = $2, lease_until = now() + make_interval(secs => $3)
			 WHERE id = $1 AND paused IS NULL AND (lease_owner IS NULL OR lease_owner = $2 OR lease_until < now())
			 RETURNING id, instance, url, secret, events, cursor, failures`,
			[id, owner, seconds],
		);
		const row = rows[0];
		return row === undefined ? null : { ...row, cursor: num(row.cursor) };
	}

	/** Gives up `owner`'s leases (a stopping hub), or every lease (`owner` undefined: a PGlite hub at start, the only one). */
	async releaseLeases(owner?: string): Promise<void> {
		await this.uow.db.query(
			'UPDATE webhooks SET lease_owner = NULL, lease_until = NULL WHERE $1::text IS NULL OR lease_owner = $1',
			[owner ?? null],
		);
	}

	/** Moves the cursor forward past events the hook does not want; false when the lease is lost. */
	async advance(id: string, owner: string, seq: number): Promise<boolean> {
		const rows = await this.uow.db.query(
			'UPDATE webhooks SET cursor = greatest(cursor, $3) WHERE id = $1 AND lease_owner = $2 RETURNING id',
			[id, owner, seq],
		);
		return rows.length > 0;
	}

	/**
	 * Records one attempt or skip in one statement: the retry state and (delivered, skipped) the cursor,
	 * a delivery log row, and the deletion of the hook's rows beyond the newest 50. Only under `owner`'s
	 * lease: false when it was lost (another hub took the hook over), and then nothing is written.
	 */
	async record(id: string, owner: string, r: AttemptRecord): Promise<boolean> {
		const now = this.uow.clock.now();
		const ok = r.outcome !== 'failed';
		const rows = await this.uow.db.query<{ n: unknown }>(
			`WITH h AS (
				UPDATE webhooks SET log_no = log_no + 1,
					cursor = CASE WHEN $5 THEN greatest(cursor, $3) ELSE cursor END,
					delivered = delivered + CASE WHEN $4 = 'delivered' THEN 1 ELSE 0 END,
					last_delivered_at = CASE WHEN $4 = 'delivered' THEN $6 ELSE last_delivered_at END,
					failures = CASE WHEN $5 THEN 0 ELSE failures + 1 END,
					failing_since = CASE WHEN $5 THEN NULL ELSE coalesce(failing_since, $6) END,
					last_error = CASE WHEN $5 THEN NULL ELSE $8 END,
					next_attempt_at = $10
				WHERE id = $1 AND lease_owner = $2 RETURNING id, log_no),
			d AS (
				INSERT INTO webhook_deliveries (hook_id, n, seq, attempt, at, outcome, status, error, ms)
				SELECT id, log_no, $3, $11, $6, $4, $7, $8, $9 FROM h RETURNING n),
			pruned AS (DELETE FROM webhook_deliveries w USING h WHERE w.hook_id = h.id AND w.n <= h.log_no - ${deliveryLogRows})
			SELECT n FROM d`,
			[
				id,
				owner,
				r.seq,
				r.outcome,
				ok,
				now,
				r.status ?? null,
				r.error ?? null,
				r.ms ?? null,
				r.nextAttemptAt ?? null,
				r.attempt,
			],
		);
		return rows.length > 0;
	}
}

/**
 * What `baton restore` does to the hooks it brings back: each pauses, saying so, and becomes a new copy
 * (a new `instance`, so its delivery ids differ from the original's), with no lease or retry pending.
 * Returns the ids paused. Runs on the restored store before any hub opens it.
 */
export async function pauseRestoredHooks(db: Queryable, restoredAt: Date): Promise<string[]> {
	const rows = await db.query<{ id: string }>(
		`UPDATE webhooks SET paused = $1, instance = substr(md5(random()::text || id || clock_timestamp()::text), 1, 8),
			lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL
		 RETURNING id`,
		[`restored from a backup at ${restoredAt.toISOString()}; the original may still deliver it`],
	);
	return rows.map(r => r.id).sort();
}

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

function toHook(row: HookRow, lastSeq: number, log: readonly DeliveryRow[]): Hook {
	const cursor = row.cursor;
	return {
		id: row.id,
		url: row.url,
		events: row.events as EventType[],
		secretFingerprint: secretFingerprint(row.secret),
		createdAt: row.createdAt.toISOString(),
		createdBy: row.createdBy,
		cursor,
		behind: Math.max(0, lastSeq - cursor),
		delivered: row.delivered,
		lastDeliveredAt: iso(row.lastDeliveredAt),
		failures: row.failures,
		failingSince: iso(row.failingSince),
		lastError: row.lastError,
		nextAttemptAt: iso(row.nextAttemptAt),
		paused: row.paused,
		recent: log.map(d => ({
			seq: d.seq,
			deliveryId: deliveryId(row.id, row.instance, d.seq),
			attempt: d.attempt,
			at: d.at.toISOString(),
			outcome: d.outcome,
			status: d.status,
			error: d.error,
			ms: d.ms,
		})),
	};
}

/** The cardId of the hooks' events (`hook_changed`): no card changed. */
export const hookEventId = 'baton:hooks';

/**
 * A hook was added, removed or resumed (the audit log's `hook_changed`): its id, its receiver's origin
 * (scheme and host: a URL's path may be a secret, as a chat service's incoming-webhook URL is) and the
 * events it takes; never its secret.
 */
function hookChanged(
	row: { id: string; url: string; events: string[] },
	change: 'added' | 'removed' | 'resumed',
): PendingEvent {
	let receiver: string;
	try {
		receiver = new URL(row.url).origin;
	} catch {
		receiver = '(unparsable URL)';
	}
	return {
		cardId: hookEventId,
		type: 'hook_changed',
		data: { card: null, hook: { id: row.id, receiver, events: row.events, change } },
	};
}
