/**
 * The backlog of record (DESIGN §2, §3): one method per protocol operation, each one transaction that
 * changes cards and appends one event per changed card. Decisions come from the pure rules/lease/dag
 * modules; this file only reads, applies and logs. Time comes from the injected clock. Runs unchanged
 * on PGlite and PostgreSQL through the Db interface.
 */
import { deriveAttempts } from './backlog/attempts';
import type { HotStatements, SqlCatalogue } from './backlog/hotSql';
import { openStore, type StoreOptions } from './backlog/openStore';
import { afterInClaimOrder, decodeCursor, page, pageOf } from './backlog/paging';
import { type Listener, type Mutation, type OpContext, type PendingEvent, UnitOfWork } from './backlog/unitOfWork';
import { num, present, toDate } from './backlog/values';
import { checkBody, checkCardId, checkTitle, parseTimestamp } from './cardText';
import { type Clock, systemClock } from './clock';
import { type DependencyMap, findAnyCycle, findCycle } from './dag';
import { BatonError } from './errors';
import { agentHealth } from './health';
import { generateCardId } from './ids';
import { leaseOf } from './lease';
import {
	type AgentHealth,
	type AgentInfo,
	type BacklogEvent,
	type Card,
	type CardRef,
	type EventType,
	type HealthThresholds,
	type ParsedParams,
	type ReadinessChange,
	type Result,
	type Settings,
	defaultHealthThresholds,
	defaultSettings,
} from './protocol';
import {
	type Action,
	type CardPatch,
	type CardState,
	type UnclaimableCounts,
	checkClaimable,
	cycleError,
	decide,
	describeNothingClaimable,
} from './rules';
import type { Db, Queryable } from './store/db';
import { type DumpRows, readDump } from './store/dump';
import { schemaVersion } from './store/migrate';

export interface BacklogOptions extends StoreOptions {
	clock?: Clock | undefined;
	thresholds?: HealthThresholds | undefined;
	/** Lease length when claim/heartbeat give none (default 300 s). */
	defaultTtlSeconds?: number | undefined;
}

const historyLimit = 500;
const exportPage = 500;
const requestLogDays = 1;

/** Columns a CardPatch may set (camelCase -> snake_case). */
const patchColumns: Record<keyof CardPatch, string> = {
	status: 'status',
	claimOwner: 'claim_owner',
	claimedAt: 'claimed_at',
	leaseExpiresAt: 'lease_expires_at',
	leaseTtlSeconds: 'lease_ttl_seconds',
	claimEpoch: 'claim_epoch',
	attempts: 'attempts',
	deferUntil: 'defer_until',
	progress: 'progress',
	progressNote: 'progress_note',
	progressAt: 'progress_at',
	result: 'result',
	blockedReason: 'blocked_reason',
	failed: 'failed',
};

/** The rule-facing view of a wire card. */
export function cardState(card: Card): CardState {
	return {
		id: card.id,
		status: card.status,
		claimOwner: card.claimOwner,
		claimEpoch: card.claimEpoch,
		leaseExpiresAt: toDate(card.leaseExpiresAt),
		attempts: card.attempts,
		maxAttempts: card.maxAttempts,
		unmetDeps: card.unmetDeps,
		deferUntil: toDate(card.deferUntil),
		requires: card.requires,
		progress: card.progress,
		progressNote: card.progressNote,
		blockedReason: card.blockedReason,
		failed: card.failed === true,
		version: card.version,
	};
}

function notFound(cardId: string): BatonError {
	return new BatonError('not_found', `Card ${cardId} does not exist. List cards to find the right id.`, { cardId });
}

export type { OpContext };

export class Backlog {
	readonly mode: 'pglite' | 'postgres';
	/** PGlite only: the whole data dir as a gzip tarball (backups). */
	readonly dumpDataDir?: () => Promise<Blob | File>;
	private readonly uow: UnitOfWork;
	private readonly clock: Clock;
	private readonly thresholds: HealthThresholds;
	private readonly defaultTtl: number;
	private closed = false;
	/** What opening the store did that users should hear of (hub/status, the hub's log). */
	notices: readonly string[] = [];
	/** The backlog's stall policy as last read (settings()); only a hint for the reaper's timer. */
	private stallDefault = defaultSettings.stallReleaseSeconds;

	/** A backlog on an opened, migrated store (openStore); it closes the store on close(). */
	constructor(db: Db, options: BacklogOptions = {}, dump?: () => Promise<Blob | File>) {
		this.mode = db.mode;
		this.clock = options.clock ?? systemClock;
		this.uow = new UnitOfWork(db, this.clock);
		this.thresholds = options.thresholds ?? defaultHealthThresholds;
		this.defaultTtl = options.defaultTtlSeconds ?? 300;
		if (dump !== undefined) {
			this.dumpDataDir = dump;
		}
	}

	// The store and the hot statements, read by the store test and test/bench/core.ts (which swaps in a
	// recording Db) under these names.
	private get db(): Db {
		return this.uow.db;
	}

	private set db(db: Db) {
		this.uow.db = db;
	}

	private get sql(): HotStatements {
		return this.uow.catalogue.sql;
	}

	private get seqStatements(): SqlCatalogue['seqStatements'] {
		return this.uow.catalogue.seqStatements;
	}

	/** Opens (creating and migrating as needed) the store described by `options`. */
	static async open(options: BacklogOptions = {}): Promise<Backlog> {
		const store = await openStore(options);
		const backlog = new Backlog(store.db, options, store.dumpDataDir);
		backlog.notices = store.notices;
		return backlog.withSettings();
	}

	/** Reads the settings once at open, so the reaper's stall hints know the backlog's policy. */
	private async withSettings(): Promise<this> {
		await this.settings();
		return this;
	}

	/** Closes the store cleanly (PGlite checkpoints, so the next open needs no WAL replay). */
	async close(): Promise<void> {
		if (this.closed) {
			return;
		}
		this.closed = true;
		await this.db.close();
	}

	/** Called after each committed mutation with the events it appended, in seq order. */
	onCommitted(listener: Listener): () => void {
		return this.uow.onCommitted(listener);
	}

	// -----------------------------------------------------------------------------------------------
	// Reading cards

