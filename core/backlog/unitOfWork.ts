/**
 * The unit of work every backlog operation goes through: one transaction that runs the operation,
 * appends its events (one seq each) and records its request key, or one hot statement that does all
 * three; then the committed events go to the listeners. It owns the store handle and the clock; it
 * decides nothing about cards (the operation modules and the pure rules do) and holds no SQL of its own
 * beyond events and request_log.
 */
import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { BacklogEvent, EventOrigin, EventType } from '../protocol';
import { type Db, type Queryable, sqlState } from '../store/db';
import { allFastPaths, type FastPaths } from './fastPaths';
import { type HotKey, type SqlCatalogue, hotNames, sqlCatalogue } from './hotSql';
import { num, present } from './values';

export interface OpContext {
	/** Agent id of the caller; every change is recorded under it. */
	actor: string;
	/** Idempotency key of a mutating request: a repeat returns the stored result. */
	requestKey?: string | undefined;
	/**
	 * The caller's session (its hello's `session`): a claim stores it with the lease, and
	 * only the same session may then heartbeat, complete, release or fail that lease.
	 */
	session?: string | undefined;
	/** The caller's agent kind (its hello's `agent.kind`): `kind:K` assignments and kind pauses. */
	kind?: string | undefined;
	/** The caller's host as its hello says (a dispatched claim records it as the seat's host). */
	host?: string | undefined;
	/**
	 * Set by the hub for a human verb (approve, force, settings, pauses, hooks, …): every event the
	 * operation appends carries it as data.origin, naming the face and whether an agent performed it.
	 */
	origin?: EventOrigin | undefined;
}

/** An event about to be appended: seq, time and actor are added when it is written. */
export interface PendingEvent {
	cardId: string;
	type: EventType;
	data: Record<string, unknown>;
}

export interface Mutation<T> {
	result: T;
	events: PendingEvent[];
}

export type Listener = (events: BacklogEvent[]) => void;

export class UnitOfWork {
	/**
	 * The store. Not readonly: test/bench/core.ts swaps in a recording proxy (through Backlog.db) to
	 * explain the real SQL, so every operation reads it at call time.
	 */
	db: Db;
	/** The hot statements and seq expressions for this store. */
	readonly catalogue: SqlCatalogue;
	/** Which latency mechanisms run (all, unless a test or a measurement turned some off). */
	readonly fastPaths: Readonly<FastPaths>;
	private readonly listeners = new Set<Listener>();

	constructor(
		db: Db,
		readonly clock: Clock,
		/** Where faults no caller can be told of go (a listener that threw after the commit). */
		private readonly log: Logger,
		fastPaths: Partial<FastPaths> = {},
	) {
		this.db = db;
		this.catalogue = sqlCatalogue(db.mode);
		this.fastPaths = { ...allFastPaths, ...fastPaths };
	}

	/** Called after each committed mutation with the events it appended, in seq order. */
	onCommitted(listener: Listener): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/** Runs `fn` in one transaction, appends its events and stores its result under the request key. */
	async mutate<T>(ctx: OpContext, method: string, fn: (tx: Queryable, now: Date) => Promise<Mutation<T>>): Promise<T> {
		for (let attempt = 0; ; attempt++) {
			const now = this.clock.now();
			try {
				const { result, logged } = await this.db.transaction(async tx => {
					if (ctx.requestKey !== undefined) {
						const stored = await tx.query<{ result: { value: T } }>('SELECT result FROM request_log WHERE key = $1', [
							ctx.requestKey,
						]);
						if (stored[0] !== undefined) {
							return { result: stored[0].result.value, logged: [] as BacklogEvent[] };
						}
					}
					const out = await fn(tx, now);
					const origin = ctx.origin;
					const pending =
						origin === undefined ? out.events : out.events.map(e => ({ ...e, data: { ...e.data, origin } }));
					const events = await this.append(tx, pending, ctx.actor, now);
					if (ctx.requestKey !== undefined && !isEmptyClaim(method, out.result)) {
						await tx.query('INSERT INTO request_log (key, method, result, at) VALUES ($1, $2, $3::json, $4)', [
							ctx.requestKey,
							method,
							JSON.stringify({ value: out.result }),
							now,
						]);
					}
					// No pg_notify here: a transaction that NOTIFYs takes one database-wide lock at commit, which
					// serialised every commit. The hub announces after commit instead (notifyRelay.ts).
					return { result: out.result, logged: events };
				});
				this.emit(logged);
				return result;
			} catch (e) {
				// Two requests with the same key at once (PostgreSQL): the loser re-runs and finds the result.
				if (ctx.requestKey !== undefined && attempt === 0 && sqlState(e) === '23505') {
					continue;
				}
				throw e;
			}
		}
	}

