/**
 * The landing queue in the store (migration 0031): one line per project and base branch, shared by
 * every hub on the store, so one landing at a time moves a base whichever hub a person approves on. An
 * entry joins as `waiting`; `take` gives the line's turn to the oldest waiting entry when none of the
 * line is `landing`, under a transaction lock of that line (two hubs never both take it); the holder
 * beats while it waits and lands, and an entry whose holder stopped beating (its hub died) is dropped by
 * the next `take` of its line. Runs no git and decides nothing about cards: the hub's landing does
 * (mcp-server/hub/landingLine.ts); a card that is not in review can still be in the line (a completion
 * of review none lands before it is done).
 */
import { BatonError } from '../errors';
import type { Card, CardWorkspace, LandingEntry, LandingReturn } from '../protocol';
import type { UnitOfWork } from './unitOfWork';
import { toIso } from './values';

/** An entry whose holder has not beaten for this long is a dead hub's: the next turn-taker drops it. */
export const landingStaleMs = 30_000;

interface Row {
	card_id: string;
	project: string;
	base: string;
	state: 'waiting' | 'landing';
	holder: string;
	actor: string;
	queued_at: Date | string;
	started_at: Date | string | null;
	title: string | null;
}

export class LandingQueue {
	constructor(private readonly uow: UnitOfWork) {}

	/**
	 * Puts `cardId` at the end of its line (project, base) as `holder`'s. Refused (`conflict`, nothing
	 * written) while another live holder has it: another hub is landing or about to land that card.
	 */
	async join(entry: { cardId: string; project: string; base: string; holder: string; actor: string }): Promise<void> {
		const now = this.uow.clock.now();
		const stale = new Date(now.getTime() - landingStaleMs);
		const rows = await this.uow.db.query<{ card_id: string }>(
			`INSERT INTO landing_queue AS q (card_id, project, base, state, holder, actor, queued_at, beat_at)
			 VALUES ($1, $2, $3, 'waiting', $4, $5, $6, $6)
			 ON CONFLICT (card_id) DO UPDATE
			 SET project = EXCLUDED.project, base = EXCLUDED.base, state = 'waiting', holder = EXCLUDED.holder,
			     actor = EXCLUDED.actor, queued_at = EXCLUDED.queued_at, started_at = NULL, beat_at = EXCLUDED.beat_at
			 WHERE q.holder = EXCLUDED.holder OR q.beat_at < $7
			 RETURNING card_id`,
			[entry.cardId, entry.project, entry.base, entry.holder, entry.actor, now, stale],
		);
		if (rows.length === 0) {
			throw new BatonError(
				'conflict',
				`Card ${entry.cardId} is in the landing queue of ${entry.base} by another approval or completion right now; show it again in a moment.`,
				{ cardId: entry.cardId },
			);
		}
	}

