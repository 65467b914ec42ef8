/**
 * Moving a backlog in and out: the full backup (every table in one snapshot), the lossless card
 * export in pages, and the import of exported cards with their ids. Restoring a backup into a store is
 * the CLI's and store's business (mcp-server/cli/restore.ts, core/store/dump.ts), not this module's.
 */
import { checkBody, checkCardId, checkLabels, checkTitle, parseTimestamp } from '../protocol/cardText';
import { BatonError } from '../errors';
import type { Card, ParsedParams, Result } from '../protocol';
import { type DumpRows, readDump } from '../store/dump';
import { schemaVersion } from '../store/migrate';
import { cardsWithin, exportPageOf } from './paging';
import type { OpContext, UnitOfWork } from './unitOfWork';

const exportPage = 500;

export class Transfer {
	constructor(private readonly uow: UnitOfWork) {}

	/** Every table in one snapshot, with the schema it was read under: a full backup (core/store/dump.ts). */
	async dump(): Promise<{ rows: DumpRows; schema: number }> {
		const schema = await schemaVersion(this.uow.db);
		return { rows: await readDump(this.uow.db), schema };
	}

	/** Lossless export in pages of 500 (fewer past the page byte budget, paging.ts), ordered by id. */
	async exportCards(p: ParsedParams<'data/export'>): Promise<Result<'data/export'>> {
		const rows = await this.uow.db.query<{ card: Card | null }>(exportPageOf('$1', '$2'), [
			p.cursor ?? null,
			exportPage + 1,
		]);
		const cards = cardsWithin(rows, exportPage);
		const last = cards[cards.length - 1];
		return rows.length > cards.length && last !== undefined ? { cards, nextCursor: last.id } : { cards };
	}

	/**
	 * Imports exported cards with their ids; ids that exist already are skipped (or, with
	 * onConflict 'fail', refuse the whole call). A dependency may arrive in a later page: its edge is
	 * kept and counts as unmet until that card is imported.
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
				review: c.review ?? 'none',
				completed_by: c.completedBy ?? null,
				handoff: c.handoff ?? null,
				needs_input: c.needsInput ?? false,
				project: c.project ?? null,
				scope: c.scope ?? [],
				reserved: c.reserved ?? [],
				// Lossless like the rest: a card's branch and worktree travel with it.
				workspace: c.workspace ?? null,
				labels: checkLabels(c.id, c.labels ?? []),
				parent: c.parent ?? null,
				auto_close: c.autoClose ?? false,
				// Counted by migration 0023's triggers as the children arrive.
				open_children: 0,
				// Set by migration 0028's triggers as the cards and their parents arrive.
				tree_waits: false,
				related: c.related ?? [],
				duplicates: c.duplicates ?? [],
				discovered_from: c.discoveredFrom ?? null,
				base: c.base ?? null,
				// Who may claim it, and the seat holding it while claimed (lossless, as the claim is).
				assignee: c.assignee ?? null,
				dispatch: c.dispatch ?? null,
			}));
			const inserted = await tx.query<{ id: string }>(
				`INSERT INTO cards SELECT * FROM jsonb_populate_recordset(NULL::cards, $1::jsonb)
				 ON CONFLICT DO NOTHING RETURNING id`,
				[JSON.stringify(records)],
			);
			const ids = inserted.map(r => r.id);
			if (p.onConflict === 'fail' && ids.length < p.cards.length) {
				// Throwing rolls the whole call back: a foreign import is applied entirely or not at all.
				const made = new Set(ids);
				const clash = p.cards.filter(c => !made.has(c.id)).map(c => c.id);
				throw new BatonError(
					'conflict',
					`${clash.length} of the imported cards exist already (${clash.slice(0, 5).join(', ')}${clash.length > 5 ? ', …' : ''}), by id or by source reference; nothing was imported. Run the import again: it maps around what the store holds now.`,
					{ cardIds: clash },
				);
			}
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
			// `related` is kept on both cards (cardLinks.ts): an imported card's related cards,
			// imported with it or before, get it back in theirs; the ones that existed already say so.
			const backLinked =
				ids.length === 0
					? []
					: await tx.query<{ card: Card }>(
							`UPDATE cards t SET related = array(SELECT DISTINCT x FROM unnest(t.related || src.ids) x ORDER BY x),
								version = t.version + CASE WHEN t.id = ANY($1::text[]) THEN 0 ELSE 1 END
							 FROM (SELECT r AS id, array_agg(c.id) AS ids FROM cards c, unnest(c.related) r
								WHERE c.id = ANY($1::text[]) GROUP BY r) src
							 WHERE t.id = src.id AND NOT t.related @> src.ids
							 RETURNING baton_card(t) AS card`,
							[ids],
						);
			const made = new Set(ids);
			const cards =
				ids.length === 0
					? []
					: await tx.query<{ card: Card }>(
							'SELECT baton_card(cards) AS card FROM cards WHERE id = ANY($1::text[]) ORDER BY id',
							[ids],
						);
			return {
				result: { imported: ids.length, skipped: p.cards.length - ids.length },
				events: [
					...cards.map(r => ({
						cardId: r.card.id,
						type: 'created' as const,
						data: { card: r.card, imported: true },
					})),
					...backLinked
						.filter(r => !made.has(r.card.id))
						.map(r => ({ cardId: r.card.id, type: 'updated' as const, data: { card: r.card, changed: ['related'] } })),
				],
			};
		});
	}
}
