/**
 * The workspace flags of `baton settings` and `baton init --worktrees`: a project's
 * worktrees on or off, its base branch, how approval lands, push, the setup command, WIP retention,
 * and the check run on completed work before review (`--check`, `--check-timeout`).
 * Turning worktrees on is done inside the repository: it must be a git checkout (not bare, not on a
 * detached HEAD) whose base branch exists, and its root is recorded for this machine; each refusal
 * says why and changes nothing. One `project/settings/update` request; the hub stores, this module
 * only checks the checkout and prints.
 * Must not: make worktrees or branches (the hub does on claim).
 */
import { hostname } from 'node:os';

import { BatonError } from '../../core/errors';
import { plural } from '../../core/plural';
import { ProjectSettings, ProjectSettingsUpdateParams, type Params, type ReviewMode } from '../../core/protocol';
import { inspectRepo, resolveBase } from '../workspaces/repo';
import type { CommandContext } from './command';
import { cliFlags, paramFlags } from './flags';
import { UsageError } from './output';
import { anyProject, checkProject, explicitProject, workingProject } from './project';

/** The flags `settings` adds for workspaces (also read by `init --worktrees`: only project, base, setup). */
export const workspaceFlags = cliFlags({
	worktrees: {
		type: 'string',
		value: 'on|off',
		description:
			'Workspaces for the project: each claimed card gets its own branch and git worktree (run it inside the repository)',
	},
	push: { type: 'string', value: 'on|off', description: 'With worktrees: push the branch to origin at complete' },
	project: {
		type: 'string',
		value: 'ID',
		description: "The project whose workspaces these flags set (default: this folder's)",
	},
	kindSeats: {
		type: 'string',
		value: 'K=N,…',
		description: 'Seats per agent kind in the project, e.g. claude=2,codex=1 ("off" removes them)',
	},
});

/** The check before review, for `settings` and `init --worktrees`. */
export const checkFlags = cliFlags({
	check: {
		type: 'string',
		value: 'CMD',
		description:
			"With worktrees: run in the card's worktree after complete, e.g. \"npm test\"; a failure sends the card back to an agent; '' removes it",
	},
	checkTimeout: { type: 'string', value: 'SECONDS', description: 'Time limit of the check; default 600' },
});

/** The check flags given, as update fields: `--check ''` clears it; a time limit must be a positive whole number. */
export function readCheckFlags(
	values: CommandContext['values'],
): Pick<Params<'project/settings/update'>, 'check' | 'checkTimeoutSeconds'> {
	const { check, checkTimeout } = checkFlags.read(values);
	const out: Pick<Params<'project/settings/update'>, 'check' | 'checkTimeoutSeconds'> = {};
	if (check !== undefined) {
		const parsed = ProjectSettings.shape.check.safeParse(check.trim() === '' ? undefined : check);
		if (!parsed.success) {
			throw new BatonError('invalid_input', "--check: a command of at most 4,000 characters, or '' to remove it.", {
				field: 'check',
			});
		}
		out.check = parsed.data ?? null;
	}
	if (checkTimeout !== undefined) {
		const seconds = /^\s*\d+\s*$/.test(checkTimeout) ? Number(checkTimeout) : Number.NaN;
		if (!ProjectSettings.shape.checkTimeoutSeconds.safeParse(seconds).success) {
			throw new BatonError(
				'invalid_input',
				`--check-timeout must be a positive whole number of seconds (at most 86400), got "${checkTimeout}". Nothing was changed.`,
				{ field: 'checkTimeoutSeconds' },
			);
		}
		out.checkTimeoutSeconds = seconds;
	}
	return out;
}

