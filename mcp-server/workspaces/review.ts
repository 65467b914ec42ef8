/**
 * What a reviewer sees of a card's branch and how it leaves the machine: `commitAll` commits
 * whatever the agent left uncommitted when it completes (once worktreeCheck.ts found the folder to be
 * the card's worktree, with the repository's own hooks, never the worktree's), `diffStat` and `diff` describe the branch
 * against its base as a pull request would (changes since the merge base), `pushBranch` sends the branch
 * to `origin` for a reviewer elsewhere. Must not: move the base branch (land.ts), or touch the user's checkout.
 */
import { BatonError } from '../../core/errors';
import { firstLines, git, GitFailure, gitText, identityArgs, splitNul } from './git';
import { branchExists, inspectRepo } from './repo';
import { checkWorktree } from './worktreeCheck';

export interface FileStat {
	path: string;
	/** Set when git saw a rename: the path on the base. */
	oldPath?: string;
	/** null for binary files (git counts no lines). */
	insertions: number | null;
	deletions: number | null;
}

export interface DiffStat {
	/** The branch's commit the numbers describe. */
	head: string;
	/** The merge base the branch is compared with. */
	mergeBase: string;
	filesChanged: number;
	insertions: number;
	deletions: number;
	files: FileStat[];
}

/**
 * Commits every change in `worktree` (tracked and untracked, not ignored) on its branch with `message`.
 * Returns the new commit, or null when there was nothing to commit. The folder is checked first
 * (worktreeCheck.ts: Baton's worktree of `root`, on `branch`, when given); hooks run unless `noVerify`,
 * and they are the repository's own as the main checkout sees them, never files of the worktree.
 */
export async function commitAll(options: {
	worktree: string;
	message: string;
	noVerify?: boolean;
	/** The main checkout the worktree must belong to. */
	root?: string;
	/** The branch the worktree must have checked out. */
	branch?: string;
}): Promise<string | null> {
	if (options.message.trim() === '') {
		throw new BatonError('invalid_input', 'A commit message is needed (the card id and title).');
	}
	const wt = await checkWorktree(options.worktree, { root: options.root, branch: options.branch });
	const hooks = { hooksPath: wt.hooksPath };
	await git(wt.path, ['add', '-A', '--', ':/'], hooks);
	const staged = await git(wt.path, ['diff', '--cached', '--quiet'], { okCodes: [1], ...hooks });
	if (staged.code === 0) {
		return null;
	}
	const args = [...(await identityArgs(wt.root)), 'commit', '--quiet', '--no-edit', '-F', '-'];
	if (options.noVerify === true) {
		args.push('--no-verify');
	}
	try {
		await git(wt.path, args, { input: options.message, ...hooks });
	} catch (e) {
		if (e instanceof GitFailure) {
			throw new BatonError(
				'conflict',
				`The commit in ${options.worktree} was refused: ${firstLines(e.stderr || e.stdout, 3)}. Fix what it names, then complete again.`,
			);
		}
		throw e;
	}
	return gitText(wt.path, ['rev-parse', 'HEAD'], hooks);
}

async function resolveRefs(
	repoDir: string,
	branch: string,
	base: string,
): Promise<{ root: string; head: string; mergeBase: string }> {
	const repo = await inspectRepo(repoDir);
	for (const name of [branch, base]) {
		if (!(await branchExists(repo.root, name))) {
			throw new BatonError('not_found', `Branch "${name}" does not exist in ${repo.root}.`);
		}
	}
	const head = await gitText(repo.root, ['rev-parse', `refs/heads/${branch}`]);
	const mb = await git(repo.root, ['merge-base', `refs/heads/${base}`, head], { okCodes: [1] });
	if (mb.code !== 0) {
		throw new BatonError(
			'invalid_input',
			`Branches ${branch} and ${base} share no history, so there is no diff to review.`,
		);
	}
	return { root: repo.root, head, mergeBase: mb.stdout.trim() };
}

