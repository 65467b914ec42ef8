/**
 * The wire contract's vocabulary (DESIGN §2, §4): the limits every face enforces, the scalars, the
 * statuses and error codes, and the domain objects as they cross the wire (cards, agents, events,
 * messages). Part of `core/protocol/index.ts`, which every face imports; platform-free, imports only zod, and
 * knows no method or frame.
 */
import { z } from 'zod';

// ---------------------------------------------------------------------------------------------------
// Limits: one place, so the MCP server, CLI, hub and board refuse the same things.

export const limits = {
	idLength: 64,
	titleLength: 200,
	/** Body limit in UTF-8 bytes (64 KiB). */
	bodyBytes: 64 * 1024,
	phaseLength: 64,
	capabilityLength: 64,
	capabilities: 32,
	acceptanceItems: 50,
	acceptanceLength: 500,
	noteLength: 1000,
	reasonLength: 1000,
	resultLength: 16 * 1024,
	/** A message on a card, in UTF-8 bytes (4 KiB). */
	messageBytes: 4 * 1024,
	dependsOn: 100,
	/** Labels on a card (issue 31), and the characters of one. */
	labels: 16,
	labelLength: 32,
	createBatch: 1000,
	listLimit: 1000,
	importBatch: 1000,
	idempotencyKeyLength: 200,
	agentIdLength: 128,
	/** Largest request frame the hub accepts (bytes); clients refuse a larger one before sending. */
	maxPayload: 8 * 1024 * 1024,
	/**
	 * Largest answer or event frame the hub sends (bytes), and what clients accept: an answer may carry
	 * more than its request (a create returns the cards it made). A larger answer is replaced by a
	 * too_large error, never sent (the client would drop the connection and re-send the request).
	 */
	maxResponse: 32 * 1024 * 1024,
} as const;

// ---------------------------------------------------------------------------------------------------
// Scalars

const textEncoder = new TextEncoder();
const utf8Length = (s: string): number => textEncoder.encode(s).length;

export const CardId = z
	.string()
	.min(1)
	.max(limits.idLength)
	.regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'ids use letters, digits and . _ : - and start with a letter or digit')
	.describe('Card id, e.g. "A4" or "auth-01"');
export type CardId = z.infer<typeof CardId>;

export const AgentId = z
	.string()
	.min(1)
	.max(limits.agentIdLength)
	.regex(/^[^\s\p{Cc}]+$/u, 'agent ids have no spaces or control characters');
export type AgentId = z.infer<typeof AgentId>;

export const Capability = z
	.string()
	.min(1)
	.max(limits.capabilityLength)
	.regex(/^[A-Za-z0-9][A-Za-z0-9:._/+-]*$/, 'capabilities look like "lang:ts" or "repo:web"');

/** A card's label (issue 31): `ui`, `area:api`, `team/web`. */
export const Label = z
	.string()
	.max(limits.labelLength)
	.regex(/^[A-Za-z0-9_:/-]+$/, 'labels use letters, digits and - _ : /');
export const Labels = z.array(Label).max(limits.labels);

export const Title = z.string().trim().min(1, 'title must not be empty').max(limits.titleLength);
export const Body = z
	.string()
	.refine(s => utf8Length(s) <= limits.bodyBytes, { message: `body is larger than ${limits.bodyBytes} bytes` });
export const Phase = z.string().trim().min(1).max(limits.phaseLength);
export const Priority = z.number().int().min(-1_000_000).max(1_000_000);
export const Acceptance = z.array(z.string().min(1).max(limits.acceptanceLength)).max(limits.acceptanceItems);
export const Capabilities = z.array(Capability).max(limits.capabilities);
export const Epoch = z.number().int().nonnegative();
export const Seq = z.number().int().nonnegative();
/** ISO-8601 timestamp string; the wire never carries Date objects. */
export const Timestamp = z.string();
export const Reason = z.string().min(1).max(limits.reasonLength);
export const Note = z.string().max(limits.noteLength);
export const ResultText = z.string().max(limits.resultLength);
export const MessageText = z
	.string()
	.refine(s => s.trim().length > 0, { message: 'text must not be empty' })
	.refine(s => utf8Length(s) <= limits.messageBytes, {
		message: `text is larger than ${limits.messageBytes} bytes`,
	});
