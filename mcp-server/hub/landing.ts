/**
 * Landing ("done means landed"): the one path by which a card's branch reaches its base.
 * Two callers: the hub's `card/review` (every face — CLI, VS Code, the board, a reviewing agent — lands
 * the same way) and `card/complete` of a card whose completion makes it done (review none, or a
 * person's forced completion), so such a card is done only once its work is on the base. Either way
 * the card is checked by core's own rules first (nothing written), then its branch lands into its base
 * with the project's land mode (workspaces/land.ts: squash, merge, rebase, or none = left to a pull
 * request), then the approval or completion is written with `workspace.landed {mode, commit, at}`.
 * A refused landing (a dirty checkout of the base, one in the middle of a rebase or merge, uncommitted
 * work in the card's worktree, a base that moved, a refusing hook, a branch with nothing to land)
 * changes nothing and an approved card stays in review; a conflict sends it back to ready with the
 * conflict as the hand-over (event `land_conflicted`, the branch kept) and the approval fails with it.
 * A holder's completion that cannot land (conflict or refusal) sends the card back to ready with why as
 * the hand-over (a failed attempt), the branch kept and the base unchanged; a person's forced one is
 * refused and changes nothing. Also the base a claim under `--land none` starts from (`stackedBase`).
 * Must not: restate a review or completion rule (core decides who may approve or complete what), or run
 * git for a workspace of another host.
 */
import { hostname } from 'node:os';

import type { Backlog, OpContext } from '../../core/backlog';
import { BatonError } from '../../core/errors';
import { createLogger, errorText } from '../../core/log';
import type { Card, CardWorkspace, ParsedParams, ProjectSettings, Result } from '../../core/protocol';
import type { Reviewer } from '../../core/rules/review';
import { type LandResult, land } from '../workspaces/land';
import { mergedTreeCheck } from './checks';
import { LandingLine } from './landingLine';
import { landedAlready, withLanded, withoutLanding } from './landingRecord';
import { markReviewConflicts } from './reviewConflicts';

const log = createLogger('hub').child('landing');

export class Landing {
	/** Cards landing now: a second approval or completion of one of them waits for none, it is refused. */
	private readonly busy = new Set<string>();
	private readonly line: LandingLine;

	constructor(
		private readonly backlog: Backlog,
		private readonly host: string = hostname(),
		/** The landing queue changed here (a join, a turn, a leave): the hub's landing notice. */
		onQueueChange?: () => void,
	) {
		this.line = new LandingLine(backlog.landingQueue, onQueueChange);
	}

	/** `card/review`: request changes as ever; an approval lands the card's branch first, when it has one. */
	async review(ctx: OpContext, p: ParsedParams<'card/review'>, reviewer: Reviewer): Promise<Result<'card/review'>> {
		const b = this.backlog;
		if (!p.approve) {
			return b.review(ctx, p, reviewer);
		}
		const checked = await b.checkApproval(ctx, p, reviewer);
		if (checked.replay) {
			return b.review(ctx, p, reviewer); // the stored answer of a re-sent approval
		}
		const card = checked.card;
		const ws = card.workspace;
		if (ws === undefined || ws.landed !== undefined) {
			// No workspace, or landed by an approval whose write then failed: approve only.
			return b.review(ctx, p, reviewer);
		}
		if (await landedAlready(ws)) {
			return b.review(ctx, p, reviewer, withLanded(ws)); // a landing whose hub died before its record
		}
		if (ws.host !== this.host) {
			throw new BatonError(
				'invalid_transition',
				`Card ${card.id}'s branch ${ws.branch} and worktree are on ${ws.host}; this hub runs on ${this.host} and cannot land them. Approve it from ${ws.host}; nothing was changed.`,
				{ cardId: card.id, host: ws.host },
			);
		}
		return this.oneAtATime(card.id, () => this.landAndApprove(ctx, p, reviewer, card, ws));
	}

