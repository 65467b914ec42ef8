/**
 * The one wire contract of Baton (DESIGN §4): every request, response, push and hello frame, as zod
 * schemas with the size limits in them. Hub, clients, MCP server, CLI, extension and webview all import
 * this file, so a change breaks the build, not the user. Platform-free: imports only zod.
 */
import { z } from 'zod';

export const protocolVersion = 1;

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
 * (core/projectId.ts). `*` is not an id: a claim's `project: '*'` means every project.
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

export const CardRef = z.object({ id: CardId, title: z.string(), status: CardStatus });
export type CardRef = z.infer<typeof CardRef>;

// ---------------------------------------------------------------------------------------------------
// Method params and results

const leaseParams = {
	cardId: CardId,
	epoch: Epoch.optional().describe('Lease epoch from claim; omitted means the lease this agent holds'),
};

export const CreateCardInput = z
	.object({
		id: CardId.optional().describe('Your own id; generated when omitted'),
		title: Title.describe('Short imperative title (≤ 200 chars)'),
		body: Body.optional().describe('Markdown description (≤ 64 KiB)'),
		phase: Phase.optional().describe('Lane or milestone label'),
		priority: Priority.optional().describe('Higher is sooner; default 0'),
		dependsOn: z.array(CardId).max(limits.dependsOn).optional().describe('Ids that must be done first'),
		requires: Capabilities.optional().describe('Capabilities a claimer must advertise'),
		acceptance: Acceptance.optional().describe('Acceptance criteria'),
		maxAttempts: z.number().int().min(1).max(100).optional().describe('Claims before it parks in blocked; default 3'),
		backoffSeconds: BackoffSeconds.optional().describe('First retry delay after a fail; doubles per attempt'),
		stallReleaseSeconds: StallSeconds.optional().describe(
			'Release the claim after this long without progress; 0 = never',
		),
		deferUntil: Timestamp.optional().describe('Not claimable before this ISO time'),
		review: ReviewMode.optional().describe('Who approves the result before it is done; default: backlog setting'),
		project: ProjectId.optional().describe("Project id; default: the creator's (its git repository)"),
		scope: ScopeEntries.optional().describe('Files it touches: globs from the project root, or lock:name'),
		idempotencyKey: z
			.string()
			.min(1)
			.max(limits.idempotencyKeyLength)
			.optional()
			.describe('A repeated create with this key returns the existing card'),
	})
	.strict();
export type CreateCardInput = z.infer<typeof CreateCardInput>;

export const CreateParams = z
	.object({
		cards: z.array(CreateCardInput).min(1).max(limits.createBatch),
	})
	.strict();
export const CardsResult = z.object({ cards: z.array(Card) });

export const UpdateParams = z
	.object({
		cardId: CardId,
		version: z.number().int().optional().describe('Refuse with conflict unless the card is at this version'),
		title: Title.optional().describe('New title'),
		body: Body.optional().describe('Markdown description (≤ 64 KiB)'),
		phase: Phase.nullable().optional().describe('Lane or milestone label; null removes it'),
		priority: Priority.optional().describe('Higher is sooner'),
		requires: Capabilities.optional().describe('Capabilities a claimer must advertise'),
		acceptance: Acceptance.optional().describe('Acceptance criteria'),
		maxAttempts: z.number().int().min(1).max(100).optional().describe('Claims before it parks in blocked'),
		backoffSeconds: BackoffSeconds.nullable().optional().describe('null = the backlog setting'),
		stallReleaseSeconds: StallSeconds.nullable().optional().describe('null = the backlog setting'),
		review: ReviewMode.optional().describe('Who approves the result before it is done'),
		project: ProjectId.nullable().optional().describe('Project id; null: no project'),
		scope: ScopeEntries.optional().describe('Files it touches: globs from the project root, or lock:name'),
	})
	.strict();
export const CardResult = z.object({ card: Card });

export const GetParams = z.object({ cardId: CardId }).strict();
export const GetResult = z.object({
	card: Card,
	dependencies: z.array(CardRef),
	dependents: z.array(CardRef),
	history: z.array(BacklogEvent),
	attempts: z.array(Attempt),
	/** The card's messages, oldest first (newest last). */
	messages: z.array(Message),
});

export const CommentParams = z
	.object({
		cardId: CardId,
		text: MessageText.describe('Markdown, ≤ 4 KiB'),
		question: z.boolean().optional().describe('Asks a human for an answer'),
	})
	.strict();
export const CommentResult = z.object({ message: Message, card: Card });

