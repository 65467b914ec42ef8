/**
 * Pauses of the line (table `pauses`): set, clear and list them, and the refusals a claim
 * of one card reads ("paused by <who>: <reason>", "assigned to <assignee>"). A pause is atomic with
 * every claim: on PostgreSQL pause/set locks `cards` (SHARE ROW EXCLUSIVE) before it writes, so claims
 * in flight commit first and every later claim statement's snapshot sees it; the claim statements
 * themselves exclude paused cards (claimableSql.ts lineOpenSql). Reads and writes pauses only: it
 * stops no agent (the supervisor does, from pause/set's `cards`).
 */
import { BatonError } from '../errors';
import { AgentKind, type Card, type ParsedParams, type Pause, type PauseScope, type Result } from '../protocol';
import type { Queryable } from '../store/db';
import { loadCard } from './cardActions';
import { assignedToSql, claimableSql, ofProjectSql, unpausedSql } from './claimableSql';
import type { OpContext, PendingEvent, UnitOfWork } from './unitOfWork';
import { num, present, toIso } from './values';

/** The event's card id when a pause names no card: nothing on the board changes with it. */
export const pauseEventId = 'baton:pause';

interface PauseRow {
	scope: PauseScope;
	target: string;
	reason: string | null;
	paused_by: string;
	at: Date | string;
	stop: boolean;
}

const pauseOf = (r: PauseRow): Pause => ({
	scope: r.scope,
	target: r.target === '' ? null : r.target,
	reason: r.reason,
	by: r.paused_by,
	at: toIso(r.at),
	stop: r.stop,
});

/** "paused by alice: release freeze" (the reason when there is one). */
export function pausedWords(p: Pause): string {
	return `paused by ${p.by}${p.reason === null || p.reason === '' ? '' : `: ${p.reason}`}`;
}

/** What a pause covers, in words: "everything", "project web", "card A4", "kind claude". */
export function pauseTargetWords(p: Pick<Pause, 'scope' | 'target'>): string {
	return p.scope === 'all' ? 'everything' : `${p.scope} ${p.target ?? ''}`;
}

/** Every pause, oldest first. */
export async function listPauses(q: Queryable): Promise<Pause[]> {
	const rows = await q.query<PauseRow>('SELECT * FROM pauses ORDER BY at, scope, target');
	return rows.map(pauseOf);
}

/**
 * The pauses that keep `kind`'s claims off `card`, most general first (all, kind, project, phase,
 * card): empty when none does.
 */
export async function pausesCovering(q: Queryable, card: Card, kind: string | null): Promise<Pause[]> {
	const rows = await q.query<PauseRow>(
		`SELECT * FROM pauses WHERE scope = 'all' OR (scope = 'kind' AND target = $1::text)
			OR (scope = 'project' AND target = $2::text) OR (scope = 'phase' AND target = $3::text)
			OR (scope = 'card' AND target = $4::text)
		 ORDER BY array_position(ARRAY['all', 'kind', 'project', 'phase', 'card'], scope), at`,
		[kind, card.project ?? null, card.phase, card.id],
	);
	return rows.map(pauseOf);
}

/**
 * Throws the refusal of a claim of `card` by `actor` of `kind` that the line does not allow: a pause
 * covers it (`paused by <who>: <reason>`) or it is assigned to someone else (`assigned to <assignee>`).
 */
export async function checkLineOpen(q: Queryable, card: Card, actor: string, kind: string | null): Promise<void> {
	const [pause] = await pausesCovering(q, card, kind);
	if (pause !== undefined) {
		throw new BatonError(
			'invalid_transition',
			`Card ${card.id} cannot be claimed: ${pauseTargetWords(pause)} is ${pausedWords(pause)}. It is claimable again after baton resume.`,
			{ cardId: card.id, pause },
		);
	}
	const assignee = card.assignee ?? null;
	if (assignee !== null && assignee !== actor && (kind === null || assignee !== `kind:${kind}`)) {
		throw new BatonError(
			'invalid_transition',
			`Card ${card.id} is assigned to ${assignee}; only ${assignee.startsWith('kind:') ? `an agent of kind ${assignee.slice(5)}` : 'that agent'} may claim it.`,
			{ cardId: card.id, assignee },
		);
	}
}

/**
 * The part of an empty claim's reason that the line explains: how many claimable cards of
 * the claimer's choice pauses keep back (naming the pauses) and how many are assigned to others; ''
 * when neither does.
 */
export async function pausedNothingClaimable(
	q: Queryable,
	actor: string,
	kind: string | null,
	caps: readonly string[],
	phase: string | undefined,
	project: string | null | undefined,
	now: Date,
): Promise<string> {
	const [row] = await q.query<{ paused: unknown; assigned: unknown }>(
		`SELECT count(*) FILTER (WHERE NOT (${unpausedSql('$5')})) AS paused,
			count(*) FILTER (WHERE (${unpausedSql('$5')}) AND NOT ${assignedToSql('$6', '$5')}) AS assigned
		 FROM cards WHERE ${claimableSql('$1')} AND requires <@ $2::text[] AND ($3::text IS NULL OR phase = $3)
			AND ${ofProjectSql('$4')}`,
		[now, [...caps], phase ?? null, project === undefined ? '*' : project, kind, actor],
	);
	const paused = num(row?.paused);
	const assigned = num(row?.assigned);
	const words: string[] = [];
	if (paused > 0) {
		const pauses = await listPauses(q);
		const named = pauses
			.slice(0, 3)
			.map(p => `${pauseTargetWords(p)} ${pausedWords(p)}`)
			.join('; ');
		words.push(
			`${paused} claimable card${paused === 1 ? ' is' : 's are'} paused (${named}${pauses.length > 3 ? '; …' : ''}).`,
		);
	}
	if (assigned > 0) {
		words.push(`${assigned} claimable card${assigned === 1 ? ' is' : 's are'} assigned to other agents.`);
	}
	return words.length === 0 ? '' : `${words.join(' ')} `;
}

