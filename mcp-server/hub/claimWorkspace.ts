/**
 * A claim's workspace: after the backlog claimed a card whose project has worktrees on, the
 * hub gives it its branch and git worktree on this machine (mcp-server/workspaces/ensureWorktree:
 * created from the base, or the card's branch continued with its newest WIP snapshot restored), lets
 * the include files and the setup command make it usable, records it on the card (setWorkspace; the
 * setup's outcome goes into that event, the card's history) and answers `workspace {path, branch,
 * base}` with the claim. When git refuses, the claim is released with the reason and the claimer gets
 * the error: nothing but that release changed. Claims of cards without a project, or of a project with
 * worktrees off, cost no git and, once the project's settings are cached, no query. The base is the
 * card's own (`--base`, which wins), else a `--land none` dependency's branch, else the project's.
 * Must not: snapshot, commit, land or remove worktrees (wipKeeper.ts, landing.ts), or run git for a
 * workspace another machine made.
 */
import { hostname } from 'node:os';
import path from 'node:path';

import type { Backlog, OpContext } from '../../core/backlog';
import { BatonError } from '../../core/errors';
import { createLogger, errorText } from '../../core/log';
import type {
	Card,
	CardWorkspace,
	ClaimedWorkspace,
	ClaimResult,
	ProjectSettings,
	WorkspaceSetup,
} from '../../core/protocol';
import { startBaseMerge } from '../workspaces/baseMerge';
import { batonCommand, installCommitGuard } from '../workspaces/commitGuard';
import { ensureWorktree } from '../workspaces/worktree';
import { stackedBaseFor } from './stackedBase';
import { checkBase, isProjectCheckout, rootOutsideProject } from './workspaceInputs';

const log = createLogger('hub').child('workspaces');

/**
 * How long a project's settings are trusted without reading them again. This hub's own updates
 * replace them at once (`changed`); on a PostgreSQL backlog another hub's take at most this long.
 */
const settingsTtlMs = 10_000;

/** What a claim asked for that bears on the workspace (card/claim params, or complete's `next`). */
export interface ClaimAsk {
	project?: string | null | undefined;
	root?: string | undefined;
	review?: boolean | undefined;
}

export class ClaimWorkspaces {
	private readonly settings = new Map<string, { value: ProjectSettings; until: number }>();

	constructor(
		private readonly backlog: Backlog,
		/** This machine, as CardWorkspace.host and ProjectSettings.roots name it. */
		readonly host: string = hostname(),
		/** The hub's data dir, for the commit guard's hook to ask this hub (commitGuard.ts). */
		private readonly dataDir?: string,
	) {}

	/** A project's settings changed on this hub: the next claim uses these. */
	changed(settings: ProjectSettings): void {
		this.settings.set(settings.project, { value: settings, until: Date.now() + settingsTtlMs });
	}

	/** A project's settings, cached (the check before review reads its command and time limit here too). */
	async settingsOf(project: string): Promise<ProjectSettings> {
		const cached = this.settings.get(project);
		if (cached !== undefined && cached.until > Date.now()) {
			return cached.value;
		}
		const value = await this.backlog.projectSettings(project);
		this.changed(value);
		return value;
	}

	/**
	 * The claim result with the card's workspace, made as needed; the result as it was when the card
	 * needs none (no card, review work, no project, worktrees off). Throws (after releasing the claim)
	 * when the workspace cannot be made.
	 */
	async afterClaim(ctx: OpContext, ask: ClaimAsk, result: ClaimResult): Promise<ClaimResult> {
		const card = result.card;
		if (card === null || result.lease === null || ask.review === true || card.status !== 'claimed') {
			return result;
		}
		const project = card.project ?? null;
		if (project === null) {
			return result;
		}
		const settings = await this.settingsOf(project);
		if (!settings.worktrees) {
			return result;
		}
		try {
			const made = await this.make(ctx, card, ask, settings);
			const conflicts = made.workspace.conflicts;
			// The files to resolve lead the hand-over: every claimer reads that (MCP, a seat's prompt).
			const handoff =
				conflicts === undefined
					? result.handoff
					: [conflictNote(made.workspace), result.handoff].filter(Boolean).join('\n\n');
			return { ...result, card: made.card, workspace: made.workspace, ...(handoff === undefined ? {} : { handoff }) };
		} catch (e) {
			await this.undo(ctx, card, result.lease.epoch, e);
			throw e;
		}
	}

