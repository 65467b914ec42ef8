/**
 * A card's worktree: `ensureWorktree` gives card X the folder `<repo>/.baton/worktrees/X`
 * on branch `baton/X` (created from the base, or continued when the card already has one), marks the
 * branch as Baton's (`git config branch.baton/X.batonCard X`), keeps `/.baton/` out of git's view via
 * .git/info/exclude, copies the include files and runs the setup command; `removeWorktree` takes it
 * away again. Steps that change shared metadata run in the repository's queue; the checkout of the
 * files runs outside it, so twenty claims at once do not wait on each other's checkouts.
 * Must not: delete a folder or branch it did not make, or touch the user's checkout.
 */
import { existsSync } from 'node:fs';
import { mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';

import { BatonError } from '../../core/errors';
import { firstLines, git, GitFailure, gitText, serialized } from './git';
import {
	branchExists,
	cardBranch,
	excludeBatonFolder,
	inspectRepo,
	listWorktrees,
	ownerKey,
	resolveBase,
	worktreePath,
	type RepoInfo,
} from './repo';
import { applyWip, type WipSnapshot } from './wip';
import { checkBatonFolders, checkWorktree, repoHooksPath } from './worktreeCheck';
import { copyIncludedFiles, runSetupCommand, type SetupOutcome } from './worktreeSetup';

export interface EnsureWorktreeOptions {
	/** Any folder inside the repository (its main checkout or a linked worktree). */
	repo: string;
	cardId: string;
	/** The branch to start from; default the repository's default branch. Ignored when the card's branch exists. */
	base?: string;
	/** Run in a fresh worktree through the shell (e.g. `npm ci`). */
	setupCommand?: string;
	/** Time limit of the setup command (default 10 minutes). */
	setupTimeoutMs?: number;
	/** When a fresh worktree continues the card's branch, restore its newest WIP snapshot (before the setup command). */
	restoreWip?: boolean;
}

/** A card's workspace as a claim returns it. */
export interface Workspace {
	path: string;
	branch: string;
	base: string;
	/** The branch's commit the worktree has checked out. */
	head: string;
	/** A new worktree was made by this call (false: it was already there). */
	created: boolean;
	/** The branch existed before this call (a released or failed card continues on it). */
	continued: boolean;
	/** Files copied from the main checkout by `.baton/worktree-include` (fresh worktrees only). */
	copied: string[];
	/** The setup command's outcome (fresh worktrees with a setup command only). */
	setup?: SetupOutcome;
	/** The WIP snapshot restored into the fresh worktree (`restoreWip` and a snapshot to restore only). */
	restored?: WipSnapshot;
}

const baseKey = (branch: string) => `branch.${branch}.batonBase`;

/** The card a branch was made for, from its Baton mark; undefined when Baton did not make it. */
export async function branchOwner(root: string, branch: string): Promise<string | undefined> {
	const r = await git(root, ['config', '--get', ownerKey(branch)], { okCodes: [1] });
	return r.code === 0 ? r.stdout.trim() : undefined;
}

/** The base the branch was made from, as Baton recorded it. */
export async function recordedBase(root: string, branch: string): Promise<string | undefined> {
	const r = await git(root, ['config', '--get', baseKey(branch)], { okCodes: [1] });
	return r.code === 0 ? r.stdout.trim() : undefined;
}

interface Prepared {
	repo: RepoInfo;
	path: string;
	branch: string;
	base: string;
	created: boolean;
	continued: boolean;
}

/** The metadata part of ensureWorktree, run in the repository's queue. */
async function prepare(repo: RepoInfo, cardId: string, wanted: string | undefined): Promise<Prepared> {
	const branch = cardBranch(cardId);
	const wt = worktreePath(repo.root, cardId);
	// `.baton` must be Baton's own folder in the main checkout, not a symlink a landed branch brought in.
	await checkBatonFolders(repo.root);
	let worktrees = await listWorktrees(repo.root);
	if (worktrees.some(w => w.prunable)) {
		await git(repo.root, ['worktree', 'prune']);
		worktrees = await listWorktrees(repo.root);
	}
	const atPath = worktrees.find(w => w.path === wt);
	const checkedOut = worktrees.find(w => w.branch === `refs/heads/${branch}`);
	const exists = await branchExists(repo.root, branch);
	const owner = exists ? await branchOwner(repo.root, branch) : undefined;
	if (exists && owner !== cardId) {
		throw new BatonError(
			'conflict',
			owner === undefined
				? `Branch ${branch} exists but was not made by Baton (it has no batonCard mark). Rename or delete it (\`git branch -m ${branch} other-name\`), then claim again.`
				: `Branch ${branch} belongs to card ${owner}, not ${cardId}. Rename or delete it, then claim again.`,
		);
	}
	if (atPath !== undefined && atPath.branch !== `refs/heads/${branch}`) {
		throw new BatonError(
			'conflict',
			`${wt} is a git worktree of ${atPath.branch ?? 'a detached HEAD'}, not Baton's ${branch}. Remove it (\`git worktree remove ${wt}\`), then claim again.`,
		);
	}
	if (checkedOut !== undefined && checkedOut.path !== wt) {
		throw new BatonError(
			'conflict',
			`Branch ${branch} is checked out at ${checkedOut.path}, not in Baton's worktree ${wt}. Switch that checkout to another branch, then claim again.`,
		);
	}
	const base = exists
		? ((await recordedBase(repo.root, branch)) ?? (await resolveBase(repo, wanted)))
		: await resolveBase(repo, wanted);
	if (atPath !== undefined) {
		// The agent owns the folder: its .git must still be Baton's before git runs there.
		await checkWorktree(wt, { root: repo.root, branch });
		// No index yet: an earlier call died between `worktree add --no-checkout` and the checkout.
		const index = await gitText(wt, ['rev-parse', '--path-format=absolute', '--git-path', 'index']);
		return { repo, path: wt, branch, base, created: !existsSync(index), continued: true };
	}
	if (existsSync(wt)) {
		throw new BatonError(
			'conflict',
			`${wt} exists and is not Baton's worktree for card ${cardId}. Move it away or delete it, then claim again.`,
		);
	}
	if (!exists) {
		const start = await gitText(repo.root, ['rev-parse', '--verify', `refs/heads/${base}^{commit}`]);
		// Mark before creating: a crash between the two leaves a branch that is visibly Baton's.
		await git(repo.root, ['config', ownerKey(branch), cardId]);
		await git(repo.root, ['config', baseKey(branch), base]);
		// Create-only (old value empty): a branch made meanwhile by someone else is not overwritten.
		await git(repo.root, ['update-ref', '-m', `baton: workspace for ${cardId}`, `refs/heads/${branch}`, start, '']);
	}
	await excludeBatonFolder(repo.commonDir);
	await mkdir(path.dirname(wt), { recursive: true });
	// Checked again after mkdir: a symlink made meanwhile must not place the worktree elsewhere.
	await checkBatonFolders(repo.root);
	if ((await realpath(path.dirname(wt))) !== path.join(await realpath(repo.root), '.baton', 'worktrees')) {
		throw new BatonError(
			'invalid_input',
			`${path.dirname(wt)} leads out of ${repo.root}; Baton made no worktree through it. Move it away, then claim again.`,
		);
	}
	try {
		await git(repo.root, ['worktree', 'add', '--no-checkout', '--quiet', wt, branch]);
	} catch (e) {
		if (e instanceof GitFailure) {
			throw new BatonError('internal', `Could not add the worktree ${wt}: ${firstLines(e.stderr, 2)}`);
		}
		throw e;
	}
	return { repo, path: wt, branch, base, created: true, continued: exists };
}

/**
 * Card `cardId`'s worktree and branch, made when missing (see the module comment). Idempotent: a second
 * call returns the same workspace with `created: false`. Refuses (BatonError, nothing changed) a
 * folder that is not a repository, a bare one, a missing base, a detached HEAD with no default branch,
 * a `baton/X` branch Baton did not make, and a worktree path that exists and is not Baton's.
 */
export async function ensureWorktree(options: EnsureWorktreeOptions): Promise<Workspace> {
	const repo = await inspectRepo(options.repo);
	const prepared = await serialized(repo.commonDir, () => prepare(repo, options.cardId, options.base));
	const ws: Workspace = {
		path: prepared.path,
		branch: prepared.branch,
		base: prepared.base,
		head: '',
		created: prepared.created,
		continued: prepared.continued,
		copied: [],
	};
	if (prepared.created) {
		try {
			// The worktree's own index and files: no shared lock, so it runs outside the queue. --reset
			// overwrites what a half-finished checkout may have left.
			await git(prepared.path, ['read-tree', '--reset', '-u', 'HEAD'], {
				hooksPath: await repoHooksPath(repo.root, repo.commonDir),
			});
		} catch (e) {
			await serialized(repo.commonDir, () => git(repo.root, ['worktree', 'remove', '--force', prepared.path]));
			throw e instanceof GitFailure
				? new BatonError(
						'internal',
						`Could not check out ${prepared.branch} in ${prepared.path}: ${firstLines(e.stderr, 2)}`,
					)
				: e;
		}
		ws.copied = await copyIncludedFiles(repo.root, prepared.path);
		if (options.restoreWip === true && prepared.continued) {
			const restored = await applyWip({ worktree: prepared.path, cardId: options.cardId });
			if (restored !== null) {
				ws.restored = restored;
			}
		}
		if (options.setupCommand !== undefined && options.setupCommand.trim() !== '') {
			ws.setup = await runSetupCommand(options.setupCommand, prepared.path, options.setupTimeoutMs ?? 600_000);
		}
	}
	ws.head = await gitText(prepared.path, ['rev-parse', 'HEAD']);
	return ws;
}

/**
 * Removes card `cardId`'s worktree folder and git's record of it. Refuses a worktree with uncommitted
 * changes or untracked files unless `force` (snapshot them first: wip.ts). The branch stays.
 */
export async function removeWorktree(options: { repo: string; cardId: string; force?: boolean }): Promise<boolean> {
	const repo = await inspectRepo(options.repo);
	const wt = worktreePath(repo.root, options.cardId);
	await checkBatonFolders(repo.root);
	return serialized(repo.commonDir, async () => {
		const entry = (await listWorktrees(repo.root)).find(w => w.path === wt);
		if (entry === undefined) {
			return false;
		}
		if (entry.prunable) {
			await git(repo.root, ['worktree', 'prune']);
			return true;
		}
		if (entry.branch !== `refs/heads/${cardBranch(options.cardId)}`) {
			throw new BatonError('conflict', `${wt} is not Baton's worktree for card ${options.cardId}; it was left alone.`);
		}
		try {
			await git(repo.root, ['worktree', 'remove', ...(options.force === true ? ['--force'] : []), wt]);
		} catch (e) {
			if (e instanceof GitFailure) {
				throw new BatonError(
					'conflict',
					`The worktree ${wt} has uncommitted changes or untracked files (${firstLines(e.stderr, 1)}). Commit or snapshot them first, or remove it with force.`,
				);
			}
			throw e;
		}
		return true;
	});
}
