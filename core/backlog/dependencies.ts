/**
 * The dependency graph and the DAG invariant (nothing is claimed, completable or done while a
 * dependency is not done) where it could break: link (cycles, unfinished dependencies of claimed or
 * done cards), unlink, and reopen of a card others were built on. Cycle search is the pure dag.ts;
 * readiness counters are kept here and in cardActions.ts, never recomputed on the hot path.
 */
import { type DependencyMap, findCycle } from '../rules/dag';
import { BatonError } from '../errors';
import type { Card, ParsedParams, Result } from '../protocol';
import { cycleError } from '../rules/stateMachine';
import type { Queryable } from '../store/db';
import { act, loadCard } from './cardActions';
import { changeLinks } from './cardLinks';
import { checkLinkedTree } from './treeEdits';
import type { OpContext, UnitOfWork } from './unitOfWork';

export class Dependencies {
	constructor(private readonly uow: UnitOfWork) {}

	async link(ctx: OpContext, p: ParsedParams<'card/link'>): Promise<Result<'card/link'>> {
		const deps = depsOf(p);
		return this.uow.mutate(ctx, 'card/link', async (tx, now) => {
			// Related and duplicated cards first: they never block, so no check below concerns them.
			const links = await changeLinks(tx, await loadCard(tx, p.cardId, true), p, now, false);
			const before = links.card;
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
				return { result: { card: before }, events: links.events };
			}
			const cycle = findCycle(await this.reachableDeps(tx, added), p.cardId, added);
			if (cycle !== null) {
				throw cycleError(cycle);
			}
			await checkLinkedTree(tx, before, added);
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
			return {
				result: { card },
				events: [...links.events, { cardId: card.id, type: 'linked', data: { card, dependsOn: added } }],
			};
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
		const deps = depsOf(p);
		return this.uow.mutate(ctx, 'card/unlink', async (tx, now) => {
			const links = await changeLinks(tx, await loadCard(tx, p.cardId, true), p, now, true);
			const before = links.card;
			if (deps.length === 0) {
				return { result: { card: before }, events: links.events };
			}
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
			return {
				result: { card },
				events: [...links.events, { cardId: card.id, type: 'unlinked', data: { card, dependsOn: deps } }],
			};
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
			const target = await loadCard(tx, p.cardId, true);
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
			const { card, events } = await act(tx, p.cardId, { type: 'reopen', reason: p.reason }, now, {
				...(p.force === true && claimed.length + done.length > 0 ? { forced: true } : {}),
			});
			const because = p.reason === undefined ? '' : ` (${p.reason})`;
			for (const d of claimed) {
				const out = await act(
					tx,
					d.id,
					{ type: 'requeue', reason: `dependency ${p.cardId} was reopened${because}; it waits for it again` },
					now,
				);
				events.push(...out.events);
			}
			for (const d of done) {
				const flaggedCard = await loadCard(tx, d.id, false);
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

/**
 * A list page with, for each listed card that waits, the dependencies it still waits on (not done,
 * as unmet_deps counts them): one indexed read of the page's edges, only when some card waits. Cards or
 * rows (card/listRows) alike.
 */
export async function withWaitsOn<R extends Result<'card/list'> | Result<'card/listRows'>>(
	db: Queryable,
	result: R,
): Promise<R> {
	const waiting = result.cards.filter(c => c.unmetDeps > 0).map(c => c.id);
	if (waiting.length === 0) {
		return result;
	}
	const rows = await db.query<{ id: string; deps: string[] }>(
		`SELECT e.card_id AS id, array_agg(e.dep_id ORDER BY e.dep_id) AS deps
		 FROM edges e LEFT JOIN cards d ON d.id = e.dep_id
		 WHERE e.card_id = ANY($1::text[]) AND d.status IS DISTINCT FROM 'done' GROUP BY e.card_id`,
		[waiting],
	);
	return { ...result, waitsOn: Object.fromEntries(rows.map(r => [r.id, r.deps])) };
}

/** The dependencies a link or unlink names (none when it names only related or duplicated cards). */
function depsOf(p: ParsedParams<'card/link'>): string[] {
	if (p.dependsOn === undefined && p.related === undefined && p.duplicates === undefined) {
		throw new BatonError('invalid_input', `Name dependsOn, related or duplicates for card ${p.cardId}.`, {
			cardId: p.cardId,
		});
	}
	return p.dependsOn === undefined ? [] : [...new Set(Array.isArray(p.dependsOn) ? p.dependsOn : [p.dependsOn])];
}
