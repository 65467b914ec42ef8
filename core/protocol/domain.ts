/**
 * The domain objects as they cross the wire: cards, leases, agents and their health, the
 * event log's entries and their data, messages, attempts, card references and roll-ups. Part of
 * `core/protocol/index.ts`, which every face imports; platform-free, imports only zod and the parts
 * before it (scalars, workspaces), and knows no method or frame.
 */
import { z } from 'zod';
import { Capabilities, AgentId, CardId, CardStatus, Epoch, ReviewMode, Seq, Timestamp } from './scalars';
import { BaseBranch, CardChecks, CardWorkspace, ChecksState } from './workspaces';
import { AgentKind, Assignee, CardDispatch, Usage } from './dispatch';

// ---------------------------------------------------------------------------------------------------
// Domain objects as they cross the wire (camelCase)

/** Issue 31's optional card fields: lists of ids or labels, and one id or null. */
const someStrings = z.array(z.string()).optional();
const someId = z.string().nullable().optional();

/**
 * Why a ready card is held back, as the hub knows it when it lists or shows the card (card/list,
 * card/listRows, card/get; core/rules/claimGuards.ts reads them): each present only when it holds the
 * card back. A card in an event carries none (faces with every card at hand derive the tree's).
 */
const holdFields = {
	/** How many of its children are not done: it is claimable once they are. */
	openChildren: z.number().int().optional(),
	/** Its parent, or an ancestor, waits on a dependency. */
	treeWaits: z.boolean().optional(),
	/** A pause of everything, its project, its phase or its id covers it. */
	paused: z.boolean().optional(),
	/** The card whose live claim holds files it touches. */
	filesHeldBy: z.string().optional(),
};

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
	/** The project it belongs to; null = none, claimable from any project. */
	project: z.string().nullable().optional(),
	/** Path globs (relative to the project root) and `lock:` names its work touches. */
	scope: z.array(z.string()).optional(),
	/** What its holder added to the scope with `reserve` while it works; emptied when the claim ends. */
	reserved: z.array(z.string()).optional(),
	/** Its branch and worktree; absent when it has none. */
	workspace: CardWorkspace.optional(),
	/** The project's check on its completed work: running, passed, failed or timed out; absent = none ran. */
	checks: CardChecks.optional(),
	/** Its labels, sorted, no duplicates. */
	labels: someStrings,
	/** The card it is part of; null = none. A child waits while its parent waits on a dependency. */
	parent: someId,
	/** Completes by itself (or goes to review) when its last open child is done. */
	autoClose: z.boolean().optional(),
	/** Cards related to it (kept on both, never blocking). */
	related: someStrings,
	/** Cards it duplicates (never blocking). */
	duplicates: someStrings,
	/** The card its creator held when it created this one (work found while doing other work). */
	discoveredFrom: someId,
	/** Its own base branch: its worktree starts from it and approval lands into it; null = the project's. */
	base: BaseBranch.nullable().optional(),
	/** Only this agent (or, as `kind:K`, an agent of that kind) may claim it; null = anyone. */
	assignee: Assignee.nullable().optional(),
	/** While a dispatched agent holds it: its run, seat, kind, pid, log and last output lines. */
	dispatch: CardDispatch.nullable().optional(),
	acceptance: z.array(z.string()),
	version: z.number().int(),
	createdAt: Timestamp,
	updatedAt: Timestamp,
	...holdFields,
});
export type Card = z.infer<typeof Card>;

/**
 * A card as a list row (`card/listRows`): what an agent picks a card by — its id, title,
 * status and priority, what holds it back (dependencies, deferUntil, review, failed, needsInput), who
 * holds it or may take it, and where it belongs (phase, project, labels, parent) — without its texts
 * (body, acceptance, result, notes) and the claim's bookkeeping. `card/get` has the whole card.
 */
export const CardRow = Card.pick({
	id: true,
	title: true,
	status: true,
	priority: true,
	phase: true,
	requires: true,
	dependsOn: true,
	unmetDeps: true,
	deferUntil: true,
	claimOwner: true,
	review: true,
	failed: true,
	needsInput: true,
	project: true,
	labels: true,
	parent: true,
	assignee: true,
	openChildren: true,
	treeWaits: true,
	paused: true,
	filesHeldBy: true,
});
export type CardRow = z.infer<typeof CardRow>;

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