/** `claude=2,codex=1` as kind -> seats; "off" is none. A usage error names what is wrong. */
export function parseKindSeats(text: string): Record<string, number> {
	if (text.trim() === 'off') {
		return {};
	}
	const out: Record<string, number> = {};
	for (const part of text.split(',')) {
		const m = /^\s*([a-z][a-z0-9_-]{0,31})\s*=\s*(\d{1,4})\s*$/.exec(part);
		if (m === null) {
			throw new UsageError(`--kind-seats "${part.trim()}": use kind=N, e.g. claude=2,codex=1.`);
		}
		out[m[1] ?? ''] = Number(m[2]);
	}
	return out;
}
export const workspaceFieldFlags = paramFlags(ProjectSettingsUpdateParams, {
	base: {
		value: 'BRANCH',
		nullWord: 'default',
		description: 'Branch worktrees start from and land into; "default": the repository\'s default branch',
	},
	land: {
		value: 'MODE',
		description: 'How approve lands a branch: squash (default), merge, rebase or none (a pull request does)',
	},
	setup: {
		flag: 'worktree-setup',
		value: 'CMD',
		nullWord: 'none',
		description: 'Run in each fresh worktree, e.g. "npm ci"; "none" removes it',
	},
	setupTimeoutSeconds: {
		flag: 'worktree-setup-timeout',
		value: 'SECONDS',
		description: 'Time limit of the setup command; default 600',
	},
	onConflict: {
		value: 'MODE',
		description:
			'A card in review whose branch stops merging after another lands: mark (default) or send-back (to Ready at once)',
	},
	wipDays: { flag: 'wip-days', description: 'Keep WIP snapshots of released work this many days; default 30' },
	seats: {
		nullWord: 'off',
		description: 'Dispatched agents (baton run) holding the project\'s cards at once; "off" = no limit',
	},
});

function onOff(flag: string, value: string | undefined): boolean | undefined {
	if (value === undefined) {
		return undefined;
	}
	if (value !== 'on' && value !== 'off') {
		throw new UsageError(`--${flag} ${value}: use on or off.`);
	}
	return value === 'on';
}

/** The workspace flags given, as an update without its project; undefined when none was given. */
export function readWorkspaceFlags(
	values: CommandContext['values'],
): { project: string | undefined; patch: Omit<Params<'project/settings/update'>, 'project'> } | undefined {
	const { worktrees, push, project: projectFlag, kindSeats } = workspaceFlags.read(values);
	const fields = workspaceFieldFlags.read(values);
	const project = projectFlag === undefined ? undefined : checkProject(projectFlag, '--project');
	const on = onOff('worktrees', worktrees);
	const pushOn = onOff('push', push);
	const patch = {
		...fields,
		...readCheckFlags(values),
		...(on === undefined ? {} : { worktrees: on }),
		...(pushOn === undefined ? {} : { push: pushOn }),
		...(kindSeats === undefined ? {} : { kindSeats: parseKindSeats(kindSeats) }),
	};
	// --project alone shows that project's workspace settings.
	return Object.keys(patch).length === 0 && project === undefined ? undefined : { project, patch };
}

/**
 * Applies a workspace patch for the project the flags name, else the working directory's. Turning
 * worktrees on checks the checkout and records its root for this machine. Returns the settings and
 * the root recorded (when it was).
 */
export async function applyWorkspaceSettings(
	ctx: CommandContext,
	given: { project: string | undefined; patch: Omit<Params<'project/settings/update'>, 'project'> },
	/** The repository's folder (`init --dir`); default the working directory. */
	dir?: string,
): Promise<{ settings: ProjectSettings; recorded?: string }> {
	const project =
		given.project ??
		(dir === undefined
			? await ctx.workingProject()
			: await workingProject(dir, explicitProject(undefined, process.env)));
	if (project === null || project === anyProject) {
		throw new BatonError(
			'invalid_input',
			'Workspaces belong to a project: run this inside its git repository, or name it with --project.',
			{ field: 'project' },
		);
	}
	const hub = await ctx.hub();
	if (Object.keys(given.patch).length === 0) {
		return { settings: await hub.request('project/settings', { project }) };
	}
	let recorded: string | undefined;
	const patch = { ...given.patch };
	const turningOn = patch.worktrees === true;
	if (turningOn || (typeof patch.base === 'string' && (dir !== undefined || (await ctx.workingRoot()) !== undefined))) {
		// inspectRepo refuses a folder outside any repository, a bare one and a machine without git.
		const repo = await inspectRepo(dir ?? process.cwd());
		if (turningOn && repo.detached) {
			throw new BatonError(
				'invalid_input',
				`${repo.root} has a detached HEAD. Check out a branch (\`git switch main\`), then turn workspaces on.`,
			);
		}
		const current = await hub.request('project/settings', { project });
		const base = patch.base === undefined ? current.base : (patch.base ?? undefined);
		await resolveBase(repo, base);
		if (turningOn) {
			recorded = repo.root;
			patch.roots = { [hostname()]: repo.root };
		}
	}
	const settings = await hub.request('project/settings/update', { project, ...patch });
	return recorded === undefined ? { settings } : { settings, recorded };
}