export const ListParams = z
	.object({
		status: z
			.union([CardStatus, z.array(CardStatus).max(cardStatuses.length)])
			.optional()
			.describe('Only cards with these statuses'),
		phase: Phase.optional().describe('Only cards in this phase'),
		owner: z.string().max(limits.agentIdLength).optional().describe('Only cards held by this agent'),
		project: ProjectId.optional().describe('Only cards of this project and cards with none'),
		readyOnly: z.boolean().optional().describe('Only cards claimable now (ready, dependencies done, not deferred)'),
		text: z.string().max(200).optional().describe('Case-insensitive match in id, title or body'),
		limit: z.number().int().min(1).max(limits.listLimit).optional().describe('Page size; default 50'),
		cursor: z.string().max(500).optional().describe('nextCursor from the previous page'),
		/**
		 * `priority` (default): priority, then oldest first. `recent`: most recently changed first
		 * (updatedAt, then id, descending), the board's and tree's Done column paged as one scrolls;
		 * a cursor continues in the order it was made for.
		 */
		order: z.enum(['priority', 'recent']).optional().describe('priority (default) or recent: newest change first'),
	})
	.strict();
export const ListResult = z.object({ cards: z.array(Card), nextCursor: z.string().optional() });

export const StatsParams = z.object({}).strict();
export const StatsResult = z.object({
	counts: z.object({
		ready: z.number(),
		claimed: z.number(),
		review: z.number(),
		blocked: z.number(),
		done: z.number(),
	}),
	/** Cards whose agent asked a question nobody answered yet. */
	needsInput: z.number(),
	total: z.number(),
	/** Ready cards that still wait on dependencies. */
	waiting: z.number(),
	/** Ready cards whose deferUntil has not passed. */
	deferred: z.number(),
	/** Ready cards claimable right now. */
	claimable: z.number(),
	oldestReadyAt: Timestamp.nullable(),
	oldestReadyAgeSeconds: z.number().nullable(),
	expiredClaims: z.number(),
	stalledClaims: z.number(),
	agents: z.object({ healthy: z.number(), late: z.number(), stale: z.number(), dead: z.number() }),
	lastSeq: Seq,
});
export type StatsResult = z.infer<typeof StatsResult>;

export const ClaimParams = z
	.object({
		cardId: CardId.optional().describe('Claim this card instead of the best ready one'),
		phase: Phase.optional().describe('Only consider cards in this phase'),
		capabilities: Capabilities.optional().describe('Capabilities you have, e.g. ["lang:ts"]'),
		ttlSeconds: z.number().int().min(5).max(3600).optional().describe('Lease length; default 300'),
		waitSeconds: z.number().int().min(0).max(60).optional().describe('Wait up to this long for a card'),
		review: z.boolean().optional().describe("Claim review work (needs capability 'review')"),
		project: z
			.union([ProjectId, z.literal('*'), z.null()])
			.optional()
			.describe("Your project: its cards and cards with none; null: only those with none; '*' or omitted: any"),
	})
	.strict();
export const ClaimResult = z.object({
	card: Card.nullable(),
	lease: Lease.nullable(),
	/** Why nothing was claimable, e.g. "3 ready cards wait on dependencies, 2 are claimed". */
	reason: z.string().optional(),
	/** A reviewer's request-changes note on the claimed card's previous attempt: start from it. */
	handoff: z.string().optional(),
});
export type ClaimResult = z.infer<typeof ClaimResult>;

export const HeartbeatParams = z
	.object({
		...leaseParams,
		progress: Progress.optional().describe('Percent done'),
		note: Note.optional().describe('What you are doing now'),
		ttlSeconds: z.number().int().min(5).max(3600).optional().describe('New lease length'),
	})
	.strict();
export const LeaseResult = z.object({ card: Card, lease: Lease });

/** What `complete` should claim next for the same agent, in the same step (one round trip). */
export const NextClaim = ClaimParams.pick({
	phase: true,
	capabilities: true,
	ttlSeconds: true,
	project: true,
}).strict();
export const CompleteParams = z
	.object({
		...leaseParams,
		result: ResultText.optional().describe('Summary, commit, links'),
		force: z.boolean().optional().describe('Human override: complete even if another agent holds it'),
		next: NextClaim.optional().describe('Also claim the next best card, as `claim` would with these params'),
	})
	.strict();
export const CompleteResult = z.object({
	card: Card,
	/** Dependents that became claimable because this card is done. */
	unblocked: z.array(CardId),
	/** With `next`: the card claimed next (as `claim` returns it), or card null and the reason. */
	next: ClaimResult.optional(),
});

export const ReleaseParams = z
	.object({
		...leaseParams,
		reason: Reason.optional().describe('Why'),
		force: z.boolean().optional().describe('Human override: release even if another agent holds it'),
	})
	.strict();