	/**
	 * `card/complete` of a card with a workspace on this host (the caller, wipKeeper, has committed the
	 * agent's work): when the completion makes the card done (review none, or `force`) its branch lands
	 * first, and `run` (the backlog's complete) runs only once it has; anything else is `run` as before.
	 */
	async complete(
		ctx: OpContext,
		p: ParsedParams<'card/complete'>,
		run: () => Promise<Result<'card/complete'>>,
	): Promise<Result<'card/complete'>> {
		const b = this.backlog;
		const { card } = await b.get({ actor: ctx.actor }, { cardId: p.cardId });
		const ws = card.workspace;
		const landsNow = p.force === true || card.review === 'none';
		if (
			!landsNow ||
			card.status !== 'claimed' ||
			ws === undefined ||
			ws.landed !== undefined ||
			ws.host !== this.host
		) {
			return run(); // to review, refused by core, or landed already by a completion whose write failed
		}
		// The same rule the completion applies, asked first: a completion core will refuse must not land.
		await b.checkComplete(ctx, p);
		if (await landedAlready(ws)) {
			await b.setWorkspace({ actor: ctx.actor }, card.id, withLanded(ws)); // its hub died before the record
			return run();
		}
		const mode = await landModeOf(b, card);
		if (mode === 'none') {
			return run(); // approved work waits in its branch for a pull request, as an approval's does
		}
		return this.oneAtATime(card.id, () => this.landAndComplete(ctx, p, run, card, ws, mode));
	}

	private async oneAtATime<T>(cardId: string, task: () => Promise<T>): Promise<T> {
		if (this.busy.has(cardId)) {
			throw new BatonError(
				'conflict',
				`Card ${cardId} is being landed by another approval or completion right now; show it again in a moment.`,
				{ cardId },
			);
		}
		this.busy.add(cardId);
		try {
			return await task();
		} finally {
			this.busy.delete(cardId);
		}
	}

	/**
	 * The branch of `card` onto its base with `mode`: the one landing both callers share. When the
	 * card's project has a check, it runs on the merged commit before the base moves (the base's
	 * landing queue keeps that commit the base's next one), so the base only moves to a tree that passed.
	 */
	private async landBranch(
		card: Card,
		ws: CardWorkspace,
		mode: ProjectSettings['land'],
		actor: string,
		how: { via: 'approve'; reviewer: Reviewer } | { via: 'complete' },
	): Promise<LandResult> {
		let marked = false;
		const landNow = async (): Promise<LandResult> => {
			const verify = await mergedTreeCheck(this.backlog, card, ws);
			return land({
				repo: ws.root,
				branch: ws.branch,
				base: ws.base,
				mode,
				message: `${card.id}: ${card.title}`,
				...(verify === undefined ? {} : { verify }),
				beforeMove: async commit => {
					if (mode !== 'none') {
						const landing = { mode, commit, at: new Date().toISOString(), by: actor, ...how };
						await this.backlog.landingQueue.markInFlight(card.id, { ...ws, landing });
						marked = true;
					}
				},
			}).catch(async (e: unknown) => {
				// The base did not move (git refused the update): the card is as it was.
				if (marked) {
					await this.backlog.landingQueue.markInFlight(card.id, ws);
				}
				throw e;
			});
		};
		// Moving a base waits its turn in the base's line in the store, whichever hub approved; a pull
		// request's `none` moves nothing.
		const landed =
			mode === 'none'
				? await landNow()
				: await this.line.turn({ cardId: card.id, project: card.project ?? ws.root, base: ws.base, actor }, landNow);
		if (landed.outcome === 'landed') {
			// The review cards of this base that no longer merge into it are marked (in the background).
			void markReviewConflicts(this.backlog, { root: ws.root, base: ws.base, landed: card.id }).catch((e: unknown) =>
				log.warn(`marking the review cards of ${ws.base} that no longer merge failed: ${errorText(e)}`),
			);
			if (landed.cleanupError !== undefined) {
				log.warn(`landed ${ws.branch} on ${ws.base}, but its clean-up failed (gc retries): ${landed.cleanupError}`);
			}
			if (landed.unseen !== undefined) {
				// On the card's history, where the reviewer looks: these files did not land and are not lost.
				await this.backlog
					.comment({ actor: 'baton' }, { cardId: card.id, text: landed.cleanupError?.slice(0, 4000) ?? '' })
					.catch((e: unknown) =>
						log.error(`${card.id}: recording the unlanded submodule files failed: ${errorText(e)}`),
					);
			}
		}
		return landed;
	}

