/**
 * The single-card create as one prepared statement: the common create — one card, the id
 * given by the backlog, no idempotency key, no dependencies, no parent — numbers the card, inserts it,
 * logs its `created` event and records the request key in one round trip, where the general path
 * (cards.ts, a transaction) sends a dozen statements, each parsed and planned. It decides nothing of
 * its own: the same pure checks run first, and whatever the statement cannot do as the general path
 * would (a creator holding a card that has a parent, a readable id taken by hand, a text the checks
 * refuse) makes it answer "not here", and the general path runs and explains. It never runs for a
 * batch, and holds no SQL but its own statement.
 */
import type { Card, ParsedParams, Result, ReviewMode } from '../protocol';
import { defaultSettings } from '../protocol';
import { type CardInput, cardRecords, checkTexts } from './createPlan';
import { prefixOfProject } from './readableIds';
import { checkCardScope } from './scopes';
import type { OpContext, UnitOfWork } from './unitOfWork';

/** The prepared statement's name. */
const statementName = 'baton_create_one';

/**
 * $1 now, $2 actor, $3 the card's row as JSON (cardRecords: every column but the id, review and
 * discovered_from decided here), $4 project (null: none), $5 the prefix derived from the project
 * ('' none), $6 the built-in id prefix, $7 the card's own review (null: the setting's), $8 the built-in
 * review, $9 request key. The creator's held card (most recently claimed) becomes `discoveredFrom`, as
 * withDiscovery (cardLinks.ts) does; when it has a parent the new card would take it, and the general
 * path runs instead (no number is used: the counter's upsert is guarded). A number taken by hand is
 * used up, as readableIds.ts skips it, and the general path takes the next. The counter's row lock
 * orders concurrent creates on PostgreSQL as it does in the general path.
 */
function createOneSql(nextSeq: string): string {
	const known = texts.get(nextSeq);
	if (known !== undefined) {
		return known;
	}
	const text = `WITH held AS (
			SELECT id, parent FROM cards WHERE status = 'claimed' AND claim_owner = $2 ORDER BY claimed_at DESC, id LIMIT 1
		),
		go AS (SELECT NOT EXISTS (SELECT 1 FROM held WHERE parent IS NOT NULL) AS ok),
		prefix AS (
			SELECT coalesce((SELECT prefix FROM id_prefixes WHERE project = $4::text), nullif($5::text, ''),
				(SELECT value #>> '{}' FROM settings WHERE key = 'idPrefix' AND json_typeof(value) = 'string'), $6::text) AS p
		),
		counter AS (
			INSERT INTO id_counters (prefix, next) SELECT prefix.p, 2 FROM prefix, go WHERE go.ok
			ON CONFLICT (prefix) DO UPDATE SET next = id_counters.next + 1
			RETURNING prefix || '-' || (next - 1) AS id
		),
		made AS (
			INSERT INTO cards SELECT r.* FROM counter, LATERAL jsonb_populate_record(NULL::cards, $3::jsonb || jsonb_build_object(
				'id', counter.id,
				'review', coalesce($7::text, (SELECT value #>> '{}' FROM settings WHERE key = 'review'
					AND json_typeof(value) = 'string' AND value #>> '{}' IN ('none', 'human', 'agent')), $8::text),
				'discovered_from', (SELECT id FROM held))) r
			WHERE NOT EXISTS (SELECT 1 FROM cards c WHERE c.id = counter.id)
			RETURNING cards.id, baton_card(cards) AS card
		),
		ev AS (
			INSERT INTO events (seq, at, card_id, actor, type, data)
			SELECT ${nextSeq}, $1, made.id, $2, 'created', json_build_object('card', made.card) FROM made
			RETURNING seq
		),
		log AS (
			INSERT INTO request_log (key, method, result, at)
			SELECT $9, 'card/create', json_build_object('value', json_build_object('cards', json_build_array(made.card))), $1
			FROM made WHERE $9::text IS NOT NULL
		)
		SELECT made.card, ev.seq FROM made, ev`;
	texts.set(nextSeq, text);
	return text;
}

/** The statement's text by the store's seq expression (one per store mode). */
const texts = new Map<string, string>();

/** The one card this create may make in one statement, or undefined for the general path. */
function single(p: ParsedParams<'card/create'>): CardInput | undefined {
	const [card, ...more] = p.cards;
	if (
		card === undefined ||
		more.length > 0 ||
		card.id !== undefined ||
		card.idempotencyKey !== undefined ||
		(card.dependsOn !== undefined && card.dependsOn.length > 0) ||
		card.parent !== undefined ||
		card.discoveredFrom !== undefined
	) {
		return undefined;
	}
	return card;
}

/**
 * The row of `card` as cardRecords makes it, or undefined when a check would refuse it: the general
 * path then refuses it in its own words (which name the card's id).
 */
function recordOf(card: CardInput, now: Date): Record<string, unknown> | undefined {
	try {
		checkTexts([card], ['?']);
		checkCardScope('?', card.scope);
		const [record] = cardRecords([card], ['?'], new Map(), new Map(), now, card.review ?? 'none');
		if (record === undefined) {
			return undefined;
		}
		const { id: _id, review: _review, discovered_from: _from, ...rest } = record;
		return rest;
	} catch {
		return undefined;
	}
}

/**
 * Creates `p`'s single card in one statement when it can; undefined means the general path must run
 * (nothing was written but, at most, a readable number taken by hand was passed over).
 */
export async function createOne(
	uow: UnitOfWork,
	ctx: OpContext,
	p: ParsedParams<'card/create'>,
): Promise<Result<'card/create'> | undefined> {
	const card = single(p);
	if (card === undefined) {
		return undefined;
	}
	return uow.fast(ctx, async (now, key) => {
		const record = recordOf(card, now);
		if (record === undefined) {
			return undefined;
		}
		const project = card.project ?? null;
		const rows = await uow.db.query<{ card: Card; seq: unknown }>(
			createOneSql(uow.catalogue.nextSeq),
			[
				now,
				ctx.actor,
				JSON.stringify(record),
				project,
				project === null ? '' : prefixOfProject(project),
				defaultSettings.idPrefix,
				card.review ?? null,
				defaultSettings.review satisfies ReviewMode,
				key,
			],
			statementName,
		);
		const row = rows[0];
		if (row === undefined) {
			return undefined;
		}
		return {
			result: { cards: [row.card] },
			events: [uow.event(row.seq, now, row.card.id, ctx.actor, 'created', { card: row.card })],
		};
	});
}