	/**
	 * Whether `cardId` has its line's turn now (`turn`): it has when it was `landing` already, or when it
	 * is the line's oldest entry and nothing of the line lands (it becomes `landing`); else `wait`. Drops
	 * the line's entries of dead holders first. `out` when `holder` has no such entry (dropped as a dead
	 * holder's: the caller joins again).
	 */
	async take(cardId: string, holder: string): Promise<'turn' | 'wait' | 'out'> {
		const now = this.uow.clock.now();
		const stale = new Date(now.getTime() - landingStaleMs);
		return this.uow.db.transaction(async tx => {
			const mine = await tx.query<{ project: string; base: string; state: string }>(
				'SELECT project, base, state FROM landing_queue WHERE card_id = $1 AND holder = $2',
				[cardId, holder],
			);
			const me = mine[0];
			if (me === undefined) {
				return 'out';
			}
			if (me.state === 'landing') {
				return 'turn';
			}
			// One turn-taker per line at a time, across hubs; PGlite's one connection already serialises.
			await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
				`baton landing ${me.project} ${me.base}`,
			]);
			await tx.query('DELETE FROM landing_queue WHERE project = $1 AND base = $2 AND beat_at < $3', [
				me.project,
				me.base,
				stale,
			]);
			const taken = await tx.query<{ card_id: string }>(
				`UPDATE landing_queue SET state = 'landing', started_at = $3
				 WHERE card_id = $1 AND holder = $2
				   AND NOT EXISTS (SELECT 1 FROM landing_queue l
				                   WHERE l.project = landing_queue.project AND l.base = landing_queue.base AND l.state = 'landing')
				   AND card_id = (SELECT f.card_id FROM landing_queue f
				                  WHERE f.project = landing_queue.project AND f.base = landing_queue.base
				                  ORDER BY f.queued_at, f.card_id LIMIT 1)
				 RETURNING card_id`,
				[cardId, holder, now],
			);
			return taken.length > 0 ? 'turn' : 'wait';
		});
	}

	/** Refreshes every entry of `holder` (its hub is alive and still waiting or landing them). */
	async beat(holder: string): Promise<void> {
		await this.uow.db.query('UPDATE landing_queue SET beat_at = $2 WHERE holder = $1', [holder, this.uow.clock.now()]);
	}

	/** Takes `cardId` out of the line, when `holder` has it. */
	async leave(cardId: string, holder: string): Promise<void> {
		await this.uow.db.query('DELETE FROM landing_queue WHERE card_id = $1 AND holder = $2', [cardId, holder]);
	}

	/**
	 * The lines as they stand, live entries only (a dead holder's are left out): each line's landing
	 * entry first, then its waiting ones in turn order; `project` narrows to one project.
	 */
	async list(project?: string): Promise<LandingEntry[]> {
		const stale = new Date(this.uow.clock.now().getTime() - landingStaleMs);
		const rows = await this.uow.db.query<Row>(
			`SELECT q.card_id, q.project, q.base, q.state, q.holder, q.actor, q.queued_at, q.started_at, c.title
			 FROM landing_queue q LEFT JOIN cards c ON c.id = q.card_id
			 WHERE q.beat_at >= $1 AND ($2::text IS NULL OR q.project = $2)
			 ORDER BY q.project, q.base, q.state = 'landing' DESC, q.queued_at, q.card_id`,
			[stale, project ?? null],
		);
		let line = '';
		let place = 0;
		return rows.map(r => {
			const key = `${r.project}\u0000${r.base}`;
			place = key === line ? place + 1 : 1;
			line = key;
			return {
				cardId: r.card_id,
				title: r.title ?? '',
				project: r.project,
				base: r.base,
				state: r.state,
				place,
				actor: r.actor,
				queuedAt: toIso(r.queued_at),
				...(r.started_at === null ? {} : { startedAt: toIso(r.started_at) }),
			};
		});
	}

	/**
	 * The newest landings that came back (`land_conflicted`), at most 10, newest first, looked for in the
	 * log's last 5,000 events only (a bounded read whatever the log's length); `project` narrows.
	 */
	async returned(project?: string): Promise<LandingReturn[]> {
		const rows = await this.uow.db.query<{
			card_id: string;
			at: Date | string;
			data: { reason?: unknown; files?: unknown };
			title: string | null;
		}>(
			`SELECT e.card_id, e.at, e.data, c.title FROM events e LEFT JOIN cards c ON c.id = e.card_id
			 WHERE e.seq > (SELECT coalesce(max(seq), 0) - 5000 FROM events) AND e.type = 'land_conflicted'
			   AND ($1::text IS NULL OR c.project = $1)
			 ORDER BY e.seq DESC LIMIT 10`,
			[project ?? null],
		);
		return rows.map(r => ({
			cardId: r.card_id,
			title: r.title ?? '',
			at: toIso(r.at),
			reason: typeof r.data.reason === 'string' ? r.data.reason : '',
			files: Array.isArray(r.data.files) ? r.data.files.filter((f): f is string => typeof f === 'string') : [],
		}));
	}

	/** The holders with entries (live or not): a starting hub drops those of its machine's dead hubs. */
	async holders(): Promise<string[]> {
		const rows = await this.uow.db.query<{ holder: string }>('SELECT DISTINCT holder FROM landing_queue');
		return rows.map(r => r.holder);
	}

	/** Drops every entry of `holder` (a hub known to be dead). */
	async dropHolder(holder: string): Promise<void> {
		await this.uow.db.query('DELETE FROM landing_queue WHERE holder = $1', [holder]);
	}

	/**
	 * Cards in review or claimed whose workspace records a landing in flight (the two states a landing
	 * starts from; at most 1,000: a starting hub's work).
	 */
	async inFlight(): Promise<Card[]> {
		const rows = await this.uow.db.query<{ card: Card }>(
			`SELECT baton_card(cards) AS card FROM cards
			 WHERE status IN ('review', 'claimed') AND workspace -> 'landing' IS NOT NULL ORDER BY id LIMIT 1000`,
		);
		return rows.map(r => r.card);
	}

	/**
	 * Records the card's landing in flight (`workspace.landing`) just before its base moves: the
	 * workspace only, no version change and no event (an approval naming the version the person looked at
	 * still matches), and the record that follows replaces it.
	 */
	async markInFlight(cardId: string, workspace: CardWorkspace): Promise<void> {
		await this.uow.db.query('UPDATE cards SET workspace = $2::jsonb WHERE id = $1', [
			cardId,
			JSON.stringify(workspace),
		]);
	}

	/**
	 * Cards in review whose branch lands on `base` of the repository at `root` (at most 500): after each
	 * landing there, the hub marks those that no longer merge.
	 */
	async reviewsOn(root: string, base: string): Promise<Card[]> {
		const rows = await this.uow.db.query<{ card: Card }>(
			`SELECT baton_card(cards) AS card FROM cards
			 WHERE status = 'review' AND workspace ->> 'root' = $1 AND workspace ->> 'base' = $2
			   AND workspace -> 'landed' IS NULL
			 ORDER BY id LIMIT 500`,
			[root, base],
		);
		return rows.map(r => r.card);
	}

	/**
	 * Sets (or with null clears) a review card's `workspace.conflicts` — only while it is still in review
	 * on `branch` and not landed: a card that landed or moved on meanwhile is left as it is (its record
	 * is not overwritten with the one read before). Event `updated` when it changed; null when left.
	 */
	markConflicts(
		cardId: string,
		branch: string,
		conflicts: NonNullable<CardWorkspace['conflicts']> | null,
	): Promise<Card | null> {
		return this.uow.mutate({ actor: 'baton' }, 'card/workspace', async (tx, now) => {
			const rows = await tx.query<{ card: Card }>(
				`UPDATE cards SET
				   workspace = CASE WHEN $3::jsonb IS NULL THEN workspace - 'conflicts'
				                    ELSE jsonb_set(workspace, '{conflicts}', $3::jsonb) END,
				   updated_at = $4, version = version + 1
				 WHERE id = $1 AND status = 'review' AND workspace ->> 'branch' = $2 AND workspace -> 'landed' IS NULL
				   AND (workspace -> 'conflicts') IS DISTINCT FROM $3::jsonb
				 RETURNING baton_card(cards) AS card`,
				[cardId, branch, conflicts === null ? null : JSON.stringify(conflicts), now],
			);
			const card = rows[0]?.card;
			return card === undefined
				? { result: null, events: [] }
				: { result: card, events: [{ cardId, type: 'updated', data: { card, changed: ['workspace'] } }] };
		});
	}
}