	private async landAndComplete(
		ctx: OpContext,
		p: ParsedParams<'card/complete'>,
		run: () => Promise<Result<'card/complete'>>,
		card: Card,
		ws: CardWorkspace,
		mode: ProjectSettings['land'],
	): Promise<Result<'card/complete'>> {
		const b = this.backlog;
		let landed: LandResult;
		try {
			landed = await this.landBranch(card, ws, mode, ctx.actor, { via: 'complete' });
		} catch (e) {
			if (p.force === true || !BatonError.is(e)) {
				throw e; // a person's forced completion decides again with the reason; nothing was changed
			}
			throw await this.completionCameBack(ctx, p, card, ws, {
				handoff: `Completing did not land ${ws.branch} on ${ws.base}: ${e.message}`,
				files: filesOf(e),
				code: e.code,
				why: e.message,
				...(isNothingToLand(e) ? { nothingToLand: true } : {}),
			});
		}
		if (landed.outcome === 'kept') {
			return run();
		}
		if (landed.outcome === 'check_failed') {
			if (p.force === true) {
				throw new BatonError('conflict', `Card ${card.id} was not completed: ${landed.message} Nothing was changed.`, {
					cardId: card.id,
					branch: ws.branch,
					base: ws.base,
				});
			}
			throw await this.completionCameBack(ctx, p, card, ws, {
				handoff: landed.message,
				files: [],
				code: 'conflict',
				why: landed.message,
			});
		}
		if (landed.outcome === 'conflict') {
			if (p.force === true) {
				throw new BatonError(
					'conflict',
					`Card ${card.id} was not completed: landing ${ws.branch} on ${ws.base} conflicts in ${landed.files.join(', ')}. Nothing was changed; rebase ${ws.branch} on ${ws.base}, or let an agent complete it.`,
					{ cardId: card.id, files: landed.files, branch: ws.branch, base: ws.base },
				);
			}
			throw await this.completionCameBack(ctx, p, card, ws, {
				handoff: landed.message,
				files: landed.files,
				code: 'conflict',
				why: `landing ${ws.branch} on ${ws.base} conflicts in ${landed.files.join(', ')}.`,
			});
		}
		const record: CardWorkspace = {
			...withoutLanding(ws),
			landed: { mode: landed.mode, commit: landed.newHead, at: new Date().toISOString() },
		};
		// Recorded before the completion, so its `completed` event carries the landing, and a completion
		// whose write then fails (a lease that ran out meanwhile) completes again without landing twice.
		await b.setWorkspace({ actor: ctx.actor }, card.id, record);
		try {
			return await run();
		} catch (e) {
			const why = e instanceof Error ? e.message : String(e);
			throw new BatonError(
				BatonError.is(e) ? e.code : 'internal',
				`${ws.branch} landed on ${ws.base} as ${landed.newHead.slice(0, 12)}, but completing card ${card.id} then failed: ${why} Completing it again completes without landing twice.`,
				{ cardId: card.id, landed: record.landed },
			);
		}
	}

	/**
	 * The holder's completion did not land: the card goes back to ready (core's `landFailed`), the
	 * branch and the base as they were; returns the error the completer gets.
	 */
	private async completionCameBack(
		ctx: OpContext,
		p: ParsedParams<'card/complete'>,
		card: Card,
		ws: CardWorkspace,
		failure: { handoff: string; files: string[]; code: BatonError['code']; why: string; nothingToLand?: true },
	): Promise<BatonError> {
		const back = await this.backlog.landFailed(
			{ actor: ctx.actor, session: ctx.session, origin: ctx.origin },
			card.id,
			{
				epoch: p.epoch,
				handoff: failure.handoff,
				files: failure.files,
			},
		);
		const where = back.status === 'blocked' ? 'It is blocked (out of attempts)' : 'It is back in ready';
		return new BatonError(
			failure.code,
			`Card ${card.id} was completed but not landed: ${failure.why} ${where} with that as its hand-over; the branch ${ws.branch} is kept and ${ws.base} is unchanged.`,
			{
				cardId: card.id,
				files: failure.files,
				branch: ws.branch,
				base: ws.base,
				card: back,
				...(failure.nothingToLand === true ? { nothingToLand: true } : {}),
			},
		);
	}