export const Progress = z.number().int().min(0).max(100);
/**
 * A project's id (issue 13 §1): `github.com/acme/web` from a git remote, or a repository folder's name
 * (core/client/projectId.ts). `*` is not an id: a claim's `project: '*'` means every project.
 */
export const ProjectId = z
	.string()
	.trim()
	.min(1)
	.max(200)
	.regex(/^[^\s\p{Cc}*][^\p{Cc}*]*$/u, 'project ids have no control characters or "*" and do not start with a space');
/**
 * A card's scope (issue 13 §2): path globs relative to its project's root and `lock:` names. The
 * backlog checks each entry (core/scope.ts); the schema bounds only the sizes.
 */
export const ScopeEntries = z
	.array(z.string().min(1).max(256))
	.max(64, 'a scope lists at most 64 entries; use broader globs ("src/auth/**" for a folder)');
/** Retry backoff seconds (the first delay; later ones double up to the backlog's cap). */
export const BackoffSeconds = z.number().int().min(0).max(86_400);
/** Seconds without progress before a claim is released by the stall policy; 0 = never. */
export const StallSeconds = z
	.number()
	.int()
	.min(0)
	.max(7 * 86_400);

/** `review`: completed by its agent, waiting for approval (issue 12); dependents keep waiting. */
export const CardStatus = z.enum(['ready', 'claimed', 'review', 'blocked', 'done']);
export type CardStatus = z.infer<typeof CardStatus>;
export const cardStatuses = CardStatus.options;

/** Who must approve a card's completion before it counts as done: nobody, a human, or a reviewing agent. */
export const ReviewMode = z.enum(['none', 'human', 'agent']);
export type ReviewMode = z.infer<typeof ReviewMode>;

