/**
 * The params and results of the card methods (`card/*`, `inbox/ack`): what an agent, the CLI, the
 * extension and the board may ask of one card or many. Part of `core/protocol/index.ts`; platform-free, imports
 * only zod and the domain schemas, and holds no method table (core/protocol/methods.ts does).
 */
import { z } from 'zod';
import {
	Acceptance,
	BackoffSeconds,
	Body,
	Capabilities,
	CardId,
	Epoch,
	Label,
	Labels,
	ListStatus,
	MessageText,
	Note,
	Phase,
	Priority,
	Progress,
	ProjectId,
	Reason,
	ResultText,
	ReviewMode,
	ScopeEntries,
	Seq,
	StallSeconds,
	Timestamp,
	Title,
	limits,
} from './scalars';
import { BaseBranch, CardWorkspace } from './workspaces';
import { DispatchClaim, Usage, UsageReport, UsageTotals } from './dispatch';
import { Attempt, BacklogEvent, Card, CardRef, CardRow, ChildrenRollup, Lease, Message } from './domain';

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
		labels: Labels.optional(),
		parent: CardId.optional(),
		autoClose: z.boolean().optional(),
		discoveredFrom: CardId.optional(),
		base: BaseBranch.optional().describe("Branch its worktree starts from and lands into; default: the project's"),
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
		labels: Labels.optional(),
		parent: CardId.nullable().optional(),
		autoClose: z.boolean().optional(),
		base: BaseBranch.nullable()
			.optional()
			.describe("Branch its worktree starts from and lands into; null: the project's"),
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
	/** Its parent, when it has one. */
	parent: CardRef.optional(),
	/** Its children's roll-up, when it has any. */
	children: ChildrenRollup.optional(),
	/**
	 * A ready card's priority in the claim order when the backlog ages waiting cards
	 * (`agingHours`): priority + one per agingHours waited. Absent when aging is off or the card is not ready.
	 */
	effectivePriority: z.number().int().optional(),
	/** Its attempts' usage summed (costUsd null when one of them reported no cost); absent when none reported any. */
	usage: Usage.optional(),
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
			.union([ListStatus, z.array(ListStatus).max(ListStatus.options.length)])
			.optional()
			.describe('Only cards with these statuses'),
		phase: Phase.optional().describe('Only cards in this phase'),
		owner: z.string().max(limits.agentIdLength).optional().describe('Only cards held by this agent'),
		project: ProjectId.nullable()
			.optional()
			.describe('Only cards of this project and cards with none; null: only cards with none'),
		label: Label.optional(),
		parent: CardId.optional(),
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
export const ListResult = z.object({
	cards: z.array(Card),
	nextCursor: z.string().optional(),
	/** Of the listed cards that wait on dependencies: the ones each still waits on (not done). */
	waitsOn: z.record(z.string(), z.array(CardId)).optional(),
});
/** card/listRows: the same page as card/list, each card as a CardRow. */
export const ListRowsResult = ListResult.extend({ cards: z.array(CardRow) });

export const StatsParams = z
	.object({
		project: z
			.union([ProjectId, z.literal('*'), z.null()])
			.optional()
			.describe(
				"Count as claim sees them: this project's cards and cards with none; null: only those; '*' or omitted: all",
			),
	})
	.strict();
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
	/**
	 * Ready cards counted once each under the word list shows for them (core/rules/claimGuards.ts):
	 * waiting (dependencies, open children, a waiting ancestor, files another claim holds), deferred
	 * (retry backoff), paused, and the rest claimable now; the four add up to counts.ready.
	 */
	waiting: z.number(),
	deferred: z.number(),
	paused: z.number(),
	claimable: z.number(),
	oldestReadyAt: Timestamp.nullable(),
	oldestReadyAgeSeconds: z.number().nullable(),
	expiredClaims: z.number(),
	stalledClaims: z.number(),
	agents: z.object({ healthy: z.number(), late: z.number(), stale: z.number(), dead: z.number() }),
	lastSeq: Seq,
	/** Tokens and cost reported by the attempts of the cards counted. */
	usage: UsageTotals.optional(),
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
		/**
		 * The absolute path of the claimer's git checkout: where a project with worktrees on
		 * gets the claimed card's worktree. Filled by the MCP session and `baton claim` from their working
		 * directory, never listed to agents; without it the hub uses the root recorded for this host.
		 */
		root: z.string().max(4096).optional(),
		labels: Labels.optional(),
		/**
		 * The supervisor's claim for a seat: checked against the seat limits in the claim's
		 * transaction and recorded as the card's `dispatch`. Never listed to agents.
		 */
		dispatch: DispatchClaim.optional(),
	})
	.strict();
