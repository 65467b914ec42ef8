/**
 * Per-project workspace settings (table project_settings) and a card's workspace record
 * (cards.workspace), whose `updated` event may carry how the worktree was set up (setup, restored,
 * copied). Reads and writes those two only: it runs no git and decides nothing about when a
 * workspace is made or removed (the hub's claimWorkspace, wipKeeper and landing modules do).
 */
import { BatonError } from '../errors';
import {
	type Card,
	type CardWorkspace,
	type WorkspaceSetup,
	type ParsedParams,
	type ProjectSettings,
	LandMode,
	checksLimits,
} from '../protocol';
import type { Queryable } from '../store/db';
import { settingsEventId } from './settings';
import type { OpContext, UnitOfWork } from './unitOfWork';

/** A project's settings until it sets some: workspaces off (migration 0020's column defaults). */
export const defaultProjectSettings: Omit<ProjectSettings, 'project'> = {
	worktrees: false,
	land: 'squash',
	push: false,
	setupTimeoutSeconds: 600,
	checkTimeoutSeconds: checksLimits.defaultTimeoutSeconds,
	wipDays: 30,
	roots: {},
};

interface SettingsRow {
	project: string;
	worktrees: boolean;
	base: string | null;
	land: string;
	push: boolean;
	setup: string | null;
	setup_timeout_seconds: number;
	check_command: string | null;
	check_timeout_seconds: number;
	on_conflict: string;
	wip_days: number;
	roots: Record<string, string> | string;
	seats: number | null;
	kind_seats: Record<string, number> | string;
}

const parsed = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);

function fromRow(project: string, row: SettingsRow | undefined): ProjectSettings {
	if (row === undefined) {
		return { project, ...defaultProjectSettings, roots: {} };
	}
	const roots = parsed(row.roots);
	const kindSeats = parsed(row.kind_seats);
	return {
		project,
		worktrees: row.worktrees,
		...(row.base === null ? {} : { base: row.base }),
		land: LandMode.safeParse(row.land).data ?? defaultProjectSettings.land,
		push: row.push,
		...(row.setup === null ? {} : { setup: row.setup }),
		setupTimeoutSeconds: row.setup_timeout_seconds,
		...(row.check_command === null ? {} : { check: row.check_command }),
		checkTimeoutSeconds: row.check_timeout_seconds,
		...(row.on_conflict === 'send-back' ? { onConflict: 'send-back' as const } : {}),
		wipDays: row.wip_days,
		roots: { ...roots },
		...(row.seats === null ? {} : { seats: row.seats }),
		// By kind name: jsonb keeps its keys in its own order (shorter first).
		...(Object.keys(kindSeats).length === 0
			? {}
			: { kindSeats: Object.fromEntries(Object.entries(kindSeats).sort(([a], [b]) => (a < b ? -1 : 1))) }),
	};
}

async function read(q: Queryable, project: string, lock = false): Promise<ProjectSettings> {
	const rows = await q.query<SettingsRow>(
		`SELECT * FROM project_settings WHERE project = $1${lock ? ' FOR UPDATE' : ''}`,
		[project],
	);
	return fromRow(project, rows[0]);
}

export class ProjectSettingsStore {
	constructor(private readonly uow: UnitOfWork) {}

	/** The project's settings: its row, or the defaults (worktrees off) when it never set any. */
	get(project: string): Promise<ProjectSettings> {
		return read(this.uow.db, project);
	}

	/** Every project that set any (the hub's gc walks their repositories on its host). */
	async all(): Promise<ProjectSettings[]> {
		const rows = await this.uow.db.query<SettingsRow>('SELECT * FROM project_settings ORDER BY project');
		return rows.map(row => fromRow(row.project, row));
	}

	/** Changes what `p` names; null clears base, setup or check, and a null root removes that host's. */
	update(ctx: OpContext, p: ParsedParams<'project/settings/update'>): Promise<ProjectSettings> {
		return this.uow.mutate(ctx, 'project/settings/update', async tx => {
			// Insert the defaults first so the row can be locked: two updates of one project take turns.
			await tx.query('INSERT INTO project_settings (project) VALUES ($1) ON CONFLICT DO NOTHING', [p.project]);
			const before = await read(tx, p.project, true);
			const given = p.roots ?? {};
			const roots = Object.fromEntries(
				[...Object.entries(before.roots), ...Object.entries(given)].filter(
					(e): e is [string, string] => given[e[0]] !== null && e[1] !== null,
				),
			);
			const pick = <T>(given: T | undefined, had: T): T => (given === undefined ? had : given);
			// kindSeats replaces the whole map; a kind given 0 has no seat (its agents take none).
			await tx.query(
				`UPDATE project_settings SET worktrees = $2, base = $3, land = $4, push = $5, setup = $6,
					setup_timeout_seconds = $7, wip_days = $8, roots = $9::jsonb, seats = $10, kind_seats = $11::jsonb,
					check_command = $12, check_timeout_seconds = $13, on_conflict = $14
				 WHERE project = $1`,
				[
					p.project,
					pick(p.worktrees, before.worktrees),
					pick(p.base, before.base ?? null),
					pick(p.land, before.land),
					pick(p.push, before.push),
					pick(p.setup, before.setup ?? null),
					pick(p.setupTimeoutSeconds, before.setupTimeoutSeconds),
					pick(p.wipDays, before.wipDays),
					JSON.stringify(roots),
					pick(p.seats, before.seats ?? null),
					JSON.stringify(pick(p.kindSeats, before.kindSeats ?? {})),
					pick(p.check, before.check ?? null),
					pick(p.checkTimeoutSeconds, before.checkTimeoutSeconds),
					pick(p.onConflict, before.onConflict ?? 'mark'),
				],
			);
			// Who changed what, in the audit log: the keys, not the values (a setup command or a root is
			// project/settings' to show; a setup command may carry a token).
			const keys = Object.entries(p)
				.filter(([k, v]) => v !== undefined && k !== 'project')
				.map(([k]) => k)
				.sort();
			return {
				result: await read(tx, p.project),
				events: [
					{
						cardId: settingsEventId,
						type: 'settings_changed',
						data: { card: null, settings: { project: p.project, keys } },
					},
				],
			};
		});
	}

	/**
	 * Records (or with null, forgets) a card's workspace. Logs `updated` with `changed: ['workspace']`
	 * like any card update, so every face refreshes; the card's version goes up with it. A step of
	 * another request (a claim, a complete): the caller's request key is not used, so it never replays.
	 */
	setWorkspace(
		ctx: OpContext,
		cardId: string,
		workspace: CardWorkspace | null,
		extra: WorkspaceSetup = {},
	): Promise<Card> {
		return this.uow.mutate({ actor: ctx.actor }, 'card/workspace', async (tx, now) => {
			const rows = await tx.query<{ card: Card }>(
				`UPDATE cards SET workspace = $2::jsonb, updated_at = $3, version = version + 1 WHERE id = $1
				 RETURNING baton_card(cards) AS card`,
				[cardId, workspace === null ? null : JSON.stringify(workspace), now],
			);
			const card = rows[0]?.card;
			if (card === undefined) {
				throw new BatonError('not_found', `Card ${cardId} does not exist. List cards to find the right id.`, {
					cardId,
				});
			}
			return {
				result: card,
				events: [{ cardId, type: 'updated', data: { card, changed: ['workspace'], ...extra } }],
			};
		});
	}
}
