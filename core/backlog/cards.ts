/**
 * Cards themselves: create (planned by the pure createPlan.ts), edit, get with its history, list pages
 * (cardList.ts), counts, delete. Transitions of a card's status are not here (claimCycle.ts,
 * claimEnds.ts, dependencies.ts); neither is any SQL of the hot paths.
 */
import { checkBody, checkCardId, checkLabels, checkTitle } from '../protocol/cardText';
import { BatonError } from '../errors';
import type { Card, CardRef, HealthThresholds, ParsedParams, Result } from '../protocol';
import type { Queryable } from '../store/db';
import { deriveAttempts } from './attempts';
import { agedPriority } from './dispatchOps';
import { loadCard } from './cardActions';
import { readableIds } from './readableIds';
import {
	type CardInput,
	answerInInputOrder,
	batchIndex,
	cardRecords,
	cardsToCreate,
	checkBatchCycle,
	checkKnownDeps,
	checkTexts,
	edgesOf,
	externalDeps,
} from './createPlan';
import { withHolds } from './cardHolds';
import { cardStats } from './counts';
import { cardEvents } from './feed';
import { cardMessages } from './messages';
import { checkCardScope, checkNotHeld } from './scopes';
import { defaultReview } from './settings';
import { withDiscovery } from './cardLinks';
import { createOne } from './createOne';
import { CardList } from './cardList';
import { checkCreatedTree, checkEditedParent } from './treeEdits';
import { afterChildDone, checkNoChildren, treeOf } from './tree';
import type { OpContext, UnitOfWork } from './unitOfWork';
import { present } from './values';
import { usageTotals, withUsage } from './usage';

const historyLimit = 500;

export class Cards {
	/** card/list's pages (cardList.ts). */
	private readonly pages: CardList;

	constructor(
		private readonly uow: UnitOfWork,
		private readonly thresholds: HealthThresholds,
	) {
		this.pages = new CardList(uow);
	}

