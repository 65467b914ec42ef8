/**
 * Scopes in the store: the general path's pick that never hands out a card whose scope
 * overlaps a live claim of its project, the refusal of such a card claimed by id, card/reserve, and
 * the checks of a scope or project set by create or edit.
 * Granting a scope (a scoped claim, a reservation) happens under one advisory lock, so two hubs on one
 * PostgreSQL cannot both grant overlapping scopes; releasing one needs no lock (it only frees files).
 * Overlap is decided by the pure core/scope/conflicts.ts; this module sends SQL and decides nothing else.
 */
import { BatonError } from '../errors';
import { checkLease } from '../rules/lease';
import type { Card, ParsedParams, ReserveRefusal, Result } from '../protocol';
import { checkScope } from '../scope/check';
import { type HeldScope, LiveScopes, type ScopeConflict, heldBy } from '../scope/conflicts';
import type { Db, Queryable } from '../store/db';
import type { HotStatements } from './hotSql';
import { cardState, loadCardRow } from './cardActions';
import { claimableSql, ofProjectSql, pausedSql } from './claimableSql';
import { type LiveScopeCache, liveScopeCache, liveSetSql } from './liveScopeCache';
import type { OpContext, UnitOfWork } from './unitOfWork';

/** The advisory lock every grant of a scope takes (transaction-scoped): "btsc". */
const scopeLockKey = 0x62747363;

/**
 * The live scopes: every claim with a scope or a reservation (cards_live_scope_idx), as one JSON text
 * of [id, holder, title, project, entries] rows. One value: PGlite spent ~4 ms handing 200 rows of
 * five columns to JavaScript, and JSON.parse reads the same in a fraction of that.
 */
export const liveScopesSql = `SELECT coalesce(json_agg(json_build_array(id, claim_owner, title, project, scope || reserved)), '[]')::text
	AS held FROM cards WHERE status = 'claimed' AND (scope <> '{}' OR reserved <> '{}')`;

/** The entries of a scope read as one newline-joined text. */
export const splitEntries = (joined: string): string[] => (joined === '' ? [] : joined.split('\n'));

type PickStatements = Pick<
	HotStatements,
	| 'claimCandidates'
	| 'claimCandidatesAfter'
	| 'claimCandidatesLabeled'
	| 'claimCandidatesLabeledAfter'
	| 'claimCandidatesAged'
	| 'claimById'
>;

const preparedIn = new WeakSet<Db>();

/**
 * Prepares the general path's statements once per store, outside any transaction (Db.prepare: in
 * PGlite a transaction cannot prepare, and re-planned them on every claim).
 */
export async function preparePick(db: Db, sql: PickStatements): Promise<void> {
	if (db.prepare === undefined || preparedIn.has(db)) {
		return;
	}
	await db.prepare([
		{ name: 'baton_claim_candidates', text: sql.claimCandidates },
		{ name: 'baton_claim_candidates_after', text: sql.claimCandidatesAfter },
		{ name: 'baton_claim_candidates_labeled', text: sql.claimCandidatesLabeled },
		{ name: 'baton_claim_candidates_labeled_after', text: sql.claimCandidatesLabeledAfter },
		{ name: 'baton_claim_by_id', text: sql.claimById },
		{ name: 'baton_live_scopes', text: liveScopesSql },
		...(db.mode === 'pglite' ? [{ name: 'baton_live_set', text: liveSetSql }] : []),
	]);
	preparedIn.add(db);
}

/**
 * The live scopes as they are now, for a grant in this transaction. PostgreSQL: takes the scope lock
 * for the rest of the transaction, then reads them. PGlite (`cache`): runs one transaction at a time,
 * so the lock is moot, and the set kept between claims is brought up to the store's newest event
 * (liveScopeCache.ts); call it before the transaction appends an event.
 */
