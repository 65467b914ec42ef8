/**
 * A repository as the workspaces layer needs it: its main checkout's root, its common git
 * dir (the key of the per-repository queue), whether it is bare or detached, its default branch; the
 * names Baton gives a card's worktree, branch and WIP refs; the `/.baton/` line of .git/info/exclude.
 * Every refusal says what to do. Must not: create worktrees or branches, or move refs (worktree.ts,
 * land.ts do).
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';

import { BatonError } from '../../core/errors';
import { firstLines, git, GitFailure, gitTest, gitText, splitNul } from './git';

export interface RepoInfo {
	/** The main checkout's root folder (also when `path` was inside a linked worktree). */
	root: string;
	/** Absolute common git dir: the key of the per-repository queue and where info/exclude lives. */
	commonDir: string;
	bare: boolean;
	/** The branch the main checkout has checked out; undefined when its HEAD is detached. */
	currentBranch: string | undefined;
	detached: boolean;
	/** origin/HEAD's branch, else init.defaultBranch, else main/master, else the current branch (when it exists locally). */
	defaultBranch: string | undefined;
}

/** One entry of `git worktree list --porcelain -z`. */
export interface WorktreeEntry {
	path: string;
	head: string | undefined;
	/** `refs/heads/…` when a branch is checked out; undefined when detached or bare. */
	branch: string | undefined;
	bare: boolean;
	/** git's metadata is there but the folder is gone (`git worktree prune` removes it). */
	prunable: boolean;
}

/**
 * What Baton calls a card in git: ':' (allowed in card ids, not in ref names), '..', a trailing '.' and
 * a '.lock' suffix are percent-encoded. Injective because card ids never contain '%'.
 */
export function cardSlug(cardId: string): string {
	if (!/^[A-Za-z0-9][A-Za-z0-9._:-]*$/.test(cardId)) {
		throw new BatonError(
			'invalid_input',
			`Card id "${cardId}" cannot name a branch: ids use letters, digits and . _ : - and start with a letter or digit.`,
		);
	}
	return cardId
		.replaceAll(':', '%3A')
		.replaceAll('..', '.%2E')
		.replace(/\.lock$/, '%2Elock')
		.replace(/\.$/, '%2E');
}

export const branchPrefix = 'baton/';
export const wipPrefix = 'refs/baton/wip/';

export function cardBranch(cardId: string): string {
	return `${branchPrefix}${cardSlug(cardId)}`;
}

export function worktreePath(root: string, cardId: string): string {
	return path.join(root, '.baton', 'worktrees', cardSlug(cardId));
}

export function wipRefPrefix(cardId: string): string {
	return `${wipPrefix}${cardSlug(cardId)}/`;
}

/** The card id a slug stands for (the inverse of cardSlug). */
export function cardIdOfSlug(slug: string): string {
	return slug.replaceAll('%3A', ':').replaceAll('%2E', '.');
}

/** The config key that marks a branch as made by Baton for a card (`branch.baton/X.batonCard = X`). */
export function ownerKey(branch: string): string {
	return `branch.${branch}.batonCard`;
}

function notARepo(where: string, detail: string): BatonError {
	return new BatonError(
		'invalid_input',
		`${where} is not a git repository (${detail}). Workspaces need one: run \`git init\` there, or turn workspaces off for this project.`,
	);
}

/** Facts about the repository containing `dir`; refuses a folder outside any repository and a bare one. */
export async function inspectRepo(dir: string): Promise<RepoInfo> {
	let out: string;
	try {
		out = await gitText(dir, ['rev-parse', '--path-format=absolute', '--git-common-dir', '--is-bare-repository']);
	} catch (e) {
		if (e instanceof GitFailure) {
			throw notARepo(dir, firstLines(e.stderr, 1));
		}
		throw e;
	}
	const [commonDir = '', bareText] = out.split('\n');
	const bare = bareText === 'true';
	if (bare) {
		throw new BatonError(
			'invalid_input',
			`${dir} is a bare repository (no checkout to branch from or land into). Use a clone with a working tree.`,
		);
	}
	const main = (await listWorktrees(dir))[0];
	if (main === undefined || main.bare) {
		throw new BatonError(
			'invalid_input',
			`${dir} belongs to a bare repository (${commonDir}). Use a clone with a working tree.`,
		);
	}
	const currentBranch = main.branch?.slice('refs/heads/'.length);
	return {
		root: main.path,
		commonDir,
		bare,
		currentBranch,
		detached: main.branch === undefined,
		defaultBranch: await defaultBranch(main.path, currentBranch),
	};
}

