/**
 * Dispatch: the shapes of agents Baton starts itself — agent kinds, assignments, a claimed
 * card's dispatch record, pauses of the line and supervisor runs — and the params and results of the
 * `pause/*`, `card/assign`, `dispatch/*` and `run/*` methods. Part of `core/protocol/index.ts`;
 * platform-free, imports only zod and scalars (domain.ts builds Card on these), and knows no frame.
 */
import { z } from 'zod';
import { AgentId, CardId, ProjectId, Timestamp } from './scalars';

/** A kind of agent program: claude, codex, gemini, fake… (lowercase, no spaces). */
export const AgentKind = z
	.string()
	.regex(
		/^[a-z][a-z0-9_-]{0,31}$/,
		'an agent kind is a lowercase word (letters, digits, _ or -), at most 32 characters',
	)
	.describe('Agent kind, e.g. claude');
export type AgentKind = z.infer<typeof AgentKind>;

/** Who may claim a card: one agent id, or `kind:K` (any agent of that kind). */
export const Assignee = z.union([
	z.string().regex(/^kind:[a-z][a-z0-9_-]{0,31}$/, 'kind:K names an agent kind (lowercase, no spaces)'),
	AgentId,
]);
export type Assignee = z.infer<typeof Assignee>;

/** A supervisor run's name (`baton run --name`); default 'default'. */
export const RunName = z
	.string()
	.regex(/^[a-z0-9][a-z0-9._-]{0,39}$/, 'a run name is lowercase letters, digits, . _ or -, at most 40 characters');
export type RunName = z.infer<typeof RunName>;

/** What the supervisor says of a claim it makes (hidden `card/claim` param `dispatch`). */
export const DispatchClaim = z.object({ run: RunName, seat: z.number().int().min(1), kind: AgentKind }).strict();
export type DispatchClaim = z.infer<typeof DispatchClaim>;

/** A claimed card's dispatch record: the seat and agent program holding it; cleared when the claim ends. */
export const CardDispatch = z.object({
	run: RunName,
	seat: z.number().int().min(1),
	kind: AgentKind,
	host: z.string(),
	pid: z.number().int().optional(),
	startedAt: Timestamp,
	/** Absolute path of the seat's output log for this card. */
	log: z.string().optional(),
	/** The agent's last output lines (the supervisor updates them at most every 5 s). */
	output: z.array(z.string().max(200)).max(5).optional(),
});
export type CardDispatch = z.infer<typeof CardDispatch>;

export const PauseScope = z.enum(['all', 'project', 'phase', 'card', 'kind']);
export type PauseScope = z.infer<typeof PauseScope>;

/** A pause of the line: no claim of a card it covers is granted until it is cleared. */
export const Pause = z.object({
	scope: PauseScope,
	/** The project, phase, card id or agent kind; null for 'all'. */
	target: z.string().nullable(),
	reason: z.string().max(500).nullable(),
	by: z.string(),
	at: Timestamp,
	/** The dispatched agents it covers were asked to stop now (else they finish their cards). */
	stop: z.boolean(),
});
export type Pause = z.infer<typeof Pause>;

const pauseTarget = z.string().trim().min(1).max(200);

export const PauseSetParams = z
	.object({
		scope: PauseScope,
		target: pauseTarget.optional().describe('The project, phase, card id or agent kind (not for all)'),
		reason: z.string().max(500).optional().describe('Why (shown in refused claims)'),
		stop: z.boolean().optional().describe('Stop the dispatched agents it covers now instead of letting them finish'),
	})
	.strict();
export const PauseSetResult = z.object({
	pause: Pause,
	/** Claimed dispatched cards it covers (the supervisor stops them when `stop`). */
	cards: z.array(CardId),
});
export const PauseClearParams = z
	.object({
		scope: PauseScope.optional(),
		target: pauseTarget.optional(),
		all: z.literal(true).optional().describe('Clear every pause'),
	})
	.strict();
export const PauseClearResult = z.object({ cleared: z.array(Pause) });
export const PauseListParams = z.object({}).strict();
export const PauseListResult = z.object({ pauses: z.array(Pause) });

export const AssignParams = z
	.object({
		cardId: CardId,
		assignee: Assignee.nullable().describe('An agent id or kind:K; null clears it'),
	})
	.strict();