export async function lockLiveScopes(tx: Queryable, cache?: LiveScopeCache): Promise<LiveScopes> {
	if (cache !== undefined) {
		return cache.current(tx);
	}
	await tx.query('SELECT pg_advisory_xact_lock($1)', [scopeLockKey]);
	const [row] = await tx.query<{ held: string }>(liveScopesSql, [], 'baton_live_scopes');
	const held = JSON.parse(row?.held ?? '[]') as [string, string, string, string | null, string[]][];
	return new LiveScopes(
		held.map(([cardId, holder, title, project, entries]): HeldScope => ({ cardId, holder, title, project, entries })),
	);
}

/** The claimer's project as the statements take it: '*' any, null only cards without one. */
export function projectParam(project: string | null | undefined): string | null {
	return project === undefined ? '*' : project;
}

/** Ready cards that wait on files held by others, for the "nothing claimable" reason. */
export interface ScopeWaits {
	count: number;
	/** The first candidate's conflict (the holder it waits on). */
	first?: ScopeConflict;
	/** How many different claims hold the files they wait on. */
	holders: number;
}

export interface PickOptions {
	/** $1–$6 of the claim (now, caps, phase, actor, expiry, ttl). */
	claimParams: unknown[];
	project: string | null | undefined;
	/** Ids not to pick. */
	skip: readonly string[];
	/** The claimer's session, stored with the lease. */
	session?: string | undefined;
	/** Only cards with one of these labels (claim {labels}). */
	labels?: readonly string[] | undefined;
	/** The claimer's agent kind (`kind:K` assignments and kind pauses); null = none. */
	kind: string | null;
	/** The backlog's agingHours: candidates by effective priority; null = the claim order. */
	agingHours: number | null;
	/**
	 * Asked before a candidate is taken (a dispatched claim's seat limits of its project): a
	 * sentence says why not, and the candidate is passed over.
	 */
	accept?: (candidate: { id: string; project: string | null }) => Promise<string | undefined>;
	/** PGlite: the live scopes kept between claims (liveScopeCache.ts). */
	cache?: LiveScopeCache | undefined;
}

interface Candidate {
	id: string;
	project: string | null;
	/** Newline-joined (see liveScopesSql). */
	scope: string;
	priority: number;
	at: string;
}

/** Candidates read per batch: the first is small (the best card is usually free), later ones larger. */
const firstBatch = 4;
const laterBatch = 128;
/** Candidates looked at before giving up (their scopes all overlap live claims). */
const scanLimit = 2048;

/**
 * The general path's pick: the best claimable card whose scope overlaps no live claim of its project,
 * claimed (no event: the caller logs it). Cards without a scope are taken as they come; the scope lock
 * is taken at the first card with one. Returns the waits when nothing was taken.
 */
export async function pickClaimable(
	tx: Queryable,
	sql: PickStatements,
	o: PickOptions,
): Promise<{ card?: Card; waits: ScopeWaits; refused: string[] }> {
	const [now, caps, phase, actor] = o.claimParams;
	const refused = new Set<string>();
	const waits: ScopeWaits = { count: 0, holders: 0 };
	const holders = new Set<string>();
	let live: LiveScopes | undefined;
	let after: unknown[] = [];
	for (let seen = 0; seen < scanLimit;) {
		const limit = seen === 0 ? firstBatch : laterBatch;
		const labeled = o.labels !== undefined;
		const aged = o.agingHours !== null;
		const name = `baton_claim_candidates${labeled ? '_labeled' : ''}${after.length === 0 ? '' : '_after'}`;
		const text = labeled
			? after.length === 0
				? sql.claimCandidatesLabeled
				: sql.claimCandidatesLabeledAfter
			: after.length === 0
				? sql.claimCandidates
				: sql.claimCandidatesAfter;
		// Aged, the order is no index's: one batch of scanLimit, read by a statement of its own.
		const rows: Candidate[] = aged
			? await tx.query<Candidate>(sql.claimCandidatesAged, [
					now,
					caps,
					phase,
					projectParam(o.project),
					o.skip,
					scanLimit,
					actor,
					o.kind,
					o.agingHours,
					o.labels ?? null,
				])
			: await tx.query<Candidate>(
					text,
					[
						now,
						caps,
						phase,
						projectParam(o.project),
						o.skip,
						limit,
						...(labeled ? [o.labels] : []),
						...after,
						actor,
						o.kind,
					],
					name,
				);
		for (const row of rows) {
			if (row.scope !== '') {
				live ??= await lockLiveScopes(tx, o.cache);
				const conflict = live.conflict(row.project, splitEntries(row.scope));
				if (conflict !== undefined) {
					o.cache?.keptBack(row.id, conflict.cardId);
					waits.count++;
					waits.first ??= conflict;
					holders.add(conflict.cardId);
					continue;
				}
			}
			const no = await o.accept?.(row);
			if (no !== undefined) {
				refused.add(no);
				continue;
			}
			const taken = await tx.query<{ card: Card }>(
				sql.claimById,
				[...o.claimParams, row.id, o.session ?? null, o.kind],
				'baton_claim_by_id',
			);
			if (taken[0] !== undefined) {
				return { card: taken[0].card, waits, refused: [...refused] };
			}
		}
		seen += rows.length;
		const last = rows.at(-1);
		if (aged || rows.length < limit || last === undefined) {
			break;
		}
		after = [last.priority, last.at, last.id];
	}
	waits.holders = holders.size;
	return { waits, refused: [...refused] };
}

