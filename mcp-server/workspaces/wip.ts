/**
 * Work in progress that must survive the agent: `snapshotWip` commits a worktree's
 * tracked and untracked (not ignored) files to `refs/baton/wip/<CARD-ID>/<attempt>` through a
 * temporary index, so the worktree's own index, HEAD, branch and files are never touched and a
 * snapshot can be taken while the agent is still writing, or after it died. `applyWip` puts the
 * newest snapshot's files back, byte for byte, into a fresh worktree of the card's branch.
 * Must not: commit on the card's branch, or read ignored files (`.env`, `node_modules`).
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { BatonError } from '../../core/errors';
import { firstLines, git, GitFailure, gitText, identityArgs, serialized, splitNul } from './git';
import { cardIdOfSlug, wipPrefix, wipRefPrefix } from './repo';
import { checkWorktree, plainPathUnder } from './worktreeCheck';

export interface WipSnapshot {
	ref: string;
	commit: string;
	/** The worktree's HEAD when the snapshot was taken (the snapshot commit's parent). */
	parent: string;
	attempt: number;
	/** Paths that differ from the parent (added, changed or deleted). */
	files: string[];
}

export interface WipRef {
	ref: string;
	cardId: string;
	attempt: number;
	commit: string;
	/** Committer time of the snapshot, epoch seconds. */
	time: number;
}

/** What a worktree holds, as trees: HEAD's and that of its files (tracked + untracked, not ignored). */
export interface WorktreeState {
	head: string;
	headTree: string;
	tree: string;
	/** The repository's common git dir (the queue key). */
	commonDir: string;
	/** The checked worktree folder (real path) and the hooks git may run there for the hub. */
	path: string;
	hooksPath: string;
}

/** The tree of everything in `worktree` that git would see (tracked + untracked, not ignored), and HEAD's. */
export async function worktreeState(worktree: string): Promise<WorktreeState> {
	// Git in a folder whose .git the agent removed would read the main checkout instead: check first.
	const wt = await checkWorktree(worktree);
	worktree = wt.path;
	const hooks = { hooksPath: wt.hooksPath };
	// One rev-parse for all four answers: each git spawn costs more than the answer on a busy machine.
	const answers = await gitText(
		worktree,
		['rev-parse', '--path-format=absolute', '--git-path', 'index', '--git-common-dir', 'HEAD', 'HEAD^{tree}'],
		hooks,
	).catch((e: unknown) => {
		throw e instanceof GitFailure
			? new BatonError('invalid_input', `${worktree} is not a git worktree with a commit (${firstLines(e.stderr, 1)}).`)
			: e;
	});
	const [indexFile = '', commonDir = '', head = '', headTree = ''] = answers.split('\n');
	const dir = await mkdtemp(path.join(tmpdir(), 'baton-wip-'));
	const index = path.join(dir, 'index');
	const env = { env: { GIT_INDEX_FILE: index }, ...hooks };
	try {
		try {
			// Starting from a copy of the worktree's index reuses its stat cache: only changed files are hashed.
			await copyFile(indexFile, index);
		} catch {
			await git(worktree, ['read-tree', 'HEAD'], env);
		}
		await git(worktree, ['add', '-A', '--ignore-errors', '--', ':/'], { ...env, okCodes: [1] });
		const tree = await gitText(worktree, ['write-tree'], env);
		return { head, headTree, tree, commonDir, path: worktree, hooksPath: wt.hooksPath };
	} finally {
		await rm(dir, { recursive: true, force: true });
	}
}

function checkAttempt(attempt: number): void {
	if (!Number.isInteger(attempt) || attempt < 0) {
		throw new BatonError('invalid_input', `A snapshot attempt is a whole number ≥ 0, not ${attempt}.`);
	}
}

/**
 * Snapshots `worktree` as card `cardId`'s attempt `attempt`; null when it has no changes. Taking the
 * same attempt twice keeps the first snapshot when nothing changed since, else moves the ref to the
 * newer one (compare-and-swap, so two noticers never lose each other's snapshot).
 */
