/**
 * The params and results of the other methods (agents, events, hub, settings, import/export, hooks)
 * and the one `methods` table the hub serves: method -> params, result, mutating. Part of
 * `core/protocol/index.ts`; platform-free, imports only zod and the other protocol parts, and knows no frame.
 */
import { z } from 'zod';
import {
	Agent,
	AgentId,
	BacklogEvent,
	BackoffSeconds,
	Card,
	CardId,
	EventType,
	HealthThresholds,
	LandMode,
	ProjectId,
	Reason,
	ReviewMode,
	Seq,
	StallSeconds,
	Timestamp,
	limits,
} from './domain';
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
 * `horizon`: the highest seq the log's compaction deleted (issue 14 §2): progress events beyond the
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
	/** Prometheus metrics: the URL (null without a TCP listener) and the scrape token's file (issue 15). */
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
};
export const SettingsGetParams = z.object({}).strict();
export const SettingsUpdateParams = Settings.partial().extend({ idPrefixProject: ProjectId.optional() }).strict();

/**
 * One project's workspace settings (issue 33), stored in the backlog (table project_settings): whether a
 * claim of its cards gets a branch and git worktree, the base branch, how approval lands, push at
 * complete, the fresh worktree's setup command and its time limit, how long WIP snapshots are kept, and
 * the repository's root on each host (recorded by `baton settings --worktrees on` run inside it).
 */
export const ProjectSettings = z.object({
	project: ProjectId,
	worktrees: z.boolean(),
	/** The branch worktrees start from and land into; absent = the repository's default branch. */
	base: z.string().min(1).max(250).optional(),
	land: LandMode,
	push: z.boolean(),
	/** A shell command run in each fresh worktree (e.g. `npm ci`); absent = none. */
	setup: z.string().min(1).max(4000).optional(),
	setupTimeoutSeconds: z.number().int().min(1).max(86_400),
	wipDays: z.number().int().min(1).max(36_500),
	/** host name -> absolute path of the repository's main checkout there. */
	roots: z.record(z.string(), z.string()),
});
export type ProjectSettings = z.infer<typeof ProjectSettings>;
export const ProjectSettingsParams = ProjectSettings.pick({ project: true }).strict();
/** Changes only what it names; `null` clears base or setup; `roots` is merged per host (null removes one). */
export const ProjectSettingsUpdateParams = ProjectSettings.partial()
	.extend({
		project: ProjectId,
		base: ProjectSettings.shape.base.nullable(),
		setup: ProjectSettings.shape.setup.nullable(),
		roots: z.record(z.string(), z.string().nullable()).optional(),
	})
	.strict();

/** A hook's receiver: http(s), no credentials in it (they would show in every list; use the secret). */
export const HookUrl = z
	.string()
	.max(2000)
	.refine(
		u => {
			try {
				const url = new URL(u);
				return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
			} catch {
				return false;
			}
		},
		{ message: 'The hook URL must be an http:// or https:// URL without user:password in it.' },
	);
export const HookId = z.string().regex(/^hk[0-9a-f]{8}$/, 'A hook id looks like hk1a2b3c4d (see baton hooks).');

/** One attempt (or skip) in a hook's recent delivery log; the newest 50 per hook are kept. */
export const HookDelivery = z.object({
	seq: Seq,
	/** The `X-Baton-Delivery` header: `<hook id>-<instance>-<seq>`, the same on every retry of that event. */
	deliveryId: z.string(),
	attempt: z.number().int(),
	at: Timestamp,
	/** skipped: the event was compacted away before it could be delivered (seq is the range's last). */
	outcome: z.enum(['delivered', 'failed', 'skipped']),
	status: z.number().int().nullable(),
	error: z.string().nullable(),
	ms: z.number().int().nullable(),
});
export type HookDelivery = z.infer<typeof HookDelivery>;

/** A webhook as lists show it: never its secret, only a fingerprint of it. */
export const Hook = z.object({
	id: HookId,
	url: z.string(),
	/** Event types delivered; empty = all. */
	events: z.array(EventType),
	/** `sha256:` and the first 12 hex digits of the secret's SHA-256, to tell secrets apart. */
	secretFingerprint: z.string(),
	createdAt: Timestamp,
	createdBy: z.string(),
	/** The highest seq the hook is done with; it resumes after it. */
	cursor: Seq,
	/** Events after the cursor in the log (not all of them may match the hook's filter). */
	behind: z.number().int(),
	delivered: z.number().int(),
	lastDeliveredAt: Timestamp.nullable(),
	/** Failed attempts in a row at the current event; 0 = healthy. */
	failures: z.number().int(),
	failingSince: Timestamp.nullable(),
	lastError: z.string().nullable(),
	nextAttemptAt: Timestamp.nullable(),
	/** Why the hook sends nothing (a restore pauses the hooks it brings back; `hooks/resume`); null = it delivers. */
	paused: z.string().nullable(),
	recent: z.array(HookDelivery),
});
export type Hook = z.infer<typeof Hook>;

export const HooksListParams = z
	.object({ recent: z.number().int().min(0).max(50).optional().describe('Recent deliveries per hook; default 10') })
	.strict();
export const HooksListResult = z.object({ hooks: z.array(Hook) });
export const HooksAddParams = z
	.object({
		url: HookUrl,
		/** The HMAC key; at least 16 characters. Stored in the backlog, never returned. */
		secret: z.string().min(16, 'The hook secret must be at least 16 characters.').max(500),
		events: z.array(EventType).max(64).optional(),
	})
	.strict();
export const HookResult = z.object({ hook: Hook });
export const HooksRemoveParams = z.object({ id: HookId }).strict();
/** `hooks/resume`: a paused hook (a restore pauses the hooks it brings back) delivers again. */
export const HooksResumeParams = HooksRemoveParams;

export const BoardTicketParams = z.object({}).strict();
export const BoardTicketResult = z.object({ url: z.string() });

/**
 * `workspace/gc` (issue 33, `baton gc`): removes worktrees and branches of cards that are done or
 * deleted and WIP refs older than the project's wipDays, in `root`'s repository, else `project`'s on
 * this host, else every repository with workspaces on this host; `dryRun` only plans.
 */
export const WorkspaceGcParams = z
	.object({
		/** A folder of the repository (the CLI's working directory). */
		root: z.string().min(1).max(4096).optional(),
		project: ProjectId.optional(),
		/** Only plan: what gc would delete, and what it keeps and why. */
		dryRun: z.boolean().optional(),
		/** Also worktrees with unsnapshotted changes and branches with unlanded commits (a human override). */
		force: z.boolean().optional(),
	})
	.strict();
/** One thing gc deletes or keeps: a worktree or a git record of one (prune), a branch or a WIP ref. */
export const GcItem = z.object({
	kind: z.enum(['prune', 'worktree', 'branch', 'wip']),
	/** The folder (worktree, prune) or the full ref name (branch, wip). */
	target: z.string(),
	cardId: z.string().optional(),
	/** The commit of a ref, or the content tree of a worktree, when planned (gc re-checks it). */
	oid: z.string().optional(),
	reason: z.string(),
});
export const WorkspaceGcResult = z.object({
	repos: z.array(
		z.object({
			root: z.string(),
			/** The projects whose repository this is on this host. */
			projects: z.array(z.string()),
			/** What gc deletes (dry run) or meant to delete, in order. */
			items: z.array(GcItem),
			/** What it leaves, with the reason. */
			kept: z.array(GcItem),
			deleted: z.array(GcItem),
			/** Planned but changed since the plan, so left: with why. */
			skipped: z.array(GcItem.extend({ why: z.string() })),
		}),
	),
});

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
