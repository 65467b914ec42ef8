/**
 * The live scopes kept between claims (docs/decisions/0075-scope-cache.md: a scoped claim read and rebuilt all of them, 200 claims
 * as one JSON value, every time). PGlite only: one hub owns the store there and numbers events
 * max(seq)+1 in commit order, so "the live scopes as of event seq S" plus the events after S is the
 * live set now. Every change of a card appends an event whose `data.card` is the card after it
 * (core/protocol/domain.ts), and a card's live scope is a function of that card (liveScope), so the
 * cache follows the log: the backlog's own commits arrive through onCommitted, anything it missed is
 * read back from the events table, and a gap it cannot account for (a card-less event about a card)
 * reads the whole live set again. Its answer is valid only for the state at `seq`: a caller that acts
 * on it checks, in the statement that acts, that max(seq) is still that (scopedClaim.ts), or holds the
 * store's only transaction (PGlite runs one at a time). On PostgreSQL other hubs change the set and
 * their seqs commit out of order, so it is not used there (scopes.ts reads the set under the lock).
 * It also remembers which ready cards a live claim keeps back (`blocked`), so the next claim's
 * candidates skip them instead of reading past them. Holds no SQL beyond reading events and the set;
 * decides overlap with core/scope/conflicts.ts and nothing else.
 */
import type { BacklogEvent, Card } from '../protocol';
import { type HeldScope, LiveScopes, liveScope } from '../scope/conflicts';
import type { Queryable } from '../store/db';
import type { UnitOfWork } from './unitOfWork';
import { num } from './values';

/** The whole live set with the seq it is as of, in one statement (one snapshot). */
export const liveSetSql = `SELECT (SELECT coalesce(max(seq), 0) FROM events) AS seq,
	coalesce((SELECT json_agg(json_build_array(id, claim_owner, title, project, scope || reserved)) FROM cards
		WHERE status = 'claimed' AND (scope <> '{}' OR reserved <> '{}')), '[]')::text AS held`;

/** The events after a seq, with their cards as text (parsed here), at most `catchUpLimit` + 1. */
const eventsAfterSql = `SELECT seq, card_id, type, (data->'card')::text AS card FROM events
	WHERE seq > $1 ORDER BY seq LIMIT $2`;

/** Events read back before the whole set is read instead (a few thousand bytes of card each). */
const catchUpLimit = 64;

/** Ready cards remembered as kept back, at most (each one an id the candidates statement skips). */
const blockedLimit = 256;

export class LiveScopeCache {
	/** The live set as of `seq`; undefined until first read (and after a gap). */
	private live: LiveScopes | undefined;
	private seq = 0;
	/** Ready card → the held scope (the very object filed) that keeps it back. */
	private readonly blocked = new Map<string, HeldScope>();

	constructor(uow: UnitOfWork) {
		uow.onCommitted(events => {
			this.committed(events);
		});
	}

	/** The seq the live set is as of (meaningful once `current` has answered). */
	get asOf(): number {
		return this.seq;
	}

	/**
	 * The live scopes as of the store's newest event: `max` when the caller read it in the statement it
	 * acts on (candidates), else read here. Outside a transaction, or in one that has appended no event yet.
	 */
	async current(q: Queryable, max?: number): Promise<LiveScopes> {
		let newest = max;
		if (newest === undefined) {
			const [row] = await q.query<{ seq: unknown }>('SELECT coalesce(max(seq), 0) AS seq FROM events');
			newest = num(row?.seq);
		}
		if (this.live !== undefined && newest === this.seq) {
			return this.live;
		}
		if (this.live !== undefined && newest > this.seq) {
			const rows = await q.query<{ seq: unknown; card_id: string; type: BacklogEvent['type']; card: string | null }>(
				eventsAfterSql,
				[this.seq, catchUpLimit + 1],
			);
			let whole = rows.length <= catchUpLimit;
			if (whole) {
				for (const r of rows) {
					const seq = num(r.seq);
					// Another caller may have moved the set on while this one read: never apply an event twice
					// (an old `released` after a newer `claimed` would drop a live claim).
					if (seq <= this.seq) {
						continue;
					}
					whole = this.apply(r.card_id, r.type, r.card === null ? null : (JSON.parse(r.card) as Card | null));
					if (!whole) {
						break;
					}
					this.seq = seq;
				}
			}
			// apply() drops the set at a gap it cannot account for.
			const caughtUp = this.set();
			if (whole && caughtUp !== undefined) {
				return caughtUp;
			}
		}
		return this.reload(q);
	}