/** `--numstat -z`: "<ins>\t<del>\t<path>\0", or for a rename "<ins>\t<del>\t\0<old>\0<new>\0". */
export function parseNumstat(text: string): FileStat[] {
	const fields = splitNul(text);
	const files: FileStat[] = [];
	for (let i = 0; i < fields.length; i++) {
		const [ins = '-', del = '-', file = ''] = (fields[i] ?? '').split('\t');
		const stat: FileStat = {
			path: file,
			insertions: ins === '-' ? null : Number(ins),
			deletions: del === '-' ? null : Number(del),
		};
		if (file === '') {
			stat.oldPath = fields[++i] ?? '';
			stat.path = fields[++i] ?? '';
		}
		files.push(stat);
	}
	return files;
}

/** Files, insertions and deletions of `branch` since it left `base` (`git diff --numstat base...branch`). */
export async function diffStat(options: { repo: string; branch: string; base: string }): Promise<DiffStat> {
	const { root, head, mergeBase } = await resolveRefs(options.repo, options.branch, options.base);
	const files = parseNumstat(
		(await git(root, ['diff', '--no-ext-diff', '--no-textconv', '--numstat', '-z', '-M', mergeBase, head])).stdout,
	);
	return {
		head,
		mergeBase,
		filesChanged: files.length,
		insertions: files.reduce((n, f) => n + (f.insertions ?? 0), 0),
		deletions: files.reduce((n, f) => n + (f.deletions ?? 0), 0),
		files,
	};
}

/** The unified diff of `branch` since it left `base` (binary files as "Binary files differ"), no colour. */
export async function diff(options: { repo: string; branch: string; base: string; paths?: string[] }): Promise<string> {
	const { root, head, mergeBase } = await resolveRefs(options.repo, options.branch, options.base);
	const args = ['diff', '--no-color', '--no-ext-diff', '--no-textconv', '-M', mergeBase, head];
	if (options.paths !== undefined && options.paths.length > 0) {
		args.push('--', ...options.paths);
	}
	return (await git(root, args, { env: { GIT_LITERAL_PATHSPECS: '1' } })).stdout;
}

/**
 * Pushes `branch` to `remote` (default origin) under the same name, replacing what is there (a `baton/`
 * branch belongs to its card, and a rebased card must be able to push again). Returns the pushed commit.
 */
export async function pushBranch(options: {
	repo: string;
	branch: string;
	remote?: string;
	timeoutMs?: number;
}): Promise<string> {
	const repo = await inspectRepo(options.repo);
	const remote = options.remote ?? 'origin';
	if (!(await branchExists(repo.root, options.branch))) {
		throw new BatonError('not_found', `Branch "${options.branch}" does not exist in ${repo.root}.`);
	}
	const url = await git(repo.root, ['remote', 'get-url', remote], { okCodes: [2, 128] });
	if (url.code !== 0) {
		throw new BatonError(
			'invalid_input',
			`${repo.root} has no remote "${remote}". Add it (\`git remote add ${remote} <url>\`) or turn --push off for this project.`,
		);
	}
	const head = await gitText(repo.root, ['rev-parse', `refs/heads/${options.branch}`]);
	const ref = `refs/heads/${options.branch}`;
	try {
		// Pushing the commit read above (not the ref) sends exactly that commit and writes no local ref.
		await git(repo.root, ['push', '--quiet', '--porcelain', remote, `+${head}:${ref}`], {
			timeoutMs: options.timeoutMs ?? 120_000,
		});
	} catch (e) {
		if (e instanceof GitFailure) {
			throw new BatonError(
				'unavailable',
				`Pushing ${options.branch} to ${remote} (${url.stdout.trim()}) failed: ${firstLines(e.stderr, 2)}. Check the remote and your credentials, then try again.`,
			);
		}
		throw e;
	}
	return head;
}
