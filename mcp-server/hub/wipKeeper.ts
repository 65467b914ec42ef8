/**
 * Nothing an agent leaves in its card's worktree is lost ("While working"): at `complete` the
 * hub commits what is uncommitted on the card's branch before the card moves on, stores the branch's
 * head and diff counts in the card's workspace and, in team mode, pushes the branch to origin; when a
 * claim ends any other way (release, fail, lease expiry, a reclaim, the agent's session dying) it
 * snapshots the worktree to `refs/baton/wip/<ID>/<attempt>` (attempt = the ended claim's epoch),
 * whoever notices first: release and fail before their write, so the next claimer finds the snapshot,
 * the others as soon as their event reaches this hub. Git runs in child processes (async); a failure of
 * a snapshot or a push is logged and recorded on the card, never thrown at the hub.
 * Must not: run git for a workspace of another host, touch a worktree's index or files when
 * snapshotting, or hold up a completion for a push.
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';

import type { Backlog, OpContext } from '../../core/backlog';
import { BatonError } from '../../core/errors';
import { createLogger, errorText } from '../../core/log';
import type { BacklogEvent, Card, CardWorkspace, ParsedParams, Result } from '../../core/protocol';
import { markedFiles } from '../workspaces/baseMerge';
import { unseenSubmoduleFiles } from '../workspaces/landGuards';
import { commitAll, diffStat, pushBranch } from '../workspaces/review';
import { snapshotWip, type WipSnapshot } from '../workspaces/wip';

const log = createLogger('hub').child('wip');

/** The counts complete stores in the card's workspace. */
export type WorkspaceStats = Required<Pick<CardWorkspace, 'head' | 'filesChanged' | 'insertions' | 'deletions'>>;

/** Whether the hub of this machine may run git for `ws` (a workspace exists only where it was made). */
export function isHere(ws: CardWorkspace | undefined, host: string = hostname()): ws is CardWorkspace {
	return ws?.host === host;
}

/** The commit complete makes of an agent's uncommitted work: the card id and title. */
export function completeMessage(card: { id: string; title: string }): string {
	return `${card.id}: ${card.title}\n\nCommitted by Baton at complete: the agent left these changes uncommitted.\n`;
}

/**
 * Commits what the agent left uncommitted in the card's worktree (nothing when the folder is gone), then
 * counts the branch against its base. A refused commit (a hook) throws: the card must not move on.
 */
export async function commitWork(
	ws: CardWorkspace,
	card: { id: string; title: string },
): Promise<{ commit: string | null; stats?: WorkspaceStats; statsError?: string; unseen: string[] }> {
	const here = existsSync(ws.path);
	const commit = here
		? await commitAll({ worktree: ws.path, message: completeMessage(card), root: ws.root, branch: ws.branch })
		: null;
	// Files in an uninitialised submodule's folder: git add skips them, so they are reported, not dropped unseen.
	const unseen = here ? await unseenSubmoduleFiles(ws.path) : [];
	try {
		const stat = await diffStat({ repo: ws.root, branch: ws.branch, base: ws.base });
		return {
			commit,
			unseen,
			stats: {
				head: stat.head,
				filesChanged: stat.filesChanged,
				insertions: stat.insertions,
				deletions: stat.deletions,
			},
		};
	} catch (e) {
		// The work is committed; counts that cannot be made (the base deleted) do not hold up the completion.
		return { commit, unseen, statsError: errorText(e) };
	}
}

/** Snapshots the card's worktree as attempt `attempt`; null when it is clean or gone. */
export async function snapshotWork(ws: CardWorkspace, cardId: string, attempt: number): Promise<WipSnapshot | null> {
	if (!existsSync(ws.path)) {
		return null;
	}
	return snapshotWip({ worktree: ws.path, cardId, attempt });
}

/** A `deleted` event's card as it was (the event's `card` is null; `previous` is not in the typed data). */
function deletedCard(event: BacklogEvent): Card | undefined {
	return event.type === 'deleted' ? (event.data as { previous?: Card }).previous : undefined;
}

