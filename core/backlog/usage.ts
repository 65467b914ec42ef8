/**
 * What attempts cost (table attempt_usage, migration 0030): the report of an attempt's usage (the
 * supervisor's `dispatch/usage` from its agent's BATON_USAGE lines, or the agent's own heartbeat), the
 * usage of a card's attempts for card/get, and the sums for card/stats and /metrics (usage_totals, kept
 * by each report). A report is the attempt's running total: it replaces the one before. Writes only
 * attempt_usage and usage_totals, and no event (a cost is not a change of the card); decides no card
 * transition and invents no cost.
 */
import { BatonError } from '../errors';
import type { Attempt, ParsedParams, Result, Usage, UsageReport, UsageSum, UsageTotals } from '../protocol';
import { sumUsage } from '../rules/usage';
import type { Queryable } from '../store/db';
import { loadCard } from './cardActions';
import type { OpContext, UnitOfWork } from './unitOfWork';

/** The key of attempts whose agent was not dispatched (no kind) in stats' byKind and /metrics. */
export const noKind = 'none';

interface UsageRow {
	epoch: number;
	kind: string | null;
	project: string | null;
	input: number;
	output: number;
	cost: number | null;
}

const columns = `epoch, kind, project, input_tokens::float8 AS input, output_tokens::float8 AS output, cost_usd AS cost`;

function usageOf(row: UsageRow): Usage {
	return {
		inputTokens: row.input,
		outputTokens: row.output,
		costUsd: row.cost,
	};
}

/**
 * Records (replaces) the usage of the attempt `epoch` of a card, with the agent kind and the card's
 * project, and moves usage_totals by the difference from the attempt's previous report, in the caller's
 * transaction. The attempt's row is made first (zeros) and then locked, so two reports of one attempt
 * at once on PostgreSQL take turns and each adds only its own difference.
 */
export async function recordUsage(
	q: Queryable,
	at: { cardId: string; epoch: number; kind: string | null; project: string | null },
	usage: UsageReport,
	now: Date,
): Promise<void> {
	await q.query(
		`INSERT INTO attempt_usage (card_id, epoch, kind, project, input_tokens, output_tokens, cost_usd, updated_at)
		 VALUES ($1, $2, $3, $4, 0, 0, 0, $5) ON CONFLICT (card_id, epoch) DO NOTHING`,
		[at.cardId, at.epoch, at.kind, at.project, now],
	);
	const [old] = await q.query<UsageRow>(
		`SELECT ${columns} FROM attempt_usage WHERE card_id = $1 AND epoch = $2 FOR UPDATE`,
		[at.cardId, at.epoch],
	);
	const kind = at.kind ?? old?.kind ?? null;
	const cost = usage.costUsd ?? null;
	await q.query(
		`UPDATE attempt_usage SET kind = $3, project = $4, input_tokens = $5, output_tokens = $6, cost_usd = $7,
			updated_at = $8 WHERE card_id = $1 AND epoch = $2`,
		[at.cardId, at.epoch, kind, at.project, usage.inputTokens, usage.outputTokens, cost, now],
	);
	if (old !== undefined) {
		await addTotals(q, old.kind, old.project, -old.input, -old.output, -(old.cost ?? 0), old.cost === null ? -1 : 0);
	}
	await addTotals(q, kind, at.project, usage.inputTokens, usage.outputTokens, cost ?? 0, cost === null ? 1 : 0);
}

async function addTotals(
	q: Queryable,
	kind: string | null,
	project: string | null,
	input: number,
	output: number,
	known: number,
	unknown: number,
): Promise<void> {
	await q.query(
		`INSERT INTO usage_totals (kind, project, input_tokens, output_tokens, known_cost_usd, unknown_cost)
		 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (kind, project) DO UPDATE SET
			input_tokens = usage_totals.input_tokens + EXCLUDED.input_tokens,
			output_tokens = usage_totals.output_tokens + EXCLUDED.output_tokens,
			known_cost_usd = usage_totals.known_cost_usd + EXCLUDED.known_cost_usd,
			unknown_cost = usage_totals.unknown_cost + EXCLUDED.unknown_cost`,
		[kind ?? '', project ?? '', input, output, known, unknown],
	);
}