	private async loadCard(q: Queryable, cardId: string, lock: boolean): Promise<Card> {
		const rows = await q.query<{ card: Card }>(
			`SELECT baton_card(cards) AS card FROM cards WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
			[cardId],
		);
		const row = rows[0];
		if (row === undefined) {
			throw notFound(cardId);
		}
		return row.card;
	}

	/** Writes a rule decision's patch; bumps version when the change is visible (logged). */
	private async applyPatch(
		tx: Queryable,
		cardId: string,
		patch: CardPatch,
		now: Date,
		visible: boolean,
	): Promise<Card> {
		const sets: string[] = [];
		const params: unknown[] = [cardId, now];
		for (const [key, value] of Object.entries(patch) as [keyof CardPatch, unknown][]) {
			params.push(value);
			sets.push(`${patchColumns[key]} = $${params.length}`);
		}
		sets.push('updated_at = $2');
		if (visible) {
			sets.push('version = version + 1');
		}
		const rows = await tx.query<{ card: Card }>(
			`UPDATE cards SET ${sets.join(', ')} WHERE id = $1 RETURNING baton_card(cards) AS card`,
			params,
		);
		return (rows[0] as { card: Card }).card;
	}

	/** Adds `delta` to the unmet_deps of every card that depends on `cardId`; returns the changes. */
	private async shiftDependents(tx: Queryable, cardId: string, delta: 1 | -1): Promise<ReadinessChange[]> {
		// Locking dependents in id order keeps two completes on PostgreSQL from deadlocking each other.
		const rows = await tx.query<{ id: string; unmet_deps: number }>(
			`WITH locked AS (
				SELECT c.id FROM cards c JOIN edges e ON e.card_id = c.id WHERE e.dep_id = $1 ORDER BY c.id FOR UPDATE OF c
			)
			UPDATE cards SET unmet_deps = unmet_deps + $2 FROM locked WHERE cards.id = locked.id
			RETURNING cards.id, cards.unmet_deps`,
			[cardId, delta],
		);
		return rows.map(r => ({ id: r.id, unmetDeps: num(r.unmet_deps) })).sort((a, b) => (a.id < b.id ? -1 : 1));
	}

	/**
	 * Runs a rule decision on one card: load under lock, decide, patch, readiness, event. `action` may be
	 * computed from the locked card (fail reads its backoff policy and earlier reasons that way).
	 */
	private async act(
		tx: Queryable,
		cardId: string,
		action: Action | ((before: Card) => Promise<Action>),
		now: Date,
		extra: Record<string, unknown> = {},
	) {
		const before = await this.loadCard(tx, cardId, true);
		let decision: ReturnType<typeof decide>;
		try {
			decision = decide(cardState(before), typeof action === 'function' ? await action(before) : action, now);
		} catch (e) {
			throw BatonError.is(e) && e.code === 'lease_lost' ? await this.explainLostLease(tx, cardId, e) : e;
		}
		const card = await this.applyPatch(tx, cardId, decision.patch, now, decision.event !== null);
		let readiness: ReadinessChange[] = [];
		if (before.status !== 'done' && card.status === 'done') {
			readiness = await this.shiftDependents(tx, cardId, -1);
		} else if (before.status === 'done' && card.status !== 'done') {
			readiness = await this.shiftDependents(tx, cardId, 1);
		}
		const events: PendingEvent[] =
			decision.event === null
				? []
				: [
						{
							cardId,
							type: decision.event,
							data: {
								card,
								...(readiness.length > 0 ? { readiness } : {}),
								...stripUndefined(decision.data),
								...extra,
							},
						},
					];
		return { before, card, readiness, events };
	}

	/**
	 * A holder told "lease_lost" also learns what ended its claim (reclaimed by whom and why, released
	 * because a dependency was reopened, …): the event that recorded its epoch as the previous one.
	 */
	private async explainLostLease(tx: Queryable, cardId: string, e: BatonError): Promise<BatonError> {
		const data = (e.data ?? {}) as Record<string, unknown>;
		const epoch = data.yourEpoch;
		if (typeof epoch !== 'number') {
			return e;
		}
		const rows = await tx.query<{ type: string; actor: string; reason: string | null }>(
			`SELECT type, actor, data->>'reason' AS reason FROM events
			 WHERE card_id = $1 AND data->>'previousEpoch' = $2 ORDER BY seq DESC LIMIT 1`,
			[cardId, String(epoch)],
		);
		const ended = rows[0];
		if (ended === undefined) {
			return e;
		}
		const why = ended.reason === null ? '' : `: ${ended.reason}`;
		return new BatonError('lease_lost', `${e.message} Your claim ended (${ended.type} by ${ended.actor}${why}).`, {
			...data,
			endedBy: { type: ended.type, actor: ended.actor, reason: ended.reason },
		});
	}

	// -----------------------------------------------------------------------------------------------
	// Settings (backlog-wide policies, stored in the backlog)

	/** The backlog's settings: stored values over the built-in defaults. */
	async settings(q: Queryable = this.db): Promise<Settings> {
		const rows = await q.query<{ key: string; value: unknown }>('SELECT key, value FROM settings');
		const out: Settings = { ...defaultSettings };
		for (const r of rows) {
			if (Object.hasOwn(out, r.key) && typeof r.value === 'number') {
				out[r.key as keyof Settings] = r.value;
			}
		}
		this.stallDefault = out.stallReleaseSeconds;
		return out;
	}

	async updateSettings(ctx: OpContext, p: ParsedParams<'settings/update'>): Promise<Settings> {
		return this.uow.mutate(ctx, 'settings/update', async tx => {
			const entries = Object.entries(p).filter(([, v]) => v !== undefined);
			if (entries.length > 0) {
				await tx.query(
					`INSERT INTO settings (key, value) SELECT k, v::json FROM unnest($1::text[], $2::text[]) AS u(k, v)
					 ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
					[entries.map(([k]) => k), entries.map(([, v]) => JSON.stringify(v))],
				);
			}
			return { result: await this.settings(tx), events: [] };
		});
	}

	/**
	 * When the stall policy would release `card` (ISO), or null: claimed, a policy (the card's or the
	 * backlog's, as last read) above 0. The reaper arms for it as it does for a lease expiry.
	 */
	stallDueAt(card: Card | null | undefined): string | null {
		if (card?.status !== 'claimed') {
			return null;
		}
		const seconds = card.stallReleaseSeconds ?? this.stallDefault;
		const since = card.progressAt ?? card.claimedAt;
		if (seconds <= 0 || since === null) {
			return null;
		}
		return new Date(Date.parse(since) + seconds * 1000).toISOString();
	}

	// -----------------------------------------------------------------------------------------------
	// create / update / get / list / stats

	async create(ctx: OpContext, p: ParsedParams<'card/create'>): Promise<Result<'card/create'>> {
		return this.uow.mutate(ctx, 'card/create', async (tx, now) => {
			const inputs = p.cards;
			// Idempotent create: a known key returns the existing card and creates nothing.
			const keys = inputs.map(c => c.idempotencyKey).filter((k): k is string => k !== undefined);
			const byKey = new Map<string, Card>();
			if (keys.length > 0) {
				const rows = await tx.query<{ card: Card }>(
					'SELECT baton_card(cards) AS card FROM cards WHERE idempotency_key = ANY($1::text[])',
					[keys],
				);
				for (const r of rows) {
					byKey.set(present(r.card.idempotencyKey), r.card);
				}
			}
			const fresh = inputs.filter(c => c.idempotencyKey === undefined || !byKey.has(c.idempotencyKey));
			// The same key twice in one batch creates one card.
			const seenKeys = new Set<string>();
			const toCreate = fresh.filter(c => {
				if (c.idempotencyKey === undefined) {
					return true;
				}
				if (seenKeys.has(c.idempotencyKey)) {
					return false;
				}
				seenKeys.add(c.idempotencyKey);
				return true;
			});

			const ids = await this.assignIds(
				tx,
				toCreate.map(c => c.id),
			);
			const batch = new Map<string, number>();
			ids.forEach((id, i) => {
				if (batch.has(id)) {
					throw new BatonError('invalid_input', `Card id ${id} appears twice in this create; ids must be unique.`, {
						cardId: id,
					});
				}
				batch.set(id, i);
			});
			const supplied = toCreate.map(c => c.id).filter((id): id is string => id !== undefined);
			if (supplied.length > 0) {
				const taken = await tx.query<{ id: string }>('SELECT id FROM cards WHERE id = ANY($1::text[])', [supplied]);
				if (taken.length > 0) {
					const list = taken.map(r => r.id).join(', ');
					throw new BatonError(
						'conflict',
						`Card ${list} already exists. Pick another id, or pass an idempotencyKey to make re-sends safe.`,
						{ cardIds: taken.map(r => r.id) },
					);
				}
			}

			toCreate.forEach((c, i) => {
				const id = present(ids[i]);
				checkTitle(id, c.title);
				checkBody(id, c.body ?? '');
			});

			// Dependencies: in this batch or existing; unknown ids and cycles are refused.
			const external = new Set<string>();
			for (const c of toCreate) {
				for (const d of c.dependsOn ?? []) {
					if (!batch.has(d)) {
						external.add(d);
					}
				}
			}
			const depStatus = new Map<string, string>();
			if (external.size > 0) {
				const rows = await tx.query<{ id: string; status: string }>(
					'SELECT id, status FROM cards WHERE id = ANY($1::text[])',
					[[...external]],
				);
				for (const r of rows) {
					depStatus.set(r.id, r.status);
				}
				const unknown = [...external].filter(d => !depStatus.has(d));
				if (unknown.length > 0) {
					throw new BatonError(
						'not_found',
						`Unknown dependency ${unknown.length === 1 ? 'id' : 'ids'}: ${unknown.slice(0, 10).join(', ')}. Create ${unknown.length === 1 ? 'it' : 'them'} first or in the same call.`,
						{ unknown },
					);
				}
			}
			const graph = new Map<string, string[]>();
			toCreate.forEach((c, i) => {
				graph.set(
					present(ids[i]),
					(c.dependsOn ?? []).filter(d => batch.has(d)),
				);
			});
			const cycle = findAnyCycle(graph);
			if (cycle !== null) {
				throw cycleError(cycle);
			}

			const records = toCreate.map((c, i) => {
				const id = present(ids[i]);
				const deps = [...new Set(c.dependsOn ?? [])].sort();
				const unmet = deps.filter(d => batch.has(d) || depStatus.get(d) !== 'done').length;
				return {
					id,
					title: c.title,
					body: c.body ?? '',
					phase: c.phase ?? null,
					priority: c.priority ?? 0,
					status: 'ready',
					requires: [...new Set(c.requires ?? [])].sort(),
					depends_on: deps,
					unmet_deps: unmet,
					claim_epoch: 0,
					attempts: 0,
					max_attempts: c.maxAttempts ?? 3,
					failed: false,
					backoff_seconds: c.backoffSeconds ?? null,
					stall_release_seconds: c.stallReleaseSeconds ?? null,
					defer_until: c.deferUntil === undefined ? null : parseTimestamp('deferUntil', c.deferUntil).toISOString(),
					idempotency_key: c.idempotencyKey ?? null,
					acceptance: c.acceptance ?? [],
					version: 1,
					created_at: now.toISOString(),
					updated_at: now.toISOString(),
				};
			});
			const created = new Map<string, Card>();
			if (records.length > 0) {
				const rows = await tx.query<{ card: Card }>(
					`INSERT INTO cards SELECT * FROM jsonb_populate_recordset(NULL::cards, $1::jsonb)
					 RETURNING baton_card(cards) AS card`,
					[JSON.stringify(records)],
				);
				for (const r of rows) {
					created.set(r.card.id, r.card);
				}
				const edgeFrom: string[] = [];
				const edgeTo: string[] = [];
				for (const r of records) {
					for (const d of r.depends_on) {
						edgeFrom.push(r.id);
						edgeTo.push(d);
					}
				}
				if (edgeFrom.length > 0) {
					await tx.query('INSERT INTO edges (card_id, dep_id) SELECT * FROM unnest($1::text[], $2::text[])', [
						edgeFrom,
						edgeTo,
					]);
				}
			}
			// Answer in input order: new cards, or the existing card of a repeated idempotency key.
			const idOf = new Map(toCreate.map((c, i) => [c, present(ids[i])]));
			const createdByKey = new Map<string, Card>();
			for (const c of created.values()) {
				if (c.idempotencyKey !== null) {
					createdByKey.set(c.idempotencyKey, c);
				}
			}
			const cards = inputs.map(c => {
				const id = idOf.get(c);
				if (id !== undefined) {
					return present(created.get(id));
				}
				const key = present(c.idempotencyKey);
				return present(byKey.get(key) ?? createdByKey.get(key));
			});
			return {
				result: { cards },
				events: records.map(r => {
					const card = present(created.get(r.id));
					return { cardId: r.id, type: 'created' as const, data: { card } };
				}),
			};
		});
	}

	/** Ids for new cards: supplied ones are checked; missing ones are generated, free of collisions. */
	private async assignIds(tx: Queryable, supplied: readonly (string | undefined)[]): Promise<string[]> {
		const ids = supplied.map(id => id ?? '');
		supplied.forEach(id => {
			if (id !== undefined) {
				checkCardId(id);
			}
		});
		let length = 5;
		for (let round = 0; ids.includes(''); round++) {
			const used = new Set(ids);
			const candidates: string[] = [];
			ids.forEach((id, i) => {
				if (id === '') {
					let c = generateCardId(length);
					while (used.has(c)) {
						c = generateCardId(length);
					}
					used.add(c);
					candidates.push(c);
					ids[i] = c;
				}
			});
			const taken = new Set(
				(await tx.query<{ id: string }>('SELECT id FROM cards WHERE id = ANY($1::text[])', [candidates])).map(
					r => r.id,
				),
			);
			ids.forEach((id, i) => {
				if (taken.has(id) && supplied[i] === undefined) {
					ids[i] = '';
				}
			});
			if (round > 2) {
				length++; // the short id space is filling up
			}
		}
		return ids;
	}

	async update(ctx: OpContext, p: ParsedParams<'card/update'>): Promise<Result<'card/update'>> {
		return this.uow.mutate(ctx, 'card/update', async (tx, now) => {
			const before = await this.loadCard(tx, p.cardId, true);
			if (p.version !== undefined && p.version !== before.version) {
				throw new BatonError(
					'conflict',
					`Card ${p.cardId} is at version ${before.version}; your edit was made on version ${p.version}. Reload the card and apply your change again.`,
					{ cardId: p.cardId, version: before.version, yourVersion: p.version },
				);
			}
			const sets: string[] = [];
			const params: unknown[] = [p.cardId, now];
			const changed: string[] = [];
			const set = (field: string, column: string, value: unknown, cast = ''): void => {
				params.push(value);
				sets.push(`${column} = $${params.length}${cast}`);
				changed.push(field);
			};
			if (p.title !== undefined && p.title !== before.title) {
				checkTitle(p.cardId, p.title);
				set('title', 'title', p.title);
			}
			if (p.body !== undefined && p.body !== before.body) {
				checkBody(p.cardId, p.body);
				set('body', 'body', p.body);
			}
			if (p.phase !== undefined && p.phase !== before.phase) {
				set('phase', 'phase', p.phase);
			}
			if (p.priority !== undefined && p.priority !== before.priority) {
				set('priority', 'priority', p.priority);
			}
			if (p.requires !== undefined) {
				const requires = [...new Set(p.requires)].sort();
				if (requires.join('\n') !== before.requires.join('\n')) {
					set('requires', 'requires', requires, '::text[]');
				}
			}
			if (p.acceptance !== undefined && p.acceptance.join('\n') !== before.acceptance.join('\n')) {
				set('acceptance', 'acceptance', p.acceptance, '::text[]');
			}
			if (p.maxAttempts !== undefined && p.maxAttempts !== before.maxAttempts) {
				set('maxAttempts', 'max_attempts', p.maxAttempts);
			}
			if (p.backoffSeconds !== undefined && p.backoffSeconds !== (before.backoffSeconds ?? null)) {
				set('backoffSeconds', 'backoff_seconds', p.backoffSeconds);
			}
			if (p.stallReleaseSeconds !== undefined && p.stallReleaseSeconds !== (before.stallReleaseSeconds ?? null)) {
				set('stallReleaseSeconds', 'stall_release_seconds', p.stallReleaseSeconds);
			}
			if (changed.length === 0) {
				return { result: { card: before }, events: [] };
			}
			const rows = await tx.query<{ card: Card }>(
				`UPDATE cards SET ${sets.join(', ')}, updated_at = $2, version = version + 1 WHERE id = $1
				 RETURNING baton_card(cards) AS card`,
				params,
			);
			const card = (rows[0] as { card: Card }).card;
			return { result: { card }, events: [{ cardId: card.id, type: 'updated', data: { card, changed } }] };
		});
	}

	async get(_ctx: OpContext, p: ParsedParams<'card/get'>): Promise<Result<'card/get'>> {
		const card = await this.loadCard(this.db, p.cardId, false);
		const [dependencies, dependents, history] = await Promise.all([
			this.db.query<CardRef>(
				`SELECT e.dep_id AS id, coalesce(c.title, '(missing)') AS title, coalesce(c.status, 'ready') AS status
				 FROM edges e LEFT JOIN cards c ON c.id = e.dep_id WHERE e.card_id = $1 ORDER BY e.dep_id`,
				[p.cardId],
			),
			this.db.query<CardRef>(
				`SELECT c.id, c.title, c.status FROM edges e JOIN cards c ON c.id = e.card_id
				 WHERE e.dep_id = $1 ORDER BY c.id`,
				[p.cardId],
			),
			this.cardEvents(p.cardId, historyLimit),
		]);
		return { card, dependencies, dependents, history, attempts: deriveAttempts(history, card) };
	}

	private async cardEvents(cardId: string, limit: number): Promise<BacklogEvent[]> {
		const rows = await this.db.query<EventRow>(
			`SELECT * FROM (SELECT seq, baton_ts(at) AS at, card_id, actor, type, data FROM events
			 WHERE card_id = $1 ORDER BY seq DESC LIMIT $2) recent ORDER BY seq`,
			[cardId, limit],
		);
		return rows.map(toEvent);
	}

	async list(_ctx: OpContext, p: ParsedParams<'card/list'>): Promise<Result<'card/list'>> {
		const now = this.clock.now();
		const limit = p.limit ?? 50;
		const onlyReady =
			p.readyOnly === true &&
			p.status === undefined &&
			p.phase === undefined &&
			p.owner === undefined &&
			p.text === undefined;
		if (onlyReady) {
			// The board's and agents' most common page: prepared, reading the claim index in claim order.
			const cursor = p.cursor === undefined ? null : decodeCursor(p.cursor);
			const rows = await this.db.query<{ card: Card }>(
				cursor === null ? this.sql.readyPage : this.sql.readyPageAfter,
				cursor === null ? [now, limit + 1] : [now, limit + 1, ...cursor],
				cursor === null ? 'baton_ready_page' : 'baton_ready_page_after',
			);
			return page(rows, limit);
		}
		const where: string[] = [];
		const params: unknown[] = [];
		const param = (v: unknown): string => {
			params.push(v);
			return `$${params.length}`;
		};
		if (p.status !== undefined) {
			const statuses = Array.isArray(p.status) ? p.status : [p.status];
			if (statuses.every(s => s === 'claimed' || s === 'blocked')) {
				// Claimed and blocked cards are few by nature (one per working agent; those waiting for a
				// human) and have partial indexes, which only a constant lets PGlite's generic plans use
				// (plan_cache_mode): 65 ms -> 2-3 ms at 100k cards. Ready and done cards are the bulk, which
				// the order index serves whatever the statistics say, so they stay a parameter.
				where.push(`status IN (${statuses.map(s => (s === 'claimed' ? "'claimed'" : "'blocked'")).join(', ')})`);
			} else {
				where.push(`status = ANY(${param(statuses)}::text[])`);
			}
		}
		if (p.phase !== undefined) {
			where.push(`phase = ${param(p.phase)}`);
		}
		if (p.owner !== undefined) {
			where.push(`claim_owner = ${param(p.owner)}`);
		}
		if (p.readyOnly === true) {
			where.push(`status = 'ready' AND unmet_deps = 0 AND (defer_until IS NULL OR defer_until <= ${param(now)})`);
		}
		if (p.text !== undefined && p.text.trim() !== '') {
			const pattern = param(`%${p.text.trim().replace(/[\\%_]/g, m => `\\${m}`)}%`);
			where.push(`(id ILIKE ${pattern} OR title ILIKE ${pattern} OR body ILIKE ${pattern})`);
		}
		if (p.cursor !== undefined) {
			const [priority, createdAt, id] = decodeCursor(p.cursor);
			const pr = param(priority);
			const at = param(createdAt);
			const ident = param(id);
			where.push(
				p.readyOnly === true
					? afterInClaimOrder(pr, at, ident)
					: `(priority < ${pr} OR (priority = ${pr} AND (created_at > ${at} OR (created_at = ${at} AND id > ${ident}))))`,
			);
		}
		const rows = await this.db.query<{ card: Card }>(
			pageOf(where.length > 0 ? where.join(' AND ') : 'true', param(limit + 1), p.readyOnly === true),
			params,
		);
		return page(rows, limit);
	}

	async stats(_ctx: OpContext, _p: ParsedParams<'card/stats'> = {}): Promise<Result<'card/stats'>> {
		const now = this.clock.now();
		const stallBefore = new Date(now.getTime() - this.thresholds.stallSeconds * 1000);
		const [row] = await this.db.query<Record<string, unknown>>(
			`SELECT
				count(*) FILTER (WHERE status = 'ready') AS ready,
				count(*) FILTER (WHERE status = 'claimed') AS claimed,
				count(*) FILTER (WHERE status = 'blocked') AS blocked,
				count(*) FILTER (WHERE status = 'done') AS done,
				count(*) FILTER (WHERE status = 'ready' AND unmet_deps > 0) AS waiting,
				count(*) FILTER (WHERE status = 'ready' AND unmet_deps = 0 AND defer_until > $1) AS deferred,
				count(*) FILTER (WHERE status = 'ready' AND unmet_deps = 0 AND (defer_until IS NULL OR defer_until <= $1)) AS claimable,
				baton_ts(min(created_at) FILTER (WHERE status = 'ready')) AS oldest_ready,
				count(*) FILTER (WHERE status = 'claimed' AND lease_expires_at <= $1) AS expired,
				count(*) FILTER (WHERE status = 'claimed' AND progress_at <= $2) AS stalled,
				(SELECT coalesce(max(seq), 0) FROM events) AS last_seq
			 FROM cards`,
			[now, stallBefore],
		);
		const r = present(row);
		const agents: Record<AgentHealth, number> = { healthy: 0, late: 0, stale: 0, dead: 0 };
		for (const a of await this.db.query<{ last_seen_at: Date }>('SELECT last_seen_at FROM agents')) {
			agents[agentHealth(new Date(a.last_seen_at), now, this.thresholds)]++;
		}
		const counts = { ready: num(r.ready), claimed: num(r.claimed), blocked: num(r.blocked), done: num(r.done) };
		const oldest = r.oldest_ready as string | null;
		return {
			counts,
			total: counts.ready + counts.claimed + counts.blocked + counts.done,
			waiting: num(r.waiting),
			deferred: num(r.deferred),
			claimable: num(r.claimable),
			oldestReadyAt: oldest,
			oldestReadyAgeSeconds: oldest === null ? null : Math.max(0, (now.getTime() - Date.parse(oldest)) / 1000),
			expiredClaims: num(r.expired),
			stalledClaims: num(r.stalled),
			agents,
			lastSeq: num(r.last_seq),
		};
	}

	// -----------------------------------------------------------------------------------------------
	// The claim cycle

	/** Claims the best claimable card (or `p.cardId`). Ignores waitSeconds: the hub does the waiting. */
	async claim(ctx: OpContext, p: ParsedParams<'card/claim'>): Promise<Result<'card/claim'>> {
		const ttl = p.ttlSeconds ?? this.defaultTtl;
		const caps = [...new Set(p.capabilities ?? [])];
		// $1–$6 of the claim, the same for the hot statement and the general path's claimBare.
		const claimParams = (now: Date): unknown[] => [
			now,
			caps,
			p.phase ?? null,
			ctx.actor,
			new Date(now.getTime() + ttl * 1000),
			ttl,
		];
		if (p.cardId === undefined) {
			const fast = await this.uow.fast(ctx, async (now, key) => {
				const rows = await this.uow.hot<{ card: Card; seq: unknown }>(p.phase === undefined ? 'claim' : 'claimPhase', [
					...claimParams(now),
					key,
				]);
				const row = rows[0];
				if (row === undefined) {
					return undefined;
				}
				const card = row.card;
				return {
					result: { card, lease: leaseOf(cardState(card)) },
					events: [this.uow.event(row.seq, now, card.id, ctx.actor, 'claimed', { card, epoch: card.claimEpoch })],
				};
			});
			if (fast !== undefined) {
				return fast;
			}
		}
		return this.uow.mutate(ctx, 'card/claim', async (tx, now): Promise<Mutation<Result<'card/claim'>>> => {
			if (p.cardId !== undefined) {
				const before = await this.loadCard(tx, p.cardId, true);
				const unmetIds =
					before.unmetDeps > 0
						? (
								await tx.query<{ id: string }>(
									`SELECT e.dep_id AS id FROM edges e LEFT JOIN cards d ON d.id = e.dep_id
									 WHERE e.card_id = $1 AND d.status IS DISTINCT FROM 'done' ORDER BY e.dep_id LIMIT 10`,
									[p.cardId],
								)
							).map(r => r.id)
						: [];
				checkClaimable(cardState(before), ctx.actor, caps, now, unmetIds);
				const { card, events } = await this.act(
					tx,
					p.cardId,
					{ type: 'claim', actor: ctx.actor, ttlSeconds: ttl },
					now,
				);
				return { result: { card, lease: leaseOf(cardState(card)) }, events };
			}
			// The general path (the fast one found nothing, or lost a race): same statement, plus the reason.
			const rows = await tx.query<{ card: Card; epoch: number }>(this.sql.claimBare, claimParams(now));
			const card = rows[0]?.card;
			if (card === undefined) {
				return {
					result: { card: null, lease: null, reason: await this.nothingClaimable(tx, caps, p.phase, now) },
					events: [],
				};
			}
			return {
				result: { card, lease: leaseOf(cardState(card)) },
				events: [{ cardId: card.id, type: 'claimed', data: { card, epoch: card.claimEpoch } }],
			};
		});
	}

	private async nothingClaimable(tx: Queryable, caps: string[], phase: string | undefined, now: Date): Promise<string> {
		// Counts within the asked-for phase; cards elsewhere are only mentioned when they would be claimable.
		const [row] = await tx.query<Record<string, unknown>>(
			`SELECT
				count(*) FILTER (WHERE mine AND status = 'ready') AS ready_total,
				count(*) FILTER (WHERE mine AND status = 'ready' AND unmet_deps > 0) AS waiting,
				count(*) FILTER (WHERE mine AND status = 'ready' AND unmet_deps = 0 AND defer_until > $1) AS deferred,
				count(*) FILTER (WHERE mine AND status = 'ready' AND unmet_deps = 0
					AND (defer_until IS NULL OR defer_until <= $1) AND NOT requires <@ $2::text[]) AS need_caps,
				count(*) FILTER (WHERE NOT mine AND status = 'ready' AND unmet_deps = 0
					AND (defer_until IS NULL OR defer_until <= $1) AND requires <@ $2::text[]) AS other_phase,
				count(*) FILTER (WHERE mine AND status = 'claimed') AS claimed,
				count(*) FILTER (WHERE mine AND status = 'blocked') AS blocked
			 FROM (SELECT *, ($3::text IS NULL OR phase = $3) AS mine FROM cards) c`,
			[now, caps, phase ?? null],
		);
		const r = present(row);
		const needCaps = num(r.need_caps);
		const missing =
			needCaps > 0
				? (
						await tx.query<{ cap: string }>(
							`SELECT DISTINCT cap FROM cards, unnest(requires) AS cap
							 WHERE status = 'ready' AND unmet_deps = 0 AND ($2::text IS NULL OR phase = $2)
								AND NOT cap = ANY($1::text[]) ORDER BY cap LIMIT 5`,
							[caps, phase ?? null],
						)
					).map(x => x.cap)
				: [];
		const counts: UnclaimableCounts = {
			readyTotal: num(r.ready_total),
			waiting: num(r.waiting),
			deferred: num(r.deferred),
			claimed: num(r.claimed),
			blocked: num(r.blocked),
			needCapabilities: needCaps,
			missingCapabilities: missing,
			otherPhase: num(r.other_phase),
		};
		return describeNothingClaimable(counts);
	}

	async heartbeat(ctx: OpContext, p: ParsedParams<'card/heartbeat'>): Promise<Result<'card/heartbeat'>> {
		// The holder's heartbeat: one statement renews the lease, records progress and logs a change.
		const fast = await this.uow.fast(ctx, async (now, key) => {
			const rows = await this.uow.hot<{ card: Card; seq: unknown }>('heartbeat', [
				now,
				p.cardId,
				ctx.actor,
				p.epoch ?? null,
				p.progress ?? null,
				p.note ?? null,
				p.ttlSeconds ?? null,
				this.defaultTtl,
				key,
			]);
			const row = rows[0];
			if (row === undefined) {
				return undefined; // not the holder's live lease: the general path says why
			}
			const card = row.card;
			return {
				result: { card, lease: present(leaseOf(cardState(card))) },
				events: row.seq === null ? [] : [this.uow.event(row.seq, now, card.id, ctx.actor, 'heartbeat', { card })],
			};
		});
		if (fast !== undefined) {
			return fast;
		}
		return this.uow.mutate(ctx, 'card/heartbeat', async (tx, now) => {
			const { card, events } = await this.act(
				tx,
				p.cardId,
				{
					type: 'heartbeat',
					actor: ctx.actor,
					epoch: p.epoch,
					progress: p.progress,
					note: p.note,
					ttlSeconds: p.ttlSeconds ?? (await this.currentTtl(tx, p.cardId)),
				},
				now,
			);
			return { result: { card, lease: present(leaseOf(cardState(card))) }, events };
		});
	}

	private async currentTtl(tx: Queryable, cardId: string): Promise<number> {
		const rows = await tx.query<{ ttl: number | null }>('SELECT lease_ttl_seconds AS ttl FROM cards WHERE id = $1', [
			cardId,
		]);
		return rows[0]?.ttl ?? this.defaultTtl;
	}

	async complete(ctx: OpContext, p: ParsedParams<'card/complete'>): Promise<Result<'card/complete'>> {
		const done = await this.completeOnly(ctx, p);
		if (p.next === undefined || done.next !== undefined) {
			return done;
		}
		// Nothing was picked in the same statement (none was claimable before this completion, or the
		// general path ran): claim now, which also sees the cards this completion unblocked and says why
		// when there is none. Its own key (derived) makes a re-sent request replay this claim, not repeat it.
		const next = await this.claim(
			ctx.requestKey === undefined ? ctx : { ...ctx, requestKey: `${ctx.requestKey}#next` },
			p.next,
		);
		return { ...done, next };
	}

	private async completeOnly(ctx: OpContext, p: ParsedParams<'card/complete'>): Promise<Result<'card/complete'>> {
		if (p.force !== true) {
			// The holder's complete: one statement that checks the lease, frees dependents and logs, and
			// with `next` also claims the next card (one round trip for an agent's whole hand-over).
			const fast = await this.uow.fast(ctx, async (now, key) => {
				if (p.next !== undefined) {
					return this.completeNextFast(ctx, p, p.next, now, key);
				}
				const rows = await this.uow.hot<{ seq: unknown; data: BacklogEvent['data']; unblocked: string[] }>(
					'complete',
					completeParams(ctx, p, now, key),
				);
				const row = rows[0];
				if (row === undefined) {
					return undefined; // not the holder, or no such card: the general path says why
				}
				return {
					result: { card: present(row.data.card), unblocked: row.unblocked },
					events: [this.uow.event(row.seq, now, p.cardId, ctx.actor, 'completed', row.data)],
				};
			});
			if (fast !== undefined) {
				return fast;
			}
		}
		return this.uow.mutate(ctx, 'card/complete', async (tx, now) => {
			const { card, readiness, events } = await this.act(
				tx,
				p.cardId,
				{ type: 'complete', actor: ctx.actor, epoch: p.epoch, result: p.result, force: p.force },
				now,
			);
			const unblocked = await this.nowClaimable(tx, readiness, now);
			return { result: { card, unblocked }, events };
		});
	}

	private async completeNextFast(
		ctx: OpContext,
		p: ParsedParams<'card/complete'>,
		next: NonNullable<ParsedParams<'card/complete'>['next']>,
		now: Date,
		key: string | null,
	): Promise<{ result: Result<'card/complete'>; events: BacklogEvent[] } | undefined> {
		const ttl = next.ttlSeconds ?? this.defaultTtl;
		const caps = [...new Set(next.capabilities ?? [])];
		const rows = await this.uow.hot<{
			seq: unknown;
			data: BacklogEvent['data'];
			unblocked: string[];
			next_card: Card | null;
			next_seq: unknown;
		}>(next.phase === undefined ? 'completeNext' : 'completeNextPhase', [
			...completeParams(ctx, p, now, key),
			caps,
			next.phase ?? null,
			new Date(now.getTime() + ttl * 1000),
			ttl,
		]);
		const row = rows[0];
		if (row === undefined) {
			return undefined;
		}
		const events = [this.uow.event(row.seq, now, p.cardId, ctx.actor, 'completed', row.data)];
		const result: Result<'card/complete'> = { card: present(row.data.card), unblocked: row.unblocked };
		const nextCard = row.next_card;
		if (nextCard !== null) {
			result.next = { card: nextCard, lease: leaseOf(cardState(nextCard)) };
			events.push(
				this.uow.event(row.next_seq, now, nextCard.id, ctx.actor, 'claimed', {
					card: nextCard,
					epoch: nextCard.claimEpoch,
				}),
			);
			events.sort((a, b) => a.seq - b.seq);
		}
		return { result, events };
	}

	/** Of the cards whose unmet_deps just changed, those that are claimable now. */
	private async nowClaimable(tx: Queryable, readiness: ReadinessChange[], now: Date): Promise<string[]> {
		const zero = readiness.filter(r => r.unmetDeps === 0).map(r => r.id);
		if (zero.length === 0) {
			return [];
		}
		const rows = await tx.query<{ id: string }>(
			`SELECT id FROM cards WHERE id = ANY($1::text[]) AND status = 'ready'
			 AND (defer_until IS NULL OR defer_until <= $2) ORDER BY id`,
			[zero, now],
		);
		return rows.map(r => r.id);
	}

	async release(ctx: OpContext, p: ParsedParams<'card/release'>): Promise<Result<'card/release'>> {
		return this.uow.mutate(ctx, 'card/release', async (tx, now) => {
			const { card, events } = await this.act(
				tx,
				p.cardId,
				{ type: 'release', actor: ctx.actor, epoch: p.epoch, reason: p.reason, force: p.force },
				now,
			);
			return { result: { card }, events };
		});
	}

	async fail(ctx: OpContext, p: ParsedParams<'card/fail'>): Promise<Result<'card/fail'>> {
		return this.uow.mutate(ctx, 'card/fail', async (tx, now) => {
			const { card, events } = await this.act(
				tx,
				p.cardId,
				async before => {
					const settings = await this.settings(tx);
					const parks = (p.retry ?? true) && before.attempts >= before.maxAttempts;
					return {
						type: 'fail',
						actor: ctx.actor,
						epoch: p.epoch,
						reason: p.reason,
						retry: p.retry,
						backoffSeconds: p.backoffSeconds,
						backoff: {
							baseSeconds: before.backoffSeconds ?? settings.backoffSeconds,
							maxSeconds: settings.backoffMaxSeconds,
						},
						...(parks ? { earlierReasons: await this.earlierFailures(tx, before.id) } : {}),
					};
				},
				now,
			);
			return { result: { card }, events };
		});
	}

	/** Reasons of the card's failed or reclaimed attempts since its budget was last reset, newest first. */
	private async earlierFailures(tx: Queryable, cardId: string): Promise<string[]> {
		const rows = await tx.query<{ reason: string | null }>(
			`SELECT data->>'reason' AS reason FROM events
			 WHERE card_id = $1 AND type IN ('failed', 'reclaimed') AND seq > coalesce(
				(SELECT max(seq) FROM events WHERE card_id = $1 AND type IN ('unblocked', 'reopened')), 0)
			 ORDER BY seq DESC LIMIT 4`,
			[cardId],
		);
		return rows.map(r => r.reason).filter((r): r is string => r !== null);
	}

	/**
	 * Force-reclaims one card, or (the reaper's call) reclaims every expired lease and every claim the
	 * stall policy releases: no progress for the card's stallReleaseSeconds, else the backlog's.
	 */
	async reclaim(ctx: OpContext, p: ParsedParams<'card/reclaim'>): Promise<Result<'card/reclaim'>> {
		return this.uow.mutate(ctx, 'card/reclaim', async (tx, now) => {
			if (p.cardId !== undefined) {
				const { card, events } = await this.act(
					tx,
					p.cardId,
					{ type: 'reclaim', reason: p.reason ?? `reclaimed by ${ctx.actor}` },
					now,
					{ forced: true },
				);
				return { result: { cards: [card] }, events };
			}
			const expired = await tx.query<{ id: string }>(
				`SELECT id FROM cards WHERE status = 'claimed' AND lease_expires_at <= $1 ORDER BY id FOR UPDATE SKIP LOCKED`,
				[now],
			);
			const out = await this.actOnEach(
				tx,
				expired.map(r => r.id),
				{ type: 'reclaim', reason: p.reason ?? 'lease expired' },
				now,
			);
			const stalled = await tx.query<{ id: string; seconds: number }>(
				`SELECT id, ${stallSecondsSql} AS seconds FROM cards
				 WHERE status = 'claimed' AND ${stallSecondsSql} > 0
					AND coalesce(progress_at, claimed_at) + make_interval(secs => ${stallSecondsSql}) <= $1
				 ORDER BY id FOR UPDATE SKIP LOCKED`,
				[now],
			);
			for (const { id, seconds } of stalled) {
				const reason = `no progress for ${seconds} s (stall policy); released for another agent`;
				const one = await this.act(tx, id, { type: 'reclaim', reason }, now, { stalled: true });
				out.result.cards.push(one.card);
				out.events.push(...one.events);
			}
			return out;
		});
	}

	private async actOnEach(
		tx: Queryable,
		ids: string[],
		action: Action,
		now: Date,
	): Promise<Mutation<{ cards: Card[] }>> {
		const cards: Card[] = [];
		const events: PendingEvent[] = [];
		for (const id of ids) {
			const out = await this.act(tx, id, action, now);
			cards.push(out.card);
			events.push(...out.events);
		}
		return { result: { cards }, events };
	}

	async block(ctx: OpContext, p: ParsedParams<'card/block'>): Promise<Result<'card/block'>> {
		return this.uow.mutate(ctx, 'card/block', async (tx, now) => {
			const { card, events } = await this.act(tx, p.cardId, { type: 'block', reason: p.reason }, now);
			return { result: { card }, events };
		});
	}

	async unblock(ctx: OpContext, p: ParsedParams<'card/unblock'>): Promise<Result<'card/unblock'>> {
		return this.uow.mutate(ctx, 'card/unblock', async (tx, now) => {
			const { card, events } = await this.act(tx, p.cardId, { type: 'unblock' }, now);
			return { result: { card }, events };
		});
	}

	/**
	 * Reopens a done card. Its dependents were built on its result, so the DAG invariant (nothing is
	 * claimed, completable or done while a dependency is not done) decides: with a dependent claimed or
	 * done it is refused, naming them, unless forced. Forced, each claimed dependent's claim ends (back
	 * to the queue, waiting again, its holder fenced out and told why on its next call, the attempt not
	 * counted) and each done dependent is flagged in its history; not-yet-done ones simply wait again.
	 */
	async reopen(ctx: OpContext, p: ParsedParams<'card/reopen'>): Promise<Result<'card/reopen'>> {
		return this.uow.mutate(ctx, 'card/reopen', async (tx, now) => {
			const target = await this.loadCard(tx, p.cardId, true);
			// Locked before they are read, so a claim committed meanwhile (PostgreSQL) is seen, not missed.
			const dependents =
				target.status !== 'done'
					? []
					: await tx.query<{ id: string; status: string; claim_owner: string | null }>(
							`SELECT c.id, c.status, c.claim_owner FROM edges e JOIN cards c ON c.id = e.card_id
							 WHERE e.dep_id = $1 ORDER BY c.id FOR UPDATE OF c`,
							[p.cardId],
						);
			const claimed = dependents.filter(d => d.status === 'claimed');
			const done = dependents.filter(d => d.status === 'done');
			if (p.force !== true && claimed.length + done.length > 0) {
				throw reopenRefusal(p.cardId, claimed, done);
			}
			const { card, events } = await this.act(tx, p.cardId, { type: 'reopen', reason: p.reason }, now, {
				...(p.force === true && claimed.length + done.length > 0 ? { forced: true } : {}),
			});
			const because = p.reason === undefined ? '' : ` (${p.reason})`;
			for (const d of claimed) {
				const out = await this.act(
					tx,
					d.id,
					{ type: 'requeue', reason: `dependency ${p.cardId} was reopened${because}; it waits for it again` },
					now,
				);
				events.push(...out.events);
			}
			for (const d of done) {
				const flaggedCard = await this.loadCard(tx, d.id, false);
				events.push({
					cardId: d.id,
					type: 'updated',
					data: {
						card: flaggedCard,
						reason: `built on ${p.cardId}, which was reopened${because}`,
						builtOnReopened: p.cardId,
					},
				});
			}
			return {
				result: {
					card,
					...(claimed.length > 0 ? { requeued: claimed.map(d => d.id) } : {}),
					...(done.length > 0 ? { flagged: done.map(d => d.id) } : {}),
				},
				events,
			};
		});
	}

	// -----------------------------------------------------------------------------------------------
	// The dependency graph

	async link(ctx: OpContext, p: ParsedParams<'card/link'>): Promise<Result<'card/link'>> {
		const deps = [...new Set(Array.isArray(p.dependsOn) ? p.dependsOn : [p.dependsOn])];
		return this.uow.mutate(ctx, 'card/link', async (tx, now) => {
			const before = await this.loadCard(tx, p.cardId, true);
			// FOR SHARE: a reopen of one of them waits for this link, then sees the new edge.
			const known = await tx.query<{ id: string; status: string }>(
				'SELECT id, status FROM cards WHERE id = ANY($1::text[]) ORDER BY id FOR SHARE',
				[deps],
			);
			const unknown = deps.filter(d => !known.some(k => k.id === d));
			if (unknown.length > 0) {
				throw new BatonError(
					'not_found',
					`Unknown dependency ${unknown.length === 1 ? 'id' : 'ids'}: ${unknown.join(', ')}. Check the ids with list.`,
					{ unknown },
				);
			}
			const added = deps.filter(d => !before.dependsOn.includes(d));
			if (added.length === 0) {
				return { result: { card: before }, events: [] };
			}
			const cycle = findCycle(await this.reachableDeps(tx, added), p.cardId, added);
			if (cycle !== null) {
				throw cycleError(cycle);
			}
			const unmetIds = known.filter(k => added.includes(k.id) && k.status !== 'done').map(k => k.id);
			const unmet = unmetIds.length;
			if (unmet > 0 && (before.status === 'claimed' || before.status === 'done')) {
				throw linkRefusal(before, unmetIds);
			}
			await tx.query('INSERT INTO edges (card_id, dep_id) SELECT $1, unnest($2::text[])', [p.cardId, added]);
			const rows = await tx.query<{ card: Card }>(
				`UPDATE cards SET depends_on = (SELECT coalesce(array_agg(dep_id ORDER BY dep_id), '{}') FROM edges WHERE card_id = $1),
					unmet_deps = unmet_deps + $2, version = version + 1, updated_at = $3
				 WHERE id = $1 RETURNING baton_card(cards) AS card`,
				[p.cardId, unmet, now],
			);
			const card = (rows[0] as { card: Card }).card;
			return { result: { card }, events: [{ cardId: card.id, type: 'linked', data: { card, dependsOn: added } }] };
		});
	}

	/** Every edge reachable from `roots` by following dependencies (what a cycle check must see). */
	private async reachableDeps(tx: Queryable, roots: string[]): Promise<DependencyMap> {
		const rows = await tx.query<{ card_id: string; dep_id: string }>(
			`WITH RECURSIVE reach(id) AS (
				SELECT unnest($1::text[])
				UNION
				SELECT e.dep_id FROM edges e JOIN reach r ON e.card_id = r.id
			)
			SELECT e.card_id, e.dep_id FROM edges e JOIN reach r ON e.card_id = r.id`,
			[roots],
		);
		const graph = new Map<string, string[]>();
		for (const r of rows) {
			const list = graph.get(r.card_id);
			if (list === undefined) {
				graph.set(r.card_id, [r.dep_id]);
			} else {
				list.push(r.dep_id);
			}
		}
		return graph;
	}

	async unlink(ctx: OpContext, p: ParsedParams<'card/unlink'>): Promise<Result<'card/unlink'>> {
		const deps = [...new Set(Array.isArray(p.dependsOn) ? p.dependsOn : [p.dependsOn])];
		return this.uow.mutate(ctx, 'card/unlink', async (tx, now) => {
			const before = await this.loadCard(tx, p.cardId, true);
			const missing = deps.filter(d => !before.dependsOn.includes(d));
			if (missing.length > 0) {
				throw new BatonError(
					'not_found',
					`Card ${p.cardId} does not depend on ${missing.join(', ')}; its dependencies are [${before.dependsOn.join(', ')}].`,
					{ cardId: p.cardId, missing },
				);
			}
			const removed = await tx.query<{ status: string | null }>(
				`WITH gone AS (DELETE FROM edges WHERE card_id = $1 AND dep_id = ANY($2::text[]) RETURNING dep_id)
				 SELECT c.status FROM gone LEFT JOIN cards c ON c.id = gone.dep_id`,
				[p.cardId, deps],
			);
			const unmet = removed.filter(r => r.status !== 'done').length;
			const rows = await tx.query<{ card: Card }>(
				`UPDATE cards SET depends_on = (SELECT coalesce(array_agg(dep_id ORDER BY dep_id), '{}') FROM edges WHERE card_id = $1),
					unmet_deps = unmet_deps - $2, version = version + 1, updated_at = $3
				 WHERE id = $1 RETURNING baton_card(cards) AS card`,
				[p.cardId, unmet, now],
			);
			const card = (rows[0] as { card: Card }).card;
			return { result: { card }, events: [{ cardId: card.id, type: 'unlinked', data: { card, dependsOn: deps } }] };
		});
	}

	async delete(ctx: OpContext, p: ParsedParams<'card/delete'>): Promise<Result<'card/delete'>> {
		return this.uow.mutate(ctx, 'card/delete', async tx => {
			const before = await this.loadCard(tx, p.cardId, true);
			const dependents = await tx.query<{ id: string }>(
				'SELECT card_id AS id FROM edges WHERE dep_id = $1 ORDER BY card_id LIMIT 20',
				[p.cardId],
			);
			if (dependents.length > 0) {
				const ids = dependents.map(d => d.id);
				throw new BatonError(
					'has_dependents',
					`Card ${p.cardId} cannot be deleted: ${ids.join(', ')} ${ids.length === 1 ? 'depends' : 'depend'} on it. Unlink ${ids.length === 1 ? 'it' : 'them'} first.`,
					{ cardId: p.cardId, dependents: ids },
				);
			}
			if (before.status === 'claimed') {
				throw new BatonError(
					'invalid_transition',
					`Card ${p.cardId} is claimed by agent ${before.claimOwner ?? '?'} (epoch ${before.claimEpoch}); release or reclaim it before deleting.`,
					{ cardId: p.cardId, holder: before.claimOwner, epoch: before.claimEpoch },
				);
			}
			await tx.query('DELETE FROM cards WHERE id = $1', [p.cardId]);
			return {
				result: { deleted: p.cardId },
				events: [{ cardId: p.cardId, type: 'deleted', data: { card: null, previous: before } }],
			};
		});
	}

	// -----------------------------------------------------------------------------------------------
	// Agents

	/** Registers or refreshes an agent (the hub calls it on hello); lastSeen = now. */
	async registerAgent(info: AgentInfo): Promise<void> {
		const now = this.clock.now();
		await this.db.query(
			`INSERT INTO agents (id, name, client, capabilities, host, pid, last_seen_at, registered_at)
			 VALUES ($1, $2, $3, $4::text[], $5, $6, $7, $7)
			 ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, client = EXCLUDED.client,
				capabilities = EXCLUDED.capabilities, host = EXCLUDED.host, pid = EXCLUDED.pid, last_seen_at = EXCLUDED.last_seen_at`,
			[
				info.id,
				info.name ?? info.id,
				info.client ?? 'unknown',
				[...new Set(info.capabilities ?? [])].sort(),
				info.host ?? null,
				info.pid ?? null,
				now,
			],
		);
	}

	/** Liveness: lastSeen = now and every live lease of ctx.actor renewed by its own TTL. Not logged. */
	async ping(ctx: OpContext): Promise<Result<'agent/ping'>> {
		const now = this.clock.now();
		await this.db.query(
			`INSERT INTO agents (id, name, client, last_seen_at, registered_at) VALUES ($1, $1, 'unknown', $2, $2)
			 ON CONFLICT (id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at`,
			[ctx.actor, now],
		);
		const rows = await this.db.query<{ id: string }>(
			`UPDATE cards SET lease_expires_at = $2::timestamptz + make_interval(secs => coalesce(lease_ttl_seconds, $3))
			 WHERE claim_owner = $1 AND status = 'claimed' AND lease_expires_at > $2 RETURNING id`,
			[ctx.actor, now, this.defaultTtl],
		);
		return { renewed: rows.length };
	}

	async listAgents(connected: ReadonlySet<string> = new Set()): Promise<Result<'agent/list'>> {
		const now = this.clock.now();
		const stallBefore = new Date(now.getTime() - this.thresholds.stallSeconds * 1000);
		const rows = await this.db.query<{
			id: string;
			name: string;
			client: string;
			capabilities: string[];
			host: string | null;
			pid: number | null;
			last_seen_at: Date;
			cards: string[];
			stalled: boolean | null;
		}>(
			`SELECT a.id, a.name, a.client, a.capabilities, a.host, a.pid, a.last_seen_at,
				coalesce(array_agg(c.id ORDER BY c.id) FILTER (WHERE c.id IS NOT NULL), '{}') AS cards,
				bool_or(c.progress_at <= $1) AS stalled
			 FROM agents a LEFT JOIN cards c ON c.claim_owner = a.id AND c.status = 'claimed'
			 GROUP BY a.id ORDER BY a.id`,
			[stallBefore],
		);
		return {
			agents: rows.map(r => {
				const lastSeen = new Date(r.last_seen_at);
				return {
					id: r.id,
					name: r.name,
					client: r.client,
					capabilities: r.capabilities,
					host: r.host,
					pid: r.pid === null ? null : num(r.pid),
					lastSeenAt: lastSeen.toISOString(),
					status: r.cards.length > 0 ? ('working' as const) : ('idle' as const),
					cards: r.cards,
					health: agentHealth(lastSeen, now, this.thresholds),
					stalled: r.stalled === true,
					connected: connected.has(r.id),
				};
			}),
			thresholds: this.thresholds,
		};
	}

	/** Force-reclaims every card an agent holds (a human giving up on it). */
	async reclaimAgent(ctx: OpContext, p: ParsedParams<'agent/reclaim'>): Promise<Result<'agent/reclaim'>> {
		return this.uow.mutate(ctx, 'agent/reclaim', async (tx, now) => {
			const held = await tx.query<{ id: string }>(
				`SELECT id FROM cards WHERE claim_owner = $1 AND status = 'claimed' ORDER BY id FOR UPDATE`,
				[p.agentId],
			);
			return this.actOnEach(
				tx,
				held.map(r => r.id),
				{ type: 'reclaim', reason: p.reason ?? `agent ${p.agentId} reclaimed by ${ctx.actor}` },
				now,
			);
		});
	}

	/** Releases every claim of an agent that went away (its session closed): event `released`. */
	async releaseAgent(ctx: OpContext, agentId: string, reason: string): Promise<Card[]> {
		const out = await this.uow.mutate(ctx, 'agent/release', async (tx, now) => {
			const held = await tx.query<{ id: string }>(
				`SELECT id FROM cards WHERE claim_owner = $1 AND status = 'claimed' ORDER BY id FOR UPDATE`,
				[agentId],
			);
			return this.actOnEach(
				tx,
				held.map(r => r.id),
				{ type: 'disconnect', reason },
				now,
			);
		});
		return out.cards;
	}

	// -----------------------------------------------------------------------------------------------
	// Events

	async listEvents(p: ParsedParams<'events/list'>): Promise<Result<'events/list'>> {
		const rows = await this.db.query<EventRow>(
			`SELECT seq, baton_ts(at) AS at, card_id, actor, type, data FROM events
			 WHERE seq > $1 AND ($2::text IS NULL OR card_id = $2) ORDER BY seq LIMIT $3`,
			[p.afterSeq ?? 0, p.cardId ?? null, p.limit ?? 100],
		);
		return { events: rows.map(toEvent), lastSeq: await this.lastSeq() };
	}

	async eventsAfter(seq: number, limit: number): Promise<BacklogEvent[]> {
		const rows = await this.db.query<EventRow>(
			`SELECT seq, baton_ts(at) AS at, card_id, actor, type, data FROM events WHERE seq > $1 ORDER BY seq LIMIT $2`,
			[seq, limit],
			'baton_events_after',
		);
		return rows.map(toEvent);
	}

	async lastSeq(): Promise<number> {
		const rows = await this.db.query<{ s: unknown }>('SELECT coalesce(max(seq), 0) AS s FROM events');
		return num(rows[0]?.s ?? 0);
	}

	// -----------------------------------------------------------------------------------------------
	// Export / import

	/** Every table in one snapshot, with the schema it was read under: a full backup (core/store/dump.ts). */
	async dump(): Promise<{ rows: DumpRows; schema: number }> {
		const schema = await schemaVersion(this.db);
		return { rows: await readDump(this.db), schema };
	}

	/** Lossless export in pages of 500, ordered by id. */
	async exportCards(p: ParsedParams<'data/export'>): Promise<Result<'data/export'>> {
		const rows = await this.db.query<{ card: Card }>(
			`SELECT baton_card(cards) AS card FROM cards WHERE ($1::text IS NULL OR id > $1) ORDER BY id LIMIT $2`,
			[p.cursor ?? null, exportPage + 1],
		);
		const cards = rows.slice(0, exportPage).map(r => r.card);
		const last = cards[cards.length - 1];
		return rows.length > exportPage && last !== undefined ? { cards, nextCursor: last.id } : { cards };
	}

	/**
	 * Imports exported cards with their ids; ids that exist already are skipped. A dependency may
	 * arrive in a later page: its edge is kept and counts as unmet until that card is imported.
	 */
	async importCards(ctx: OpContext, p: ParsedParams<'data/import'>): Promise<Result<'data/import'>> {
		return this.uow.mutate(ctx, 'data/import', async tx => {
			const seen = new Set<string>();
			for (const c of p.cards) {
				checkCardId(c.id);
				checkTitle(c.id, c.title);
				checkBody(c.id, c.body);
				if (seen.has(c.id)) {
					throw new BatonError('invalid_input', `Card ${c.id} appears twice in this import.`, { cardId: c.id });
				}
				seen.add(c.id);
				for (const field of ['createdAt', 'updatedAt'] as const) {
					parseTimestamp(field, c[field]);
				}
			}
			const records = p.cards.map(c => ({
				id: c.id,
				title: c.title,
				body: c.body,
				phase: c.phase,
				priority: c.priority,
				status: c.status,
				requires: c.requires,
				depends_on: [...new Set(c.dependsOn)].sort(),
				unmet_deps: 0,
				claim_owner: c.claimOwner,
				claimed_at: c.claimedAt,
				lease_expires_at: c.leaseExpiresAt,
				lease_ttl_seconds: c.leaseSeconds ?? null,
				claim_epoch: c.claimEpoch,
				attempts: c.attempts,
				max_attempts: c.maxAttempts,
				defer_until: c.deferUntil,
				progress: c.progress,
				progress_note: c.progressNote,
				progress_at: c.progressAt,
				result: c.result,
				blocked_reason: c.blockedReason,
				failed: c.failed ?? false,
				backoff_seconds: c.backoffSeconds ?? null,
				stall_release_seconds: c.stallReleaseSeconds ?? null,
				idempotency_key: c.idempotencyKey,
				acceptance: c.acceptance,
				version: c.version,
				created_at: c.createdAt,
				updated_at: c.updatedAt,
			}));
			const inserted = await tx.query<{ id: string }>(
				`INSERT INTO cards SELECT * FROM jsonb_populate_recordset(NULL::cards, $1::jsonb)
				 ON CONFLICT DO NOTHING RETURNING id`,
				[JSON.stringify(records)],
			);
			const ids = inserted.map(r => r.id);
			if (ids.length > 0) {
				await tx.query(
					`INSERT INTO edges (card_id, dep_id)
					 SELECT c.id, unnest(c.depends_on) FROM cards c WHERE c.id = ANY($1::text[]) ON CONFLICT DO NOTHING`,
					[ids],
				);
				// Recount readiness for the new cards and for cards whose missing dependency just arrived.
				await tx.query(
					`UPDATE cards c SET unmet_deps = (
						SELECT count(*) FROM edges e LEFT JOIN cards d ON d.id = e.dep_id
						WHERE e.card_id = c.id AND d.status IS DISTINCT FROM 'done')
					 WHERE c.id = ANY($1::text[]) OR c.id IN (SELECT card_id FROM edges WHERE dep_id = ANY($1::text[]))`,
					[ids],
				);
			}
			const cards =
				ids.length === 0
					? []
					: await tx.query<{ card: Card }>(
							'SELECT baton_card(cards) AS card FROM cards WHERE id = ANY($1::text[]) ORDER BY id',
							[ids],
						);
			return {
				result: { imported: ids.length, skipped: p.cards.length - ids.length },
				events: cards.map(r => ({
					cardId: r.card.id,
					type: 'created' as const,
					data: { card: r.card, imported: true },
				})),
			};
		});
	}

	// -----------------------------------------------------------------------------------------------
	// Timers and upkeep for the hub

	/**
	 * When the next lease runs out or the stall policy next releases a claim (the hub's reaper sets an
	 * exact timer for it).
	 */
	async nextLeaseExpiry(): Promise<Date | null> {
		const rows = await this.db.query<{ at: Date | null }>(
			`SELECT least(min(lease_expires_at), min(CASE WHEN seconds > 0 THEN since + make_interval(secs => seconds) END)) AS at
			 FROM (SELECT lease_expires_at, coalesce(progress_at, claimed_at) AS since, ${stallSecondsSql} AS seconds
				FROM cards WHERE status = 'claimed') c`,
		);
		const at = rows[0]?.at ?? null;
		return at === null ? null : new Date(at);
	}

	/** When the next deferred card becomes claimable (claim long-polls wait for it). */
	async nextDeferredAt(): Promise<Date | null> {
		const rows = await this.db.query<{ at: Date | null }>(
			`SELECT min(defer_until) AS at FROM cards WHERE status = 'ready' AND defer_until > $1`,
			[this.clock.now()],
		);
		const at = rows[0]?.at ?? null;
		return at === null ? null : new Date(at);
	}

	/** VACUUM (ANALYZE) in PGlite (it has no autovacuum) and prunes request_log older than a day. */
	async maintenance(): Promise<void> {
		const cutoff = new Date(this.clock.now().getTime() - requestLogDays * 86_400_000);
		await this.db.query('DELETE FROM request_log WHERE at < $1', [cutoff]);
		if (this.mode === 'pglite') {
			await this.db.exec('VACUUM (ANALYZE)');
		}
	}
}

