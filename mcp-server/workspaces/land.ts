/**
 * Landing a card's branch on its base (issue 33): the result is computed without a checkout
 * (`git merge-tree --write-tree`; rebase replays each commit through merge-tree), then the base moves
 * with a compare-and-swap `update-ref`. A checkout that has the base checked out (usually the user's
 * own) is updated as `git merge` would update it, and only when none of the landed files is modified
 * there; other checkouts are not touched. A conflict, a dirty file or a base that moved meanwhile
 * changes nothing anywhere: never half-landed. So does a branch that would replace Baton's `.baton`
 * folder or a file the checkout does not track (an ignored `.env`), or write through a symlink there
 * (landGuards.ts), a card's folder that is no longer its worktree, a base checked out in a card's
 * worktree, a user's checkout of the base in the middle of a rebase, merge, cherry-pick, revert,
 * bisect or `git am` (checkoutState.ts: ending it would reset the base over the landing), a branch
 * with nothing to land (not reported as the base's own commit), and a hook that refuses to move the
 * base (quoted). Afterwards the card's worktree and branch are removed (mode `none` keeps them and
 * lands nothing: a pull request lands it), unless files sit in a submodule folder git does not look
 * into.
 */
import { BatonError } from '../../core/errors';
import { firstLines, git, GitFailure, gitTest, gitText, identityArgs, serialized, splitNul } from './git';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { refuseBaseInProgress } from './checkoutState';
import { checkLandedPaths, landedChanges, nothingToLand, refuseBatonsOwn, unseenSubmoduleFiles } from './landGuards';
import { branchExists, inspectRepo, listWorktrees, type WorktreeEntry } from './repo';
import { checkWorktree } from './worktreeCheck';

export type LandMode = 'squash' | 'merge' | 'rebase' | 'none';
export const landModes: readonly LandMode[] = ['squash', 'merge', 'rebase', 'none'];

export interface LandOptions {
	repo: string;
	branch: string;
	base: string;
	mode: LandMode;
	/** The squash or merge commit's message (the card id and title); a default names the branch. */
	message?: string;
}

export type LandResult =
	| {
			outcome: 'landed';
			conflict: false;
			mode: Exclude<LandMode, 'none'>;
			oldHead: string;
			/** The base's new commit (equal to oldHead when the branch had nothing the base lacks). */
			newHead: string;
			/** Paths the landing changed on the base. */
			files: string[];
			/** Checkouts of the base whose files were updated. */
			checkouts: string[];
			removedWorktree: string | undefined;
			deletedBranch: boolean;
			/** Why the worktree or branch could not be removed after landing (the landing itself stands). */
			cleanupError?: string;
			/**
			 * Files in the card's worktree inside submodule folders git does not look into: not landed, so
			 * the worktree and branch are kept for a person to see them.
			 */
			unseen?: string[];
	  }
	| { outcome: 'conflict'; conflict: true; files: string[]; message: string }
	| { outcome: 'kept'; conflict: false; mode: 'none'; head: string };

interface Computed {
	newHead: string;
	conflictFiles: string[];
}

async function mergeTree(root: string, ours: string, theirs: string): Promise<{ tree: string; conflicts: string[] }> {
	const r = await git(root, ['merge-tree', '--write-tree', '--name-only', '-z', '--no-messages', ours, theirs], {
		okCodes: [1],
	}).catch((e: unknown) => {
		if (!(e instanceof GitFailure)) {
			throw e;
		}
		// Only an older git's refusal of the option is about the version; anything else is quoted as is.
		throw /usage: git merge-tree|unknown option|unrecognized argument/i.test(e.stderr)
			? new BatonError(
					'unavailable',
					`Landing needs git 2.38 or newer (\`git merge-tree --write-tree\`); git said: ${firstLines(e.stderr, 1)}. Update git, then approve again.`,
				)
			: new BatonError(
					'internal',
					`git could not merge ${ours} and ${theirs}: ${firstLines(e.stderr, 4)}. Nothing was landed.`,
				);
	});
	const [tree = '', ...rest] = splitNul(r.stdout);
	return { tree, conflicts: r.code === 1 ? [...new Set(rest.filter(f => f !== ''))] : [] };
}