	async create(ctx: OpContext, p: ParsedParams<'card/create'>): Promise<Result<'card/create'>> {
		// One card without id, key, dependencies or parent: one statement.
		const one = await createOne(this.uow, ctx, p);
		if (one !== undefined) {
			return one;
		}
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
			const fresh = cardsToCreate(inputs, byKey);
			// Cards made while the creator holds one record it; `fresh` keeps the inputs' identity.
			const toCreate = await withDiscovery(tx, ctx.actor, fresh);

			const ids = await this.assignIds(tx, toCreate);
			const batch = batchIndex(ids);
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
			checkTexts(toCreate, ids);
			toCreate.forEach((c, i) => checkCardScope(present(ids[i]), c.scope));

			// Dependencies: in this batch or existing; unknown ids and cycles are refused.
			const external = externalDeps(toCreate, batch);
			const depStatus = new Map<string, string>();
			if (external.size > 0) {
				const rows = await tx.query<{ id: string; status: string }>(
					'SELECT id, status FROM cards WHERE id = ANY($1::text[])',
					[[...external]],
				);
				for (const r of rows) {
					depStatus.set(r.id, r.status);
				}
				checkKnownDeps(external, depStatus);
			}
			checkBatchCycle(toCreate, ids, batch);
			await checkCreatedTree(tx, toCreate, ids);

			const records = cardRecords(toCreate, ids, batch, depStatus, now, await defaultReview(tx));
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
				const { edgeFrom, edgeTo } = edgesOf(records);
				if (edgeFrom.length > 0) {
					await tx.query('INSERT INTO edges (card_id, dep_id) SELECT * FROM unnest($1::text[], $2::text[])', [
						edgeFrom,
						edgeTo,
					]);
				}
			}
			return {
				result: { cards: answerInInputOrder(inputs, fresh, ids, created, byKey) },
				events: records.map(r => {
					const card = present(created.get(r.id));
					return { cardId: r.id, type: 'created' as const, data: { card } };
				}),
			};
		});
	}

	/** Ids for new cards: supplied ones are checked; missing ones are readable ids of their project. */
	private async assignIds(tx: Queryable, cards: readonly CardInput[]): Promise<string[]> {
		for (const c of cards) {
			if (c.id !== undefined) {
				checkCardId(c.id);
			}
		}
		const missing = cards.filter(c => c.id === undefined);
		const fresh =
			missing.length === 0
				? []
				: await readableIds(
						tx,
						missing.map(c => c.project ?? null),
					);
		return cards.map(c => c.id ?? fresh.shift() ?? '');
	}

	async update(ctx: OpContext, p: ParsedParams<'card/update'>): Promise<Result<'card/update'>> {
		return this.uow.mutate(ctx, 'card/update', async (tx, now) => {
			const before = await loadCard(tx, p.cardId, true);
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
			// A card already in review keeps its gate: the change applies to its next completion.
			if (p.review !== undefined && p.review !== (before.review ?? 'none')) {
				set('review', 'review', p.review);
			}
			if (p.project !== undefined && p.project !== (before.project ?? null)) {
				checkNotHeld(before, 'project');
				set('project', 'project', p.project);
			}
			if (p.scope !== undefined && p.scope.join('\n') !== (before.scope ?? []).join('\n')) {
				checkCardScope(p.cardId, p.scope);
				checkNotHeld(before, 'scope');
				set('scope', 'scope', p.scope, '::text[]');
			}
			if (p.labels !== undefined) {
				const labels = checkLabels(p.cardId, p.labels);
				if (labels.join('\n') !== (before.labels ?? []).join('\n')) {
					set('labels', 'labels', labels, '::text[]');
				}
			}
			if (p.parent !== undefined && p.parent !== (before.parent ?? null)) {
				await checkEditedParent(tx, before, p.parent);
				set('parent', 'parent', p.parent);
			}
			if (p.autoClose !== undefined && p.autoClose !== (before.autoClose ?? false)) {
				set('autoClose', 'auto_close', p.autoClose);
			}
			if (p.base !== undefined && p.base !== (before.base ?? null)) {
				checkBaseEditable(before);
				set('base', 'base', p.base);
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
		const card = await loadCard(this.uow.db, p.cardId, false);
		const [dependencies, dependents, history, messages] = await Promise.all([
			this.uow.db.query<CardRef>(
				`SELECT e.dep_id AS id, coalesce(c.title, '(missing)') AS title, coalesce(c.status, 'ready') AS status,
					coalesce(c.unmet_deps, 0) AS "unmetDeps", baton_ts(c.defer_until) AS "deferUntil"
				 FROM edges e LEFT JOIN cards c ON c.id = e.dep_id WHERE e.card_id = $1 ORDER BY e.dep_id`,
				[p.cardId],
				'baton_card_dependencies',
			),
			this.uow.db.query<CardRef>(
				`SELECT c.id, c.title, c.status, c.unmet_deps AS "unmetDeps", baton_ts(c.defer_until) AS "deferUntil"
				 FROM edges e JOIN cards c ON c.id = e.card_id WHERE e.dep_id = $1 ORDER BY c.id`,
				[p.cardId],
				'baton_card_dependents',
			),
			cardEvents(this.uow.db, p.cardId, historyLimit),
			cardMessages(this.uow.db, p.cardId),
		]);
		const now = this.uow.clock.now();
		// What holds the card and the cards it names back (cardHolds.ts), so each shows the claim's word.
		const [held, ...refs] = await withHolds<Card | CardRef>(this.uow.db, [card, ...dependencies, ...dependents]);
		return {
			card: held as Card,
			dependencies: refs.slice(0, dependencies.length),
			dependents: refs.slice(dependencies.length),
			history,
			...(await withUsage(this.uow.db, card.id, deriveAttempts(history, card))),
			messages,
			...(await treeOf(this.uow.db, card, now)),
			...(await agedPriority(this.uow.db, card, now)),
		};
	}

	list(ctx: OpContext, p: ParsedParams<'card/list'>): Promise<Result<'card/list'>> {
		return this.pages.list(ctx, p);
	}

	listRows(ctx: OpContext, p: ParsedParams<'card/listRows'>): Promise<Result<'card/listRows'>> {
		return this.pages.listRows(ctx, p);
	}

	async stats(_ctx: OpContext, p: ParsedParams<'card/stats'> = {}): Promise<Result<'card/stats'>> {
		const [stats, usage] = await Promise.all([
			cardStats(this.uow.db, this.uow.clock.now(), this.thresholds, p.project),
			usageTotals(this.uow.db, p.project),
		]);
		return { ...stats, usage };
	}

	async delete(ctx: OpContext, p: ParsedParams<'card/delete'>): Promise<Result<'card/delete'>> {
		return this.uow.mutate(ctx, 'card/delete', async (tx, now) => {
			const before = await loadCard(tx, p.cardId, true);
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
			await checkNoChildren(tx, p.cardId);
			if (before.status === 'claimed') {
				throw new BatonError(
					'invalid_transition',
					`Card ${p.cardId} is claimed by agent ${before.claimOwner ?? '?'} (epoch ${before.claimEpoch}); release or reclaim it before deleting.`,
					{ cardId: p.cardId, holder: before.claimOwner, epoch: before.claimEpoch },
				);
			}
			await tx.query('DELETE FROM cards WHERE id = $1', [p.cardId]);
			// Deleting a parent's last open child closes an auto-close parent as its completion would.
			const tree =
				before.parent !== null && before.parent !== undefined && before.status !== 'done'
					? await afterChildDone(tx, before, ctx.actor, now)
					: undefined;
			return {
				result: { deleted: p.cardId },
				events: [
					{ cardId: p.cardId, type: 'deleted', data: { card: null, previous: before } },
					...(tree?.events ?? []),
				],
			};
		});
	}
}

/**
 * A card's own base is read when its branch is made: once it has a branch not yet landed,
 * the branch keeps the base it was made from (its workspace's), so a change would silently do nothing.
 */
function checkBaseEditable(card: Card): void {
	const ws = card.workspace;
	if (ws !== undefined && ws.landed === undefined) {
		throw new BatonError(
			'invalid_transition',
			`Card ${card.id} already has its branch ${ws.branch}, made from ${ws.base}; the branch keeps that base until it lands, so the card's base cannot change now.`,
			{ cardId: card.id, branch: ws.branch, base: ws.base },
		);
	}
}