	/**
	 * afterClaim for complete's `next` claim: the complete stands whatever happens here, so a workspace
	 * that cannot be made ends as "nothing claimed, and why" (the card was handed back).
	 */
	async afterNextClaim(ctx: OpContext, ask: ClaimAsk, next: ClaimResult): Promise<ClaimResult> {
		try {
			return await this.afterClaim(ctx, ask, next);
		} catch (e) {
			return { card: null, lease: null, reason: BatonError.is(e) ? e.message : errorText(e) };
		}
	}

	/** The repository to make the card's worktree in, on this machine; refuses when there is none. */
	private async rootFor(card: Card, ask: ClaimAsk, settings: ProjectSettings): Promise<string> {
		const given = ask.root;
		const recorded = settings.roots[this.host];
		if (given !== undefined) {
			if (!path.isAbsolute(given)) {
				throw new BatonError('invalid_input', `root "${given}" is not an absolute path.`, { field: 'root' });
			}
			// The claimer's checkout, when the repository itself says it is this project's (never the
			// session's word: a session can name any folder). An agent claiming from another project's
			// checkout gets the recorded one; one that says it is in this project and is not, an error.
			if (await isProjectCheckout(given, settings.project, recorded)) {
				return given;
			}
			if (ask.project === card.project || recorded === undefined) {
				throw rootOutsideProject(given, card.id, settings.project);
			}
		}
		if (recorded !== undefined) {
			return recorded;
		}
		throw new BatonError(
			'invalid_input',
			`Project ${settings.project} has workspaces on, but this machine (${this.host}) knows no checkout of it. Run \`baton settings --worktrees on\` inside the repository here, or claim from inside it.`,
			{ project: settings.project },
		);
	}

	private async make(
		ctx: OpContext,
		card: Card,
		ask: ClaimAsk,
		settings: ProjectSettings,
	): Promise<{ card: Card; workspace: ClaimedWorkspace }> {
		const had = card.workspace;
		if (had !== undefined && had.host !== this.host) {
			throw new BatonError(
				'conflict',
				`Card ${card.id}'s workspace (${had.branch}) is on machine ${had.host}, not this one (${this.host}). Claim it from an agent on ${had.host}.`,
				{ cardId: card.id, host: had.host },
			);
		}
		// A card continues where its workspace is; a new one goes to the claimer's checkout.
		const root = had?.root ?? (await this.rootFor(card, ask, settings));
		// A new worktree starts from the card's own base (`--base`) when it names one: an explicit choice
		// wins over both defaults. Else, under `--land none`, from its approved, unlanded dependency's
		// branch (landing.ts); else from the project's base (absent: the repository's default branch).
		const own = card.base ?? undefined;
		const base =
			own ??
			(had === undefined ? await stackedBaseFor(this.backlog, card, settings, { host: this.host, root }) : undefined) ??
			settings.base;
		if (base !== undefined) {
			await checkBase(this.backlog, root, card.id, base);
		}
		const ws = await ensureWorktree({
			repo: root,
			cardId: card.id,
			...(base === undefined ? {} : { base }),
			...(settings.setup === undefined ? {} : { setupCommand: settings.setup }),
			setupTimeoutMs: settings.setupTimeoutSeconds * 1000,
			restoreWip: true,
		}).catch((e: unknown) => {
			throw own !== undefined && BatonError.is(e, 'not_found') ? ownBaseMissing(card.id, e) : e;
		});
		// The commit guard, refreshed at every claim; a hub not running as baton.js (in-process tests) has no
		// program line for the hook. A claim never fails for it: the hub log says why it is missing.
		if (batonCommand() !== undefined) {
			await installCommitGuard(ws.path, {
				cardId: card.id,
				...(this.dataDir === undefined ? {} : { dataDir: this.dataDir }),
			}).catch((e: unknown) => log.warn(`card ${card.id}: no commit guard in ${ws.path}: ${errorText(e)}`));
		}
		// A branch that no longer merges into its base (a landing came back for a conflict): the base is
		// merged in and the markers left for the agent to resolve with file tools alone.
		// A branch made by this claim starts from the base: only one that existed can have fallen behind.
		const fresh = ws.created && !ws.continued;
		const conflicts = fresh
			? undefined
			: await startBaseMerge(ws.path, ws.base).catch((e: unknown) => {
					log.warn(`card ${card.id}: merging ${ws.base} into ${ws.branch} failed: ${errorText(e)}`);
					return undefined;
				});
		const record: CardWorkspace = {
			// A mark that the branch no longer merges is this attempt's to resolve: the next landing re-checks.
			...roundOf(had),
			conflicts: undefined,
			root: path.dirname(path.dirname(path.dirname(ws.path))),
			path: ws.path,
			branch: ws.branch,
			base: ws.base,
			host: this.host,
		};
		const extra: WorkspaceSetup = {
			...(ws.setup === undefined ? {} : { setup: ws.setup }),
			...(ws.restored === undefined
				? {}
				: { restored: { ref: ws.restored.ref, attempt: ws.restored.attempt, files: ws.restored.files } }),
			...(ws.copied.length === 0 ? {} : { copied: ws.copied }),
			...(conflicts === undefined ? {} : { conflicts }),
		};
		const unchanged =
			had !== undefined &&
			had.landed === undefined &&
			had.conflicts === undefined &&
			sameWorkspace(had, record) &&
			Object.keys(extra).length === 0;
		const updated = unchanged ? card : await this.backlog.setWorkspace(ctx, card.id, record, extra);
		if (ws.setup !== undefined && (ws.setup.exitCode !== 0 || ws.setup.timedOut)) {
			log.warn(
				`card ${card.id}: the setup command ${ws.setup.timedOut ? 'timed out' : `exited ${ws.setup.exitCode ?? 'by a signal'}`}`,
			);
		}
		return {
			card: updated,
			workspace: { path: ws.path, branch: ws.branch, base: ws.base, ...(conflicts === undefined ? {} : { conflicts }) },
		};
	}