/** Reopening a card others were built on, unforced: names them and says what force would do. */
function reopenRefusal(
	cardId: string,
	claimed: readonly { id: string; claim_owner: string | null }[],
	done: readonly { id: string }[],
): BatonError {
	const names = [
		...claimed.slice(0, 10).map(d => `${d.id} (claimed by ${d.claim_owner ?? '?'})`),
		...done.slice(0, 10).map(d => `${d.id} (done)`),
	];
	const more = claimed.length + done.length - names.length;
	return new BatonError(
		'has_dependents',
		`Card ${cardId} cannot be reopened: ${names.join(', ')}${more > 0 ? ` and ${more} more` : ''} ` +
			`${claimed.length + done.length === 1 ? 'was' : 'were'} built on it. Reopen with force to end the claims ` +
			`(those cards wait for ${cardId} again) and flag the done ones, or create a follow-up card instead.`,
		{
			cardId,
			dependents: [...claimed, ...done].map(d => d.id),
			claimed: claimed.map(d => d.id),
			done: done.map(d => d.id),
		},
	);
}

/** A claimed or done card may not start waiting on an unfinished card (the DAG invariant). */
function linkRefusal(card: Card, unmetIds: readonly string[]): BatonError {
	const list = unmetIds.join(', ');
	const what =
		card.status === 'claimed'
			? `is claimed by agent ${card.claimOwner ?? '?'}; it cannot start waiting on ${list}, which ${unmetIds.length === 1 ? 'is' : 'are'} not done. Release it first, or link once ${list} ${unmetIds.length === 1 ? 'is' : 'are'} done.`
			: `is done; it cannot depend on ${list}, which ${unmetIds.length === 1 ? 'is' : 'are'} not done. Reopen it first if it must wait for ${list}.`;
	return new BatonError('invalid_transition', `Card ${card.id} ${what}`, {
		cardId: card.id,
		status: card.status,
		waitsOn: unmetIds,
	});
}

/** A claimed card's stall policy in seconds: its own, else the backlog setting, else the default. */
const stallSecondsSql = `coalesce(stall_release_seconds,
	(SELECT (value #>> '{}')::int FROM settings WHERE key = 'stallReleaseSeconds'), ${defaultSettings.stallReleaseSeconds})`;

/** $1–$6 of the holder's complete, the same for complete and complete {next} (completeCtes). */
function completeParams(ctx: OpContext, p: ParsedParams<'card/complete'>, now: Date, key: string | null): unknown[] {
	return [now, p.cardId, ctx.actor, p.result ?? null, p.epoch ?? null, key];
}

interface EventRow {
	seq: unknown;
	at: string;
	card_id: string;
	actor: string;
	type: EventType;
	data: BacklogEvent['data'];
}

function toEvent(r: EventRow): BacklogEvent {
	return { seq: num(r.seq), at: r.at, cardId: r.card_id, actor: r.actor, type: r.type, data: r.data };
}

function stripUndefined(data: Record<string, unknown>): Record<string, unknown> {
	return Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined));
}
