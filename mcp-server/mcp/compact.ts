/**
 * Compact card and history shapes for MCP results: agents pay per token, so fields that are null or
 * empty are dropped, and a card's history omits the card snapshot each event carries on the wire.
 * Pure functions, no I/O.
 */
import type { Attempt, BacklogEvent, Card, Message } from '../../core/protocol';

export type CompactCard = Partial<Card> & Pick<Card, 'id' | 'title' | 'status'>;

function isEmpty(value: unknown): boolean {
	return value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}

/** Drops undefined, null, empty strings and empty arrays. */
export function dropEmpty<T extends object>(value: T): Partial<T> {
	const out: Record<string, unknown> = {};
	for (const [key, v] of Object.entries(value)) {
		if (!isEmpty(v)) {
			out[key] = v;
		}
	}
	return out as Partial<T>;
}

export function compactCard(card: Card): CompactCard {
	const out = dropEmpty(card) as CompactCard;
	if (out.failed === false) {
		delete out.failed; // only a failed card says so
	}
	return out;
}

export function compactCards(cards: readonly Card[]): CompactCard[] {
	return cards.map(compactCard);
}

/**
 * A card as create returns it: without the body and acceptance criteria the caller just sent, which
 * for a plan of long cards would send megabytes back, twice (text and structuredContent).
 */
export function createdCard(card: Card): CompactCard {
	const { body: _body, acceptance: _acceptance, ...rest } = compactCard(card);
	return rest;
}

/** One history line: who did what when, plus the event's own details, without the card snapshot. */
export function compactEvent(event: BacklogEvent): Record<string, unknown> {
	const { card: _card, readiness: _readiness, message, messages, ...details } = event.data;
	// A `commented` event names its message, a `delivered` one its messages; the text is in show's
	// `messages`, not repeated here.
	const about = message === undefined ? {} : { message: message.id };
	const delivered = messages === undefined ? {} : { messages: messages.map(m => m.id) };
	return dropEmpty({
		seq: event.seq,
		at: event.at,
		actor: event.actor,
		type: event.type,
		...details,
		...about,
		...delivered,
	});
}

/** A message in `show`: the card is known, and `question` only when it is one. */
export function compactMessage(message: Message): Record<string, unknown> {
	const { cardId: _cardId, question, ...rest } = message;
	return question ? { ...rest, question } : rest;
}

export function compactAttempt(attempt: Attempt): Partial<Attempt> {
	return dropEmpty(attempt);
}
