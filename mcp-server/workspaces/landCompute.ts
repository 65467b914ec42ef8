/**
 * The commit a landing would move the base to, computed without a checkout: `git merge-tree
 * --write-tree` for squash and merge, and for rebase a replay of each commit through merge-tree; or the
 * files that conflict. Writes only unreachable objects (trees, commits) until land.ts moves the base.
 * Must not: move a ref, touch a checkout, or decide whether a landing may happen (land.ts does).
 */
import { BatonError } from '../../core/errors';
import { firstLines, git, GitFailure, gitTest, gitText, identityArgs, splitNul } from './git';
import type { LandOptions } from './land';

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

export async function compute(root: string, options: LandOptions, oldBase: string, tip: string): Promise<Computed> {
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