/**
 * Which path a completed card of a workspaces project takes, as `settings` and `init --worktrees` say
 * it: `review` is the backlog's default for new cards (a card may say otherwise; both paths are named).
 */
export function completedPath(s: ProjectSettings, review: ReviewMode): string {
	const base = s.base ?? 'the default branch';
	if (review !== 'none') {
		const who = review === 'agent' ? "a reviewing agent's" : 'your';
		const lands =
			s.land === 'none' ? 'approving lands nothing (land none: use a pull request)' : `approving lands them on ${base}`;
		return `completed cards wait for ${who} review (review ${review}); ${lands}`;
	}
	return s.land === 'none'
		? 'completed cards are done when complete (review none); their branches wait for a pull request (land none)'
		: `completed cards land on ${base} when complete (review none), and are done once landed; one that cannot land goes back to ready with why`;
}

/** The project's workspace settings as lines of `baton settings`; `review`: the backlog's default. */
export function workspaceLines(s: ProjectSettings, recorded?: string, review?: ReviewMode): string[] {
	const root = s.roots[hostname()];
	const lines = [
		`workspaces      ${s.worktrees ? 'on' : 'off'} for ${s.project}${s.worktrees ? `: each claimed card gets branch baton/<ID> from ${s.base ?? 'the default branch'}${root === undefined ? '' : ` and worktree ${root}/.baton/worktrees/<ID>`}` : ''}`,
	];
	if (s.worktrees) {
		lines.push(
			`landing         ${s.land === 'none' ? 'none: approve lands nothing (use a pull request)' : `${s.land} into the base on approve, or at complete for review none`}; push ${s.push ? 'on' : 'off'}`,
			...(review === undefined ? [] : [completedPath(s, review)]),
			`worktree setup  ${s.setup === undefined ? 'none' : `${s.setup} (time limit ${s.setupTimeoutSeconds} s)`}`,
			`checks          ${s.check === undefined ? 'none: completed work goes to review unchecked' : `${s.check} after complete, in the card's worktree (time limit ${s.checkTimeoutSeconds} s); a failure sends the card back to an agent`}`,
			`on conflict     ${s.onConflict === 'send-back' ? 'send-back: a card in review whose branch stops merging after another lands goes back to Ready at once' : 'mark: a card in review whose branch stops merging after another lands is marked (baton show, the board, VS Code)'}`,
			`WIP snapshots   kept ${plural(s.wipDays, 'day')}`,
		);
	}
	const kinds = Object.entries(s.kindSeats ?? {}).map(([k, n]) => `${k} ${n}`);
	if (s.seats !== undefined || kinds.length > 0) {
		lines.push(
			`seats           ${s.seats === undefined ? 'no limit' : `${s.seats} dispatched agents`} for ${s.project}${kinds.length === 0 ? '' : `; per kind: ${kinds.join(', ')}`}`,
		);
	}
	if (recorded !== undefined) {
		lines.push(`This machine (${hostname()}) uses the checkout ${recorded}.`);
	}
	return lines;
}
