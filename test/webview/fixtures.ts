/** Typed builders for board tests: a full wire Card / BacklogEvent from the few fields a test cares about. */
import type { BacklogEvent, Card, EventType, ReadinessChange } from '../../core/protocol';
import { makeCard as makeBaseCard } from '../helpers/cards';

let created = 0;

export function makeCard(fields: Partial<Card> & { id: string }): Card {
	created++;
	return makeBaseCard({ createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, created)).toISOString(), ...fields });
}

export function makeEvent(
	seq: number,
	type: EventType,
	card: Card | null,
	extra: { cardId?: string; readiness?: ReadinessChange[] } = {},
): BacklogEvent {
	const cardId = card?.id ?? extra.cardId ?? 'X';
	return {
		seq,
		at: new Date(Date.UTC(2026, 0, 2, 0, 0, seq)).toISOString(),
		cardId,
		actor: 'agent-1',
		type,
		data: extra.readiness === undefined ? { card } : { card, readiness: extra.readiness },
	};
}