export async function snapshotWip(options: {
	worktree: string;
	cardId: string;
	attempt: number;
}): Promise<WipSnapshot | null> {
	checkAttempt(options.attempt);
	const ref = `${wipRefPrefix(options.cardId)}${options.attempt}`;
	const state = await worktreeState(options.worktree);
	if (state.tree === state.headTree) {
		return null;
	}
	const hooks = { hooksPath: state.hooksPath };
	const dir = state.path;
	const files = splitNul(
		(await git(dir, ['diff-tree', '-r', '-z', '--no-renames', '--name-only', state.headTree, state.tree], hooks))
			.stdout,
	);
	// Refs and objects are shared by every worktree: the card's worktree serves as the repository here.
	return serialized(state.commonDir, async () => {
		const [oldCommit = '', oldTree, oldParent] = (
			await gitText(dir, ['for-each-ref', '--format=%(objectname) %(tree) %(parent)', ref], hooks)
		).split(' ');
		if (oldCommit !== '' && oldTree === state.tree && oldParent === state.head) {
			return { ref, commit: oldCommit, parent: state.head, attempt: options.attempt, files };
		}
		const message = `Baton WIP of card ${options.cardId}, attempt ${options.attempt}\n\n${files.length} file(s) not committed by the agent.\n`;
		const commit = await gitText(
			dir,
			[...(await identityArgs(dir)), 'commit-tree', state.tree, '-p', state.head, '-F', '-'],
			{ input: message, ...hooks },
		);
		await git(dir, ['update-ref', '-m', 'baton: wip snapshot', ref, commit, oldCommit], hooks);
		return { ref, commit, parent: state.head, attempt: options.attempt, files };
	});
}

/** Every WIP ref of the repository (of `cardId` only, when given), oldest attempt first per card. */
export async function listWip(repoDir: string, cardId?: string): Promise<WipRef[]> {
	const prefix = cardId === undefined ? wipPrefix : wipRefPrefix(cardId);
	const out = await gitText(repoDir, [
		'for-each-ref',
		'--format=%(refname)%09%(objectname)%09%(committerdate:unix)',
		prefix,
	]);
	const refs: WipRef[] = [];
	for (const line of out.split('\n')) {
		const [ref = '', commit = '', time = '0'] = line.split('\t');
		const match = /^refs\/baton\/wip\/(.+)\/(\d+)$/.exec(ref);
		if (match === null) {
			continue;
		}
		refs.push({ ref, cardId: cardIdOfSlug(match[1] ?? ''), attempt: Number(match[2]), commit, time: Number(time) });
	}
	return refs.sort((a, b) => a.cardId.localeCompare(b.cardId) || a.attempt - b.attempt);
}

/**
 * Restores card `cardId`'s newest snapshot into `worktree` (which must have no changes): every path the
 * snapshot changed relative to its parent gets the snapshot's bytes and mode, deleted ones are deleted;
 * the index is left alone, so the files show up as the previous agent left them (modified, untracked).
 * Returns null when the card has no snapshot.
 */
export async function applyWip(options: { worktree: string; cardId: string }): Promise<WipSnapshot | null> {
	const wt = await checkWorktree(options.worktree);
	const hooks = { hooksPath: wt.hooksPath };
	const newest = (await listWip(wt.path, options.cardId)).at(-1);
	if (newest === undefined) {
		return null;
	}
	const status = await git(wt.path, ['status', '--porcelain', '-z', '--untracked-files=all'], {
		env: { GIT_OPTIONAL_LOCKS: '0' },
		...hooks,
	});
	if (status.stdout !== '') {
		throw new BatonError(
			'conflict',
			`${options.worktree} has changes of its own, so snapshot ${newest.ref} was not applied over them. Snapshot or discard them first.`,
		);
	}
	const parent = await gitText(wt.path, ['rev-parse', `${newest.commit}^`], hooks);
	const changes = splitNul(
		(await git(wt.path, ['diff-tree', '-r', '-z', '--no-renames', '--name-status', parent, newest.commit], hooks))
			.stdout,
	);
	const restore: string[] = [];
	const files: string[] = [];
	for (let i = 0; i + 1 < changes.length; i += 2) {
		const status = changes[i] ?? '';
		const file = changes[i + 1] ?? '';
		files.push(file);
		if (status === 'D') {
			// A folder on the way may be a symlink the branch committed: deleting through it would delete
			// a file outside the worktree. Such a path is left alone (git's restore refuses it likewise).
			if (await plainPathUnder(wt.path, file)) {
				await rm(path.join(wt.path, file), { force: true });
			}
		} else {
			restore.push(file);
		}
	}
	if (restore.length > 0) {
		await git(
			wt.path,
			['restore', `--source=${newest.commit}`, '--worktree', '--pathspec-from-file=-', '--pathspec-file-nul'],
			{ input: restore.join('\0'), env: { GIT_LITERAL_PATHSPECS: '1' }, ...hooks },
		);
	}
	return { ref: newest.ref, commit: newest.commit, parent, attempt: newest.attempt, files };
}