/**
 * What a claim tells the claimer of the card's workspace: where to work and commit, and when the base
 * was merged into the branch with conflicts, the files holding the markers to resolve.
 */
export const ClaimedWorkspace = CardWorkspace.pick({ path: true, branch: true, base: true }).extend({
	conflicts: z.array(z.string()).optional(),
});
export type ClaimedWorkspace = z.infer<typeof ClaimedWorkspace>;
export const ClaimResult = z.object({
	card: Card.nullable(),
	lease: Lease.nullable(),
	/** Why nothing was claimable, e.g. "3 ready cards wait on dependencies, 2 are claimed". */
	reason: z.string().optional(),
	/** A reviewer's request-changes note on the claimed card's previous attempt: start from it. */
	handoff: z.string().optional(),
	/** The claimed card's worktree, when its project has worktrees on: work and commit only in `path`. */
	workspace: ClaimedWorkspace.optional(),
});
export type ClaimResult = z.infer<typeof ClaimResult>;

export const HeartbeatParams = z
	.object({
		...leaseParams,
		progress: Progress.optional().describe('Percent done'),
		note: Note.optional().describe('What you are doing now'),
		ttlSeconds: z.number().int().min(5).max(3600).optional().describe('New lease length'),
		usage: UsageReport.optional(),
	})
	.strict();
export const LeaseResult = z.object({ card: Card, lease: Lease });

/** What `complete` should claim next for the same agent, in the same step (one round trip). */
export const NextClaim = ClaimParams.pick({
	phase: true,
	capabilities: true,
	ttlSeconds: true,
	project: true,
	root: true,
	labels: true,
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
	/** Forced on a parent with open children: the children it left open. */
	leftOpen: z.array(CardId).optional(),
	card: Card,
	/** Dependents that became claimable because this card is done. */
	unblocked: z.array(CardId),
	/** With `next`: the card claimed next (as `claim` returns it), or card null and the reason. */
	next: ClaimResult.optional(),
	/**
	 * Team mode (the project's `push`): the card's branch pushed to origin at complete. A failed
	 * push leaves the completion standing: `ok: false`, the reason in `error` and a note on the card.
	 */
	push: z
		.object({ ok: z.boolean(), remote: z.string(), commit: z.string().optional(), error: z.string().optional() })
		.optional(),
});

export const ReleaseParams = z
	.object({
		...leaseParams,
		reason: Reason.optional().describe('Why'),
		force: z.boolean().optional().describe('Human override: release even if another agent holds it'),
		/**
		 * Give back the attempt the claim counted (a start refused for rate or quota is not an
		 * attempt). Never listed to agents.
		 */
		refundAttempt: z.boolean().optional(),
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
 * The holder widens its card's scope mid-work: what no other live claim of the project
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
		/** A person approves work they completed themselves (a conflict they resolved), saying so: logged. */
		ownWork: z.literal(true).optional(),
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
		dependsOn: z.union([CardId, z.array(CardId).min(1).max(limits.dependsOn)]).optional(),
		/** Links that do not block: related cards (kept on both), cards it duplicates. */
		related: z.array(CardId).max(limits.dependsOn).optional(),
		duplicates: z.array(CardId).max(limits.dependsOn).optional(),
	})
	.strict();
export const DeleteParams = z.object({ cardId: CardId }).strict();
export const DeleteResult = z.object({ deleted: CardId });
