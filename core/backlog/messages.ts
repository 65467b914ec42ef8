/**
 * Messages on a card (issue 12 §2): post one (`card/comment`) and read a card's messages back for
 * `card/get`. A post stores the message and appends a `commented` event carrying it and the card, in
 * one transaction under the request key, so a re-send answers the first post instead of posting twice.
 * It must not change the card itself (no version bump: a message is not an edit, and an editor's
 * optimistic version must survive it), and it decides nothing about claims or status; delivering a
 * message to the card's holder (the inbox) is not here.
 */
import { BatonError } from '../errors';
import { type Message, type ParsedParams, type Result, limits } from '../protocol';
import type { Queryable } from '../store/db';
import { loadCard } from './cardActions';
import type { OpContext, UnitOfWork } from './unitOfWork';
import { present } from './values';

const encoder = new TextEncoder();

/** The columns of a message as the wire names them. */
const messageColumns = `id, card_id AS "cardId", actor AS "from", text, question, baton_ts(at) AS at`;

export class Messages {
	constructor(private readonly uow: UnitOfWork) {}

	async post(ctx: OpContext, p: ParsedParams<'card/comment'>): Promise<Result<'card/comment'>> {
		checkMessageText(p.cardId, p.text);
		return this.uow.mutate(ctx, 'card/comment', async (tx, now) => {
			// The row lock numbers the card's messages without gaps or twins when two post at once.
			const card = await loadCard(tx, p.cardId, true);
			const rows = await tx.query<Message>(
				`INSERT INTO messages (card_id, id, actor, text, question, at)
				 SELECT $1, coalesce(max(id), 0) + 1, $2, $3, $4, $5 FROM messages WHERE card_id = $1
				 RETURNING ${messageColumns}`,
				[p.cardId, ctx.actor, p.text, p.question ?? false, now],
			);
			const message = present(rows[0]);
			return {
				result: { message, card },
				events: [{ cardId: p.cardId, type: 'commented', data: { card, message } }],
			};
		});
	}
}

/** A card's messages, oldest first (newest last). */
export async function cardMessages(q: Queryable, cardId: string): Promise<Message[]> {
	return q.query<Message>(`SELECT ${messageColumns} FROM messages WHERE card_id = $1 ORDER BY id`, [cardId]);
}

/**
 * The protocol schema refuses empty and oversized text at the edge; core checks again for callers
 * that reach it without the schema, before anything is written.
 */
function checkMessageText(cardId: string, text: string): void {
	if (text.trim().length === 0) {
		throw new BatonError('invalid_input', `The message to card ${cardId} is empty; write what you want to say.`, {
			field: 'text',
		});
	}
	const bytes = encoder.encode(text).length;
	if (bytes > limits.messageBytes) {
		throw new BatonError(
			'invalid_input',
			`The message to card ${cardId} is ${bytes} bytes; the limit is ${limits.messageBytes} (4 KiB). Shorten it, or put the detail in the card's body or a file and point to it.`,
			{ field: 'text', bytes, limit: limits.messageBytes },
		);
	}
}
