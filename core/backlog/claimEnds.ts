/**
 * How a claim ends other than by completion — release, fail (with backoff and parking), reclaim (a
 * human's, or the reaper's for expired leases and stalled claims) — and a human parking a card and
 * letting it go again (block, unblock). Each is one transaction through the rules; the decisions
 * themselves live in core/rules/stateMachine.ts.
 */
import type { ParsedParams, Result } from '../protocol';
import type { Queryable } from '../store/db';
import { act, actOnEach } from './cardActions';
import { type BacklogSettings, stallSecondsSql } from './settings';
import type { OpContext, UnitOfWork } from './unitOfWork';

export class ClaimEnds {
	constructor(
		private readonly uow: UnitOfWork,
		private readonly settings: BacklogSettings,
	) {}

	async release(ctx: OpContext, p: ParsedParams<'card/release'>): Promise<Result<'card/release'>> {
		return this.uow.mutate(ctx, 'card/release', async (tx, now) => {
			const { card, events } = await act(
				tx,
				p.cardId,
				{
					type: 'release',
					actor: ctx.actor,
					session: ctx.session,
					epoch: p.epoch,
					reason: p.reason,
					force: p.force,
				},
				now,
			);
			return { result: { card }, events };
		});
	}

	async fail(ctx: OpContext, p: ParsedParams<'card/fail'>): Promise<Result<'card/fail'>> {
		return this.uow.mutate(ctx, 'card/fail', async (tx, now) => {
			const { card, events } = await act(
				tx,
				p.cardId,
				async before => {
					const settings = await this.settings.read(tx);
					const parks = (p.retry ?? true) && before.attempts >= before.maxAttempts;
					return {
						type: 'fail',
						actor: ctx.actor,
						session: ctx.session,
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
				const { card, events } = await act(
					tx,
					p.cardId,
					{ type: 'reclaim', reason: p.reason ?? `reclaimed by ${ctx.actor}` },
					now,
					{ forced: true },
				);
				return { result: { cards: [card] }, events };
			}
			const expired = await tx.query<{ id: string }>(
				`SELECT id FROM cards WHERE status IN ('claimed', 'review') AND claim_owner IS NOT NULL AND lease_expires_at <= $1
				 ORDER BY id FOR UPDATE SKIP LOCKED`,
				[now],
			);
			const out = await actOnEach(
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
				const one = await act(tx, id, { type: 'reclaim', reason }, now, { stalled: true });
				out.result.cards.push(one.card);
				out.events.push(...one.events);
			}
			return out;
		});
	}

	async block(ctx: OpContext, p: ParsedParams<'card/block'>): Promise<Result<'card/block'>> {
		return this.uow.mutate(ctx, 'card/block', async (tx, now) => {
			const { card, events } = await act(tx, p.cardId, { type: 'block', reason: p.reason }, now);
			return { result: { card }, events };
		});
	}

	async unblock(ctx: OpContext, p: ParsedParams<'card/unblock'>): Promise<Result<'card/unblock'>> {
		return this.uow.mutate(ctx, 'card/unblock', async (tx, now) => {
			const { card, events } = await act(tx, p.cardId, { type: 'unblock' }, now);
			return { result: { card }, events };
		});
	}
}
