/**
 * The backlog of record: one method per protocol operation, each one transaction that
 * changes cards and appends one event per changed card. A facade: its base (backlog/wiring.ts) wires
 * the unit of work and the operation modules in core/backlog/ around a store it is given (Backlog.open
 * opens one with openStore), and each method here delegates; it holds no SQL and decides nothing
 * itself. Decisions come from the pure rules/lease/dag modules, time from the injected clock. Runs
 * unchanged on PGlite and PostgreSQL through the Db interface.
 */
import { loadCardRow } from './cardActions';
import type { ClaimOptions } from './claimCycle';
import { type LabelCount, type ProjectCount, cardCountsByProject, openCardsByLabel } from './counts';
import type { CompactionOptions, CompactionReport } from './logCompaction';
import { cardsWithUndelivered, pendingInbox } from './messages';
import { openStore } from './openStore';
import type { OpContext } from './unitOfWork';
import { type BacklogOptions, BacklogWiring } from './wiring';
import {
	type AgentInfo,
	type BacklogEvent,
	type Card,
	type CardWorkspace,
	type WorkspaceSetup,
	type Message,
	type ParsedParams,
	type ProjectSettings,
	type Result,
	type Settings,
} from '../protocol';
import type { Reviewer } from '../rules/review';
import type { Queryable } from '../store/db';
import type { DumpRows } from '../store/dump';

export type { BacklogOptions, ClaimOptions, OpContext };

export class Backlog extends BacklogWiring {
	/** Opens (creating and migrating as needed) the store described by `options`. */
	static async open(options: BacklogOptions = {}): Promise<Backlog> {
		const store = await openStore(options);
		const backlog = new Backlog(store.db, options, store.dumpDataDir);
		backlog.notices = store.notices;
		return backlog.withSettings();
	}

	/** Reads the settings once at open, so the reaper's stall hints know the backlog's policy. */
	private async withSettings(): Promise<this> {
		await this.settings();
		return this;
	}

	// Settings (backlog/settings.ts)

	settings(q: Queryable = this.db): Promise<Settings> {
		return this.settingsStore.read(q);
	}

	updateSettings(ctx: OpContext, p: ParsedParams<'settings/update'>): Promise<Settings> {
		return this.settingsStore.update(ctx, p);
	}

	stallDueAt(card: Card | null | undefined): string | null {
		return this.settingsStore.stallDueAt(card);
	}

	// Workspaces (backlog/projectSettings.ts; the hub runs the git)

	/** A project's workspace settings; the defaults (worktrees off) when it never set any. */
	projectSettings(project: string): Promise<ProjectSettings> {
		return this.projects.get(project);
	}

	/** The settings of every project that set any. */
	allProjectSettings(): Promise<ProjectSettings[]> {
		return this.projects.all();
	}

	updateProjectSettings(ctx: OpContext, p: ParsedParams<'project/settings/update'>): Promise<ProjectSettings> {
		return this.projects.update(ctx, p);
	}

	/**
	 * Records a card's workspace (null: it has none now); logs `updated` so faces refresh, with `extra`
	 * (the setup outcome, a restored snapshot, copied files) in the event's data: the card's history.
	 */
	setWorkspace(ctx: OpContext, cardId: string, workspace: CardWorkspace | null, extra?: WorkspaceSetup): Promise<Card> {
		return this.projects.setWorkspace(ctx, cardId, workspace, extra);
	}

	/**
	 * A person's `gc --force` deleted what it deleted (the hub ran the git): the audit log's
	 * `workspace_gc`, cardId `baton:gc`, with what went. Its own write, without the request's key.
	 */
	recordGcForced(ctx: OpContext, result: Result<'workspace/gc'>): Promise<void> {
		const deleted = result.repos.flatMap(r => r.deleted.map(d => ({ root: r.root, ...d })));
		return this.uow.mutate({ actor: ctx.actor, origin: ctx.origin }, 'workspace/gc', () =>
			Promise.resolve({
				result: undefined,
				events: [{ cardId: 'baton:gc', type: 'workspace_gc', data: { card: null, gc: { forced: true, deleted } } }],
			}),
		);
	}