async function commitTree(
	root: string,
	tree: string,
	parents: string[],
	message: string,
	env?: Record<string, string>,
): Promise<string> {
	const args = [...(await identityArgs(root)), 'commit-tree', tree, ...parents.flatMap(p => ['-p', p]), '-F', '-'];
	return gitText(root, args, env === undefined ? { input: message } : { input: message, env });
}

/**
 * Replays `oldBase..tip` (merges skipped, as `git rebase` does) onto `oldBase`. Each commit C is a
 * three-way merge of the current head and C with C's parent as the base: merge-tree in git 2.39 has no
 * --merge-base, so two scratch commits that share a root of C's parent's tree make it the merge base.
 * Commits that become empty are dropped; authors, dates and messages are kept.
 */
async function replay(root: string, oldBase: string, tip: string): Promise<Computed> {
	if (await gitTest(root, ['merge-base', '--is-ancestor', oldBase, tip])) {
		return { newHead: tip, conflictFiles: [] };
	}
	const commits = (await gitText(root, ['rev-list', '--reverse', '--no-merges', `${oldBase}..${tip}`]))
		.split('\n')
		.filter(c => c !== '');
	let head = oldBase;
	for (const c of commits) {
		const [parentTree = '', ownTree = '', headTree = ''] = (
			await gitText(root, ['rev-parse', `${c}^^{tree}`, `${c}^{tree}`, `${head}^{tree}`])
		).split('\n');
		const scratchBase = await commitTree(root, parentTree, [], 'baton rebase scratch');
		const ours = await commitTree(root, headTree, [scratchBase], 'baton rebase scratch');
		const theirs = await commitTree(root, ownTree, [scratchBase], 'baton rebase scratch');
		const merged = await mergeTree(root, ours, theirs);
		if (merged.conflicts.length > 0) {
			return { newHead: '', conflictFiles: merged.conflicts };
		}
		if (merged.tree === headTree) {
			continue;
		}
		const [name = '', email = '', date = '', ...body] = (
			await gitText(root, ['log', '-1', '--date=raw', '--format=%an%x00%ae%x00%ad%x00%B', c])
		).split('\0');
		head = await commitTree(root, merged.tree, [head], body.join('\0'), {
			GIT_AUTHOR_NAME: name,
			GIT_AUTHOR_EMAIL: email,
			GIT_AUTHOR_DATE: date,
		});
	}
	return { newHead: head, conflictFiles: [] };
}

async function compute(root: string, options: LandOptions, oldBase: string, tip: string): Promise<Computed> {
	if (options.mode === 'rebase') {
		return replay(root, oldBase, tip);
	}
	const merged = await mergeTree(root, oldBase, tip);
	if (merged.conflicts.length > 0) {
		return { newHead: '', conflictFiles: merged.conflicts };
	}
	if (options.mode === 'squash') {
		return {
			newHead: await commitTree(root, merged.tree, [oldBase], options.message ?? `Land ${options.branch} (squashed)`),
			conflictFiles: [],
		};
	}
	const message = options.message ?? `Merge branch '${options.branch}' into ${options.base}`;
	return { newHead: await commitTree(root, merged.tree, [oldBase, tip], message), conflictFiles: [] };
}

/** Paths with uncommitted changes or untracked files in a checkout (without taking its index lock). */
async function dirtyPaths(worktree: string): Promise<string[]> {
	const out = (
		await git(worktree, ['status', '--porcelain', '-z', '--untracked-files=all', '--no-renames'], {
			env: { GIT_OPTIONAL_LOCKS: '0' },
		})
	).stdout;
	return splitNul(out).map(entry => entry.slice(3));
}

function listSome(files: readonly string[]): string {
	return files.length <= 5 ? files.join(', ') : `${files.slice(0, 5).join(', ')} and ${files.length - 5} more`;
}

/** Updates checkouts of the base from oldBase to newHead as `git merge` would; undoes them all on a refusal. */
async function updateCheckouts(checkouts: readonly WorktreeEntry[], oldBase: string, newHead: string): Promise<void> {
	const done: string[] = [];
	try {
		for (const c of checkouts) {
			await git(c.path, ['read-tree', '-m', '-u', oldBase, newHead]);
			done.push(c.path);
		}
	} catch (e) {
		await rollBack(done, newHead, oldBase);
		if (e instanceof GitFailure) {
			throw new BatonError(
				'conflict',
				`A checkout of the base refused the landed files: ${firstLines(e.stderr, 2)}. Nothing was landed.`,
			);
		}
		throw e;
	}
}