/** Each attempt with its reported usage, and their sum (undefined when none reported any). */
export async function withUsage(
	q: Queryable,
	cardId: string,
	attempts: Attempt[],
): Promise<{ attempts: Attempt[]; usage?: Usage }> {
	const rows = await q.query<UsageRow>(`SELECT ${columns} FROM attempt_usage WHERE card_id = $1 ORDER BY epoch`, [
		cardId,
	]);
	if (rows.length === 0) {
		return { attempts };
	}
	const byEpoch = new Map(rows.map(r => [r.epoch, usageOf(r)]));
	const usage = sumUsage(rows.map(usageOf));
	return {
		attempts: attempts.map(a => {
			const u = byEpoch.get(a.epoch);
			return u === undefined ? a : { ...a, usage: u };
		}),
		...(usage === undefined ? {} : { usage }),
	};
}

const zero: UsageSum = { inputTokens: 0, outputTokens: 0, costUsd: 0, knownCostUsd: 0 };

/** A float sum of dollars drifts in its last bits (0.01 + 0.05): kept to a millionth of a dollar. */
function centsOf(usd: number): number {
	return Math.round(usd * 1e6) / 1e6;
}

function addSums(a: UsageSum, b: UsageSum): UsageSum {
	return {
		inputTokens: a.inputTokens + b.inputTokens,
		outputTokens: a.outputTokens + b.outputTokens,
		costUsd: a.costUsd === null || b.costUsd === null ? null : centsOf(a.costUsd + b.costUsd),
		knownCostUsd: centsOf(a.knownCostUsd + b.knownCostUsd),
	};
}

/**
 * The sums of every recorded attempt (narrowed by `project` as card/stats is: a project id counts its
 * cards and those with none, null only those with none, '*' or undefined all), by kind and by project.
 */
export async function usageTotals(q: Queryable, project?: string | null): Promise<UsageTotals> {
	const params: unknown[] = [];
	const where =
		project === undefined || project === '*'
			? ''
			: project === null
				? " WHERE project = ''"
				: ` WHERE project = '' OR project = $${params.push(project)}`;
	// The maintained sums (one row per kind and project), never the attempts themselves.
	const rows = await q.query<{
		kind: string;
		project: string;
		input: number;
		output: number;
		known: number;
		unknown: number;
	}>(
		`SELECT kind, project, input_tokens::float8 AS input, output_tokens::float8 AS output,
			known_cost_usd AS known, unknown_cost AS unknown
		 FROM usage_totals${where}`,
		params,
	);
	const byKind: Record<string, UsageSum> = {};
	const byProject: Record<string, UsageSum> = {};
	let sum = zero;
	for (const r of rows) {
		if (r.input === 0 && r.output === 0 && r.known === 0 && r.unknown === 0) {
			continue; // a key whose attempts all moved elsewhere (a card changed project)
		}
		const known = centsOf(r.known);
		const part: UsageSum = {
			inputTokens: r.input,
			outputTokens: r.output,
			costUsd: r.unknown > 0 ? null : known,
			knownCostUsd: known,
		};
		sum = addSums(sum, part);
		const kind = r.kind === '' ? noKind : r.kind;
		byKind[kind] = addSums(byKind[kind] ?? zero, part);
		byProject[r.project] = addSums(byProject[r.project] ?? zero, part);
	}
	return { total: sum, byKind, byProject };
}

/**
 * `dispatch/usage`: the holder of the claim at `epoch` (the supervisor's seat speaks as its agent)
 * records that attempt's usage, during the claim or after it ended (the last report often comes with
 * the completion). Anyone else is refused `lease_lost`, and nothing is written.
 */
export function reportUsage(
	uow: UnitOfWork,
	ctx: OpContext,
	p: ParsedParams<'dispatch/usage'>,
): Promise<Result<'dispatch/usage'>> {
	return uow.mutate(ctx, 'dispatch/usage', async (tx, now) => {
		const card = await loadCard(tx, p.cardId, false);
		const held = await tx.query<{ kind: string | null }>(
			`SELECT data->'card'->'dispatch'->>'kind' AS kind FROM events WHERE card_id = $1 AND type = 'claimed'
			 AND data->'card'->>'claimOwner' = $2 AND (data->'card'->>'claimEpoch')::int = $3 LIMIT 1`,
			[p.cardId, ctx.actor, p.epoch],
		);
		if (held.length === 0) {
			throw new BatonError(
				'lease_lost',
				`Card ${p.cardId}'s attempt at epoch ${p.epoch} was not ${ctx.actor}'s claim: only its holder reports its usage.`,
				{ cardId: p.cardId, yourEpoch: p.epoch },
			);
		}
		// The kind the claim was dispatched for (its event keeps it after the card's record is cleared).
		const kind = held[0]?.kind ?? ctx.kind ?? null;
		await recordUsage(tx, { cardId: card.id, epoch: p.epoch, kind, project: card.project ?? null }, p.usage, now);
		return { result: {}, events: [] };
	});
}