/** Health thresholds in seconds; configurable per hub. */
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
	 * An approval's landing conflicted with the base: back to ready with the conflict as the
	 * hand-over (data.reason) and data.files the conflicting files; the branch is kept.
	 */
	'land_conflicted',
	/** Messages reached the card's holder in a tool result (its inbox). */
	'delivered',
	/** The holder widened its card's scope with `reserve` (data.granted). */
	'reserved',
	/**
	 * Issue 30. A pause was set (data.pause) or cleared (`resumed`, data.pauses); cardId is the card of a
	 * card pause, else `baton:pause` with data.card null (no card changed).
	 */
	'paused',
	'resumed',
	/** The card's assignee changed (data.card.assignee). */
	'assigned',
	/** The supervisor recorded its agent's pid, log or last output lines (data.card.dispatch). */
	'dispatch_updated',
	/**
	 * A dispatched agent's process ended (data.exit: run, seat, kind, reason, code); cardId its card, else
	 * `baton:run` with data.card null.
	 */
	'agent_exited',
	/** A supervisor run registered or changed (data.run); cardId `baton:run`, data.card null. */
	'run_updated',
	'run_ended',
	/**
	 * A person changed settings: the backlog's (cardId `baton:settings`) or a project's; data.settings
	 * names the scope and the keys changed (never a value that could hold a secret). data.card is null.
	 */
	'settings_changed',
	/** A webhook was added, removed or resumed (data.hook: id, url, events, change); cardId `baton:hooks`. */
	'hook_changed',
	/** `baton gc --force` deleted unlanded work (data.gc: what it removed); cardId `baton:gc`. */
	'workspace_gc',
	/**
	 * The check on a card's completed work ended (data.state, exitCode, durationMs): passed, the card
	 * stays in review; failed or timed out, it went back to ready (or parked) like a failed attempt.
	 */
	'checks_finished',
]);
export type EventType = z.infer<typeof EventType>;

/**
 * Who performed a human verb (approve, force, settings, pauses, hooks, …), on its events: the face it
 * came through and whether the hub counted it as an agent (an MCP session, or a process inside a coding
 * agent, with what gave that away). The event's `actor` is the id the caller acts as.
 */
export const EventOrigin = z.object({
	client: z.string(),
	agent: z.boolean(),
	insideAgent: z.string().optional(),
});
export type EventOrigin = z.infer<typeof EventOrigin>;

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

/** A message as an agent reads it in a tool result's `inbox`. */
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
		/** On `land_conflicted`: the files that conflict with the base. */
		files: z.array(z.string()).optional(),
		/** On `checks_finished`: how the check ended, its exit code (null: killed) and how long it ran. */
		state: ChecksState.optional(),
		exitCode: z.number().int().nullable().optional(),
		durationMs: z.number().int().optional(),
		/** On the events of a human verb (approve, force, settings, pauses, hooks, …): who performed it. */
		origin: EventOrigin.optional(),
		/** On `settings_changed`: the backlog's settings or a project's, and the keys that changed. */
		settings: z.object({ project: z.string().optional(), keys: z.array(z.string()) }).optional(),
		/** On `hook_changed`: the hook, its receiver's origin (scheme and host), and what happened to it. */
		hook: z
			.object({
				id: z.string(),
				receiver: z.string(),
				events: z.array(z.string()),
				change: z.enum(['added', 'removed', 'resumed']),
			})
			.optional(),
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
	/** Tokens and cost its agent reported; absent when it reported none. */
	usage: Usage.optional(),
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
	...holdFields,
});
export type CardRef = z.infer<typeof CardRef>;

/** card/get's roll-up of a card's children: counts by word, as list shows them (claimable ones as `ready`). */
export const ChildrenRollup = z.object({
	total: z.number(),
	done: z.number(),
	review: z.number(),
	blocked: z.number(),
	claimed: z.number(),
	/** Children claimable now (the word `ready`). */
	ready: z.number(),
	/** Ready children held back: waiting (dependencies, open children, a waiting ancestor, files), deferred or paused. */
	waiting: z.number().optional(),
	deferred: z.number().optional(),
	paused: z.number().optional(),
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
		/** The agent program's kind: a claim honours `kind:K` assignments and kind pauses with it. */
		kind: AgentKind.optional(),
	})
	.strict();
export type AgentInfo = z.infer<typeof AgentInfo>;
