/**
 * The project's check run on a commit no branch holds yet: what a landing would move the base to (the
 * branch merged onto the base as it is now). A detached worktree of that commit in a temporary folder
 * outside the repository, the check run there with its time limit (worktreeSetup.ts's runner, its
 * process group killed at the limit), the worktree removed whatever happened. Must not: move a ref,
 * touch the user's checkouts or a card's worktree, or decide what a failure does to the card (the
 * hub's landing does).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { git, serialized } from './git';
import { inspectRepo } from './repo';
import { type SetupOutcome, runWorktreeCommand } from './worktreeSetup';

/** Runs `command` in a detached checkout of `commit` of the repository at `repoRoot`. */
export async function checkCommit(
	repoRoot: string,
	commit: string,
	command: string,
	timeoutMs: number,
	signal?: AbortSignal,
): Promise<{ outcome: SetupOutcome; output: string; stopped: boolean }> {
	const repo = await inspectRepo(repoRoot);
	const folder = path.join(mkdtempSync(path.join(tmpdir(), 'baton-land-check-')), 'tree');
	await serialized(repo.commonDir, () => git(repo.root, ['worktree', 'add', '--detach', '--quiet', folder, commit]));
	try {
		return await runWorktreeCommand(command, folder, timeoutMs, signal);
	} finally {
		await serialized(repo.commonDir, () =>
			git(repo.root, ['worktree', 'remove', '--force', folder], { okCodes: [128] }),
		).catch(() => undefined);
		rmSync(path.dirname(folder), { recursive: true, force: true });
		await serialized(repo.commonDir, () => git(repo.root, ['worktree', 'prune'])).catch(() => undefined);
	}
}
