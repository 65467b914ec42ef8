/**
 * Links that do not block: `related` (kept on both cards) and `duplicates` (on the card that
 * duplicates), added by card/link and removed by card/unlink beside dependencies, and the card a
 * creator held when it created another (`discoveredFrom`). Nothing here touches readiness; each change
 * is an `updated` event of the card it changed, so every face refreshes it.
 */
import { BatonError } from '../errors';
import type { Card } from '../protocol';
import type { Queryable } from '../store/db';
import type { PendingEvent } from './unitOfWork';

export interface LinkChange {
	related?: readonly string[] | undefined;
	duplicates?: readonly string[] | undefined;
}

/**
 * Adds (or with `remove`, removes) `card`'s related and duplicated cards; related ones get `card` in
 * their own `related` too. Unknown ids and the card itself are refused, nothing changed.
 */
export async function changeLinks(
	tx: Queryable,
	card: Card,
	change: LinkChange,
	now: Date,
	remove: boolean,
): Promise<{ card: Card; events: PendingEvent[] }> {
	const related = [...new Set(change.related ?? [])];
	const duplicates = [...new Set(change.duplicates ?? [])];
	const named = [...new Set([...related, ...duplicates])];
	if (named.length === 0) {
		return { card, events: [] };
	}
	if (named.includes(card.id)) {
		throw new BatonError('invalid_input', `Card ${card.id} cannot be related to or duplicate itself.`, {
			cardId: card.id,
		});
	}
	if (!remove) {
		const known = await tx.query<{ id: string }>('SELECT id FROM cards WHERE id = ANY($1::text[])', [named]);
		const unknown = named.filter(id => !known.some(k => k.id === id));
		if (unknown.length > 0) {
			throw new BatonError('not_found', `Unknown card ${unknown.length === 1 ? 'id' : 'ids'}: ${unknown.join(', ')}.`, {
				unknown,
			});
		}
	}
	/** The column's ids with `ids` (an array expression) added, sorted, or taken out. */
	const set = (column: string, ids: string): string =>
		remove
			? `array(SELECT x FROM unnest(${column}) x WHERE NOT x = ANY(${ids}))`
			: `array(SELECT DISTINCT x FROM unnest(${column} || ${ids}) x ORDER BY x)`;
	const events: PendingEvent[] = [];
	const rows = await tx.query<{ card: Card }>(
		`UPDATE cards SET related = ${set('related', '$2::text[]')}, duplicates = ${set('duplicates', '$3::text[]')},
			version = version + 1, updated_at = $4
		 WHERE id = $1 RETURNING baton_card(cards) AS card`,
		[card.id, related, duplicates, now],
	);
	const updated = (rows[0] as { card: Card }).card;
	events.push({ cardId: card.id, type: 'updated', data: { card: updated, changed: changedFields(change) } });
	if (related.length > 0) {
		const others = await tx.query<{ card: Card }>(
			`UPDATE cards SET related = ${set('related', 'ARRAY[$1::text]')}, version = version + 1, updated_at = $3
			 WHERE id = ANY($2::text[]) AND ${remove ? '$1 = ANY(related)' : 'NOT $1 = ANY(related)'}
			 RETURNING baton_card(cards) AS card`,
			[card.id, related, now],
		);
		for (const o of others) {
			events.push({ cardId: o.card.id, type: 'updated', data: { card: o.card, changed: ['related'] } });
		}
	}
	return { card: updated, events };
}

function changedFields(change: LinkChange): string[] {
	return [
		...(change.related === undefined ? [] : ['related']),
		...(change.duplicates === undefined ? [] : ['duplicates']),
	];
}

/**
 * A create by an actor that holds a card: each new card records the held card (the most
 * recently claimed, if several) as `discoveredFrom` and takes its parent unless it names one (and only
 * within the held card's project). A `discoveredFrom` given explicitly (an import) must exist.
 */
export async function withDiscovery<
	T extends { discoveredFrom?: string | undefined; parent?: string | undefined; project?: string | undefined },
>(tx: Queryable, actor: string, inputs: readonly T[]): Promise<T[]> {
	const named = [...new Set(inputs.flatMap(c => (c.discoveredFrom === undefined ? [] : [c.discoveredFrom])))];
	if (named.length > 0) {
		const known = await tx.query<{ id: string }>('SELECT id FROM cards WHERE id = ANY($1::text[])', [named]);
		const unknown = named.filter(id => !known.some(k => k.id === id));
		if (unknown.length > 0) {
			throw new BatonError(
				'not_found',
				`discoveredFrom names unknown ${unknown.length === 1 ? 'card' : 'cards'}: ${unknown.join(', ')}.`,
				{ unknown },
			);
		}
	}
	if (inputs.every(c => c.discoveredFrom !== undefined)) {
		return [...inputs];
	}
	const rows = await tx.query<{ id: string; parent: string | null; project: string | null }>(
		`SELECT id, parent, project FROM cards WHERE status = 'claimed' AND claim_owner = $1 ORDER BY claimed_at DESC, id LIMIT 1`,
		[actor],
	);
	const held = rows[0];
	if (held === undefined) {
		return [...inputs];
	}
	return inputs.map(c => {
		if (c.discoveredFrom !== undefined) {
			return c;
		}
		const sameProject = (c.project ?? null) === held.project || c.project === undefined;
		const parent = c.parent ?? (sameProject && held.parent !== null ? held.parent : undefined);
		return { ...c, discoveredFrom: held.id, ...(parent === undefined ? {} : { parent }) };
	});
}
