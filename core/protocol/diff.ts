/**
 * `card/diff`: what a reviewer reads of a card's branch — its files with their kind of change
 * and line counts, and the unified patch cut to a byte cap so a huge branch cannot flood a client. Part
 * of `core/protocol/index.ts`; platform-free, imports only zod and the domain schemas.
 */
import { z } from 'zod';
import { CardId } from './scalars';

export const diffLimits = {
	/** The largest patch `card/diff` sends, in UTF-8 bytes; a longer one is cut at a file or hunk boundary. */
	patchBytes: 512 * 1024,
	/**
	 * The most of one file's patch `card/diff` sends when it shows several (when `paths` names one file,
	 * that file gets the whole patchBytes); a larger one keeps its whole hunks that fit, or is left out.
	 */
	fileBytes: 256 * 1024,
	/** `card/diff` requests the hub computes at once; the next ones wait their turn. */
	concurrent: 2,
	/** Requests that may wait for a turn; more are refused (unavailable) until the line moves. */
	waiting: 8,
	/** Paths one `card/diff` may name. */
	paths: 200,
} as const;

export const CardDiffParams = z
	.object({
		cardId: CardId,
		paths: z
			.array(z.string().min(1).max(4096))
			.max(diffLimits.paths)
			.optional()
			.describe('Only these files (paths relative to the repository root)'),
	})
	.strict();

export const DiffFileStatus = z.enum(['added', 'modified', 'deleted', 'renamed', 'copied', 'typechange']);
export type DiffFileStatus = z.infer<typeof DiffFileStatus>;

export const DiffFile = z.object({
	/** Relative to the repository root (the new path of a rename). */
	path: z.string(),
	/** The path on the base, for a rename or copy. */
	oldPath: z.string().optional(),
	status: DiffFileStatus,
	/** Lines added and removed; null for a binary file (git counts no lines). */
	insertions: z.number().int().nullable(),
	deletions: z.number().int().nullable(),
	/** Its patch was cut or left out (over its budget, or past the total): `show` in the result says how to see it. */
	cut: z.boolean().optional(),
});
export type DiffFile = z.infer<typeof DiffFile>;

export const CardDiffResult = z.object({
	cardId: CardId,
	/** The base branch the card lands into, and the card's branch. */
	base: z.string(),
	branch: z.string(),
	/** The commits compared: the branch's merge base with `base`, and the branch's tip. */
	mergeBase: z.string(),
	head: z.string(),
	/** The repository's main checkout and the card's worktree (absolute, on the hub's machine). */
	root: z.string(),
	path: z.string(),
	files: z.array(DiffFile),
	/** `git diff mergeBase head` (of `paths` only when given), at most diffLimits.patchBytes. */
	patch: z.string(),
	/**
	 * The patch was cut (the files list is always whole; `cut` marks the files concerned); ask for one
	 * file in `paths`, or run `show`, to see the rest.
	 */
	truncated: z.boolean(),
	/** The patch's size in UTF-8 bytes as git wrote it: the whole size, unless `complete` is false. */
	patchBytes: z.number().int(),
	/** git wrote the whole patch; false when the hub stopped it at the total budget (patchBytes is then a floor). */
	complete: z.boolean().optional(),
	/** The command that shows the whole diff on the hub's machine (present when the patch was cut). */
	show: z.string().optional(),
});
export type CardDiffResult = z.infer<typeof CardDiffResult>;
