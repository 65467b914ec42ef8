/**
 * The params and results of the other methods (agents, events, hub, settings, import/export) and the
 * one `methods` table the hub serves: method -> params, result, mutating (the hooks' and workspaces'
 * schemas are in hooks.ts and workspaces.ts). Part of `core/protocol/index.ts`; platform-free, imports
 * only zod and the other protocol parts, and knows no frame.
 */
import { z } from 'zod';
import {
	AgentId,
	BackoffSeconds,
	CardId,
	ProjectId,
	Reason,
	ReviewMode,
	Seq,
	StallSeconds,
	Timestamp,
	limits,
} from './scalars';
import {
	HookResult,
	HooksAddParams,
	HooksListParams,
	HooksListResult,
	HooksRemoveParams,
	HooksResumeParams,
} from './hooks';
import {
	LandingQueueParams,
	LandingQueueResult,
	ProjectSettings,
	ProjectSettingsParams,
	ProjectSettingsUpdateParams,
	WorkspaceGcParams,
	WorkspaceGcResult,
} from './workspaces';
import { Agent, BacklogEvent, Card, HealthThresholds } from './domain';
import {
	BlockParams,
	CardResult,
	CardsResult,
	ClaimParams,
	ClaimResult,
	CommentParams,
	CommentResult,
	CompleteParams,
	CompleteResult,
	CreateParams,
	DeleteParams,
	DeleteResult,
	FailParams,
	GetParams,
	GetResult,
	HeartbeatParams,
	InboxAckParams,
	InboxAckResult,
	LeaseResult,
	LinkParams,
	ListParams,
	ListResult,
	ListRowsResult,
	ReclaimParams,
	ReleaseParams,
	ReopenParams,
	ReopenResult,
	ReserveParams,
	ReserveResult,
	ReviewParams,
	ReviewResult,
	StatsParams,
	StatsResult,
	UnblockParams,
	UpdateParams,
} from './cards';
import { CardDiffParams, CardDiffResult } from './diff';
import {
	AssignParams,
	DispatchExitedParams,
	SeatGrantParams,
	SeatGrantResult,
	DispatchUpdateParams,
	DispatchUsageParams,
	EmptyResult,
	PauseClearParams,
	PauseClearResult,
	PauseListParams,
	PauseListResult,
	PauseSetParams,
	PauseSetResult,
	RunEndParams,
	RunListParams,
	RunListResult,
	RunRegisterParams,
	RunResult,
	RunStopParams,
} from './dispatch';

export const AgentListParams = z
	.object({ all: z.boolean().optional().describe('Also agents whose sessions ended and hold nothing') })
	.strict();
export const AgentListResult = z.object({ agents: z.array(Agent), thresholds: HealthThresholds });
export const AgentPingParams = z.object({}).strict();
export const AgentPingResult = z.object({ renewed: z.number().int() });
export const AgentReclaimParams = z
	.object({
		agentId: AgentId.describe("Reclaim all of this agent's cards"),
		reason: Reason.optional().describe('Why'),
	})
	.strict();

export const EventsListParams = z
	.object({
		afterSeq: Seq.optional().describe('Only events after this seq'),
		cardId: CardId.optional().describe('Only events of this card'),
		limit: z.number().int().min(1).max(limits.listLimit).optional().describe('At most this many'),
	})
	.strict();
/**
 * `horizon`: the highest seq the log's compaction deleted: progress events beyond the
 * newest per card or older than the settings allow. Events after it are all there.
 */
export const EventsListResult = z.object({ events: z.array(BacklogEvent), lastSeq: Seq, horizon: Seq });
export const SubscribeParams = z.object({ afterSeq: Seq.optional() }).strict();
/**
 * `resync`: the client asked to resume after a seq older than the log's horizon, so some events it
 * never saw are gone. The subscription is live from `seq` on; the client must reload its state (cards,
 * counts) instead of replaying. Without it every event after `afterSeq` was replayed.
 */
export const SubscribeResult = z.object({ seq: Seq, resync: z.literal(true).optional() });

/**
 * Whether the store takes writes: `disk_full` (the data dir's filesystem is below Baton's reserve:
 * writes are refused, reads answer) or `unavailable` (PostgreSQL unreachable, or the store failed and
 * the hub is stopping). `message` is the sentence to show, with what to do.
 */
export const StoreHealth = z.object({
	state: z.enum(['ok', 'disk_full', 'unavailable']),
	message: z.string().max(2000).optional(),
});
export type StoreHealth = z.infer<typeof StoreHealth>;

