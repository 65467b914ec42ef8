/**
 * Landing on approval (issue 33): the hub's `card/review` path, so every face (CLI, VS Code, the
 * board, a reviewing agent) lands the same way. An approval of a card with a workspace on this host is
 * checked by core's own rules first (nothing written), then its branch lands into its base with the
 * project's land mode (workspaces/land.ts: squash, merge, rebase, or none = left to a pull request),
 * then the approval is written with `workspace.landed {mode, commit, at}` in the same transaction. A
 * refused landing (a dirty checkout of the base, one in the middle of a rebase or merge, uncommitted
 * work in the card's worktree, a base that moved, a refusing hook, a branch with nothing to land)
 * changes nothing and the card stays in review; a conflict sends the card back to ready with the
 * conflict as the hand-over (event `land_conflicted`, the branch kept) and the approval fails with it.
 * Also the base a claim under `--land none` starts from (`stackedBase`: the dependency's branch).
 * Must not: restate a review rule (core decides who may approve what), or run git for a workspace of
 * another host.
 */
import { hostname } from 'node:os';

import type { Backlog, OpContext } from '../../core/backlog';
import { BatonError } from '../../core/errors';
import { createLogger, errorText } from '../../core/log';
import type { Card, CardWorkspace, ParsedParams, ProjectSettings, Result } from '../../core/protocol';
import type { Reviewer } from '../../core/rules/review';
import { land } from '../workspaces/land';
import { inspectRepo } from '../workspaces/repo';

const log = createLogger('hub').child('landing');

export class Landing {
	/** Cards whose approval is landing now: a second approval of one of them waits for none, it is refused. */
	private readonly busy = new Set<string>();

	constructor(
		private readonly backlog: Backlog,
		private readonly host: string = hostname(),
	) {}

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
		if (ws.host !== this.host) {
			throw new BatonError(
				'invalid_transition',
				`Card ${card.id}'s branch ${ws.branch} and worktree are on ${ws.host}; this hub runs on ${this.host} and cannot land them. Approve it from ${ws.host}; nothing was changed.`,
				{ cardId: card.id, host: ws.host },
			);
		}
		if (this.busy.has(card.id)) {
			throw new BatonError(
				'conflict',
				`Card ${card.id} is being landed by another approval right now; show it again in a moment.`,
				{ cardId: card.id },
			);
		}
		this.busy.add(card.id);
		try {
			return await this.landAndApprove(ctx, p, reviewer, card, ws);
		} finally {
			this.busy.delete(card.id);
		}
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
		const landed = await land({
			repo: ws.root,
			branch: ws.branch,
			base: ws.base,
			mode,
			message: `${card.id}: ${card.title}`,
		}).catch((e: unknown) => {
			throw isNothingToLand(e) ? nothingToApprove(card, ws) : e;
		});
		if (landed.outcome === 'kept') {
			return b.review(ctx, p, reviewer);
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
		if (landed.cleanupError !== undefined) {
			log.warn(`landed ${ws.branch} on ${ws.base}, but its clean-up failed (gc retries): ${landed.cleanupError}`);
		}
		if (landed.unseen !== undefined) {
			// On the card's history, where the reviewer looks: these files did not land and are not lost.
			await b
				.comment({ actor: 'baton' }, { cardId: card.id, text: landed.cleanupError?.slice(0, 4000) ?? '' })
				.catch((e: unknown) => log.error(`${card.id}: recording the unlanded submodule files failed: ${errorText(e)}`));
		}
		const record: CardWorkspace = {
			...ws,
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

/**
 * The branch a claimed card's new worktree starts from when its project lands nothing itself (`--land
 * none`: approved work waits in its branch for a pull request): the branch of its first dependency, in
 * `dependsOn` order, whose workspace is on this host and repository and not landed, so stacked work
 * builds on unmerged work. Undefined: start from the project's base as usual. Pure: the caller reads
 * the dependencies (cards) and the settings.
 */
export function stackedBase(
	card: Pick<Card, 'dependsOn'>,
	dependencies: readonly Pick<Card, 'id' | 'workspace'>[],
	settings: Pick<ProjectSettings, 'land'>,
	where: { host: string; root: string },
): string | undefined {
	if (settings.land !== 'none') {
		return undefined;
	}
	for (const id of card.dependsOn) {
		const ws = dependencies.find(d => d.id === id)?.workspace;
		if (ws !== undefined && ws.landed === undefined && ws.host === where.host && ws.root === where.root) {
			return ws.branch;
		}
	}
	return undefined;
}

/**
 * `stackedBase` for a card being claimed, reading its dependencies only when it can matter (`land:
 * none` and a dependency): what the claim path calls before it makes a fresh worktree.
 */
export async function stackedBaseFor(
	backlog: Backlog,
	card: Pick<Card, 'dependsOn'>,
	settings: Pick<ProjectSettings, 'land'>,
	where: { host: string; root: string },
): Promise<string | undefined> {
	if (settings.land !== 'none' || card.dependsOn.length === 0) {
		return undefined;
	}
	const dependencies = await Promise.all(
		card.dependsOn.map(async cardId => (await backlog.get({ actor: 'hub:claim' }, { cardId })).card),
	);
	// Workspaces record the main checkout's root; the claimer may have named a linked worktree of it.
	const root = (await inspectRepo(where.root)).root;
	return stackedBase(card, dependencies, settings, { host: where.host, root });
}
