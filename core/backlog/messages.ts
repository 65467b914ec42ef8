/**
 * Messages on a card: post one (`card/comment`), read a card's messages back for
 * `card/get`, find the ones waiting for a holder (its inbox) and record that the holder got them
 * (`inbox/ack`). A post stores the message and appends a `commented` event carrying it and the card,
 * in one transaction under the request key, so a re-send answers the first post instead of posting
 * twice. A question raises the card's `needsInput` flag and a message from anyone but the asker
 * lowers it; nothing else of the card changes (no version bump: a message is not an edit, and an
 * editor's optimistic version must survive it). It decides nothing about claims or status; pushing
 * an inbox to the holder's connection is the hub's.
 */
import { BatonError } from '../errors';
import { type Card, type Message, type ParsedParams, type Result, limits } from '../protocol';
import type { Queryable } from '../store/db';
import { loadCard } from './cardActions';
import type { OpContext, UnitOfWork } from './unitOfWork';
import { present } from './values';

const encoder = new TextEncoder();

/** The columns of a message as the wire names them. */
const messageColumns = `id, card_id AS "cardId", actor AS "from", text, question, baton_ts(at) AS at`;
/** A stored message as the wire names it, delivery included; `m` is the messages table's alias. */
const messageRead = (m: string): string =>
	`${m}.id, ${m}.card_id AS "cardId", ${m}.actor AS "from", ${m}.text, ${m}.question, baton_ts(${m}.at) AS at,
	baton_ts(${m}.delivered_at) AS "deliveredAt"`;

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
			const flagged = await this.flagNeedsInput(tx, p.cardId, ctx.actor, p.question === true);
			return {
				result: { message, card: flagged ?? card },
				events: [{ cardId: p.cardId, type: 'commented', data: { card: flagged ?? card, message } }],
			};
		});
	}

	/**
	 * A question raises needsInput; a message from someone other than the last asker answers it. Returns
	 * the card when the flag changed (no version bump), else undefined.
	 */
	private async flagNeedsInput(
		tx: Queryable,
		cardId: string,
		actor: string,
		question: boolean,
	): Promise<Card | undefined> {
		const rows = await tx.query<{ card: Card }>(
			`UPDATE cards SET needs_input = $3 WHERE id = $1 AND needs_input <> $3 AND ($3 OR
				$2 IS DISTINCT FROM (SELECT actor FROM messages WHERE card_id = $1 AND question ORDER BY id DESC LIMIT 1))
			 RETURNING baton_card(cards) AS card`,
			[cardId, actor, question],
		);
		return rows[0]?.card;
	}

	/**
	 * The holder got these messages in a tool result: set their deliveredAt (once) and log `delivered`
	 * per card. Only messages on cards `ctx.actor` holds, posted by someone else, count; others are
	 * skipped, so a late ack after the card changed hands changes nothing.
	 */
	async ack(ctx: OpContext, p: ParsedParams<'inbox/ack'>): Promise<Result<'inbox/ack'>> {
		return this.uow.mutate(ctx, 'inbox/ack', async (tx, now) => {
			const rows = await tx.query<Message & { card: Card }>(
				`UPDATE messages m SET delivered_at = $4 FROM cards c
				 WHERE (m.card_id, m.id) IN (SELECT * FROM unnest($1::text[], $2::int[])) AND m.delivered_at IS NULL
					AND c.id = m.card_id AND c.claim_owner = $3 AND m.actor <> $3
				 RETURNING ${messageRead('m')}, baton_card(c) AS card`,
				[p.messages.map(m => m.cardId), p.messages.map(m => m.id), ctx.actor, now],
			);
			const byCard = new Map<string, { card: Card; messages: Message[] }>();
			for (const { card, ...message } of rows) {
				const entry = byCard.get(message.cardId) ?? { card, messages: [] };
				entry.messages.push(message);
				byCard.set(message.cardId, entry);
			}
			return {
				result: { delivered: rows.map(({ card: _card, ...m }) => m) },
				events: [...byCard].map(([cardId, e]) => ({
					cardId,
					type: 'delivered' as const,
					data: { card: e.card, messages: e.messages.sort((a, b) => a.id - b.id) },
				})),
			};
		});
	}
}

/**
 * Messages waiting for `agent` on the cards it holds (posted by someone else, not delivered yet),
 * oldest first: what its inbox frame carries.
 */
export async function pendingInbox(q: Queryable, agent: string, cardId?: string): Promise<Message[]> {
	return q.query<Message>(
		`SELECT ${messageRead('m')}
		 FROM messages m JOIN cards c ON c.id = m.card_id
		 WHERE c.claim_owner = $1 AND m.delivered_at IS NULL AND m.actor <> $1 AND ($2::text IS NULL OR c.id = $2)
		 ORDER BY m.at, m.card_id, m.id`,
		[agent, cardId ?? null],
	);
}

/**
 * Cards with a message no holder was handed yet: the hub reads this once at start, so a claim of any
 * other card needs no inbox query (the partial index `messages_undelivered_idx` answers it).
 */
export async function cardsWithUndelivered(q: Queryable): Promise<string[]> {
	const rows = await q.query<{ id: string }>(`SELECT DISTINCT card_id AS id FROM messages WHERE delivered_at IS NULL`);
	return rows.map(r => r.id);
}

/** A card's messages, oldest first (newest last). */
export async function cardMessages(q: Queryable, cardId: string): Promise<Message[]> {
	return q.query<Message>(
		`SELECT ${messageRead('m')} FROM messages m WHERE m.card_id = $1 ORDER BY m.id`,
		[cardId],
		'baton_card_messages',
	);
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