async function rollBack(paths: readonly string[], from: string, to: string): Promise<void> {
	for (const p of [...paths].reverse()) {
		await git(p, ['read-tree', '-m', '-u', from, to]);
	}
}

/**
 * Why `update-ref` refused to move the base: it moved meanwhile (approve again), or a hook (the
 * repository's reference-transaction hook) or git itself refused, quoted in its own words.
 */
async function refusedUpdate(root: string, options: LandOptions, oldBase: string, e: GitFailure): Promise<BatonError> {
	const now = (
		await git(root, ['rev-parse', '--verify', '--quiet', `refs/heads/${options.base}`], { okCodes: [1] })
	).stdout.trim();
	if (now !== oldBase) {
		return new BatonError(
			'conflict',
			`${options.base} moved while ${options.branch} was landing; nothing was landed. Approve again.`,
		);
	}
	const words = e.stderr.trim().slice(-1500);
	const byHook = /hook/i.test(e.stderr);
	return new BatonError(
		'conflict',
		byHook
			? `A git hook of ${root} refused to move ${options.base} to land ${options.branch}; it said: ${words} Nothing was landed. Fix what the hook reports (or the hook), then approve again.`
			: `git refused to move ${options.base} to land ${options.branch}: ${words} Nothing was landed.`,
		{ base: options.base, branch: options.branch, output: words, hook: byHook },
	);
}

/**
 * Writes a computed landing: refuses (nothing changed) when a checkout of the base has its own changes
 * to landed files, or untracked files where they go; updates those checkouts; then moves the base with
 * a compare-and-swap, undoing the checkouts when git refuses.
 */
async function moveBase(
	root: string,
	options: LandOptions,
	oldBase: string,
	newHead: string,
	files: readonly string[],
	checkouts: readonly WorktreeEntry[],
): Promise<void> {
	const landed = new Set(files);
	const changes = await landedChanges(root, oldBase, newHead);
	refuseBatonsOwn(options.branch, changes);
	for (const c of checkouts) {
		// A stat-only change (a file touched, not edited) must not count as modified.
		await git(c.path, ['update-index', '-q', '--refresh'], { okCodes: [1] });
		const blocked = (await dirtyPaths(c.path)).filter(f => landed.has(f));
		if (blocked.length > 0) {
			throw new BatonError(
				'conflict',
				`${c.path} has ${options.base} checked out with changes to files this landing changes: ${listSome(blocked)}. Commit or stash them there, then approve again; nothing was landed.`,
				{ files: blocked },
			);
		}
		await checkLandedPaths(c.path, options.branch, changes);
	}
	await updateCheckouts(checkouts, oldBase, newHead);
	try {
		await git(root, [
			'update-ref',
			'-m',
			`baton: land ${options.branch} (${options.mode})`,
			`refs/heads/${options.base}`,
			newHead,
			oldBase,
		]);
	} catch (e) {
		await rollBack(
			checkouts.map(c => c.path),
			newHead,
			oldBase,
		);
		if (!(e instanceof GitFailure)) {
			throw e;
		}
		throw await refusedUpdate(root, options, oldBase, e);
	}
}

/**
 * Lands `branch` on `base` with `mode` (see the module comment). Returns `{conflict: true, files}` when
 * the branch conflicts with the base (nothing changed); refuses with a `conflict` BatonError, nothing
 * changed, when a checkout of the base has modified or untracked copies of landed files, or when the
 * card's worktree has uncommitted changes (landing would drop them).
 */
