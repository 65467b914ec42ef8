/**
 * The agent's loop: claim the best card (or one by id), heartbeat it, complete it, and complete {next}
 * (the hand-over in one call). The holder's common case is one hot statement (hotSql.ts); when it
 * changes nothing the general path runs in a transaction and explains why. Decisions come from the
 * pure rules, and why nothing is claimable from nothingClaimable.ts; this module holds no SQL catalogue
 * of its own and never waits (the hub does).
 */
import { leaseOf } from '../rules/lease';
import type { BacklogEvent, Card, ParsedParams, Result } from '../protocol';
import { BatonError } from '../errors';
import type { Queryable } from '../store/db';
import { act, cardState, loadCard, loadCardRow } from './cardActions';
import { decide } from '../rules/stateMachine';
import { claimById } from './claimById';
import { checkMaxHeld, lineSettings, recordDispatch, seatsFull } from './dispatchOps';
import { claimerKind, pausedNothingClaimable } from './pauses';
import { nowClaimable, withHandoff } from './reviews';
import { pickClaimable, preparePick, projectParam } from './scopes';
import { claimScoped } from './scopedClaim';
import { liveScopeCache } from './liveScopeCache';
import { afterChildDone, checkCloseParent, openChildCount } from './tree';
import type { Mutation, OpContext, UnitOfWork } from './unitOfWork';
import type { Action } from '../rules/cardState';
import { nothingClaimable } from './nothingClaimable';
import { present } from './values';
import { recordUsage } from './usage';

/** How a claim answers when nothing is claimable. */
export interface ClaimOptions {
	/**
	 * Say why nothing is claimable (default true). The explanation counts the whole table, so a
	 * waiting claim's retries pass false and only its final answer explains (the hub's waitingClaims.ts).
	 */
	explain?: boolean;
	/**
	 * Cards to take only when no other is claimable (complete {next} without its one-call hand-over:
	 * the ones the completion just unblocked, which the hand-over's pick never sees).
	 */
	passOver?: readonly string[];
}

export class ClaimCycle {
	/** The last plain claim took a card with a scope (PGlite's scoped claim runs first then). */
	private scopedFirst = false;

	constructor(
		private readonly uow: UnitOfWork,
		private readonly defaultTtl: number,
	) {}

	/**
	 * Claims the best claimable card (or `p.cardId`), with the hand-over note of a reviewer's request
	 * for changes when the card has one. Ignores waitSeconds: the hub does the waiting.
	 */
	async claim(
		ctx: OpContext,
		p: ParsedParams<'card/claim'>,
		options: ClaimOptions = {},
	): Promise<Result<'card/claim'>> {
		return withHandoff(await this.claimCard(ctx, p, options));
	}

