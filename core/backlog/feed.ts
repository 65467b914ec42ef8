/**
 * The event feed read back: pages of the log for clients that resume by seq, the hub's event pump,
 * the last seq and the compaction horizon (what a resume may not start before), and one card's history. Read-only: events are appended by the unit of work alone.
 */
import type { BacklogEvent, EventType, ParsedParams, Result } from '../protocol';
import type { Queryable } from '../store/db';
import { logHorizon } from './logCompaction';
import type { UnitOfWork } from './unitOfWork';
import { num } from './values';

export class Feed {
	constructor(private readonly uow: UnitOfWork) {}

	async listEvents(p: ParsedParams<'events/list'>): Promise<Result<'events/list'>> {
		const rows = await this.uow.db.query<EventRow>(
			`SELECT seq, baton_ts(at) AS at, card_id, actor, type, data FROM events
			 WHERE seq > $1 AND ($2::text IS NULL OR card_id = $2) ORDER BY seq LIMIT $3`,
			[p.afterSeq ?? 0, p.cardId ?? null, p.limit ?? 100],
		);
		return { events: rows.map(toEvent), lastSeq: await this.lastSeq(), horizon: await logHorizon(this.uow.db) };
	}

	async eventsAfter(seq: number, limit: number): Promise<BacklogEvent[]> {
		const rows = await this.uow.db.query<EventRow>(
			`SELECT seq, baton_ts(at) AS at, card_id, actor, type, data FROM events WHERE seq > $1 ORDER BY seq LIMIT $2`,
			[seq, limit],
			'baton_events_after',
		);
		return rows.map(toEvent);
	}

	horizon(): Promise<number> {
		return logHorizon(this.uow.db);
	}

	async lastSeq(): Promise<number> {
		const rows = await this.uow.db.query<{ s: unknown }>('SELECT coalesce(max(seq), 0) AS s FROM events');
		return num(rows[0]?.s ?? 0);
	}
}

export async function cardEvents(q: Queryable, cardId: string, limit: number): Promise<BacklogEvent[]> {
	const rows = await q.query<EventRow>(
		`SELECT * FROM (SELECT seq, baton_ts(at) AS at, card_id, actor, type, data FROM events
			 WHERE card_id = $1 ORDER BY seq DESC LIMIT $2) recent ORDER BY seq`,
		[cardId, limit],
		'baton_card_events',
	);
	return rows.map(toEvent);
}

interface EventRow {
	seq: unknown;
	at: string;
	card_id: string;
	actor: string;
	type: EventType;
	data: BacklogEvent['data'];
}

function toEvent(r: EventRow): BacklogEvent {
	return { seq: num(r.seq), at: r.at, cardId: r.card_id, actor: r.actor, type: r.type, data: r.data };
}