export const ErrorCode = z.enum([
	'not_found',
	'lease_lost',
	'cycle',
	'invalid_transition',
	'invalid_input',
	'conflict',
	'has_dependents',
	'unauthorized',
	'too_large',
	'disk_full',
	'timeout',
	'unavailable',
	'protocol_mismatch',
	'store_refused',
	'store_too_new',
	'internal',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

// ---------------------------------------------------------------------------------------------------
// Domain objects as they cross the wire (camelCase, DESIGN §2)

/** How approval lands a card's branch into its base (issue 33); `none` leaves it to a pull request. */
export const LandMode = z.enum(['squash', 'merge', 'rebase', 'none']);
export type LandMode = z.infer<typeof LandMode>;

/**
 * A card's own branch and git worktree (issue 33), made by the hub that claimed it, on its machine.
 * Kept from claim to landing; a hub never runs git for a workspace whose `host` is another machine.
 */
// One instance each, reused by the fields below: the board bundles this file unminified (esbuild.mjs).
const wsText = z.string();
const wsCount = z.number().int().optional();
export const CardWorkspace = z.object({
	/** The repository's main checkout (absolute). */
	root: wsText,
	/** The worktree: `<root>/.baton/worktrees/<card id>`. */
	path: wsText,
	/** `baton/<card id>`. */
	branch: wsText,
	/** The branch it starts from and lands into. */
	base: wsText,
	/** os.hostname() of the machine whose hub made it. */
	host: wsText,
	/** Set at complete: the branch's commit, and its diff against base. */
	head: wsText.optional(),
	filesChanged: wsCount,
	insertions: wsCount,
	deletions: wsCount,
	/** Set when approval landed it (never with mode `none`). */
	landed: z.object({ mode: LandMode, commit: wsText, at: Timestamp }).optional(),
});
export type CardWorkspace = z.infer<typeof CardWorkspace>;

/** Issue 31's optional card fields: lists of ids or labels, and one id or null. */
const someStrings = z.array(z.string()).optional();
const someId = z.string().nullable().optional();

export const Card = z.object({
	id: CardId,
	title: z.string(),
	body: z.string(),
	phase: z.string().nullable(),
	priority: z.number().int(),
	status: CardStatus,
	requires: z.array(z.string()),
	/** Ids this card waits on (DAG edges, derived from the edges table). */
	dependsOn: z.array(z.string()),
	/** How many of dependsOn are not done yet; a ready card with unmetDeps > 0 is "waiting". */
	unmetDeps: z.number().int(),
	claimOwner: z.string().nullable(),
	claimedAt: Timestamp.nullable(),
	leaseExpiresAt: Timestamp.nullable(),
	/**
	 * The lease length the holder asked for. Liveness pings renew the lease silently (no event), so a
	 * client showing a countdown should treat it as renewed while the holder is healthy.
	 */
	leaseSeconds: z.number().int().nullable().optional(),
	/** Bumped on every claim and reclaim; a lease carries it and stale epochs are refused. */
	claimEpoch: z.number().int(),
	attempts: z.number().int(),
	maxAttempts: z.number().int(),
	deferUntil: Timestamp.nullable(),
	progress: z.number().int().nullable(),
	progressNote: z.string().nullable(),
	/** When the holder last reported progress (or claimed); drives the "stalled" flag. */
	progressAt: Timestamp.nullable(),
	result: z.string().nullable(),
	blockedReason: z.string().nullable(),
	/**
	 * Blocked because its attempts ran out or its agent gave up on it (`fail` with retry false), as
	 * opposed to parked by a human; `blockedReason` then lists the last reasons. Cleared by unblock/reopen.
	 */
	failed: z.boolean().optional(),
	/** First retry delay after a failed attempt (doubles per attempt, capped); null = the backlog's setting. */
	backoffSeconds: z.number().int().nullable().optional(),
	/** Release a claim that shows no progress for this long; 0 = never; null = the backlog's setting. */
	stallReleaseSeconds: z.number().int().nullable().optional(),
	idempotencyKey: z.string().nullable(),
	/** Who approves its completion; absent (older exports) means none. */
	review: ReviewMode.optional(),
	/** In review: the agent whose completed work it is (it may never approve it). */
	completedBy: z.string().nullable().optional(),
	/** The reviewer's "request changes" note for the next attempt (the next claim returns it as `handoff`). */
	handoff: z.string().nullable().optional(),
	/** An agent asked a question on it (a message with question: true) that nobody answered yet. */
	needsInput: z.boolean().optional(),
	/** The project it belongs to (issue 13); null = none, claimable from any project. */
	project: z.string().nullable().optional(),
	/** Path globs (relative to the project root) and `lock:` names its work touches. */
	scope: z.array(z.string()).optional(),
	/** What its holder added to the scope with `reserve` while it works; emptied when the claim ends. */
	reserved: z.array(z.string()).optional(),
	/** Its branch and worktree (issue 33); absent when it has none. */
	workspace: CardWorkspace.optional(),
	/** Its labels (issue 31), sorted, no duplicates. */
	labels: someStrings,
	/** The card it is part of (issue 31); null = none. A child waits while its parent waits on a dependency. */
	parent: someId,
	/** Completes by itself (or goes to review) when its last open child is done. */
	autoClose: z.boolean().optional(),
	/** Cards related to it (issue 31; kept on both, never blocking). */
	related: someStrings,
	/** Cards it duplicates (never blocking). */
	duplicates: someStrings,
	/** The card its creator held when it created this one (work found while doing other work). */
	discoveredFrom: someId,
	acceptance: z.array(z.string()),
	version: z.number().int(),
	createdAt: Timestamp,
	updatedAt: Timestamp,
});
export type Card = z.infer<typeof Card>;

export const Lease = z.object({
	cardId: CardId,
	epoch: Epoch,
	expiresAt: Timestamp,
});
export type Lease = z.infer<typeof Lease>;

export const AgentHealth = z.enum(['healthy', 'late', 'stale', 'dead']);
export type AgentHealth = z.infer<typeof AgentHealth>;
export const agentHealths = AgentHealth.options;

export const Agent = z.object({
	id: AgentId,
	name: z.string(),
	client: z.string(),
	capabilities: z.array(z.string()),
	host: z.string().nullable(),
	pid: z.number().int().nullable(),
	lastSeenAt: Timestamp,
	status: z.enum(['idle', 'working', 'blocked']),
	/** Cards this agent holds right now. */
	cards: z.array(CardId),
	/** Derived from lastSeenAt and the thresholds at the time the hub answered. */
	health: AgentHealth,
	/** Alive but no progress on a held card for stallSeconds. */
	stalled: z.boolean(),
	/** True while this agent has an open connection to this hub. */
	connected: z.boolean(),
	/** When its last connection closed (listed only by `agent/list {all: true}`, or while it holds cards). */
	endedAt: Timestamp.nullable().optional(),
});
export type Agent = z.infer<typeof Agent>;

/** Health thresholds in seconds (DESIGN §2); configurable per hub. */
export const HealthThresholds = z.object({
	healthySeconds: z.number().positive(),
	lateSeconds: z.number().positive(),
	staleSeconds: z.number().positive(),
	stallSeconds: z.number().positive(),
});
export type HealthThresholds = z.infer<typeof HealthThresholds>;
export const defaultHealthThresholds: HealthThresholds = {
	healthySeconds: 30,
	lateSeconds: 100,
	staleSeconds: 300,
	stallSeconds: 900,
};

export const EventType = z.enum([
	'created',
	'updated',
	'claimed',
	'heartbeat',
	'released',
	'failed',
	'reclaimed',
	'completed',
	'blocked',
	'unblocked',
	'linked',
	'unlinked',
	'reopened',
	'deleted',
	'commented',
	/** complete on a card with review: it is in review now (the result is kept, dependents wait). */
	'review_requested',
	/** The review passed: the card is done and its dependents are free. */
	'approved',
	/** The review asked for changes: back to ready with the note as the next attempt's hand-over. */
	'changes_requested',
	/**
	 * An approval's landing conflicted with the base (issue 33): back to ready with the conflict as the
	 * hand-over (data.reason) and data.files the conflicting files; the branch is kept.
	 */
	'land_conflicted',
	/** Messages reached the card's holder in a tool result (its inbox). */
	'delivered',
	/** The holder widened its card's scope with `reserve` (data.granted). */
	'reserved',
]);
export type EventType = z.infer<typeof EventType>;

/** A message posted on a card (`card/comment`); `id` numbers the card's messages 1, 2, 3… */
export const Message = z.object({
	id: z.number().int().positive(),
	cardId: CardId,
	/** Who posted it: the poster's agent id. */
	from: z.string(),
	text: z.string(),
	question: z.boolean(),
	at: Timestamp,
	/** When the card's holder got it in a tool result (its inbox); null = not yet. */
	deliveredAt: Timestamp.nullable().optional(),
});
export type Message = z.infer<typeof Message>;

/** A message as an agent reads it in a tool result's `inbox` (issue 12 §2). */
export const InboxItem = z.object({
	cardId: CardId,
	from: z.string(),
	text: z.string(),
	at: Timestamp,
	question: z.boolean().optional(),
});
export type InboxItem = z.infer<typeof InboxItem>;

/** A change of another card's readiness caused by this event (complete, reopen, link, delete…). */
export const ReadinessChange = z.object({ id: CardId, unmetDeps: z.number().int() });
export type ReadinessChange = z.infer<typeof ReadinessChange>;

/**
 * One entry of the append-only log. `data.card` is the card as it is after the change (null once
 * deleted), so a client can apply an event without a round trip; `data.readiness` lists other cards
 * whose unmetDeps changed; the remaining keys are type-specific (reason, previousOwner, epoch, …).
 */
/**
 * How a claim's fresh worktree was set up (issue 33): extra keys of its `updated` event's data, the
 * card's history. Not in EventData's schema (it lets them through unchecked), to keep the board small.
 */
export interface WorkspaceSetup {
	/** How the setup command ended; `tail`: the last lines of its output (at most 20). */
	setup?: { command: string; exitCode: number | null; timedOut: boolean; durationMs: number; tail: string[] };
	/** The WIP snapshot a continued branch's fresh worktree got back, and its files. */
	restored?: { ref: string; attempt: number; files: string[] };
	/** The files `.baton/worktree-include` copied in from the main checkout. */
	copied?: string[];
}

export const EventData = z
	.object({
		card: Card.nullable(),
		readiness: z.array(ReadinessChange).optional(),
		reason: z.string().optional(),
		previousOwner: z.string().optional(),
		previousEpoch: z.number().int().optional(),
		result: z.string().optional(),
		retry: z.boolean().optional(),
		dependsOn: z.array(z.string()).optional(),
		forced: z.boolean().optional(),
		/** On a done card's `updated` event: the reopened dependency it was built on. */
		builtOnReopened: z.string().optional(),
		/** On a `commented` event: the message posted. */
		message: Message.optional(),
		/** On a `delivered` event: the messages the holder got, with their deliveredAt. */
		messages: z.array(Message).optional(),
		/** On `approved` / `changes_requested`: the reviewer's note. */
		note: z.string().optional(),
		/** On `reserved`: the paths granted. */
		granted: z.array(z.string()).optional(),
		/** On `land_conflicted`: the files that conflict with the base. */
		files: z.array(z.string()).optional(),
	})
	.loose();
export type EventData = z.infer<typeof EventData>;

export const BacklogEvent = z.object({
	seq: Seq,
	at: Timestamp,
	cardId: CardId,
	actor: z.string(),
	type: EventType,
	data: EventData,
});
export type BacklogEvent = z.infer<typeof BacklogEvent>;

/** An earlier claim of a card and how it ended, so the next agent picks up where it stopped. */
export const Attempt = z.object({
	epoch: z.number().int(),
	owner: z.string(),
	claimedAt: Timestamp,
	endedAt: Timestamp.nullable(),
	/** released | failed | reclaimed | completed | blocked | active */
	outcome: z.string(),
	progress: z.number().int().nullable(),
	progressNote: z.string().nullable(),
	reason: z.string().nullable(),
	result: z.string().nullable(),
});
export type Attempt = z.infer<typeof Attempt>;

/**
 * A dependency or dependent in card/get: with unmetDeps and deferUntil, so a face says `waiting` or
 * `deferred` for it as for any card (claimable.ts `refStateWord`).
 */
export const CardRef = z.object({
	id: CardId,
	title: z.string(),
	status: CardStatus,
	unmetDeps: z.number().int().optional(),
	deferUntil: Timestamp.nullable().optional(),
});
export type CardRef = z.infer<typeof CardRef>;

/** card/get's roll-up of a card's children (issue 31): counts by status, claimable ones as `ready`. */
export const ChildrenRollup = z.object({
	total: z.number(),
	done: z.number(),
	review: z.number(),
	blocked: z.number(),
	claimed: z.number(),
	/** Ready children (claimable or not: a child may wait on its own dependencies). */
	ready: z.number(),
	/** The children in claim order (at most 1,000). */
	cards: z.array(CardRef),
});
export type ChildrenRollup = z.infer<typeof ChildrenRollup>;

/** Who a connection acts for, as its hello says (`agent`); actions are recorded under its id. */
export const AgentInfo = z
	.object({
		id: AgentId,
		name: z.string().min(1).max(200).optional(),
		client: z.string().min(1).max(100).optional(),
		capabilities: Capabilities.optional(),
		host: z.string().max(255).optional(),
		pid: z.number().int().optional(),
	})
	.strict();
export type AgentInfo = z.infer<typeof AgentInfo>;