	private async claimCard(
		ctx: OpContext,
		p: ParsedParams<'card/claim'>,
		options: ClaimOptions,
	): Promise<Result<'card/claim'>> {
		const passOver = options.passOver ?? [];
		const kind = claimerKind(ctx, p);
		const ttl = p.ttlSeconds ?? this.defaultTtl;
		const caps = [...new Set(p.capabilities ?? [])];
		// $1–$6 of the claim, the same for the hot statement and the general path's pick.
		const claimParams = (now: Date): unknown[] => [
			now,
			caps,
			p.phase ?? null,
			ctx.actor,
			new Date(now.getTime() + ttl * 1000),
			ttl,
		];
		// A claim {labels} takes the general path, whose candidates filter by label.
		// An empty list names no label: the same as none.
		const labels = p.labels !== undefined && p.labels.length > 0 ? p.labels : undefined;
		// A supervisor's claim (dispatch) takes the general path: its seat limits are checked in
		// the transaction and its record written with the claim.
		const plain = p.cardId === undefined && passOver.length === 0 && labels === undefined && p.dispatch === undefined;
		// PGlite, once a claim took a scoped card: the scoped claim first (scopedClaim.ts), since the hot
		// claim takes no card with a scope and would only cost a statement.
		const scopedFirst = plain && p.phase === undefined && this.scopedFirst;
		if (plain && !scopedFirst) {
			const fast = await this.uow.fast(ctx, async (now, key) => {
				const rows = await this.uow.hot<{ card: Card; seq: unknown }>(p.phase === undefined ? 'claim' : 'claimPhase', [
					...claimParams(now),
					key,
					projectParam(p.project),
					ctx.session ?? null,
					kind,
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
		if (plain && p.phase === undefined) {
			const scoped = await claimScoped(this.uow, ctx, { claimParams, project: projectParam(p.project), kind });
			this.scopedFirst = scoped?.scoped === true;
			if (scoped !== undefined) {
				return scoped.result;
			}
		}
		await preparePick(this.uow.db, this.uow.catalogue.sql);
		return this.uow.mutate(ctx, 'card/claim', async (tx, now): Promise<Mutation<Result<'card/claim'>>> => {
			const dispatch = p.dispatch;
			if (p.cardId !== undefined) {
				return claimById(tx, this.uow, ctx, { ...p, cardId: p.cardId }, { caps, ttl, kind, now });
			}
			const line = await lineSettings(tx);
			const held = await checkMaxHeld(tx, ctx.actor, line.maxHeld).then(
				() => undefined,
				(e: unknown) => {
					if (BatonError.is(e, 'invalid_transition')) {
						return e.message;
					}
					throw e;
				},
			);
			if (held !== undefined) {
				return { result: { card: null, lease: null, reason: held }, events: [] };
			}
			// The general path (the fast one found nothing, lost a race, or met a card with a scope): the
			// same order, each scoped card checked against the live claims of its project, plus the reason.
			const pick = (skip: readonly string[]) =>
				pickClaimable(tx, this.uow.catalogue.sql, {
					claimParams: claimParams(now),
					project: p.project,
					skip,
					session: ctx.session,
					labels,
					kind,
					agingHours: line.agingHours,
					cache: liveScopeCache(this.uow),
					...(dispatch === undefined ? {} : { accept: c => seatsFull(tx, c.project, dispatch) }),
				});
			const first = passOver.length > 0 ? await pick(passOver) : undefined;
			const picked = first?.card !== undefined ? first : await pick([]);
			const taken = picked.card;
			if (taken === undefined) {
				if (options.explain === false) {
					return { result: { card: null, lease: null }, events: [] };
				}
				const reason = await nothingClaimable(tx, caps, p.phase, p.project, now, picked.waits);
				const none = labels === undefined ? '' : `No claimable card has the label ${labels.join(' or ')}. `;
				const seats = picked.refused.length === 0 ? '' : `${picked.refused.join('; ')}. `;
				const paused = await pausedNothingClaimable(tx, ctx.actor, kind, caps, p.phase, p.project, now);
				return { result: { card: null, lease: null, reason: `${seats}${none}${paused}${reason}` }, events: [] };
			}
			const card = dispatch === undefined ? taken : await recordDispatch(tx, taken.id, dispatch, ctx.host, now);
			return {
				result: { card, lease: leaseOf(cardState(card)) },
				events: [{ cardId: card.id, type: 'claimed', data: { card, epoch: card.claimEpoch } }],
			};
		});
	}

	async heartbeat(ctx: OpContext, p: ParsedParams<'card/heartbeat'>): Promise<Result<'card/heartbeat'>> {
		// The holder's heartbeat: one statement renews the lease, records progress and logs a change.
		// A usage report takes the general path: its row is written in the heartbeat's transaction.
		const fast =
			p.usage !== undefined
				? undefined
				: await this.uow.fast(ctx, async (now, key) => {
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
							ctx.session ?? null,
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
			const { card, events } = await act(
				tx,
				p.cardId,
				{
					type: 'heartbeat',
					actor: ctx.actor,
					session: ctx.session,
					epoch: p.epoch,
					progress: p.progress,
					note: p.note,
					ttlSeconds: p.ttlSeconds ?? (await this.currentTtl(tx, p.cardId)),
				},
				now,
			);
			if (p.usage !== undefined) {
				const kind = ctx.kind ?? card.dispatch?.kind ?? null;
				const at = { cardId: card.id, epoch: card.claimEpoch, kind, project: card.project ?? null };
				await recordUsage(tx, at, p.usage, now);
			}
			return { result: { card, lease: present(leaseOf(cardState(card))) }, events };
		});
	}

	private async currentTtl(tx: Queryable, cardId: string): Promise<number> {
		const rows = await tx.query<{ ttl: number | null }>('SELECT lease_ttl_seconds AS ttl FROM cards WHERE id = $1', [
			cardId,
		]);
		return rows[0]?.ttl ?? this.defaultTtl;
	}

	/**
	 * Would `complete` be allowed now (the same rule, nothing written)? The hub asks before it commits the
	 * card's worktree, so a refused completion (another session, a lost lease) changes nothing. A re-sent
	 * request (its key stored) passes: its answer is the stored one.
	 */
	async checkComplete(ctx: OpContext, p: ParsedParams<'card/complete'>): Promise<void> {
		const db = this.uow.db;
		if (ctx.requestKey !== undefined) {
			if ((await db.query('SELECT 1 FROM request_log WHERE key = $1', [ctx.requestKey])).length > 0) {
				return;
			}
		}
		const { card, claimSession } = await loadCardRow(db, p.cardId, false);
		decide(cardState(card, claimSession), completeAction(ctx, p), this.uow.clock.now());
	}

	async complete(ctx: OpContext, p: ParsedParams<'card/complete'>, check?: string): Promise<Result<'card/complete'>> {
		const done = await this.completeOnly(ctx, p, check);
		if (p.next === undefined || done.next !== undefined) {
			return done;
		}
		// Nothing was taken in the same call (none was claimable before this completion, or the best was
		// a scoped card, which only the general path takes), or there was no such call (the general path
		// ran, or the hand-over is switched off): claim now, which says why when there is none. The
		// hand-over's pick never sees the cards this completion unblocked, so this claim passes over them
		// unless nothing else is claimable: with or without the hand-over the same card is picked (the
		// differential test found a scoped pick followed by a claim that took an unblocked card first).
		// Its own key (derived) makes a re-sent request replay this claim, not repeat it.
		const next = await this.claim(
			ctx.requestKey === undefined ? ctx : { ...ctx, requestKey: `${ctx.requestKey}#next` },
			p.next,
			{ passOver: done.unblocked },
		);
		return { ...done, next };
	}

	/** The completion, with the card the one-call hand-over took when it ran and took one. */
	private async completeOnly(
		ctx: OpContext,
		p: ParsedParams<'card/complete'>,
		check: string | undefined,
	): Promise<Result<'card/complete'>> {
		// A next claim by labels takes the general path, as claim {labels} does: the one-call
		// hand-over's pick does not filter by label.
		const handOver =
			p.next !== undefined &&
			this.uow.fastPaths.handOver &&
			(p.next.labels === undefined || p.next.labels.length === 0);
		if (p.force !== true) {
			// The holder's complete: one statement that checks the lease, frees dependents and logs, and
			// with `next` also claims the next card (one round trip for an agent's whole hand-over).
			const fast = await this.uow.fast(ctx, async (now, key) => {
				if (handOver && p.next !== undefined) {
					return this.completeNextFast(ctx, p, p.next, now, key);
				}
				const rows = await this.uow.hot<{ seq: unknown; data: BacklogEvent['data']; unblocked: string[] }>('complete', [
					...completeParams(ctx, p, now, key),
					ctx.session ?? null,
				]);
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
			const open = await openChildCount(tx, p.cardId);
			const leftOpen = open === 0 ? [] : await checkCloseParent(tx, await loadCard(tx, p.cardId, true), p.force, open);
			const { card, readiness, events } = await act(
				tx,
				p.cardId,
				completeAction(ctx, p, check),
				now,
				leftOpen.length > 0 ? { leftOpen } : {},
			);
			const unblocked = await nowClaimable(tx, readiness, now);
			const tree = card.status === 'done' ? await afterChildDone(tx, card, ctx.actor, now) : undefined;
			return {
				result: {
					card,
					unblocked: [...unblocked, ...(tree?.unblocked ?? [])],
					...(leftOpen.length > 0 ? { leftOpen } : {}),
				},
				events: [...events, ...(tree?.events ?? [])],
			};
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
			projectParam(next.project),
			ctx.session ?? null,
			ctx.kind ?? null,
		]);
		const row = rows[0];
		if (row === undefined) {
			return undefined;
		}
		const events = [this.uow.event(row.seq, now, p.cardId, ctx.actor, 'completed', row.data)];
		const result: Result<'card/complete'> = { card: present(row.data.card), unblocked: row.unblocked };
		const nextCard = row.next_card;
		if (nextCard !== null) {
			result.next = withHandoff({ card: nextCard, lease: leaseOf(cardState(nextCard)) });
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
}

/** $1–$6 of the holder's complete, the same for complete and complete {next} (completeCtes). */
function completeParams(ctx: OpContext, p: ParsedParams<'card/complete'>, now: Date, key: string | null): unknown[] {
	return [now, p.cardId, ctx.actor, p.result ?? null, p.epoch ?? null, key];
}

/** The state machine's `complete` for a request: one shape for the check before the hub commits and the write. */
function completeAction(ctx: OpContext, p: ParsedParams<'card/complete'>, check?: string): Action {
	return {
		type: 'complete',
		actor: ctx.actor,
		session: ctx.session,
		epoch: p.epoch,
		result: p.result,
		force: p.force,
		...(check === undefined ? {} : { check }),
	};
}