	private async landAndApprove(
		ctx: OpContext,
		p: ParsedParams<'card/review'>,
		reviewer: Reviewer,
		card: Card,
		ws: CardWorkspace,
	): Promise<Result<'card/review'>> {
		const b = this.backlog;
		const mode = await landModeOf(b, card);
		const landed = await this.landBranch(card, ws, mode, ctx.actor, { via: 'approve', reviewer }).catch(
			(e: unknown) => {
				throw isNothingToLand(e) ? nothingToApprove(card, ws) : e;
			},
		);
		if (landed.outcome === 'kept') {
			return b.review(ctx, p, reviewer);
		}
		if (landed.outcome === 'check_failed') {
			const back = await b.landConflict({ actor: ctx.actor, session: ctx.session, origin: ctx.origin }, p, reviewer, {
				handoff: landed.message,
				files: [],
			});
			throw new BatonError(
				'conflict',
				`Card ${card.id} was not approved: ${landed.message} It is back in ready with that as its hand-over; the branch ${ws.branch} is kept.`,
				{ cardId: card.id, branch: ws.branch, base: ws.base, card: back, checkFailed: true },
			);
		}
		if (landed.outcome === 'conflict') {
			// Its own write, without the approval's request key: a re-sent approval must not read it as approved.
			const back = await b.landConflict({ actor: ctx.actor, session: ctx.session, origin: ctx.origin }, p, reviewer, {
				handoff: landed.message,
				files: landed.files,
			});
			throw new BatonError(
				'conflict',
				`Card ${card.id} was not approved: landing ${ws.branch} on ${ws.base} conflicts in ${landed.files.join(', ')}. It is back in ready with the hand-over "${landed.message}"; the branch ${ws.branch} is kept.`,
				{ cardId: card.id, files: landed.files, branch: ws.branch, base: ws.base, card: back },
			);
		}
		const record: CardWorkspace = {
			...withoutLanding(ws),
			landed: { mode: landed.mode, commit: landed.newHead, at: new Date().toISOString() },
		};
		try {
			return await b.review(ctx, p, reviewer, record);
		} catch (e) {
			// The base has the work now; record that, so approving again approves without landing twice.
			await b.setWorkspace({ actor: ctx.actor }, card.id, record).catch((inner: unknown) => {
				log.error(`could not record that ${card.id} landed as ${landed.newHead}: ${errorText(inner)}`);
			});
			const why = e instanceof Error ? e.message : String(e);
			throw new BatonError(
				BatonError.is(e) ? e.code : 'internal',
				`${ws.branch} landed on ${ws.base} as ${landed.newHead.slice(0, 12)}, but approving card ${card.id} then failed: ${why} Approving it again approves without landing twice.`,
				{ cardId: card.id, landed: record.landed },
			);
		}
	}
}

/** The files a refusal names (a dirty checkout's, the worktree's uncommitted ones), for the hand-over's event. */
function filesOf(e: BatonError): string[] {
	const files = (e.data as { files?: unknown } | undefined)?.files;
	return Array.isArray(files) ? files.filter((f): f is string => typeof f === 'string').slice(0, 200) : [];
}

function isNothingToLand(e: unknown): boolean {
	return BatonError.is(e) && (e.data as { nothingToLand?: unknown } | undefined)?.nothingToLand === true;
}

/**
 * An approval of a card whose branch changes nothing on its base: refused, the card stays in review.
 * Approving would mark done work that is not on the base; the person decides what the card needs.
 */
function nothingToApprove(card: Card, ws: CardWorkspace): BatonError {
	return new BatonError(
		'invalid_transition',
		`Card ${card.id} was not approved: its branch ${ws.branch} has no change against ${ws.base}, so there is nothing to land (approving would report ${ws.base}'s own commit as its work). It stays in review and nothing was changed. If the work is missing, request changes (\`baton reject ${card.id} --note "…"\`) so an agent does it; if it is on ${ws.base} already or no longer wanted, delete the card (\`baton delete ${card.id}\`).`,
		{ cardId: card.id, branch: ws.branch, base: ws.base, nothingToLand: true },
	);
}

async function landModeOf(b: Backlog, card: Card): Promise<ProjectSettings['land']> {
	const project = card.project ?? undefined;
	return project === undefined ? 'squash' : (await b.projectSettings(project)).land;
}