/** The claim-ending events whose claim's worktree is snapshotted, and the epoch of that claim. */
export function endedAttempt(event: BacklogEvent): number | undefined {
	if (event.type === 'deleted') {
		// A claimed card deleted: its last state is `previous` (the event's card is null).
		const gone = deletedCard(event);
		return gone?.status === 'claimed' ? gone.claimEpoch : undefined;
	}
	const card = event.data.card;
	if (card === null || event.data.review === true) {
		return undefined; // a reviewer's lease: reviewers do not edit the worktree
	}
	switch (event.type) {
		case 'released':
		case 'failed':
		case 'reclaimed':
		case 'blocked':
			// Release and fail keep the epoch; reclaim, a disconnect and a forced release name the old one.
			if (event.data.previousEpoch !== undefined) {
				return event.data.previousEpoch;
			}
			return event.type === 'released' || event.type === 'failed' ? card.claimEpoch : undefined;
		default:
			return undefined;
	}
}

/** What the hub knows of a card with a workspace on this host, from its events. */
interface Known {
	workspace: CardWorkspace;
	title: string;
	project: string | undefined;
	status: Card['status'];
	claimEpoch: number;
	claimOwner: string | null;
}

export interface WipKeeperOptions {
	backlog: Backlog;
	/** This machine's name (default os.hostname()); tests pass another to play a second machine. */
	host?: string;
	/** Time limit of a push at complete (default 60 s). */
	pushTimeoutMs?: number;
}

/** Team mode's push at complete, as the result reports it. */
export type PushOutcome = NonNullable<Result<'card/complete'>['push']>;

export class WipKeeper {
	private readonly host: string;
	/** Cards with a workspace on this host, by id (kept from every event this hub sees). */
	private readonly known = new Map<string, Known>();
	/** Snapshots running, by `card/attempt`: a second noticer waits on the first. */
	private readonly running = new Map<string, Promise<WipSnapshot | null>>();
	private readonly pending = new Set<Promise<unknown>>();
	/** Seqs already noticed: an event arrives twice (this hub's commit, then the pump), acted on once. */
	private readonly seen = new Set<number>();

	constructor(private readonly options: WipKeeperOptions) {
		this.host = options.host ?? hostname();
	}

	/** Learns the workspaces of this host from the cards the backlog holds now (once, at hub start). */
	async seed(): Promise<void> {
		let cursor: string | undefined;
		do {
			const page = await this.options.backlog.list(
				{ actor: 'hub' },
				{ status: ['claimed', 'review'], limit: 500, ...(cursor === undefined ? {} : { cursor }) },
			);
			for (const card of page.cards) {
				this.learn(card);
			}
			cursor = page.nextCursor;
		} while (cursor !== undefined);
	}

	/** Cards with a workspace on this host that the keeper knows of (for hub/status and tests). */
	get size(): number {
		return this.known.size;
	}

	/**
	 * Events this hub committed or pumped: keeps the index of this host's workspaces and snapshots the
	 * worktree of every claim that ended (expiry, reclaim, disconnect; release and fail again, cheaply).
	 */
	noticeEvents(events: readonly BacklogEvent[]): void {
		for (const event of events) {
			const card = event.data.card ?? deletedCard(event);
			if (card === undefined || this.seen.has(event.seq)) {
				continue;
			}
			this.remember(event.seq);
			const before = this.known.get(card.id);
			this.learn(card, event.type === 'deleted');
			const attempt = endedAttempt(event);
			const ws = card.workspace ?? before?.workspace;
			if (attempt !== undefined && isHere(ws, this.host)) {
				this.track(this.snapshot(card.id, ws, attempt, event.type));
			}
		}
	}

	/**
	 * Release and fail: snapshots the holder's worktree before the card changes, so the next claim (which
	 * restores the newest snapshot) finds it. Never throws; the release goes on whatever happens here.
	 */
	async beforeEnd(cardId: string, verb: 'release' | 'fail'): Promise<void> {
		const k = this.known.get(cardId);
		if (k?.status !== 'claimed') {
			return;
		}
		await this.snapshot(cardId, k.workspace, k.claimEpoch, verb);
	}