	// Outgoing webhooks (backlog/hookStore.ts; the hub's webhooks.ts delivers)

	listHooks(p: ParsedParams<'hooks/list'>): Promise<Result<'hooks/list'>> {
		return this.hooks.list(p);
	}

	addHook(ctx: OpContext, p: ParsedParams<'hooks/add'>): Promise<Result<'hooks/add'>> {
		return this.hooks.add(ctx, p);
	}

	removeHook(ctx: OpContext, p: ParsedParams<'hooks/remove'>): Promise<Result<'hooks/remove'>> {
		return this.hooks.remove(ctx, p);
	}

	resumeHook(ctx: OpContext, p: ParsedParams<'hooks/resume'>): Promise<Result<'hooks/resume'>> {
		return this.hooks.resume(ctx, p);
	}

	// Cards (backlog/cards.ts)

	create(ctx: OpContext, p: ParsedParams<'card/create'>): Promise<Result<'card/create'>> {
		return this.cards.create(ctx, p);
	}

	update(ctx: OpContext, p: ParsedParams<'card/update'>): Promise<Result<'card/update'>> {
		return this.cards.update(ctx, p);
	}

	get(ctx: OpContext, p: ParsedParams<'card/get'>): Promise<Result<'card/get'>> {
		return this.cards.get(ctx, p);
	}

	/** One card and the session holding its claim (no history): the hub's check of a seat credential. */
	claimOf(cardId: string): Promise<{ card: Card; claimSession: string | null }> {
		return loadCardRow(this.db, cardId, false);
	}

	list(ctx: OpContext, p: ParsedParams<'card/list'>): Promise<Result<'card/list'>> {
		return this.cards.list(ctx, p);
	}

	/** card/list's page with each card as its row (protocol CardRow): what `baton mcp`'s list sends. */
	listRows(ctx: OpContext, p: ParsedParams<'card/listRows'>): Promise<Result<'card/listRows'>> {
		return this.cards.listRows(ctx, p);
	}

	stats(ctx: OpContext, p: ParsedParams<'card/stats'> = {}): Promise<Result<'card/stats'>> {
		return this.cards.stats(ctx, p);
	}

	/** Cards by project and status from the maintained counts (the hub's /metrics; never a scan). */
	countsByProject(): Promise<ProjectCount[]> {
		return cardCountsByProject(this.db);
	}

	/** Open cards per label, for /metrics. */
	countsByLabel(): Promise<LabelCount[]> {
		return openCardsByLabel(this.db);
	}

	delete(ctx: OpContext, p: ParsedParams<'card/delete'>): Promise<Result<'card/delete'>> {
		return this.cards.delete(ctx, p);
	}

	// The claim cycle (backlog/claimCycle.ts) and how claims end (backlog/claimEnds.ts)

	/** Claims work; with `review: true`, review work (backlog/reviews.ts). */
	claim(ctx: OpContext, p: ParsedParams<'card/claim'>, options?: ClaimOptions): Promise<Result<'card/claim'>> {
		return p.review === true ? this.reviews.claim(ctx, p) : this.claimCycle.claim(ctx, p, options);
	}

	heartbeat(ctx: OpContext, p: ParsedParams<'card/heartbeat'>): Promise<Result<'card/heartbeat'>> {
		return this.claimCycle.heartbeat(ctx, p);
	}

	/** `check`: the project's check command, which a completion to review starts (the hub runs it). */
	complete(ctx: OpContext, p: ParsedParams<'card/complete'>, check?: string): Promise<Result<'card/complete'>> {
		return this.claimCycle.complete(ctx, p, check);
	}

	/** Would `complete` `p` be allowed now (the same rule, nothing written)? The hub asks before it commits the worktree. */
	checkComplete(ctx: OpContext, p: ParsedParams<'card/complete'>): Promise<void> {
		return this.claimCycle.checkComplete(ctx, p);
	}

