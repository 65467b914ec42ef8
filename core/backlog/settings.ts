/**
 * The backlog's settings (backlog-wide policies stored in the `settings` table, so hubs sharing a
 * store agree) and the stall policy derived from them. Reads and writes settings only; what a
 * setting means for a card is decided where it is applied (core/rules/stateMachine.ts, the reaper).
 */
import { type Card, type ParsedParams, ReviewMode, type Settings, defaultSettings } from '../protocol';

type NumericSetting = Exclude<keyof Settings, 'review' | 'idPrefix'>;
import type { Queryable } from '../store/db';
import { setIdPrefix } from './readableIds';
import type { OpContext, UnitOfWork } from './unitOfWork';

/** The cardId of `settings_changed` events: no card changed. */
export const settingsEventId = 'baton:settings';

/** A claimed card's stall policy in seconds: its own, else the backlog setting, else the default. */
export const stallSecondsSql = `coalesce(stall_release_seconds,
	(SELECT (value #>> '{}')::int FROM settings WHERE key = 'stallReleaseSeconds'), ${defaultSettings.stallReleaseSeconds})`;

/** The backlog's review setting: what a new card that does not say gets. */
export async function defaultReview(q: Queryable): Promise<ReviewMode> {
	const rows = await q.query<{ value: unknown }>(`SELECT value FROM settings WHERE key = 'review'`);
	const mode = ReviewMode.safeParse(rows[0]?.value);
	return mode.success ? mode.data : defaultSettings.review;
}

export class BacklogSettings {
	/** The backlog's stall policy as last read (read()); only a hint for the reaper's timer. */
	private stallDefault = defaultSettings.stallReleaseSeconds;

	constructor(private readonly uow: UnitOfWork) {}

	/** The backlog's settings: stored values over the built-in defaults. */
	async read(q: Queryable = this.uow.db): Promise<Settings> {
		const rows = await q.query<{ key: string; value: unknown }>('SELECT key, value FROM settings');
		const out: Settings = { ...defaultSettings };
		for (const r of rows) {
			if (r.key === 'review') {
				out.review = ReviewMode.safeParse(r.value).data ?? defaultSettings.review;
			} else if (r.key === 'idPrefix') {
				out.idPrefix = typeof r.value === 'string' ? r.value : defaultSettings.idPrefix;
			} else if (Object.hasOwn(out, r.key) && typeof r.value === 'number') {
				out[r.key as NumericSetting] = r.value;
			}
		}
		this.stallDefault = out.stallReleaseSeconds;
		return out;
	}

	async update(ctx: OpContext, p: ParsedParams<'settings/update'>): Promise<Settings> {
		return this.uow.mutate(ctx, 'settings/update', async tx => {
			// The id prefix: the backlog's own, or a project's (readableIds.ts keeps those apart).
			const { idPrefix, idPrefixProject, ...rest } = p;
			if (idPrefix !== undefined) {
				await setIdPrefix(tx, idPrefixProject ?? null, idPrefix.toUpperCase());
			}
			const entries = Object.entries(rest).filter(([, v]) => v !== undefined);
			if (entries.length > 0) {
				await tx.query(
					`INSERT INTO settings (key, value) SELECT k, v::json FROM unnest($1::text[], $2::text[]) AS u(k, v)
					 ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
					[entries.map(([k]) => k), entries.map(([, v]) => JSON.stringify(v))],
				);
			}
			if (p.progressEventsPerCard !== undefined) {
				// A new per-card limit applies to every card, not only to those with progress after the
				// count rule's cursor (logCompaction.ts): its next pass reads the log from the start.
				await tx.query('UPDATE log_state SET counted_through = 0');
			}
			// Who changed what, in the audit log (the values are settings/get's; none is a secret).
			const keys = Object.entries(p)
				.filter(([, v]) => v !== undefined)
				.map(([k]) => k)
				.sort();
			return {
				result: await this.read(tx),
				events: [{ cardId: settingsEventId, type: 'settings_changed', data: { card: null, settings: { keys } } }],
			};
		});
	}

	/**
	 * When the stall policy would release `card` (ISO), or null: claimed, a policy (the card's or the
	 * backlog's, as last read) above 0. The reaper arms for it as it does for a lease expiry.
	 */
	stallDueAt(card: Card | null | undefined): string | null {
		if (card?.status !== 'claimed') {
			return null;
		}
		const seconds = card.stallReleaseSeconds ?? this.stallDefault;
		const since = card.progressAt ?? card.claimedAt;
		if (seconds <= 0 || since === null) {
			return null;
		}
		return new Date(Date.parse(since) + seconds * 1000).toISOString();
	}
}
