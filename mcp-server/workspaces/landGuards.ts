/**
 * What landing checks before it writes a card's branch into a checkout of the base (usually the
 * user's own): no landed path may replace a file or folder git does not track there (an ignored
 * `.env`, `node_modules/`, Baton's `.baton/` with every live worktree in it), pass through a symlink
 * or a file on disk, or be Baton's own `.baton` entries; and, before the card's worktree is removed,
 * which files sit inside submodule folders git does not look into (an uninitialised submodule), so
 * they are reported rather than deleted unseen. Also the refusal of a branch with nothing to land.
 * Must not: change anything (land.ts does, after these checks pass).
 */
import { lstat, readdir } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';

import { BatonError } from '../../core/errors';
import { git, splitNul } from './git';

/** One path a landing changes, as `git diff-tree --name-status` gives it. */
export interface LandedChange {
	status: string;
	path: string;
}

async function lstatOf(p: string): Promise<Stats | undefined> {
	try {
		return await lstat(p);
	} catch (e) {
		const code = (e as NodeJS.ErrnoException).code;
		if (code === 'ENOENT' || code === 'ENOTDIR') {
			return undefined;
		}
		throw e;
	}
}

function listSome(files: readonly string[]): string {
	return files.length <= 5 ? files.join(', ') : `${files.slice(0, 5).join(', ')} and ${files.length - 5} more`;
}

/** The paths from `oldBase` to `newHead`, with their kind of change (A, M, D, T). */
export async function landedChanges(root: string, oldBase: string, newHead: string): Promise<LandedChange[]> {
	const fields = splitNul(
		(await git(root, ['diff-tree', '-r', '-z', '--no-renames', '--name-status', oldBase, newHead])).stdout,
	);
	const out: LandedChange[] = [];
	for (let i = 0; i + 1 < fields.length; i += 2) {
		out.push({ status: fields[i] ?? '', path: fields[i + 1] ?? '' });
	}
	return out;
}

/**
 * The refusal of a branch that changes nothing on its base (no commits of its own, or only changes the
 * base has already): landing it would report the base's own commit as the landing. `data.nothingToLand`
 * lets the hub name the card and what to do with it.
 */
export function nothingToLand(branch: string, base: string): BatonError {
	return new BatonError(
		'invalid_transition',
		`${branch} has no change against ${base} (no commits of its own, or only changes ${base} has already): nothing to land. Nothing was changed.`,
		{ branch, base, nothingToLand: true },
	);
}

/** True for `.baton` itself and what lies under `.baton/worktrees/`: Baton's, never a branch's. */
export function isBatonsOwn(file: string): boolean {
	return file === '.baton' || file === '.baton/worktrees' || file.startsWith('.baton/worktrees/');
}

/**
 * Throws a `conflict` BatonError (nothing changed) when `changes` put anything at `.baton` or under
 * `.baton/worktrees/`, whether or not the base is checked out anywhere.
 */
export function refuseBatonsOwn(branch: string, changes: readonly LandedChange[]): void {
	const own = changes.filter(c => isBatonsOwn(c.path)).map(c => c.path);
	if (own.length > 0) {
		throw new BatonError(
			'conflict',
			`${branch} commits ${listSome(own)}, where Baton keeps the card worktrees of this repository; landing it would replace them. Remove it from the branch (\`git rm -r --cached .baton\` in its worktree, then commit), then approve again; nothing was landed.`,
			{ files: own },
		);
	}
}

/**
 * Throws a `conflict` BatonError (nothing changed) when landing `changes` into `checkout` (which has
 * the base checked out at oldBase, its modified files already refused by land.ts) would overwrite or
 * delete something git does not track there, or write through a symlink or a file on disk.
 */
export async function checkLandedPaths(
	checkout: string,
	branch: string,
	changes: readonly LandedChange[],
): Promise<void> {
	const deleted = new Set(changes.filter(c => c.status === 'D').map(c => c.path));
	const blocked: string[] = [];
	const throughLinks: string[] = [];
	for (const c of changes) {
		if (c.status === 'D') {
			continue;
		}
		const parts = c.path.split('/');
		let prefix = '';
		let ok = true;
		for (const part of parts.slice(0, -1)) {
			prefix = prefix === '' ? part : `${prefix}/${part}`;
			const s = await lstatOf(path.join(checkout, prefix));
			if (s === undefined) {
				break;
			}
			if (!s.isDirectory() && !deleted.has(prefix)) {
				ok = false;
				break;
			}
		}
		if (!ok) {
			throughLinks.push(c.path);
			continue;
		}
		// Added: nothing may be there yet (git status lists untracked files, not ignored ones or folders of them).
		if (c.status.startsWith('A') && (await lstatOf(path.join(checkout, c.path))) !== undefined) {
			blocked.push(c.path);
		}
	}
	if (throughLinks.length > 0) {
		throw new BatonError(
			'conflict',
			`${checkout} has a symlink or a file where ${branch} puts a folder, for ${listSome(throughLinks)}; landing would write through it. Move it away there, then approve again; nothing was landed.`,
			{ files: throughLinks },
		);
	}
	if (blocked.length > 0) {
		throw new BatonError(
			'conflict',
			`${checkout} has untracked or ignored files or folders where ${branch} adds ${listSome(blocked)} (an ignored .env or node_modules/ would be overwritten or deleted). Move them away there (or keep them and drop them from the branch), then approve again; nothing was landed.`,
			{ files: blocked },
		);
	}
}

/**
 * Files inside the submodule folders of `worktree` that git does not look into (the submodule is not
 * initialised there: no `.git` in its folder), relative to the worktree. `git add -A` skips them, so a
 * commit, a snapshot or a landing would leave them behind.
 */
export async function unseenSubmoduleFiles(worktree: string): Promise<string[]> {
	const out = await git(worktree, ['ls-files', '-s', '-z'], { okCodes: [128] });
	const gitlinks = splitNul(out.stdout)
		.filter(e => e.startsWith('160000 '))
		.map(e => e.slice(e.indexOf('\t') + 1));
	const found: string[] = [];
	for (const link of gitlinks) {
		const dir = path.join(worktree, link);
		const s = await lstatOf(dir);
		if (s === undefined || !s.isDirectory() || (await lstatOf(path.join(dir, '.git'))) !== undefined) {
			continue;
		}
		const entries = await readdir(dir, { recursive: true, withFileTypes: true });
		for (const e of entries) {
			if (!e.isDirectory()) {
				found.push(path.relative(worktree, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
			}
		}
	}
	return found.sort();
}