export const HubStatusParams = z.object({}).strict();
export const HubStatusResult = z.object({
	pid: z.number().int(),
	protocol: z.number().int(),
	version: z.string(),
	mode: z.enum(['pglite', 'postgres']),
	dataDir: z.string(),
	startedAt: Timestamp,
	clients: z.number().int(),
	port: z.number().int().nullable(),
	thresholds: HealthThresholds,
	lastSeq: Seq,
	/** What happened at start that users should hear of (a partial first init set aside, a marker re-written). */
	notices: z.array(z.string()).optional(),
	store: StoreHealth.optional(),
	/** Prometheus metrics: the URL (null without a TCP listener) and the scrape token's file. */
	metrics: z.object({ url: z.string().nullable(), tokenFile: z.string() }).optional(),
});
export type HubStatusResult = z.infer<typeof HubStatusResult>;
export const HubStopParams = z.object({}).strict();
export const OkResult = z.object({ ok: z.literal(true) });

export const BackupParams = z.object({}).strict();
/** A full backup written by the hub: every table (mcp-server/hub/backupFormat.ts); counts of its cards and events. */
export const BackupResult = z.object({
	path: z.string(),
	cards: z.number().int(),
	events: z.number().int(),
	bytes: z.number().int(),
});

/** A lossless export record: the full card (dependsOn included). */
export const ExportParams = z.object({ cursor: z.string().max(500).optional() }).strict();
export const ExportResult = z.object({ cards: z.array(Card), nextCursor: z.string().optional() });
export const ImportParams = z
	.object({
		cards: z.array(Card).min(1).max(limits.importBatch),
		/**
		 * What a card whose id or idempotency key exists already does: `skip` it (the default: a
		 * re-run merge of an export), or `fail` the whole call, so nothing of it is applied (a foreign
		 * import, whose ids and dependencies were mapped against what the store held a moment ago).
		 */
		onConflict: z.enum(['skip', 'fail']).optional(),
	})
	.strict();
export const ImportResult = z.object({ imported: z.number().int(), skipped: z.number().int() });

/**
 * Backlog-wide policies, stored in the backlog itself (so every hub on a PostgreSQL backlog and every
 * backup agree). Cards override the per-card ones (backoffSeconds, stallReleaseSeconds).
 */
export const Settings = z
	.object({
		backoffSeconds: BackoffSeconds.describe(
			'First retry delay after a failed attempt; doubles per attempt; default 30',
		),
		backoffMaxSeconds: BackoffSeconds.describe('Cap of the retry delay; default 3600'),
		stallReleaseSeconds: StallSeconds.describe(
			'Release a claim after this long without progress; 0 = never (the default)',
		),
		review: ReviewMode.describe('Review of new cards that do not say: none (the default), human or agent'),
		idPrefix: z
			.string()
			.regex(/^[A-Za-z]{1,10}$/, 'an id prefix is 1-10 letters')
			.describe('Prefix of new ids (WEB-12)'),
		progressEventsPerCard: z
			.number()
			.int()
			.min(1)
			.max(100_000)
			.describe("Progress events (heartbeats that changed a card's progress) kept per card; default 50"),
		progressEventDays: z
			.number()
			.int()
			.min(1)
			.max(36_500)
			.describe('Progress events older than this many days are compacted away; default 90'),
		agentRetentionDays: z
			.number()
			.int()
			.min(1)
			.max(36_500)
			.describe('Agents ended (or unseen) this many days and holding nothing are forgotten; default 7'),
		maxHeld: z
			.number()
			.int()
			.min(1)
			.max(10_000)
			.nullable()
			.describe('A claim by an agent already holding this many cards is refused; null = no limit'),
		agingHours: z
			.number()
			.positive()
			.max(87_600)
			.nullable()
			.describe("A ready card's effective priority rises by one per this many hours waited; null = off"),
	})
	.strict();
export type Settings = z.infer<typeof Settings>;
export const defaultSettings: Settings = {
	backoffSeconds: 30,
	backoffMaxSeconds: 3600,
	stallReleaseSeconds: 0,
	review: 'none',
	progressEventsPerCard: 50,
	progressEventDays: 90,
	agentRetentionDays: 7,
	idPrefix: 'CARD',
	maxHeld: null,
	agingHours: null,
};
export const SettingsGetParams = z.object({}).strict();
export const SettingsUpdateParams = Settings.partial().extend({ idPrefixProject: ProjectId.optional() }).strict();

export const BoardTicketParams = z.object({}).strict();
export const BoardTicketResult = z.object({ url: z.string() });

/**
 * Every request the hub serves: method -> params and result schemas, and whether it changes state
 * (`mutating`: clients tag it with an idempotency key and re-send it after a failover; the hub lets it
 * run only with room on the store's disk).
 */