	/** The set as it stands (a method, so a check after an await is not narrowed away). */
	private set(): LiveScopes | undefined {
		return this.live;
	}

	/** Reads the whole live set again (first use, a gap, or too far behind). */
	private async reload(q: Queryable): Promise<LiveScopes> {
		const [row] = await q.query<{ seq: unknown; held: string }>(liveSetSql, [], 'baton_live_set');
		const held = JSON.parse(row?.held ?? '[]') as [string, string, string, string | null, string[]][];
		const live = new LiveScopes(
			held.map(([cardId, holder, title, project, entries]): HeldScope => ({ cardId, holder, title, project, entries })),
		);
		this.blocked.clear();
		this.live = live;
		this.seq = num(row?.seq);
		return live;
	}

	/** The backlog's own commits, in seq order: applied while they follow on from `seq`. */
	private committed(events: readonly BacklogEvent[]): void {
		for (const e of events) {
			if (this.live === undefined || e.seq !== this.seq + 1) {
				return; // not the next one: the next `current` reads what is missing from the store
			}
			if (!this.apply(e.cardId, e.type, e.data.card)) {
				return;
			}
			this.seq = e.seq;
		}
	}

	/**
	 * One event's change of the live set. False when it cannot be applied (a card-less event about a
	 * card that was not deleted): the set is dropped and read whole next time.
	 */
	private apply(cardId: string, type: BacklogEvent['type'], card: Card | null | undefined): boolean {
		const live = this.live;
		if (live === undefined) {
			return false;
		}
		this.blocked.delete(cardId); // its scope, project or state may have changed
		if (card === null || card === undefined) {
			if (type === 'deleted') {
				live.remove(cardId);
				return true;
			}
			if (cardId.startsWith('baton:')) {
				return true; // a line-wide event (a pause, an agent's exit): no card changed
			}
			this.live = undefined;
			return false;
		}
		const entries = liveScope(card);
		if (entries.length === 0) {
			live.remove(card.id);
			return true;
		}
		const was = live.get(card.id);
		const held: HeldScope = {
			cardId: card.id,
			holder: card.claimOwner ?? 'unknown',
			title: card.title,
			project: card.project ?? null,
			entries,
		};
		// A heartbeat changes nothing held: keep the filed object, which `blocked` entries point at.
		if (
			was?.holder !== held.holder ||
			was.title !== held.title ||
			was.project !== held.project ||
			was.entries.join('\n') !== entries.join('\n')
		) {
			live.add(held);
		}
		return true;
	}

	/** Remembers that `cardId` (ready) waits on `holderCardId`'s live claim. */
	keptBack(cardId: string, holderCardId: string): void {
		const held = this.live?.get(holderCardId);
		if (held !== undefined && this.blocked.size < blockedLimit) {
			this.blocked.set(cardId, held);
		}
	}

	/** Ready cards still kept back by the claim that kept them back (for the candidates to skip). */
	keptBackIds(): string[] {
		const ids: string[] = [];
		for (const [id, held] of this.blocked) {
			if (this.live?.get(held.cardId) === held) {
				ids.push(id);
			} else {
				this.blocked.delete(id);
			}
		}
		return ids;
	}
}

const caches = new WeakMap<UnitOfWork, LiveScopeCache>();

/** The backlog's cache on PGlite; undefined on PostgreSQL, where the set is read under the scope lock. */
export function liveScopeCache(uow: UnitOfWork): LiveScopeCache | undefined {
	if (uow.db.mode !== 'pglite') {
		return undefined;
	}
	let cache = caches.get(uow);
	if (cache === undefined) {
		cache = new LiveScopeCache(uow);
		caches.set(uow, cache);
	}
	return cache;
}