	release(ctx: OpContext, p: ParsedParams<'card/release'>): Promise<Result<'card/release'>> {
		return this.claimEnds.release(ctx, p);
	}

	fail(ctx: OpContext, p: ParsedParams<'card/fail'>): Promise<Result<'card/fail'>> {
		return this.claimEnds.fail(ctx, p);
	}

	reclaim(ctx: OpContext, p: ParsedParams<'card/reclaim'>): Promise<Result<'card/reclaim'>> {
		return this.claimEnds.reclaim(ctx, p);
	}

	block(ctx: OpContext, p: ParsedParams<'card/block'>): Promise<Result<'card/block'>> {
		return this.claimEnds.block(ctx, p);
	}

	unblock(ctx: OpContext, p: ParsedParams<'card/unblock'>): Promise<Result<'card/unblock'>> {
		return this.claimEnds.unblock(ctx, p);
	}

	// The dependency graph (backlog/dependencies.ts)

	reopen(ctx: OpContext, p: ParsedParams<'card/reopen'>): Promise<Result<'card/reopen'>> {
		return this.dependencies.reopen(ctx, p);
	}

	link(ctx: OpContext, p: ParsedParams<'card/link'>): Promise<Result<'card/link'>> {
		return this.dependencies.link(ctx, p);
	}

	unlink(ctx: OpContext, p: ParsedParams<'card/unlink'>): Promise<Result<'card/unlink'>> {
		return this.dependencies.unlink(ctx, p);
	}

	// Messages on a card (backlog/messages.ts)

	comment(ctx: OpContext, p: ParsedParams<'card/comment'>): Promise<Result<'card/comment'>> {
		return this.messages.post(ctx, p);
	}

	/** The holder got these messages in a tool result (its inbox): deliveredAt, event `delivered`. */
	inboxAck(ctx: OpContext, p: ParsedParams<'inbox/ack'>): Promise<Result<'inbox/ack'>> {
		return this.messages.ack(ctx, p);
	}

	/** Messages waiting for `agent` on the cards it holds (optionally one card), oldest first. */
	pendingInbox(agent: string, cardId?: string): Promise<Message[]> {
		return pendingInbox(this.uow.db, agent, cardId);
	}

	/** Cards with a message no holder was handed yet (the hub's start-up view of who may have an inbox). */
	cardsWithUndelivered(): Promise<string[]> {
		return cardsWithUndelivered(this.uow.db);
	}

	// The review gate (backlog/reviews.ts)

	/**
	 * Approve or request changes on a card in review; `reviewer` is who the hub says is asking; `landed`:
	 * the card's workspace with the landing the hub just made, written with the approval.
	 */
	review(
		ctx: OpContext,
		p: ParsedParams<'card/review'>,
		reviewer: Reviewer,
		landed?: CardWorkspace,
	): Promise<Result<'card/review'>> {
		return this.reviews.review(ctx, p, reviewer, landed);
	}

	/** Would approval `p` be allowed now (the same rules, nothing written)? The hub asks before landing. */
	checkApproval(
		ctx: OpContext,
		p: ParsedParams<'card/review'>,
		reviewer: Reviewer,
	): Promise<{ card: Card; replay: false } | { replay: true }> {
		return this.reviews.checkApproval(ctx, p, reviewer);
	}

	/** An allowed approval's landing conflicted: back to ready with the conflict as the hand-over. */
	landConflict(
		ctx: OpContext,
		p: ParsedParams<'card/review'>,
		reviewer: Reviewer,
		conflict: { handoff: string; files: readonly string[] },
	): Promise<Card> {
		return this.reviews.landConflict(ctx, p, reviewer, conflict);
	}

