/**
 * The workspaces' part of the wire contract: a card's workspace (branch and git worktree) as it crosses the
 * wire, how approval lands it, what a fresh worktree's setup reports, a project's workspace settings
 * (`project/settings`, `project/settings/update`) and `workspace/gc`. Part of `core/protocol/index.ts`;
 * platform-free, imports only zod and the scalars, and runs no git (the hub does, mcp-server/workspaces/).
 */
import { z } from 'zod';
import { ProjectId, Timestamp } from './scalars';

/** How approval lands a card's branch into its base; `none` leaves it to a pull request. */
export const LandMode = z.enum(['squash', 'merge', 'rebase', 'none']);
export type LandMode = z.infer<typeof LandMode>;

/**
 * A card's own branch and git worktree, made by the hub that claimed it, on its machine.
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
	/**
	 * Set while the branch no longer merges into its base (checked after each landing on that base): the
	 * files that conflict, and the base's commit they conflict with. Approving would send it back.
	 */
	conflicts: z.object({ files: z.array(wsText), base: wsText, at: Timestamp }).optional(),
	/**
	 * A landing in flight: the commit its base is being moved to, written just before the base moves and
	 * replaced by `landed` when the approval (`via: approve`, by `by` as `reviewer`) or completion is
	 * recorded. A hub that died between the two finds it at its start and finishes the record.
	 */
	landing: z
		.object({
			mode: LandMode,
			commit: wsText,
			at: Timestamp,
			by: wsText,
			via: z.enum(['approve', 'complete']),
			reviewer: z.enum(['human', 'agent']).optional(),
		})
		.optional(),
});
export type CardWorkspace = z.infer<typeof CardWorkspace>;

/** Where a card's check stands: running, or how it ended. */
export const ChecksState = z.enum(['running', 'passed', 'failed', 'timed_out']);
export type ChecksState = z.infer<typeof ChecksState>;

/** The bounds of a check: its output tail kept on the card, and the default time limit. */
export const checksLimits = { tailBytes: 4096, defaultTimeoutSeconds: 600 } as const;

/**
 * The project's check (`baton settings --check`) as run on a card's worktree after complete committed
 * it: the command, where it stands, and once it ended its exit code (null: killed or a signal), the
 * last ≤ 4 KB of its combined output (visible-safe), when it ended and how long it took. Lives here,
 * beside CardWorkspace, because domain.ts's Card carries it and may import only the parts before it.
 */
export const CardChecks = z.object({
	command: wsText,
	state: ChecksState,
	exitCode: z.number().int().nullable().optional(),
	tail: wsText.optional(),
	startedAt: Timestamp,
	endedAt: Timestamp.optional(),
	durationMs: z.number().int().optional(),
});
export type CardChecks = z.infer<typeof CardChecks>;

/**
 * A base branch's name, as a project's settings and a card's own `base` give it (git itself checks it
 * at the claim: one that does not exist is refused there, naming it).
 */
export const BaseBranch = z.string().min(1).max(250);

/**
 * How a claim's fresh worktree was set up: extra keys of its `updated` event's data, the
 * card's history. Not in EventData's schema (it lets them through unchecked), to keep the board small.
 */
export interface WorkspaceSetup {
	/** How the setup command ended; `tail`: the last lines of its output (at most 20). */
	setup?: { command: string; exitCode: number | null; timedOut: boolean; durationMs: number; tail: string[] };
	/** The WIP snapshot a continued branch's fresh worktree got back, and its files. */
	restored?: { ref: string; attempt: number; files: string[] };
	/** The files `.baton/worktree-include` copied in from the main checkout. */
	copied?: string[];
	/** The base was merged into a branch that no longer merged: the files left with conflict markers. */
	conflicts?: string[];
}

/**
 * One project's workspace settings, stored in the backlog (table project_settings): whether a
 * claim of its cards gets a branch and git worktree, the base branch, how approval lands, push at
 * complete, the fresh worktree's setup command and its time limit, how long WIP snapshots are kept, and
 * the repository's root on each host (recorded by `baton settings --worktrees on` run inside it).
 */
export const ProjectSettings = z.object({
	project: ProjectId,
	worktrees: z.boolean(),
	/** The branch worktrees start from and land into; absent = the repository's default branch. */
	base: BaseBranch.optional(),
	land: LandMode,
	push: z.boolean(),
	/** A shell command run in each fresh worktree (e.g. `npm ci`); absent = none. */
	setup: z.string().min(1).max(4000).optional(),
	setupTimeoutSeconds: z.number().int().min(1).max(86_400),
	/** The check run in a card's worktree after complete committed it (e.g. `npm test`); absent = none. */
	check: z.string().min(1).max(4000).optional(),
	checkTimeoutSeconds: z.number().int().min(1).max(86_400),
	/**
	 * A card in review whose branch stops merging after another landed: marked (absent, the default), or
	 * `send-back`: sent back to ready at once with the conflict as its hand-over.
	 */
	onConflict: z.enum(['mark', 'send-back']).optional(),
	wipDays: z.number().int().min(1).max(36_500),
	/** host name -> absolute path of the repository's main checkout there. */
	roots: z.record(z.string(), z.string()),
	/** Dispatched agents holding this project's cards at once; absent = no limit. */
	seats: z.number().int().min(1).max(1000).optional(),
	/** The same per agent kind (kind -> seats); a kind not named has no limit of its own. */
	kindSeats: z.record(z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/), z.number().int().min(0).max(1000)).optional(),
});
export type ProjectSettings = z.infer<typeof ProjectSettings>;
export const ProjectSettingsParams = ProjectSettings.pick({ project: true }).strict();
/** Changes only what it names; `null` clears base, setup or check; `roots` is merged per host (null removes one). */
export const ProjectSettingsUpdateParams = ProjectSettings.partial()
	.extend({
		project: ProjectId,
		base: ProjectSettings.shape.base.nullable(),
		setup: ProjectSettings.shape.setup.nullable(),
		check: ProjectSettings.shape.check.nullable(),
		seats: ProjectSettings.shape.seats.nullable(),
		roots: z.record(z.string(), z.string().nullable()).optional(),
	})
	.strict();
/**
 * `workspace/gc` (`baton gc`): removes worktrees and branches of cards that are done or
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
 * `landing/queue`: the landing lines as they stand, across every hub on the store: per project and base
 * branch, the card landing now (place 1) and those waiting their turn, in order.
 */
export const LandingEntry = z.object({
	cardId: z.string(),
	title: z.string(),
	project: z.string(),
	base: z.string(),
	state: z.enum(['waiting', 'landing']),
	/** 1 for the line's landing (or next) entry, then 2, 3, … */
	place: z.number().int(),
	/** Who approved it (or completed it, for a card of review none). */
	actor: z.string(),
	queuedAt: Timestamp,
	startedAt: Timestamp.optional(),
});
export type LandingEntry = z.infer<typeof LandingEntry>;
/** A landing that came back (event `land_conflicted`): a conflict, a failing merged check, a refusal. */
export const LandingReturn = z.object({
	cardId: z.string(),
	title: z.string(),
	at: Timestamp,
	/** Why, as the card's hand-over says it. */
	reason: z.string(),
	files: z.array(z.string()),
});
export type LandingReturn = z.infer<typeof LandingReturn>;
export const LandingQueueParams = z.object({ project: ProjectId.optional() }).strict();
/** `returned`: the newest landings that came back (at most 10, of the log's last 5,000 events), newest first. */
export const LandingQueueResult = z.object({ entries: z.array(LandingEntry), returned: z.array(LandingReturn) });
