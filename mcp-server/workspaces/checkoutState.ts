/**
 * Whether a checkout of the base is in the middle of a git operation (a rebase, merge, cherry-pick,
 * revert, bisect or `git am`), read from its git dir: `rebase-merge/`, `rebase-apply/` (with
 * `applying` for `am`), `MERGE_HEAD`, `CHERRY_PICK_HEAD`, `REVERT_HEAD`, `BISECT_LOG`, each found with
 * `git rev-parse --git-path`. Landing must not move a base such an operation will reset or commit on
 * top of: `git rebase --abort` resets the branch to where the rebase began, so work landed meanwhile
 * would survive only in the reflog. Also which branch the operation is about (a rebase or a bisect
 * detaches HEAD; its branch is in `head-name` or `BISECT_START`).
 * Must not: change anything, or run git in a card's worktree (the agent owns its `.git` file; the
 * caller passes only the user's own checkouts).
 */
import { readFile, stat } from 'node:fs/promises';

import { BatonError } from '../../core/errors';
import { git } from './git';
import type { WorktreeEntry } from './repo';

export type GitOperation = 'rebase' | 'merge' | 'cherry-pick' | 'revert' | 'bisect' | 'am';

export interface OperationInProgress {
	operation: GitOperation;
	/** The branch the operation is about (`refs/heads/…`), when git recorded one. */
	branch: string | undefined;
}

/** The command that ends each operation, as the refusal names it. */
const howToEnd: Record<GitOperation, string> = {
	rebase: '`git rebase --continue` or `git rebase --abort`',
	merge: '`git merge --continue` (after resolving) or `git merge --abort`',
	'cherry-pick': '`git cherry-pick --continue` or `git cherry-pick --abort`',
	revert: '`git revert --continue` or `git revert --abort`',
	bisect: '`git bisect reset`',
	am: '`git am --continue` or `git am --abort`',
};

const markers = [
	'rebase-merge',
	'rebase-apply',
	'rebase-apply/applying',
	'MERGE_HEAD',
	'CHERRY_PICK_HEAD',
	'REVERT_HEAD',
	'BISECT_LOG',
] as const;

async function exists(p: string): Promise<boolean> {
	return stat(p).then(
		() => true,
		() => false,
	);
}

async function firstLine(p: string): Promise<string | undefined> {
	const text = await readFile(p, 'utf8').catch(() => undefined);
	const line = text?.split('\n')[0]?.trim();
	return line === undefined || line === '' ? undefined : line;
}

/** `refs/heads/NAME` for a recorded branch name (head-name holds a ref, BISECT_START a name or a commit). */
function asBranchRef(name: string | undefined): string | undefined {
	if (name === undefined || name === 'detached HEAD') {
		return undefined;
	}
	return name.startsWith('refs/heads/') ? name : `refs/heads/${name}`;
}

/**
 * The operation `checkout` is in the middle of, or undefined. `attached` is the branch its HEAD is on
 * (from `git worktree list`): merge, cherry-pick, revert and am keep HEAD on the branch they change.
 */
export async function operationInProgress(
	checkout: string,
	attached: string | undefined,
): Promise<OperationInProgress | undefined> {
	const out = await git(checkout, ['rev-parse', '--path-format=absolute', ...markers.flatMap(m => ['--git-path', m])], {
		env: { GIT_OPTIONAL_LOCKS: '0' },
	});
	const [
		rebaseMerge = '',
		rebaseApply = '',
		applying = '',
		mergeHead = '',
		pickHead = '',
		revertHead = '',
		bisectLog = '',
	] = out.stdout.split('\n');
	if (await exists(rebaseMerge)) {
		return { operation: 'rebase', branch: asBranchRef(await firstLine(`${rebaseMerge}/head-name`)) ?? attached };
	}
	if (await exists(rebaseApply)) {
		if (await exists(applying)) {
			return { operation: 'am', branch: attached };
		}
		return { operation: 'rebase', branch: asBranchRef(await firstLine(`${rebaseApply}/head-name`)) ?? attached };
	}
	if (await exists(mergeHead)) {
		return { operation: 'merge', branch: attached };
	}
	if (await exists(pickHead)) {
		return { operation: 'cherry-pick', branch: attached };
	}
	if (await exists(revertHead)) {
		return { operation: 'revert', branch: attached };
	}
	if (await exists(bisectLog)) {
		const start = await firstLine(bisectLog.replace(/BISECT_LOG$/, 'BISECT_START'));
		// BISECT_START holds the branch bisect began on, or a commit id when HEAD was detached.
		const named = start !== undefined && !/^[0-9a-f]{40,64}$/.test(start) ? asBranchRef(start) : undefined;
		return { operation: 'bisect', branch: named ?? attached };
	}
	return undefined;
}

/**
 * Throws a `conflict` BatonError (nothing changed) when one of `checkouts` (the user's own, never a
 * card's worktree) is in the middle of an operation on `base`, naming the operation and the command
 * that ends it.
 */
export async function refuseBaseInProgress(checkouts: readonly WorktreeEntry[], base: string): Promise<void> {
	const ref = `refs/heads/${base}`;
	for (const c of checkouts) {
		const op = await operationInProgress(c.path, c.branch);
		if (op?.branch !== ref) {
			continue;
		}
		const what = op.operation === 'am' ? '`git am`' : op.operation;
		throw new BatonError(
			'conflict',
			`${base}'s checkout ${c.path} is in the middle of a ${what}: finish it with ${howToEnd[op.operation]} (in ${c.path}), then approve again. Landing now would move ${base} under it (ending it could reset ${base} and drop the landed work); nothing was landed.`,
			{ path: c.path, base, operation: op.operation },
		);
	}
}