export function branchExists(dir: string, branch: string): Promise<boolean> {
	return gitTest(dir, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`]);
}

async function defaultBranch(root: string, current: string | undefined): Promise<string | undefined> {
	const originHead = await git(root, ['symbolic-ref', '--quiet', 'refs/remotes/origin/HEAD'], { okCodes: [1, 128] });
	const candidates: string[] = [];
	if (originHead.code === 0) {
		candidates.push(originHead.stdout.trim().replace(/^refs\/remotes\/origin\//, ''));
	}
	const configured = await git(root, ['config', '--get', 'init.defaultBranch'], { okCodes: [1] });
	if (configured.code === 0) {
		candidates.push(configured.stdout.trim());
	}
	candidates.push('main', 'master');
	for (const name of candidates) {
		if (await branchExists(root, name)) {
			return name;
		}
	}
	return current !== undefined && (await branchExists(root, current)) ? current : undefined;
}

/**
 * The base a card's branch starts from: `base` when given (it must exist as a local branch), else the
 * default branch. Refuses a missing base, and a detached HEAD with no default branch to fall back on.
 */
export async function resolveBase(repo: RepoInfo, base: string | undefined): Promise<string> {
	if (base !== undefined) {
		if (!(await branchExists(repo.root, base))) {
			const remote = await gitTest(repo.root, ['rev-parse', '--verify', '--quiet', `refs/remotes/origin/${base}`]);
			throw new BatonError(
				'not_found',
				remote
					? `Base branch "${base}" exists only as origin/${base}. Create it locally (\`git branch ${base} origin/${base}\`) and try again.`
					: `Base branch "${base}" does not exist in ${repo.root}. Name an existing branch (\`git branch --list\`) or create it first.`,
			);
		}
		return base;
	}
	if (repo.defaultBranch !== undefined) {
		return repo.defaultBranch;
	}
	throw new BatonError(
		'invalid_input',
		repo.detached
			? `${repo.root} has a detached HEAD and no default branch (no origin/HEAD, main or master). Check out a branch or name a base branch.`
			: `${repo.root} has no commits yet, so there is no base branch to start from. Make a first commit, then try again.`,
	);
}

export async function listWorktrees(dir: string): Promise<WorktreeEntry[]> {
	const out = (await git(dir, ['worktree', 'list', '--porcelain', '-z'])).stdout;
	const entries: WorktreeEntry[] = [];
	let current: WorktreeEntry | undefined;
	for (const field of splitNul(out)) {
		if (field === '') {
			current = undefined;
			continue;
		}
		const space = field.indexOf(' ');
		const key = space < 0 ? field : field.slice(0, space);
		const value = space < 0 ? '' : field.slice(space + 1);
		if (key === 'worktree') {
			current = { path: path.resolve(value), head: undefined, branch: undefined, bare: false, prunable: false };
			entries.push(current);
		} else if (current !== undefined) {
			if (key === 'HEAD') {
				current.head = value;
			} else if (key === 'branch') {
				current.branch = value;
			} else if (key === 'bare') {
				current.bare = true;
			} else if (key === 'prunable') {
				current.prunable = true;
			}
		}
	}
	return entries;
}

/** Adds `/.baton/` to the repository's .git/info/exclude once: worktrees stay out of git's view without a committed file. */
export async function excludeBatonFolder(commonDir: string): Promise<void> {
	const file = path.join(commonDir, 'info', 'exclude');
	let text = '';
	try {
		text = await readFile(file, 'utf8');
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
			throw e;
		}
		await mkdir(path.dirname(file), { recursive: true });
	}
	if (text.split('\n').some(line => line.trim() === '/.baton/')) {
		return;
	}
	const separator = text === '' || text.endsWith('\n') ? '' : '\n';
	await appendFile(file, `${separator}# Baton workspaces: card worktrees live here\n/.baton/\n`);
}
