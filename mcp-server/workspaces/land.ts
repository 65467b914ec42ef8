/**
 * Landing a card's branch on its base: the result is computed without a checkout (landCompute.ts:
 * `git merge-tree --write-tree`; rebase replays each commit through merge-tree), optionally verified
 * (the project's check on that commit, outside the repository's git queue but inside the base's
 * landing queue, so the base only moves to a commit that passed; a base moved meanwhile is landed on
 * again), then the base moves with a compare-and-swap `update-ref`. A checkout that has the base checked out (usually the user's
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
import { firstLines, git, GitFailure, gitTest, gitText, serialized, splitNul } from './git';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { refuseBaseInProgress } from './checkoutState';
import { checkLandedPaths, landedChanges, nothingToLand, refuseBatonsOwn, unseenSubmoduleFiles } from './landGuards';
import { branchExists, inspectRepo, listWorktrees, type WorktreeEntry } from './repo';
import { compute } from './landCompute';
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
	/**
	 * Checks the base's would-be commit before the base moves (the project's check on the merged tree:
	 * the base only ever moves to a commit that passed). Runs outside the repository's git queue, so
	 * claims and snapshots go on meanwhile; landings of one base wait for each other (the landing queue).
	 */
	verify?: (commit: string) => Promise<VerifyOutcome>;
	/**
	 * Runs once the landing is certain, just before the base moves to `commit` (the caller records the
	 * landing in flight, so a death between the move and its own record can be finished). Throwing
	 * stops the landing with nothing moved.
	 */
	beforeMove?: (commit: string) => Promise<void>;
}

/** What `verify` found: the commit may land, or why not (the check's command, exit and output's tail). */
export type VerifyOutcome = { ok: true } | { ok: false; message: string };

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
	/** `verify` refused the merged commit: nothing changed, the branch kept. */
	| { outcome: 'check_failed'; conflict: false; files: string[]; message: string; commit: string }
	| { outcome: 'kept'; conflict: false; mode: 'none'; head: string };

/** A landing computed and checked by the guards, not yet written: what `finish` moves the base to. */
interface Prepared {
	oldBase: string;
	newHead: string;
	files: string[];
}

/** How often a landing is computed again when its base moved while its commit was being verified. */
const verifyRounds = 5;

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
	// Every refusal is behind us: what follows moves the checkouts and the base.
	await options.beforeMove?.(newHead);
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
	if (options.verify === undefined) {
		return serialized(repo.commonDir, async () => {
			const prepared = await prepare(root, options);
			return 'outcome' in prepared ? prepared : finish(root, options, prepared);
		});
	}
	const verify = options.verify;
	// The landing queue of this base: one landing at a time computes, verifies and moves it, so a
	// landing is verified on the base as it is when it moves. Only the git steps hold the repository.
	return serialized(`land:${repo.commonDir}:${options.base}`, async (): Promise<LandResult> => {
		for (let round = 1; ; round++) {
			const prepared = await serialized(repo.commonDir, () => prepare(root, options));
			if ('outcome' in prepared) {
				return prepared;
			}
			const verdict = await verify(prepared.newHead);
			if (!verdict.ok) {
				return {
					outcome: 'check_failed',
					conflict: false,
					files: [],
					message: verdict.message,
					commit: prepared.newHead,
				};
			}
			const done = await serialized(repo.commonDir, async () =>
				(await baseHead(root, options.base)) === prepared.oldBase ? finish(root, options, prepared) : undefined,
			);
			if (done !== undefined) {
				return done;
			}
			if (round >= verifyRounds) {
				throw new BatonError(
					'conflict',
					`${options.base} moved ${verifyRounds} times while ${options.branch} was being checked to land on it; nothing was landed. Approve again when it is quieter.`,
					{ base: options.base, branch: options.branch },
				);
			}
			// Someone else (another hub, a person's commit) moved the base meanwhile: land on the new one.
		}
	});
}

async function baseHead(root: string, base: string): Promise<string> {
	return (await git(root, ['rev-parse', '--verify', '--quiet', `refs/heads/${base}`], { okCodes: [1] })).stdout.trim();
}

/**
 * The guards and the computed landing, nothing written: a result when the landing ends here (kept for
 * a pull request, a conflict), else what `finish` writes. Refusals throw.
 */
async function prepare(root: string, options: LandOptions): Promise<LandResult | Prepared> {
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
					(await git(root, ['diff-tree', '-r', '-z', '--no-renames', '--name-only', oldBase, computed.newHead])).stdout,
				);
	// A branch whose changes are all on the base already lands nothing: refused, no empty commit on the base.
	if (files.length === 0) {
		throw nothingToLand(options.branch, options.base);
	}
	return { oldBase, newHead: computed.newHead, files };
}

/** Moves the base to a prepared landing (the checkouts of the base with it), then removes the card's worktree and branch. */
async function finish(root: string, options: LandOptions, prepared: Prepared): Promise<LandResult> {
	const { oldBase, newHead, files } = prepared;
	const mode = options.mode;
	if (mode === 'none') {
		throw new BatonError('internal', 'A landing kept for a pull request has nothing to write.');
	}
	const worktrees = (await listWorktrees(root)).filter(w => !w.prunable && !w.bare);
	const cardTree = worktrees.find(w => w.branch === `refs/heads/${options.branch}`);
	const checkouts = worktrees.filter(w => w.branch === `refs/heads/${options.base}`);
	await moveBase(root, options, oldBase, newHead, files, checkouts);
	const result: LandResult = {
		outcome: 'landed',
		conflict: false,
		mode,
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
}
