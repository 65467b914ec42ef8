/**
 * CLI subcommands for the backlog's lifecycle policies: `reopen` (refused while dependents were built
 * on the card, unless --force), `settings` (the backlog-wide retry backoff and stall policy, and with
 * workspaceSettings.ts a project's workspaces), and the
 * per-card policy flags that create and edit share. Each is one hub request; the hub validates.
 * Must not hold policy logic of its own: core/rules/stateMachine.ts and core/backlog/index.ts decide.
 */
import { stateWord } from '../../core/rules/claimable';
import { plural } from '../../core/plural';
import { ReopenParams, type ReviewMode, SettingsUpdateParams } from '../../core/protocol';
import { type Command, type CommandContext, arg, show } from './command';
import { type FieldFlag, paramFlags } from './flags';
import { printJson } from './output';
import {
	applyWorkspaceSettings,
	checkFlags,
	readWorkspaceFlags,
	workspaceFieldFlags,
	workspaceFlags,
	workspaceLines,
} from './workspaceSettings';
import { anyProject, chosenProject, noProjectFlag } from './project';

/**
 * Flags create and edit take for a card's own policies. "default" returns the card to the backlog
 * setting (null on edit; on create it is what an absent flag means anyway).
 */
export const policyFieldFlags = {
	backoffSeconds: {
		nullWord: 'default',
		description: 'First retry delay after a fail, doubling per attempt; "default" = the backlog setting',
	},
	stallReleaseSeconds: {
		nullWord: 'default',
		description: 'Release the claim after N s without progress; 0 = never; "default" = the backlog setting',
	},
} as const satisfies Record<string, FieldFlag>;

const reopenFlags = paramFlags(ReopenParams, { reason: { value: 'TEXT' }, force: {} });

const reopen: Command = {
	name: 'reopen',
	summary: 'Return a done card to ready',
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: reopenFlags.options,
	notes:
		'A card whose dependents are claimed or done is refused (exit 1) naming them: they were built on its\n' +
		'result. With --force, claimed dependents go back to the queue and wait for it again (their holders\n' +
		"are told on their next call), and done ones get a 'built on a card that was reopened' entry in their history.",
	async run(ctx) {
		const params = reopenFlags.read(ctx.values);
		const hub = await ctx.hub();
		const r = await hub.request('card/reopen', { cardId: arg(ctx, 0), ...params });
		if (ctx.json) {
			printJson(ctx.output, r);
			return 0;
		}
		const lines = [`${r.card.id} is ${stateWord(r.card, Date.now())}: ${r.card.title}`];
		if (r.requeued !== undefined) {
			lines.push(`Claims ended (waiting for ${r.card.id} again): ${r.requeued.join(', ')}`);
		}
		if (r.flagged !== undefined) {
			lines.push(`Flagged as built on a reopened card: ${r.flagged.join(', ')}`);
		}
		ctx.output.out(lines.join('\n'));
		return 0;
	},
};

const settingFlags = paramFlags(SettingsUpdateParams, {
	backoffSeconds: {},
	backoffMaxSeconds: {},
	stallReleaseSeconds: {},
	review: { value: 'MODE' },
	progressEventsPerCard: { flag: 'keep-progress' },
	progressEventDays: { flag: 'progress-days' },
	agentRetentionDays: { flag: 'agent-days' },
	maxHeld: { nullWord: 'off', description: 'Refuse a claim by an agent already holding N cards; "off" = no limit' },
	agingHours: {
		value: 'H',
		nullWord: 'off',
		description: 'A ready card\'s effective priority rises by one per H hours waited; "off" (the default)',
	},
	idPrefix: {
		value: 'LETTERS',
		description:
			"Prefix of new ids (WEB-12): this folder's project's, or with --no-project the backlog's own (cards without one)",
	},
});

/** The working directory's project's workspace lines when its workspaces are on; else none. */
async function workingWorkspaceLines(ctx: CommandContext, review: ReviewMode): Promise<string[]> {
	const project = await ctx.workingProject();
	if (project === null || project === anyProject) {
		return [];
	}
	const s = await (await ctx.hub()).request('project/settings', { project });
	return s.worktrees ? workspaceLines(s, undefined, review) : [];
}