export async function land(options: LandOptions): Promise<LandResult> {
	if (!landModes.includes(options.mode)) {
		throw new BatonError(
			'invalid_input',
			`Landing mode "${options.mode}" is unknown: use squash, merge, rebase or none.`,
		);
	}
	if (options.branch === options.base) {
		throw new BatonError('invalid_input', `A branch cannot land on itself (${options.branch}). Name the base branch.`);
	}
	const repo = await inspectRepo(options.repo);
	const root = repo.root;
	for (const name of [options.branch, options.base]) {
		if (!(await branchExists(root, name))) {
			throw new BatonError('not_found', `Branch "${name}" does not exist in ${root}; nothing was landed.`);
		}
	}
	return serialized(repo.commonDir, async (): Promise<LandResult> => {
		const [oldBase = '', tip = ''] = (
			await gitText(root, ['rev-parse', `refs/heads/${options.base}`, `refs/heads/${options.branch}`])
		).split('\n');
		const listed = await listWorktrees(root);
		const worktrees = listed.filter(w => !w.prunable && !w.bare);
		const cardTree = worktrees.find(w => w.branch === `refs/heads/${options.branch}`);
		if (options.mode === 'none') {
			return { outcome: 'kept', conflict: false, mode: 'none', head: tip };
		}
		// The card's folder must still be its worktree (git lists it as prunable when its .git is gone):
		// else its status would be the main checkout's, and its removal would take the agent's files unseen.
		const cardEntry = listed.find(w => w.branch === `refs/heads/${options.branch}`);
		if (cardEntry !== undefined && existsSync(cardEntry.path)) {
			await checkWorktree(cardEntry.path, { root, branch: options.branch });
		}
		const batonTrees = `${path.join(root, '.baton', 'worktrees')}${path.sep}`;
		const intoCard = worktrees.find(w => w.branch === `refs/heads/${options.base}` && w.path.startsWith(batonTrees));
		if (intoCard !== undefined) {
			throw new BatonError(
				'invalid_input',
				`${options.base} is checked out in ${intoCard.path}, a card's worktree: landing ${options.branch} there would write into another card's work. Give the card a base that is not a card's branch (\`baton edit CARD --base BRANCH\`); nothing was landed.`,
				{ base: options.base, path: intoCard.path },
			);
		}
		// The user's own checkouts (never a card's worktree, whose .git the agent owns): one in the middle of a
		// rebase or merge of the base would reset or commit over what lands now.
		await refuseBaseInProgress(
			worktrees.filter(w => !w.path.startsWith(batonTrees)),
			options.base,
		);
		if (cardTree !== undefined) {
			const dirty = await dirtyPaths(cardTree.path);
			if (dirty.length > 0) {
				throw new BatonError(
					'conflict',
					`The worktree of ${options.branch} has uncommitted changes (${listSome(dirty)}); landing would leave them behind. Commit them (complete does), then approve again.`,
					{ files: dirty },
				);
			}
		}
		if (await gitTest(root, ['merge-base', '--is-ancestor', tip, oldBase])) {
			throw nothingToLand(options.branch, options.base);
		}
		const computed = await compute(root, options, oldBase, tip);
		if (computed.conflictFiles.length > 0) {
			const files = computed.conflictFiles;
			return {
				outcome: 'conflict',
				conflict: true,
				files,
				message: `rebase \`${options.branch}\` on \`${options.base}\`: conflicts in ${listSome(files)}`,
			};
		}
		const files =
			computed.newHead === oldBase
				? []
				: splitNul(
						(await git(root, ['diff-tree', '-r', '-z', '--no-renames', '--name-only', oldBase, computed.newHead]))
							.stdout,
					);
		// A branch whose changes are all on the base already lands nothing: refused, no empty commit on the base.
		if (files.length === 0) {
			throw nothingToLand(options.branch, options.base);
		}
		const newHead = computed.newHead;
		const checkouts = worktrees.filter(w => w.branch === `refs/heads/${options.base}`);
		await moveBase(root, options, oldBase, newHead, files, checkouts);
		const result: LandResult = {
			outcome: 'landed',
			conflict: false,
			mode: options.mode,
			oldHead: oldBase,
			newHead,
			files,
			checkouts: checkouts.map(c => c.path),
			removedWorktree: undefined,
			deletedBranch: false,
		};
		const unseen = cardTree === undefined ? [] : await unseenSubmoduleFiles(cardTree.path);
		if (unseen.length > 0) {
			// Removing the worktree would delete them: keep it and the branch, and say why.
			result.unseen = unseen;
			result.cleanupError = `${cardTree?.path ?? ''} keeps files inside submodule folders that git does not look into (${listSome(unseen)}); they were not landed, and the worktree and ${options.branch} are kept so they are not lost.`;
			return result;
		}
		try {
			if (cardTree !== undefined) {
				await git(root, ['worktree', 'remove', cardTree.path]);
				result.removedWorktree = cardTree.path;
			}
			await git(root, ['branch', '-D', '--quiet', options.branch]);
			result.deletedBranch = true;
		} catch (e) {
			if (!(e instanceof GitFailure)) {
				throw e;
			}
			result.cleanupError = firstLines(e.stderr, 2);
		}
		return result;
	});
}