export const FailParams = z
	.object({
		...leaseParams,
		reason: Reason.describe('What went wrong'),
		retry: z.boolean().optional().describe('Back to ready for another attempt (default true)'),
		backoffSeconds: z.number().int().min(0).max(86_400).optional().describe('Not claimable for this long'),
	})
	.strict();

/**
 * The holder widens its card's scope mid-work (issue 13 §2): what no other live claim of the project
 * holds is granted (kept in `reserved` until the claim ends); the rest comes back with its holder.
 */
export const ReserveParams = z
	.object({
		...leaseParams,
		paths: ScopeEntries.min(1).describe('Globs from the project root, or lock:name'),
	})
	.strict();
/** One path `reserve` could not grant: another live claim of the project holds an overlapping one. */
export const ReserveRefusal = z.object({
	path: z.string(),
	/** The overlapping entry of the holder's scope. */
	theirs: z.string(),
	cardId: CardId,
	holder: z.string(),
});
export type ReserveRefusal = z.infer<typeof ReserveRefusal>;
export const ReserveResult = z.object({
	card: Card,
	granted: z.array(z.string()),
	refused: z.array(ReserveRefusal),
});

export const ReclaimParams = z
	.object({
		cardId: CardId.optional().describe('Force-reclaim this card; omitted reclaims every expired lease'),
		reason: Reason.optional().describe('Why'),
	})
	.strict();

/**
 * Approve a card in review (done; dependents become claimable) or request changes (back to ready with
 * `note` as the next attempt's hand-over; counts as a failed attempt). A reviewing agent names its
 * lease's epoch; `version` refuses a card that changed since the reviewer looked.
 */
export const ReviewParams = z
	.object({
		cardId: CardId,
		approve: z.boolean().describe('true approves; false requests changes (note required)'),
		note: Note.optional().describe('What to change, or a remark on approval'),
		version: z.number().int().optional().describe('Refuse unless the card is at this version'),
		epoch: Epoch.optional().describe('A reviewing agent: the epoch from claim {review}'),
	})
	.strict();
export const ReviewResult = z.object({
	card: Card,
	/** Approved: dependents that became claimable because this card is done. */
	unblocked: z.array(CardId),
});

/** The holder acknowledges messages it was handed in a tool result (sets their deliveredAt). */
export const InboxAckParams = z
	.object({
		messages: z
			.array(z.object({ cardId: CardId, id: z.number().int().positive() }).strict())
			.min(1)
			.max(100),
	})
	.strict();
export const InboxAckResult = z.object({ delivered: z.array(Message) });

export const BlockParams = z.object({ cardId: CardId, reason: Reason.describe('Why') }).strict();
export const UnblockParams = z.object({ cardId: CardId }).strict();
export const ReopenParams = z
	.object({
		cardId: CardId,
		reason: Reason.optional().describe('Why'),
		force: z
			.boolean()
			.optional()
			.describe('Reopen although dependents are claimed or done: their claims end, done ones are flagged'),
	})
	.strict();
export const ReopenResult = z.object({
	card: Card,
	/** Forced: dependents whose claim ended because this card was reopened (back to ready, waiting). */
	requeued: z.array(CardId).optional(),
	/** Forced: done dependents, flagged in their history as built on a reopened card. */
	flagged: z.array(CardId).optional(),
});
export const LinkParams = z
	.object({
		cardId: CardId,
		dependsOn: z.union([CardId, z.array(CardId).min(1).max(limits.dependsOn)]),
	})
	.strict();
export const DeleteParams = z.object({ cardId: CardId }).strict();
export const DeleteResult = z.object({ deleted: CardId });

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

export const AgentListParams = z.object({}).strict();
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
/** A full backup written by the hub: every table (core/backupFormat.ts); counts of its cards and events. */
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
};
export const SettingsGetParams = z.object({}).strict();
export const SettingsUpdateParams = Settings.partial().strict();

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
	/** The `X-Baton-Delivery` header: `<hook id>-<seq>`, the same on every retry of that event. */
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
	'data/export': { params: ExportParams, result: ExportResult, mutating: false },
	'data/import': { params: ImportParams, result: ImportResult, mutating: true },
	'hooks/list': { params: HooksListParams, result: HooksListResult, mutating: false },
	'hooks/add': { params: HooksAddParams, result: HookResult, mutating: true },
	'hooks/remove': { params: HooksRemoveParams, result: HookResult, mutating: true },
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

// ---------------------------------------------------------------------------------------------------
// Frames

export const ClientKind = z.enum(['mcp', 'cli', 'extension', 'board', 'hub', 'test']);
export type ClientKind = z.infer<typeof ClientKind>;

/**
 * First frame from a client. `token` may be omitted only when the connection was already
 * authenticated at upgrade (Authorization header or board session cookie).
 */