	/**
	 * The holder's completion of a card that lands by itself did not land: back to ready (blocked past
	 * maxAttempts) with why as the hand-over, event `land_conflicted`.
	 */
	landFailed(
		ctx: OpContext,
		cardId: string,
		failure: { epoch?: number | undefined; handoff: string; files: readonly string[] },
	): Promise<Card> {
		return this.reviews.landFailed(ctx, cardId, failure);
	}

	// Scopes (backlog/scopes.ts)

	/** The holder widens its card's scope: what no other live claim of the project holds is granted. */
	reserve(ctx: OpContext, p: ParsedParams<'card/reserve'>): Promise<Result<'card/reserve'>> {
		return this.scopes.reserve(ctx, p);
	}

	// Agents (backlog/agents.ts)

	registerAgent(info: AgentInfo): Promise<void> {
		return this.agents.registerAgent(info);
	}

	ping(ctx: OpContext): Promise<Result<'agent/ping'>> {
		return this.agents.ping(ctx);
	}

	/** The agents with health; `all` adds the ended ones that hold nothing (`baton agents --all`). */
	listAgents(connected: ReadonlySet<string> = new Set(), all = false): Promise<Result<'agent/list'>> {
		return this.agents.listAgents(connected, all);
	}

	/** An agent's last connection to this hub closed: it leaves the list unless it holds cards. */
	endAgent(agentId: string): Promise<void> {
		return this.agents.endAgent(agentId);
	}

	/** At a hub's start: agents left connected by a hub that died are ended (agents.ts endAbandoned). */
	endAbandonedAgents(sole: boolean): Promise<void> {
		return this.agents.endAbandoned(sole);
	}

	reclaimAgent(ctx: OpContext, p: ParsedParams<'agent/reclaim'>): Promise<Result<'agent/reclaim'>> {
		return this.agents.reclaimAgent(ctx, p);
	}

	releaseAgent(ctx: OpContext, agentId: string, reason: string, session?: string): Promise<Card[]> {
		return this.agents.releaseAgent(ctx, agentId, reason, session);
	}

	// The event feed (backlog/feed.ts)

	listEvents(p: ParsedParams<'events/list'>): Promise<Result<'events/list'>> {
		return this.feed.listEvents(p);
	}

	eventsAfter(seq: number, limit: number): Promise<BacklogEvent[]> {
		return this.feed.eventsAfter(seq, limit);
	}

	lastSeq(): Promise<number> {
		return this.feed.lastSeq();
	}

	/** The highest seq the log's compaction deleted: resuming after an older seq needs a resync. */
	logHorizon(): Promise<number> {
		return this.feed.horizon();
	}

	/** Compacts the event log now (backlog/logCompaction.ts); the hub's maintenance runs it too. */
	compactLog(options?: CompactionOptions): Promise<CompactionReport> {
		return this.logCompaction.compact(options);
	}

	// Backup, export, import (backlog/transfer.ts)

	dump(): Promise<{ rows: DumpRows; schema: number }> {
		return this.transfer.dump();
	}

	exportCards(p: ParsedParams<'data/export'>): Promise<Result<'data/export'>> {
		return this.transfer.exportCards(p);
	}

	importCards(ctx: OpContext, p: ParsedParams<'data/import'>): Promise<Result<'data/import'>> {
		return this.transfer.importCards(ctx, p);
	}

	// Timers and upkeep for the hub (backlog/upkeep.ts)

	nextLeaseExpiry(): Promise<Date | null> {
		return this.upkeep.nextLeaseExpiry();
	}

	nextDeferredAt(): Promise<Date | null> {
		return this.upkeep.nextDeferredAt();
	}

	/**
	 * Compacts the event log, forgets agents ended longer ago than the agentRetentionDays setting,
	 * prunes the request log, then VACUUM (ANALYZE) in PGlite.
	 */
	async maintenance(): Promise<CompactionReport> {
		const compacted = await this.logCompaction.compact();
		await this.agents.prune((await this.settings()).agentRetentionDays);
		await this.upkeep.maintenance();
		return compacted;
	}
}