	/** Hands the card back (release, with why) after its workspace could not be made. */
	private async undo(ctx: OpContext, card: Card, epoch: number, why: unknown): Promise<void> {
		const reason = `no workspace: ${BatonError.is(why) ? why.message : errorText(why)}`.slice(0, 1000);
		try {
			await this.backlog.release({ actor: ctx.actor, session: ctx.session }, { cardId: card.id, epoch, reason });
		} catch (e) {
			// The lease then runs out as any other would; the claimer still hears the first error.
			log.error(`card ${card.id}: releasing the claim after a failed workspace failed too: ${errorText(e)}`);
		}
	}
}

/** The claim's error when the card's own base branch is missing: it says whose base it is and how to change it. */
function ownBaseMissing(cardId: string, e: BatonError): BatonError {
	return new BatonError(
		'not_found',
		`Card ${cardId} names its own base branch (--base): ${e.message} Change it with \`baton edit ${cardId} --base BRANCH\`, or drop it with --no-base to use the project's.`,
		{ cardId, ...(typeof e.data === 'object' && e.data !== null ? e.data : {}) },
	);
}

function sameWorkspace(a: CardWorkspace, b: CardWorkspace): boolean {
	return a.root === b.root && a.path === b.path && a.branch === b.branch && a.base === b.base && a.host === b.host;
}

/**
 * What a claim keeps of the card's workspace record: all of it, except after a landing (a reopened
 * card): the new round's branch starts from the base that has the first round, and its own commit and
 * counts are made at its complete; a kept `landed` would make approval and completion skip landing the
 * new work and report the first round's commit as this one's.
 */
function roundOf(had: CardWorkspace | undefined): Partial<CardWorkspace> | undefined {
	if (had?.landed === undefined) {
		return had;
	}
	const { landed: _landed, head: _head, filesChanged: _f, insertions: _i, deletions: _d, ...kept } = had;
	return kept;
}

/** What the claimer is told first when the base was merged into its branch with conflicts. */
function conflictNote(ws: ClaimedWorkspace): string {
	return `${ws.branch} no longer merged into ${ws.base}, so Baton merged ${ws.base} into it in your worktree: resolve the conflict markers (<<<<<<< … ======= … >>>>>>>) in ${(ws.conflicts ?? []).join(', ')} by editing the files, keeping both sides' intent, then complete (it commits the merge; it is refused while a marker remains).`;
}