const settings: Command = {
	name: 'settings',
	summary:
		"Show or change the backlog's retry backoff, stall policy, default review and event log bounds, and a project's workspaces",
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: {
		...settingFlags.options,
		...noProjectFlag.options,
		...workspaceFlags.options,
		...workspaceFieldFlags.options,
		...checkFlags.options,
	},
	notes:
		"Settings live in the backlog, so every hub and every backup agree. A card's own --backoff-seconds or\n" +
		'--stall-release-seconds (create, edit) overrides them. The event log keeps every state change; of the\n' +
		'progress events (heartbeats that changed a progress note) it keeps the newest --keep-progress per card\n' +
		'and none older than --progress-days; the hub compacts the rest during its maintenance.\n' +
		'Workspaces (--worktrees on, run inside the repository): each claimed card of the project gets its own\n' +
		'branch baton/<ID> and worktree <repo>/.baton/worktrees/<ID>; approve lands the branch (--land).\n' +
		"--check runs in the card's worktree after complete; the card waits in review until it passes, and a\n" +
		'failure or a timeout sends it back to an agent with the output (as a failed attempt).',
	async run(ctx) {
		const { idPrefix, ...rest } = settingFlags.read(ctx.values);
		// --id-prefix is the project's: this folder's, unless --no-project or outside a repository.
		const project =
			idPrefix === undefined || noProjectFlag.read(ctx.values).noProject
				? null
				: await chosenProject(undefined, false, ctx.workingProject);
		const idProject = typeof project === 'string' && project !== anyProject ? project : undefined;
		const patch = {
			...rest,
			...(idPrefix === undefined ? {} : { idPrefix }),
			...(idProject === undefined ? {} : { idPrefixProject: idProject }),
		};
		const workspaces = readWorkspaceFlags(ctx.values);
		if (workspaces !== undefined) {
			const applied = await applyWorkspaceSettings(ctx, workspaces);
			if (Object.keys(patch).length > 0) {
				await (await ctx.hub()).request('settings/update', patch);
			}
			// Which path a completed card takes follows the backlog's default review: named with the settings.
			const { review } = ctx.json ? { review: undefined } : await (await ctx.hub()).request('settings/get', {});
			show(ctx, applied.settings, () => workspaceLines(applied.settings, applied.recorded, review).join('\n'));
			return 0;
		}
		const hub = await ctx.hub();
		const r =
			Object.keys(patch).length === 0
				? await hub.request('settings/get', {})
				: await hub.request('settings/update', patch);
		if (ctx.json) {
			printJson(ctx.output, r);
			return 0;
		}
		ctx.output.out(
			[
				`retry backoff   ${r.backoffSeconds} s, doubling per failed attempt up to ${r.backoffMaxSeconds} s`,
				`stall release   ${r.stallReleaseSeconds === 0 ? 'off' : `after ${r.stallReleaseSeconds} s without progress`}`,
				`review          ${r.review === 'none' ? 'none: complete means done' : `${r.review}, for new cards that do not say`}`,
				`progress log    the newest ${plural(r.progressEventsPerCard, 'progress event')} per card, none older than ${plural(r.progressEventDays, 'day')}`,
				`ended agents    forgotten after ${plural(r.agentRetentionDays, 'day')} (baton agents --all shows them until then)`,
				// The hub stores a prefix upper-cased (core/backlog/settings.ts): print what it stored.
				`id prefix       ${r.idPrefix}- for new cards without a project${idProject === undefined ? '' : `; ${idPrefix?.toUpperCase() ?? ''}- for ${idProject}`}`,
				`max held        ${r.maxHeld === null ? 'no limit' : `${plural(r.maxHeld, 'card')} per agent`}`,
				`aging           ${r.agingHours === null ? 'off' : `priority +1 per ${r.agingHours} h a ready card waits`}`,
				...(await workingWorkspaceLines(ctx, r.review)),
			].join('\n'),
		);
		return 0;
	},
};

export const policyCommands: readonly Command[] = [reopen, settings];