export const DispatchUpdateParams = z
	.object({
		cardId: CardId,
		epoch: z.number().int().nonnegative(),
		pid: z.number().int().optional(),
		log: z.string().max(4096).optional(),
		output: CardDispatch.shape.output,
	})
	.strict();

/**
 * An attempt's usage as its agent reports it: the running total of the attempt (a later report replaces
 * an earlier one). `costUsd` null: the agent reported tokens but no cost, and none is invented.
 */
export const Usage = z
	.object({
		inputTokens: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
		outputTokens: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
		costUsd: z.number().nonnegative().max(1e9).nullable(),
	})
	.strict();
export type Usage = z.infer<typeof Usage>;
/** What an agent or the supervisor reports: a cost may be left out (unknown). */
export const UsageReport = Usage.extend({ costUsd: Usage.shape.costUsd.optional() }).strict();
export type UsageReport = z.input<typeof UsageReport>;
/** Usage summed over attempts, as card/stats gives it: the whole, by agent kind ('none': not dispatched) and project ('' : none). */
export const UsageSum = Usage.extend({
	/** The dollars that were reported, also when some attempt reported none (then costUsd is null). */
	knownCostUsd: z.number().nonnegative(),
}).strict();
export type UsageSum = z.infer<typeof UsageSum>;
export const UsageTotals = z.object({
	total: UsageSum,
	byKind: z.record(z.string(), UsageSum),
	byProject: z.record(z.string(), UsageSum),
});
export type UsageTotals = z.infer<typeof UsageTotals>;
/**
 * The supervisor's record of its agent's usage on the attempt its seat held at `epoch`; accepted from
 * the agent that held that claim even after the claim ended (an agent's last report often comes with
 * its completion).
 */
export const DispatchUsageParams = z
	.object({ cardId: CardId, epoch: z.number().int().nonnegative(), usage: UsageReport })
	.strict();

export const AgentExitReason = z.enum([
	'completed',
	'failed',
	'released',
	'exited',
	'timeout',
	'budget',
	'hung',
	'rate_limited',
	'stopped',
	'start_failed',
]);
export type AgentExitReason = z.infer<typeof AgentExitReason>;
export const DispatchExitedParams = z
	.object({
		cardId: CardId.optional(),
		run: RunName,
		seat: z.number().int().min(1),
		kind: AgentKind,
		reason: AgentExitReason,
		code: z.number().int().nullable(),
	})
	.strict();
export const EmptyResult = z.object({});

/**
 * A seat credential for the agent of a dispatched card: asked by the supervisor's seat connection, whose
 * session holds the card at `epoch`. A connection that says hello with it is that card's agent and may
 * act only on that card, until the claim ends (mcp-server/hub/seatCredentials.ts).
 */
export const SeatGrantParams = z.object({ cardId: CardId, epoch: z.number().int().nonnegative() }).strict();
export const SeatGrantResult = z.object({ token: z.string() });

export const RunStopping = z.enum(['drain', 'stop']);
export const RunInfo = z.object({
	name: RunName,
	host: z.string(),
	pid: z.number().int(),
	seats: z.number().int(),
	kinds: z.array(AgentKind),
	project: ProjectId.nullable(),
	/** Seats holding a card now (claimed cards whose dispatch names this run). */
	inUse: z.number().int(),
	startedAt: Timestamp,
	lastSeenAt: Timestamp,
	/** Not registered again for 30 s: the supervisor is gone (its cards' leases tell the rest). */
	gone: z.boolean(),
	stopping: RunStopping.nullable(),
});
export type RunInfo = z.infer<typeof RunInfo>;
export const RunRegisterParams = z
	.object({
		name: RunName,
		host: z.string().min(1).max(255),
		pid: z.number().int(),
		seats: z.number().int().min(1).max(1000),
		kinds: z.array(AgentKind).max(32),
		project: ProjectId.nullable(),
	})
	.strict();
export const RunResult = z.object({ run: RunInfo });
export const RunListParams = z.object({}).strict();
export const RunListResult = z.object({ runs: z.array(RunInfo) });
export const RunStopParams = z
	.object({
		name: RunName.optional().describe('The run to stop (default: every run)'),
		stop: z.boolean().optional().describe('Stop its agents now (default: drain: they finish their cards)'),
	})
	.strict();
export const RunEndParams = z.object({ name: RunName }).strict();

/** A run not registered again for this long is shown as gone (it re-registers every 10 s). */
export const runGoneSeconds = 30;