	/**
	 * An agent's session ended (its MCP process died): snapshots the worktree of every card it holds
	 * before the hub releases them, as release and fail do (the dispatch chaos proof found a crashed
	 * agent's edits lost when a dispatched seat claimed the card again before the after-event snapshot).
	 * Never throws.
	 */
	async beforeAgentEnds(agentId: string): Promise<void> {
		const held = [...this.known].filter(([, k]) => k.status === 'claimed' && k.claimOwner === agentId);
		for (const [cardId, k] of held) {
			await this.snapshot(cardId, k.workspace, k.claimEpoch, 'release');
		}
	}

	/**
	 * Complete: commits the agent's uncommitted work and stores the branch's counts before the card moves
	 * on (a refused commit refuses the completion), runs `complete` (`here`: the completion of a card with
	 * a workspace on this host, which lands it first when that makes it done — landing.ts), then pushes in
	 * team mode. A push that fails is recorded on the card and in the result; the completion stands.
	 */
	async complete(
		ctx: OpContext,
		p: ParsedParams<'card/complete'>,
		/** `work`: the completion committed the card's worktree here (its project's check may run on it). */
		run: (work?: { project: string | undefined }) => Promise<Result<'card/complete'>>,
		here: (work?: { project: string | undefined }) => Promise<Result<'card/complete'>> = run,
	): Promise<Result<'card/complete'>> {
		const k = this.known.get(p.cardId);
		// Only the holder's completion (or a person's forced one) commits: anyone else's is refused by run().
		if (k?.status !== 'claimed' || (p.force !== true && k.claimOwner !== ctx.actor)) {
			return run();
		}
		if (p.force !== true) {
			// The same rule complete applies (its session, its epoch), asked first: a completion that will be
			// refused must not commit the holder's worktree.
			await this.options.backlog.checkComplete(ctx, p);
		}
		const ws = k.workspace;
		await refuseMarkers(p.cardId, ws);
		let stats: WorkspaceStats | undefined;
		let committed = false;
		try {
			const work = await commitWork(ws, { id: p.cardId, title: k.title });
			committed = true;
			stats = work.stats;
			if (work.unseen.length > 0) {
				await this.record(
					p.cardId,
					`Files inside submodule folders that git does not look into were not committed: ${work.unseen.slice(0, 20).join(', ')}${work.unseen.length > 20 ? ` and ${work.unseen.length - 20} more` : ''}. Initialise the submodule and commit them there, or move them out of the submodule folder.`,
				);
			}
			if (work.statsError !== undefined) {
				log.warn(`${p.cardId}: counting ${ws.branch} against ${ws.base} failed: ${work.statsError}`);
				await this.record(p.cardId, `Baton could not count ${ws.branch} against ${ws.base}: ${work.statsError}`);
			}
		} catch (e) {
			if (p.force !== true) {
				throw e; // the agent fixes what the commit hook named and completes again
			}
			// A person forcing the completion of a card whose commit fails: keep the work as a snapshot.
			await this.snapshot(p.cardId, ws, k.claimEpoch, 'complete');
			await this.record(p.cardId, `Baton could not commit the worktree at complete: ${errorText(e)}`);
		}
		if (stats !== undefined) {
			const updated = { ...ws, ...stats };
			// Its own write, not under the request's key (a re-sent complete must replay the completion).
			await this.options.backlog.setWorkspace({ actor: ctx.actor }, p.cardId, updated);
			this.known.set(p.cardId, { ...k, workspace: updated });
		}
		const result = await here(committed ? { project: k.project } : undefined);
		if (stats !== undefined && result.card.workspace !== undefined) {
			result.card = { ...result.card, workspace: { ...result.card.workspace, ...stats } };
		}
		// A landed branch is deleted with its worktree: its work is on the base, there is nothing to push.
		const landed = result.card.workspace?.landed !== undefined;
		const push = committed && !landed ? await this.pushIfOn(p.cardId, k.project, ws) : undefined;
		return push === undefined ? result : { ...result, push };
	}

	/** Resolves when every snapshot and record started so far has ended (tests; the hub's stop). */
	async idle(): Promise<void> {
		while (this.pending.size > 0) {
			await Promise.allSettled([...this.pending]);
		}
	}