export const methods = {
	'card/create': { params: CreateParams, result: CardsResult, mutating: true },
	'card/update': { params: UpdateParams, result: CardResult, mutating: true },
	'card/get': { params: GetParams, result: GetResult, mutating: false },
	'card/list': { params: ListParams, result: ListResult, mutating: false },
	'card/listRows': { params: ListParams, result: ListRowsResult, mutating: false },
	'card/stats': { params: StatsParams, result: StatsResult, mutating: false },
	'card/claim': { params: ClaimParams, result: ClaimResult, mutating: true },
	'card/heartbeat': { params: HeartbeatParams, result: LeaseResult, mutating: true },
	'card/complete': { params: CompleteParams, result: CompleteResult, mutating: true },
	'card/release': { params: ReleaseParams, result: CardResult, mutating: true },
	'card/fail': { params: FailParams, result: CardResult, mutating: true },
	'card/reclaim': { params: ReclaimParams, result: CardsResult, mutating: true },
	'card/block': { params: BlockParams, result: CardResult, mutating: true },
	'card/unblock': { params: UnblockParams, result: CardResult, mutating: true },
	'card/reopen': { params: ReopenParams, result: ReopenResult, mutating: true },
	'card/link': { params: LinkParams, result: CardResult, mutating: true },
	'card/unlink': { params: LinkParams, result: CardResult, mutating: true },
	'card/delete': { params: DeleteParams, result: DeleteResult, mutating: true },
	'card/comment': { params: CommentParams, result: CommentResult, mutating: true },
	'card/review': { params: ReviewParams, result: ReviewResult, mutating: true },
	'card/reserve': { params: ReserveParams, result: ReserveResult, mutating: true },
	'card/diff': { params: CardDiffParams, result: CardDiffResult, mutating: false },
	'inbox/ack': { params: InboxAckParams, result: InboxAckResult, mutating: true },
	'agent/list': { params: AgentListParams, result: AgentListResult, mutating: false },
	'agent/ping': { params: AgentPingParams, result: AgentPingResult, mutating: false },
	'agent/reclaim': { params: AgentReclaimParams, result: CardsResult, mutating: true },
	'events/list': { params: EventsListParams, result: EventsListResult, mutating: false },
	'events/subscribe': { params: SubscribeParams, result: SubscribeResult, mutating: false },
	'hub/status': { params: HubStatusParams, result: HubStatusResult, mutating: false },
	'hub/stop': { params: HubStopParams, result: OkResult, mutating: false },
	'hub/backup': { params: BackupParams, result: BackupResult, mutating: false },
	'hub/boardTicket': { params: BoardTicketParams, result: BoardTicketResult, mutating: false },
	'settings/get': { params: SettingsGetParams, result: Settings, mutating: false },
	'settings/update': { params: SettingsUpdateParams, result: Settings, mutating: true },
	'project/settings': { params: ProjectSettingsParams, result: ProjectSettings, mutating: false },
	'project/settings/update': { params: ProjectSettingsUpdateParams, result: ProjectSettings, mutating: true },
	'data/export': { params: ExportParams, result: ExportResult, mutating: false },
	'data/import': { params: ImportParams, result: ImportResult, mutating: true },
	'hooks/list': { params: HooksListParams, result: HooksListResult, mutating: false },
	'hooks/add': { params: HooksAddParams, result: HookResult, mutating: true },
	'hooks/remove': { params: HooksRemoveParams, result: HookResult, mutating: true },
	'hooks/resume': { params: HooksResumeParams, result: HookResult, mutating: true },
	'workspace/gc': { params: WorkspaceGcParams, result: WorkspaceGcResult, mutating: false },
	'landing/queue': { params: LandingQueueParams, result: LandingQueueResult, mutating: false },
	'pause/set': { params: PauseSetParams, result: PauseSetResult, mutating: true },
	'pause/clear': { params: PauseClearParams, result: PauseClearResult, mutating: true },
	'pause/list': { params: PauseListParams, result: PauseListResult, mutating: false },
	'card/assign': { params: AssignParams, result: CardResult, mutating: true },
	'dispatch/update': { params: DispatchUpdateParams, result: CardResult, mutating: true },
	'dispatch/usage': { params: DispatchUsageParams, result: EmptyResult, mutating: true },
	'dispatch/exited': { params: DispatchExitedParams, result: EmptyResult, mutating: true },
	'dispatch/seat': { params: SeatGrantParams, result: SeatGrantResult, mutating: false },
	'run/register': { params: RunRegisterParams, result: RunResult, mutating: true },
	'run/list': { params: RunListParams, result: RunListResult, mutating: false },
	'run/stop': { params: RunStopParams, result: RunListResult, mutating: true },
	'run/end': { params: RunEndParams, result: EmptyResult, mutating: true },
} as const satisfies Record<string, { params: z.ZodType; result: z.ZodType; mutating: boolean }>;

export type Methods = typeof methods;
export type Method = keyof Methods;
export type Params<M extends Method> = z.input<Methods[M]['params']>;
export type ParsedParams<M extends Method> = z.output<Methods[M]['params']>;
export type Result<M extends Method> = z.output<Methods[M]['result']>;
export const methodNames = Object.keys(methods) as Method[];
export const isMethod = (name: string): name is Method => Object.hasOwn(methods, name);

/** Methods that change state (`mutating` in the table): clients re-send them after a failover with their key. */
export const mutatingMethods: ReadonlySet<Method> = new Set(methodNames.filter(m => methods[m].mutating));
