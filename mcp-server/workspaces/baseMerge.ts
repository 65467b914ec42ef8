/**
 * Conflicts an agent can fix with file tools alone. When a claimed card's branch no longer merges
 * into its base (the base moved under it: a landing came back for a conflict), `startBaseMerge` merges
 * the base into the branch in the card's worktree and stops there, so the files hold git's conflict
 * markers and the next agent resolves them by editing (no git command needed); the commit that
 * `complete` makes concludes the merge. `markedFiles` is what complete refuses on: files of that merge
 * still holding a marker line. A worktree with uncommitted work (a restored snapshot) is left as it is:
 * a merge over it could not be undone cleanly.
 * Must not: commit, move the base, or touch a worktree whose branch merges cleanly (its landing will).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { git, gitTest, splitNul } from './git';

/** A line git writes around a conflict: `<<<<<<< ours`, `=======`, `>>>>>>> theirs` (and `|||||||` in diff3). */
const markerLine = /^(<{7}|>{7})( |$)/m;

/** The worktree's merge in progress (MERGE_HEAD), when there is one. */
async function merging(worktree: string): Promise<boolean> {
	return gitTest(worktree, ['rev-parse', '-q', '--verify', 'MERGE_HEAD']);
}

/**
 * Merges `base` into the worktree's branch when the branch does not merge cleanly into it, leaving the
 * conflict markers in place. Returns the conflicted files (relative to the worktree), or undefined when
 * there was nothing to do: the branch has the base already, merges cleanly, a merge is already under
 * way (its files are returned again), or the worktree has uncommitted changes.
 */
export async function startBaseMerge(worktree: string, base: string): Promise<string[] | undefined> {
	if (await merging(worktree)) {
		return unmergedFiles(worktree);
	}
	const baseRef = `refs/heads/${base}`;
	if (await gitTest(worktree, ['merge-base', '--is-ancestor', baseRef, 'HEAD'])) {
		return undefined;
	}
	// merge-tree (git 2.38+) answers without touching the worktree: 0 clean, 1 conflicts.
	const trial = await git(worktree, ['merge-tree', '--write-tree', '--no-messages', 'HEAD', baseRef], {
		okCodes: [1],
	});
	if (trial.code === 0) {
		return undefined;
	}
	const status = await git(worktree, ['status', '--porcelain', '-z', '--untracked-files=all']);
	if (status.stdout !== '') {
		return undefined;
	}
	const merged = await git(
		worktree,
		['-c', 'merge.conflictStyle=merge', 'merge', '--no-ff', '--no-commit', '--quiet', baseRef],
		{ okCodes: [1] },
	);
	if (merged.code === 0) {
		return undefined; // merge-tree said it conflicts; the real merge agreed it does not
	}
	return unmergedFiles(worktree);
}

/** The files the worktree's merge left unmerged (git's index still has their conflict stages). */
async function unmergedFiles(worktree: string): Promise<string[]> {
	const out = await git(worktree, ['diff', '--name-only', '-z', '--diff-filter=U']);
	return [...new Set(splitNul(out.stdout))].sort();
}

/**
 * The files of the worktree's merge in progress that still hold a conflict marker line; [] when no
 * merge is under way or every conflicted file was resolved.
 */
export async function markedFiles(worktree: string): Promise<string[]> {
	if (!(await merging(worktree))) {
		return [];
	}
	const marked: string[] = [];
	for (const file of await unmergedFiles(worktree)) {
		const text = await readFile(path.join(worktree, file), 'utf8').catch(() => '');
		if (markerLine.test(text)) {
			marked.push(file);
		}
	}
	return marked;
}