/**
 * How many ready cards, held back by no other guard (claimGuards.ts: files come last), wait on files a live claim of their
 * project holds (stats once counted them claimable while claim said they wait). Reads the live
 * scopes, and only when there are some the scoped candidates, at most `scanLimit` of them (as the
 * claim's pick: beyond, they count as claimable). Takes no lock: a count, not a grant.
 */
export async function countScopeWaits(db: Queryable, now: Date, project?: string | null): Promise<number> {
	const [row] = await db.query<{ held: string }>(liveScopesSql);
	const held = JSON.parse(row?.held ?? '[]') as [string, string, string, string | null, string[]][];
	if (held.length === 0) {
		return 0;
	}
	const live = new LiveScopes(
		held.map(([cardId, holder, title, project, entries]): HeldScope => ({ cardId, holder, title, project, entries })),
	);
	// Narrowed as card/stats is (cardStats in counts.ts): a project counts its cards and those with none.
	const ready = await db.query<{ id: string; project: string | null; scope: string[] }>(
		`SELECT id, project, scope FROM cards WHERE ${claimableSql('$1')} AND ${ofProjectSql('$2')}
			AND scope <> '{}' AND NOT (EXISTS (SELECT 1 FROM pauses) AND ${pausedSql()}) LIMIT ${scanLimit}`,
		[now, projectParam(project)],
	);
	return ready.filter(c => live.conflict(c.project, c.scope, c.id) !== undefined).length;
}

/** "2 ready cards wait on files held by AUTH-3 (claude-code-1)", for the nothing-claimable reason. */
export function describeScopeWaits(w: ScopeWaits): string | undefined {
	if (w.count === 0 || w.first === undefined) {
		return undefined;
	}
	const others = w.holders > 1 ? ` and ${w.holders - 1} other ${w.holders === 2 ? 'claim' : 'claims'}` : '';
	return `${w.count} ready ${w.count === 1 ? 'card waits' : 'cards wait'} on ${heldBy(w.first)}${others}`;
}

/** A refusal for a card claimed by id whose scope overlaps a live claim: names the holder and both globs. */
export async function checkScopeFree(tx: Queryable, card: Card, cache?: LiveScopeCache): Promise<void> {
	const scope = card.scope ?? [];
	if (scope.length === 0) {
		return;
	}
	const conflict = (await lockLiveScopes(tx, cache)).conflict(card.project ?? null, scope, card.id);
	if (conflict !== undefined) {
		throw new BatonError(
			'conflict',
			`Card ${card.id} touches files that ${conflict.cardId} (${conflict.holder}) holds: its "${conflict.mine}" overlaps "${conflict.theirs}". Claim it after ${conflict.cardId} ends, or claim another card.`,
			{
				cardId: card.id,
				holder: conflict.holder,
				holderCard: conflict.cardId,
				mine: conflict.mine,
				theirs: conflict.theirs,
			},
		);
	}
}