	private learn(card: Card, deleted = false): void {
		// A done card's worktree is landing's (or gc's) business; changes requested brings it back by event.
		if (
			deleted ||
			card.status === 'done' ||
			!isHere(card.workspace, this.host) ||
			card.workspace.landed !== undefined
		) {
			this.known.delete(card.id);
			return;
		}
		this.known.set(card.id, {
			workspace: card.workspace,
			title: card.title,
			project: card.project ?? undefined,
			status: card.status,
			claimEpoch: card.claimEpoch,
			claimOwner: card.claimOwner,
		});
	}

	private remember(seq: number): void {
		this.seen.add(seq);
		if (this.seen.size > 4096) {
			// Oldest first (a Set keeps insertion order): the pump is never that far behind a commit.
			for (const old of [...this.seen].slice(0, 2048)) {
				this.seen.delete(old);
			}
		}
	}

	private track(task: Promise<unknown>): void {
		this.pending.add(task);
		void task.finally(() => this.pending.delete(task));
	}

	/** One snapshot per card and attempt at a time; failures are logged and recorded, never thrown. */
	private snapshot(cardId: string, ws: CardWorkspace, attempt: number, why: string): Promise<WipSnapshot | null> {
		const key = `${cardId}/${attempt}`;
		const running = this.running.get(key);
		if (running !== undefined) {
			return running;
		}
		const task = snapshotWork(ws, cardId, attempt)
			.then(snap => {
				if (snap !== null) {
					log.info(`${cardId}: ${snap.files.length} uncommitted file(s) kept in ${snap.ref} (${why})`);
				}
				return snap;
			})
			.catch(async (e: unknown) => {
				log.error(`${cardId}: snapshot of ${ws.path} at ${why} failed: ${errorText(e)}`);
				await this.record(
					cardId,
					`Baton could not snapshot the uncommitted work in ${ws.path} (${why}): ${errorText(e)}`,
				);
				return null;
			})
			.finally(() => this.running.delete(key));
		this.running.set(key, task);
		return task;
	}

	private async pushIfOn(
		cardId: string,
		project: string | undefined,
		ws: CardWorkspace,
	): Promise<PushOutcome | undefined> {
		if (project === undefined) {
			return undefined;
		}
		let push = false;
		try {
			push = (await this.options.backlog.projectSettings(project)).push;
		} catch (e) {
			log.error(`${cardId}: reading project ${project}'s settings failed: ${errorText(e)}`);
		}
		if (!push) {
			return undefined;
		}
		try {
			const commit = await pushBranch({
				repo: ws.root,
				branch: ws.branch,
				timeoutMs: this.options.pushTimeoutMs ?? 60_000,
			});
			return { ok: true, remote: 'origin', commit };
		} catch (e) {
			const error = e instanceof BatonError ? e.message : errorText(e);
			log.warn(`${cardId}: ${error}`);
			await this.record(
				cardId,
				`The card was completed, but pushing ${ws.branch} to origin failed: ${error} Push it by hand: git push origin ${ws.branch}`,
			);
			return { ok: false, remote: 'origin', error };
		}
	}

	/** A note on the card's history (a comment by `baton`), so what went wrong is seen where the card is. */
	private async record(cardId: string, text: string): Promise<void> {
		try {
			await this.options.backlog.comment({ actor: 'baton' }, { cardId, text: text.slice(0, 4000) });
		} catch (e) {
			log.error(`${cardId}: recording "${text}" failed: ${errorText(e)}`);
		}
	}
}

/**
 * Complete commits the worktree, and with a merge of the base under way that commit concludes it: never
 * with a conflict marker left in a file of that merge (landing would put it on the base).
 */
async function refuseMarkers(cardId: string, ws: CardWorkspace): Promise<void> {
	const marked = existsSync(ws.path) ? await markedFiles(ws.path) : [];
	if (marked.length > 0) {
		throw new BatonError(
			'conflict',
			`Card ${cardId} still has conflict markers in ${marked.slice(0, 20).join(', ')} (the merge of ${ws.base} into ${ws.branch}): edit each to keep both sides' intent and remove the <<<<<<< / ======= / >>>>>>> lines, then complete again. Nothing was committed.`,
			{ cardId, files: marked },
		);
	}
}
