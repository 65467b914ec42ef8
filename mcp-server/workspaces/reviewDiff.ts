/**
 * The diff a reviewer reads (issue 33, `card/diff`): the files of a branch since it left its base, each
 * with its kind of change and its line counts, and the unified patch cut to a byte cap at a file or hunk
 * boundary, so a client always gets a well-formed patch however large the branch. Every step reads
 * the two commits resolved once, so files and patch describe the same moment. Must not: change any
 * ref or checkout, or know about cards (the hub's cardDiff.ts does).
 */
import { BatonError } from '../../core/errors';
import { git, gitText, splitNul } from './git';
import { branchExists, inspectRepo } from './repo';
import { type FileStat, parseNumstat } from './review';

/** git's letters of `--name-status`, as words. */
export type FileChange = 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'typechange';

const changeOf: Record<string, FileChange> = {
	A: 'added',
	M: 'modified',
	D: 'deleted',
	R: 'renamed',
	C: 'copied',
	T: 'typechange',
};

export interface ReviewFile extends FileStat {
	status: FileChange;
}

export interface ReviewDiff {
	/** The branch's commit the diff describes. */
	head: string;
	/** The commit the branch is compared with (its merge base with `base`). */
	mergeBase: string;
	files: ReviewFile[];
	patch: string;
	/** True when `patch` was cut at `maxBytes` (the files list is always whole). */
	truncated: boolean;
	/** The patch's full size in UTF-8 bytes (before any cut). */
	patchBytes: number;
}

// Rename detection as the numbers and the patch see it; quotePath off so non-ASCII names stay readable.
const diffArgs = ['-c', 'core.quotePath=false', 'diff', '--no-color', '--no-ext-diff', '--no-textconv', '-M'];

/** `branch` against `base` as a pull request shows it, with the patch cut to at most `maxBytes` bytes. */
export async function reviewDiff(options: {
	repo: string;
	branch: string;
	base: string;
	paths?: readonly string[];
	maxBytes: number;
}): Promise<ReviewDiff> {
	const repo = await inspectRepo(options.repo);
	for (const name of [options.branch, options.base]) {
		if (!(await branchExists(repo.root, name))) {
			throw new BatonError('not_found', `Branch "${name}" does not exist in ${repo.root}.`);
		}
	}
	const head = await gitText(repo.root, ['rev-parse', `refs/heads/${options.branch}`]);
	const mb = await git(repo.root, ['merge-base', `refs/heads/${options.base}`, head], { okCodes: [1] });
	if (mb.code !== 0) {
		throw new BatonError(
			'invalid_input',
			`Branches ${options.branch} and ${options.base} share no history, so there is no diff to review.`,
		);
	}
	const mergeBase = mb.stdout.trim();
	const only = options.paths !== undefined && options.paths.length > 0 ? ['--', ...options.paths] : [];
	const run = (extra: string[]) =>
		git(repo.root, [...diffArgs, ...extra, mergeBase, head, ...only], { env: { GIT_LITERAL_PATHSPECS: '1' } });
	const [numstat, names, patch] = await Promise.all([run(['--numstat', '-z']), run(['--name-status', '-z']), run([])]);
	const files = mergeStatus(parseNumstat(numstat.stdout), parseNameStatus(names.stdout));
	const cut = capPatch(patch.stdout, options.maxBytes);
	return { head, mergeBase, files, ...cut };
}

/** `--name-status -z`: "M\0<path>\0", or "R100\0<old>\0<new>\0" (C likewise): new path → change. */
export function parseNameStatus(text: string): Map<string, FileChange> {
	const fields = splitNul(text);
	const out = new Map<string, FileChange>();
	for (let i = 0; i < fields.length; i++) {
		const letter = (fields[i] ?? '').charAt(0);
		if (letter === 'R' || letter === 'C') {
			i++; // the old path
		}
		const path = fields[++i] ?? '';
		out.set(path, changeOf[letter] ?? 'modified');
	}
	return out;
}

function mergeStatus(stats: FileStat[], changes: Map<string, FileChange>): ReviewFile[] {
	return stats.map(s => ({ ...s, status: changes.get(s.path) ?? (s.oldPath === undefined ? 'modified' : 'renamed') }));
}

/**
 * `patch` cut to at most `maxBytes` UTF-8 bytes: after the last whole file that fits, else (the first
 * file alone is too large) after its last whole hunk that fits, else nothing. A cut
 * patch still parses: no hunk is ever split.
 */
export function capPatch(patch: string, maxBytes: number): { patch: string; truncated: boolean; patchBytes: number } {
	const bytes = Buffer.from(patch, 'utf8');
	if (bytes.length <= maxBytes) {
		return { patch, truncated: false, patchBytes: bytes.length };
	}
	// Boundaries are at the newline before "diff --git " / "@@ ", and the cut keeps that newline, so
	// the newline may sit at most at maxBytes - 1 (the words after it are not kept).
	let end = bytes.lastIndexOf('\ndiff --git ', Math.max(0, maxBytes - 1));
	if (end <= 0) {
		end = bytes.lastIndexOf('\n@@ ', Math.max(0, maxBytes - 1));
	}
	return {
		patch: bytes.subarray(0, end > 0 ? end + 1 : 0).toString('utf8'),
		truncated: true,
		patchBytes: bytes.length,
	};
}