/** A card claimed by id must be of the claimer's project (or of none); '*' and omitted take any. */
export function checkProject(card: Card, project: string | null | undefined): void {
	const of = card.project ?? null;
	if (project === undefined || project === '*' || of === null || of === project) {
		return;
	}
	throw new BatonError(
		'invalid_transition',
		`Card ${card.id} belongs to project ${of}; you work in ${project ?? 'no project'}. Claim a card of your project, or start the agent in ${of}'s repository.`,
		{ cardId: card.id, project: of, yourProject: project },
	);
}

/** A new or edited scope is checked entry by entry (core/scope/check.ts); the error names the card. */
export function checkCardScope(cardId: string, scope: readonly string[] | undefined): void {
	if (scope === undefined || scope.length === 0) {
		return;
	}
	try {
		checkScope(scope);
	} catch (e) {
		throw BatonError.is(e)
			? new BatonError(e.code, `Card ${cardId}: ${e.message}`, { cardId, ...(e.data as object) })
			: e;
	}
}

/** A held card's files change only through its holder's reserve: other claims were checked against them. */
export function checkNotHeld(card: Card, field: 'project' | 'scope'): void {
	if (card.status === 'claimed') {
		throw new BatonError(
			'invalid_transition',
			`Card ${card.id} is claimed by ${card.claimOwner ?? '?'}; its ${field} cannot change while it is held (other claims were checked against it). Its holder can widen it with reserve; change it after the claim ends.`,
			{ cardId: card.id, holder: card.claimOwner, field },
		);
	}
}

export class Scopes {
	constructor(private readonly uow: UnitOfWork) {}

	/** The holder widens its card's scope: what no other live claim of the project holds is granted. */
	async reserve(ctx: OpContext, p: ParsedParams<'card/reserve'>): Promise<Result<'card/reserve'>> {
		checkScope(p.paths); // refused before anything is read
		return this.uow.mutate(ctx, 'card/reserve', async (tx, now) => {
			const { card: before, claimSession } = await loadCardRow(tx, p.cardId, true);
			// A zombie (its epoch superseded, its card reclaimed) hears lease_lost, as on every holder call.
			checkLease(cardState(before, claimSession), ctx.actor, p.epoch, now, 'reserve files for', ctx.session);
			if (before.status !== 'claimed') {
				throw new BatonError(
					'invalid_transition',
					`Card ${p.cardId} is ${before.status}, not claimed; only the agent working on a card reserves files for it.`,
					{ cardId: p.cardId, status: before.status },
				);
			}
			const live = await lockLiveScopes(tx, liveScopeCache(this.uow));
			const have = new Set([...(before.scope ?? []), ...(before.reserved ?? [])]);
			const granted: string[] = [];
			const refused: ReserveRefusal[] = [];
			for (const path of new Set(p.paths)) {
				const conflict = have.has(path) ? undefined : live.conflict(before.project ?? null, [path], before.id);
				if (conflict === undefined) {
					granted.push(path);
				} else {
					refused.push({ path, theirs: conflict.theirs, cardId: conflict.cardId, holder: conflict.holder });
				}
			}
			const added = granted.filter(path => !have.has(path));
			checkScope([...have, ...added]); // the card's whole live scope stays within the limits
			if (added.length === 0) {
				return { result: { card: before, granted, refused }, events: [] };
			}
			const rows = await tx.query<{ card: Card }>(
				`UPDATE cards SET reserved = reserved || $2::text[], version = version + 1, updated_at = $3 WHERE id = $1
				 RETURNING baton_card(cards) AS card`,
				[p.cardId, added, now],
			);
			const card = (rows[0] as { card: Card }).card;
			return {
				result: { card, granted, refused },
				events: [{ cardId: card.id, type: 'reserved', data: { card, granted: added } }],
			};
		});
	}
}
