/**
 * `baton gc [--dry-run] [--force] [--project ID]`: the hub removes the worktrees and
 * branches of landed or deleted cards and WIP refs older than the project's wipDays, in the repository
 * of the working directory (else the project's repository on this machine, else every one the hub
 * knows here). `--dry-run` prints exactly the lines gc would print as deleted. The rules of what is
 * safe are the hub's (workspaces/gc.ts), and so is the refusal of --force from inside a coding agent;
 * this file only asks and prints.
 */
import { findGitRepo } from '../../core/client/gitRepo';
import { type Result, WorkspaceGcParams } from '../../core/protocol';
import { type Command, show } from './command';
import { paramFlags } from './flags';

type GcReport = Result<'workspace/gc'>['repos'][number];
type GcItem = GcReport['items'][number];

const gcFlags = paramFlags(WorkspaceGcParams, {
	dryRun: { description: 'Print what gc would delete, and what it keeps and why; delete nothing' },
	force: { description: 'Also delete worktrees with unsnapshotted changes and branches with unlanded commits' },
	project: { value: 'ID', description: "This project's repository on this machine" },
});

/** One line per item, the same for `would delete` and `deleted`, so a dry run reads exactly as gc's deletions. */
export function itemLine(item: GcItem): string {
	return `${item.kind.padEnd(8)} ${item.target}${item.cardId === undefined ? '' : ` (card ${item.cardId})`}`;
}

/** The human report of one repository: what goes (or went), what stays and why, what gc skipped. */
export function gcReportText(r: GcReport, dryRun: boolean): string {
	const gone = dryRun ? r.items : r.deleted;
	const lines = [
		`${r.root}: ${dryRun ? 'would delete' : 'deleted'} ${gone.length}, kept ${r.kept.length}${dryRun ? '' : `, skipped ${r.skipped.length}`}`,
		...gone.map(i => `  ${dryRun ? 'would delete' : 'deleted'} ${itemLine(i)}: ${i.reason}`),
		...(dryRun ? [] : r.skipped.map(i => `  skipped ${itemLine(i)}: ${i.why}`)),
		...r.kept.map(i => `  kept ${itemLine(i)}: ${i.reason}`),
	];
	return lines.join('\n');
}

export const gcCommand: Command = {
	name: 'gc',
	summary: 'Remove worktrees and branches of landed or deleted cards, and old WIP snapshots',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: gcFlags.options,
	notes:
		"Works in the repository of the working directory, else --project's repository on this machine, else\n" +
		'every repository with workspaces on here. Never deletes a worktree whose changes are not snapshotted,\n' +
		'nor a branch with commits not landed on its base, unless --force. The hub runs the safe part itself\n' +
		"during its maintenance. WIP snapshots older than the project's wipDays (default 30) go; a live\n" +
		"card's newest stays.",
	async run(ctx) {
		const p = gcFlags.read(ctx.values);
		const dryRun = p.dryRun === true;
		const root = p.project === undefined ? (await findGitRepo(process.cwd()))?.root : undefined;
		// Removing worktrees of big repositories takes git a while: wait up to 10 minutes, not the usual 15 s.
		const r = await (
			await ctx.hub()
		).request('workspace/gc', { ...p, ...(root === undefined ? {} : { root }) }, { timeoutMs: 600_000 });
		show(ctx, r, () =>
			r.repos.length === 0
				? 'No repository has workspaces on this machine: nothing to clean.'
				: r.repos.map(repo => gcReportText(repo, dryRun)).join('\n'),
		);
		return 0;
	},
};
