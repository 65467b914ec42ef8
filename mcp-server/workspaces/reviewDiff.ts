/**
 * The diff a reviewer reads (`card/diff`): the files of a branch since it left its base, each
 * with its kind of change and its line counts, and the unified patch cut to a byte cap at a file or hunk
 * boundary, so a client always gets a well-formed patch however large the branch. Every step reads
 * the two commits resolved once, so files and patch describe the same moment. Must not: change any
 * ref or checkout, or know about cards (the hub's cardDiff.ts does).
 */
import { BatonError } from '../../core/errors';
import { git, gitEnv, gitText, splitNul } from './git';
import { type PatchBudget, streamPatch } from './patchStream';
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
	/** Its patch was cut or left out (over a file's budget, or after the total budget). */
	cut?: boolean;
}

export interface ReviewDiff {
	/** The branch's commit the diff describes. */
	head: string;
	/** The commit the branch is compared with (its merge base with `base`). */
	mergeBase: string;
	files: ReviewFile[];
	patch: string;
	/** True when `patch` was cut (the files list is always whole; `cut` marks the files concerned). */
	truncated: boolean;
	/** Bytes of patch git wrote: the whole patch's size unless `complete` is false. */
	patchBytes: number;
	/** git wrote the whole patch: false when it was stopped at the total budget. */
	complete: boolean;
}

/**
 * Files larger than this git counts as binary (core.bigFileThreshold: no line counts) and the patch
 * leaves out (marked `cut`): a 200 MB file costs neither git nor the hub more than its size check.
 */
export const bigFileBytes = 8 * 1024 * 1024;
/** The most bytes of file names given to git to leave the big files out (well under argv's limits). */
const maxPathspecBytes = 256 * 1024;

// Rename detection as the numbers and the patch see it; quotePath off so non-ASCII names stay readable.
const diffArgs = [
	'-c',
	'core.quotePath=false',
	'-c',
	`core.bigFileThreshold=${bigFileBytes}`,
	'diff',
	'--no-color',
	'--no-ext-diff',
	'--no-textconv',
	'-M',
];

/** `branch` against `base` as a pull request shows it, with the patch kept within `budget` (patchStream.ts). */
export async function reviewDiff(options: {
	repo: string;
	branch: string;
	base: string;
	paths?: readonly string[];
	budget: PatchBudget;
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
	const env = { GIT_LITERAL_PATHSPECS: '1' };
	const run = (extra: string[]) => git(repo.root, [...diffArgs, ...extra, mergeBase, head, ...only], { env });
	const [numstat, names, raw] = await Promise.all([
		run(['--numstat', '-z']),
		run(['--name-status', '-z']),
		run(['--raw', '-z', '--no-abbrev']),
	]);
	const files = mergeStatus(parseNumstat(numstat.stdout), parseNameStatus(names.stdout));
	// Files over bigFileBytes are left out of the patch: git would read them whole even to say "Binary
	// files differ" (a 200 MB file cost git 200 MB and seconds per request). They are left out by naming
	// the others; past maxPathspecBytes of names (argv has its limits) git diffs them all and the budgets
	// still hold for the hub (git alone then reads the big blobs).
	const found = await bigPaths(repo.root, raw.stdout);
	const others = files.flatMap(f =>
		found.has(f.path) ? [] : f.oldPath === undefined ? [f.path] : [f.oldPath, f.path],
	);
	const big = others.reduce((n, p) => n + Buffer.byteLength(p) + 1, 0) <= maxPathspecBytes ? found : new Set<string>();
	const shown = files.filter(f => !big.has(f.path));
	const patchPaths = big.size === 0 ? only : ['--', ...others];
	// The patch is read as git writes it and stopped at its budget: never held whole (patchStream.ts).
	const patch =
		shown.length === 0
			? { patch: '', truncated: false, patchBytes: 0, complete: true, cutSections: [], sections: 0 }
			: await streamPatch(repo.root, [...diffArgs, mergeBase, head, ...patchPaths], gitEnv(env), options.budget);
	// git writes the sections in the order of --numstat: the cut positions name the files shown.
	const cut = new Set(patch.cutSections.map(i => shown[i]?.path));
	shown.forEach((f, i) => {
		if (!patch.complete && i >= patch.sections) {
			cut.add(f.path);
		}
	});
	const marked = files.map(f => (cut.has(f.path) || big.has(f.path) ? { ...f, cut: true } : f));
	return {
		head,
		mergeBase,
		files: marked,
		patch: patch.patch,
		truncated: patch.truncated || big.size > 0,
		patchBytes: patch.patchBytes,
		complete: patch.complete,
	};
}

/** The new paths of `--raw -z --no-abbrev` whose old or new blob is larger than bigFileBytes. */
async function bigPaths(root: string, raw: string): Promise<Set<string>> {
	const fields = splitNul(raw);
	const blobs = new Map<string, string[]>();
	for (let i = 0; i < fields.length; i++) {
		const meta = (fields[i] ?? '').slice(1).split(' ');
		const status = meta[4] ?? '';
		if (status.startsWith('R') || status.startsWith('C')) {
			i++;
		}
		const path = fields[++i] ?? '';
		blobs.set(
			path,
			[meta[2], meta[3]].filter((id): id is string => id !== undefined && !/^0+$/.test(id)),
		);
	}
	const ids = [...new Set([...blobs.values()].flat())];
	if (ids.length === 0) {
		return new Set();
	}
	const sizes = new Map<string, number>();
	const check = await git(root, ['cat-file', '--batch-check=%(objectname) %(objectsize)'], {
		input: `${ids.join('\n')}\n`,
	});
	for (const line of check.stdout.split('\n')) {
		const [id, size] = line.split(' ');
		if (id !== undefined && size !== undefined && /^\d+$/.test(size)) {
			sizes.set(id, Number(size));
		}
	}
	return new Set([...blobs].filter(([, ids]) => ids.some(id => (sizes.get(id) ?? 0) > bigFileBytes)).map(([p]) => p));
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