export const Hello = z
	.object({
		hello: z.literal('baton'),
		protocol: z.number().int(),
		client: ClientKind,
		token: z.string().max(200).optional(),
		/** The agent this connection acts for; actions are recorded under its id. */
		agent: AgentInfo.optional(),
	})
	.strict();
export type Hello = z.infer<typeof Hello>;

export const HelloOk = z.object({
	hello: z.literal('ok'),
	protocol: z.number().int(),
	hubPid: z.number().int(),
	/** Highest event seq at the time of the hello. */
	seq: Seq,
	/** The actor id the hub will record for this connection. */
	actor: z.string(),
	thresholds: HealthThresholds,
	/** The store's state at the hello; changes arrive as `{notice: 'store'}` frames. */
	store: StoreHealth.optional(),
});
export type HelloOk = z.infer<typeof HelloOk>;

export const ErrorBody = z.object({ code: ErrorCode, message: z.string(), data: z.unknown().optional() });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Refusal of a hello (wrong token, protocol mismatch); the hub closes the socket after sending it. */
export const HelloError = z.object({ hello: z.literal('error'), error: ErrorBody });

export const RequestFrame = z
	.object({
		id: z.number().int().nonnegative(),
		method: z.string().max(64),
		params: z.unknown().optional(),
		/**
		 * Stable key for a mutating request: if the hub already applied a request with this key it
		 * returns the same result instead of applying it again (re-sends after a failover).
		 */
		key: z.string().max(200).optional(),
	})
	.strict();
export type RequestFrame = z.infer<typeof RequestFrame>;

export const ResponseFrame = z.union([
	z.object({ id: z.number().int(), result: z.unknown() }),
	z.object({ id: z.number().int(), error: ErrorBody }),
]);
export type ResponseFrame = z.infer<typeof ResponseFrame>;

/** A logged event pushed to subscribers, in seq order with no gaps. */
export const EventFrame = z.object({ event: EventType, seq: Seq, data: BacklogEvent });
export type EventFrame = z.infer<typeof EventFrame>;

/** Ephemeral agent state (not logged): sent on register, ping, disconnect. */
export const AgentsFrame = z.object({ notice: z.literal('agents'), agents: z.array(Agent) });
export type AgentsFrame = z.infer<typeof AgentsFrame>;

/**
 * Messages for a card this connection's agent holds (posted by someone else, not delivered yet):
 * sent when one is posted, when the agent claims a card that has some, and at its hello. The MCP
 * server hands them to the agent in its next tool result and acknowledges them (`inbox/ack`).
 */
export const InboxFrame = z.object({ notice: z.literal('inbox'), messages: z.array(Message) });
export type InboxFrame = z.infer<typeof InboxFrame>;

/** The store's state changed (disk full, space back, PostgreSQL gone or back); not logged. */
export const StoreFrame = z.object({ notice: z.literal('store'), store: StoreHealth });
export type StoreFrame = z.infer<typeof StoreFrame>;

/**
 * A resubscribe after a reconnect came back with `resync` (SubscribeResult): events were compacted away
 * while this client was offline. Live from `seq` on; reload. The VS Code relay sends it to the board
 * when its own connection's resume was refused that way.
 */
export const ResyncFrame = z.object({ notice: z.literal('resync'), seq: Seq });
export type ResyncFrame = z.infer<typeof ResyncFrame>;

export const ServerFrame = z.union([
	HelloOk,
	HelloError,
	ResponseFrame,
	EventFrame,
	AgentsFrame,
	StoreFrame,
	InboxFrame,
	ResyncFrame,
]);
export type ServerFrame = z.infer<typeof ServerFrame>;

// ---------------------------------------------------------------------------------------------------
// Extension <-> webview host-only messages (the hub frames above are relayed unchanged).

export const ViewMessage = z.discriminatedUnion('type', [
	/** webview -> host: the board is ready to receive frames. */
	z.object({ type: z.literal('view/ready') }),
	/** webview -> host: open the card in the tree / an editor. */
	z.object({ type: z.literal('view/revealInTree'), cardId: CardId }),
	/** host -> webview: connection state to show in the banner. */
	z.object({ type: z.literal('view/connection'), state: z.enum(['connected', 'connecting', 'offline']) }),
	/** host -> webview: select and open a card's detail pane. */
	z.object({ type: z.literal('view/openCard'), cardId: CardId }),
	/** host -> webview: the workspace's projects (issue 13 §1) and whether the user chose All projects. */
	z.object({ type: z.literal('view/projects'), workspace: z.array(z.string()), showAll: z.boolean() }),
]);
export type ViewMessage = z.infer<typeof ViewMessage>;