	private async append(tx: Queryable, pending: PendingEvent[], actor: string, now: Date): Promise<BacklogEvent[]> {
		if (pending.length === 0) {
			return [];
		}
		let seqs: number[];
		if (pending.length === 1) {
			const p = present(pending[0]);
			const rows = await tx.query<{ seq: unknown }>(
				`INSERT INTO events (seq, at, card_id, actor, type, data) VALUES (${this.catalogue.nextSeq}, $1, $2, $3, $4, $5::json)
				 RETURNING seq`,
				[now, p.cardId, actor, p.type, JSON.stringify(p.data)],
				`baton_event_${this.db.mode}`,
			);
			seqs = [num(rows[0]?.seq)];
		} else {
			// Several events: take their seqs first, so each event knows its own.
			const rows = await tx.query<{ seq: unknown }>(this.catalogue.seqBatch, [pending.length]);
			seqs = rows.map(r => num(r.seq)).sort((a, b) => a - b);
			await tx.query(
				`INSERT INTO events (seq, at, card_id, actor, type, data)
				 SELECT u.seq, $1, u.card_id, $2, u.type, u.data::json
				 FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[]) AS u(seq, card_id, type, data)`,
				[
					now,
					actor,
					seqs,
					pending.map(p => p.cardId),
					pending.map(p => p.type),
					pending.map(p => JSON.stringify(p.data)),
				],
			);
		}
		const at = now.toISOString();
		return pending.map((p, i) => ({
			seq: present(seqs[i]),
			at,
			cardId: p.cardId,
			actor,
			type: p.type,
			data: p.data as BacklogEvent['data'],
		}));
	}

	/** Runs hot statement `key`, prepared under its name in hotNames. */
	hot<T>(key: HotKey, params: unknown[]): Promise<T[]> {
		return this.db.query<T>(this.catalogue.sql[key], params, hotNames[key]);
	}

	/**
	 * Runs a hot operation as one autocommitted statement that also logs its event and its request
	 * key (docs/decisions/0060-hot-statements.md). Returns undefined when the statement changed nothing, and the caller
	 * takes the general path, which explains the refusal, replays a known key, or handles the rarer
	 * case. A repeated key makes the statement fail on request_log's primary key, so nothing is applied
	 * twice and the common path needs no lookup first. With the `hot` switch off it returns undefined
	 * at once.
	 */
	async fast<T>(
		ctx: OpContext,
		run: (now: Date, key: string | null) => Promise<{ result: T; events: BacklogEvent[] } | undefined>,
	): Promise<T | undefined> {
		if (!this.fastPaths.hot) {
			return undefined; // switched off: the general path does it all
		}
		for (let attempt = 0; ; attempt++) {
			try {
				const out = await run(this.clock.now(), ctx.requestKey ?? null);
				if (out === undefined) {
					return undefined;
				}
				this.emit(out.events);
				return out.result;
			} catch (e) {
				const state = sqlState(e);
				// The key is known (23505 on request_log; the statement rolled back whole): answer as before.
				if (state === '23505' && ctx.requestKey !== undefined) {
					const stored = await this.db.query<{ result: { value: T } }>(
						'SELECT result FROM request_log WHERE key = $1',
						[ctx.requestKey],
					);
					if (stored[0] !== undefined) {
						return stored[0].result.value;
					}
				}
				// A deadlock between completes on PostgreSQL: run it again.
				if (attempt < 5 && (state === '40P01' || state === '23505')) {
					continue;
				}
				throw e;
			}
		}
	}

	/**
	 * Hands committed events to the listeners. The change is already committed, so a listener that
	 * throws must not make the caller believe it failed: its error is reported, not propagated.
	 */
	private emit(events: BacklogEvent[]): void {
		if (events.length === 0) {
			return;
		}
		for (const listener of this.listeners) {
			try {
				listener(events);
			} catch (e) {
				this.log.error('an onCommitted listener failed', e);
			}
		}
	}

	event(seq: unknown, now: Date, cardId: string, actor: string, type: EventType, data: object): BacklogEvent {
		return { seq: num(seq), at: now.toISOString(), cardId, actor, type, data: data as BacklogEvent['data'] };
	}
}

/**
 * "Nothing claimable" changes nothing, so its key is not remembered: a re-send after a failover, or a
 * waiting claim's next try under the same key, claims afresh instead of replaying the empty answer,
 * while a claim that did take a card is replayed (never a second card for one request).
 */
function isEmptyClaim(method: string, result: unknown): boolean {
	return method === 'card/claim' && (result as { card?: unknown } | null)?.card === null;
}