/** The claimer's kind: the supervisor's claim says it (dispatch.kind), else the connection's hello. */
export function claimerKind(ctx: OpContext, p: ParsedParams<'card/claim'>): string | null {
	return p.dispatch?.kind ?? ctx.kind ?? null;
}

export class Pauses {
	constructor(private readonly uow: UnitOfWork) {}

	list(): Promise<Result<'pause/list'>> {
		return listPauses(this.uow.db).then(pauses => ({ pauses }));
	}

	async set(ctx: OpContext, p: ParsedParams<'pause/set'>): Promise<Result<'pause/set'>> {
		const target = checkTarget(p.scope, p.target);
		return this.uow.mutate(ctx, 'pause/set', async (tx, now) => {
			// Claims in flight finish first, and every claim statement after this commit sees the pause
			// (READ COMMITTED takes a statement's snapshot after its locks). PGlite has one writer anyway.
			if (this.uow.db.mode === 'postgres') {
				await tx.query('LOCK TABLE cards IN SHARE ROW EXCLUSIVE MODE');
			}
			const card = await checkExists(tx, p.scope, target);
			const rows = await tx.query<PauseRow>(
				`INSERT INTO pauses (scope, target, reason, paused_by, at, stop) VALUES ($1, $2, $3, $4, $5, $6)
				 ON CONFLICT (scope, target) DO UPDATE SET reason = excluded.reason, paused_by = excluded.paused_by,
					at = excluded.at, stop = excluded.stop
				 RETURNING *`,
				[p.scope, target, p.reason ?? null, ctx.actor, now, p.stop === true],
			);
			const pause = pauseOf(present(rows[0]));
			const cards = await coveredDispatched(tx, p.scope, target);
			const events: PendingEvent[] = [
				{ cardId: card?.id ?? pauseEventId, type: 'paused', data: { card: card ?? null, pause, cards } },
			];
			return { result: { pause, cards }, events };
		});
	}

	async clear(ctx: OpContext, p: ParsedParams<'pause/clear'>): Promise<Result<'pause/clear'>> {
		if (p.all !== true && p.scope === undefined) {
			throw new BatonError('invalid_input', 'Say which pause to clear (a scope and its target), or all.');
		}
		const target = p.all === true ? undefined : checkTarget(p.scope ?? 'all', p.target);
		return this.uow.mutate(ctx, 'pause/clear', async tx => {
			const rows = await tx.query<PauseRow>(
				p.all === true
					? 'DELETE FROM pauses RETURNING *'
					: 'DELETE FROM pauses WHERE scope = $1 AND target = $2 RETURNING *',
				p.all === true ? [] : [p.scope, target],
			);
			const cleared = rows.map(pauseOf);
			if (cleared.length === 0) {
				return { result: { cleared }, events: [] };
			}
			const only = cleared.length === 1 && cleared[0]?.scope === 'card' ? cleared[0].target : null;
			const card = only === null ? null : await loadCard(tx, only, false).catch(() => null);
			return {
				result: { cleared },
				events: [{ cardId: card?.id ?? pauseEventId, type: 'resumed', data: { card, pauses: cleared } }],
			};
		});
	}
}

/** The stored target of a pause: '' for all; refuses a missing or needless one, and a bad kind. */
function checkTarget(scope: PauseScope, target: string | undefined): string {
	if (scope === 'all') {
		if (target !== undefined) {
			throw new BatonError('invalid_input', `A pause of everything names no target (got "${target}").`);
		}
		return '';
	}
	if (target === undefined) {
		throw new BatonError('invalid_input', `A ${scope} pause names its ${scope === 'card' ? 'card id' : scope}.`);
	}
	if (scope === 'kind' && !AgentKind.safeParse(target).success) {
		throw new BatonError(
			'invalid_input',
			`"${target}" is not an agent kind: a lowercase word such as claude, codex or gemini.`,
		);
	}
	return target;
}

/** Refuses a pause of a project or card that does not exist (naming it); returns the card of a card pause. */
async function checkExists(tx: Queryable, scope: PauseScope, target: string): Promise<Card | undefined> {
	if (scope === 'card') {
		return loadCard(tx, target, false);
	}
	if (scope === 'project') {
		const rows = await tx.query(
			`SELECT 1 FROM cards WHERE project = $1 UNION ALL SELECT 1 FROM project_settings WHERE project = $1 LIMIT 1`,
			[target],
		);
		if (rows.length === 0) {
			throw new BatonError(
				'not_found',
				`Project ${target} does not exist: no card and no setting names it. baton list --project '*' shows the projects.`,
				{ project: target },
			);
		}
	}
	return undefined;
}

/** Claimed cards held by dispatched agents that a new pause covers (the supervisor stops them with --stop). */
async function coveredDispatched(tx: Queryable, scope: PauseScope, target: string): Promise<string[]> {
	const cond: Record<PauseScope, string> = {
		all: 'true',
		project: 'project = $1',
		phase: 'phase = $1',
		card: 'id = $1',
		kind: "dispatch->>'kind' = $1",
	};
	const rows = await tx.query<{ id: string }>(
		`SELECT id FROM cards WHERE dispatch IS NOT NULL AND status = 'claimed' AND ${cond[scope]} AND $1::text IS NOT NULL ORDER BY id`,
		[target],
	);
	return rows.map(r => r.id);
}
