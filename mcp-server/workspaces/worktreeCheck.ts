/**
 * What the hub checks before it runs git or writes files for a card's worktree, because the agent
 * owns that folder's content: that the folder is a git worktree of the expected repository (its `.git`
 * is a file naming a record under the repository's `worktrees/`, and that record names the folder
 * back), so git never falls through to the repository around it (the user's main checkout) when the
 * agent deleted or rewrote `.git`; which hooks git may run on the hub's behalf (the repository's own,
 * a relative `core.hooksPath` resolved against the main checkout, never the worktree's files); that
 * Baton's `.baton/` folders in the main checkout are real folders, not symlinks a branch brought in;
 * and that a relative path inside a folder reaches no symlink on its way (a committed symlink must not
 * carry the hub's writes or deletions out of the worktree).
 * Must not: change anything (it reads and refuses), or trust what the worktree's files claim about the
 * repository beyond what the repository itself confirms.
 */
import { lstat, readFile, realpath } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';

import { BatonError } from '../../core/errors';
import { git } from './git';
import { listWorktrees } from './repo';

/** A worktree that passed checkWorktree: where it is and the repository it belongs to. */
export interface CheckedWorktree {
	/** The worktree folder (real path). */
	path: string;
	/** Its own git dir: `<commonDir>/worktrees/<name>` (real path). */
	gitDir: string;
	/** The repository's common git dir (real path). */
	commonDir: string;
	/** The main checkout's root. */
	root: string;
	/** The branch checked out (`baton/X`); undefined when HEAD is detached. */
	branch: string | undefined;
	/** The hooks folder git may use for the hub's steps here (absolute): see repoHooksPath. */
	hooksPath: string;
}

async function lstatOf(p: string): Promise<Stats | undefined> {
	try {
		return await lstat(p);
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') {
			return undefined;
		}
		throw e;
	}
}

async function realOf(p: string): Promise<string | undefined> {
	try {
		return await realpath(p);
	} catch {
		return undefined;
	}
}

function kindOf(s: Stats): string {
	return s.isSymbolicLink() ? 'a symlink' : s.isDirectory() ? 'a folder' : 'a file';
}

function notBatons(dir: string, why: string): BatonError {
	return new BatonError(
		'invalid_input',
		`${dir} is not Baton's worktree of this card: ${why}. Baton ran no git there and changed nothing, because git would act on whatever repository it finds instead. Repair it from the main checkout (\`git worktree repair ${dir}\`), or move the folder away so that the card's next claim makes a fresh worktree of its branch.`,
		{ path: dir },
	);
}

/**
 * The repository's own hooks folder as the main checkout `root` sees it: `core.hooksPath` (a relative
 * one resolved against `root`, where git would resolve it for the main checkout), else
 * `<commonDir>/hooks`. Passed as `-c core.hooksPath=…` to git in a worktree, it beats Baton's commit
 * guard include and any relative path that would point into the agent's files.
 */
export async function repoHooksPath(root: string, commonDir: string): Promise<string> {
	const r = await git(root, ['config', '--type=path', '--get', 'core.hooksPath'], { okCodes: [1] });
	const value = r.code === 0 ? r.stdout.trim() : '';
	return value === '' ? path.join(commonDir, 'hooks') : path.resolve(root, value);
}

/**
 * Checks that `worktree` is a linked git worktree (see the module comment) of the repository whose main
 * checkout is `expect.root` (when given) with `expect.branch` checked out (when given). Throws an
 * `invalid_input` (or `conflict` for another branch) BatonError otherwise; `not_found` when the folder is gone.
 */
export async function checkWorktree(
	worktree: string,
	expect: { root?: string | undefined; branch?: string | undefined } = {},
): Promise<CheckedWorktree> {
	const dir = path.resolve(worktree);
	const own = await lstatOf(dir);
	if (own === undefined) {
		throw new BatonError('not_found', `The worktree ${dir} is gone; there is nothing of it to act on.`, { path: dir });
	}
	if (!own.isDirectory()) {
		throw new BatonError(
			'invalid_input',
			`${dir} is ${kindOf(own)} where a card's worktree folder is expected; Baton ran no git there and changed nothing. Move it away, then claim the card again.`,
			{ path: dir },
		);
	}
	const dotGit = path.join(dir, '.git');
	const marker = await lstatOf(dotGit);
	if (marker === undefined) {
		throw notBatons(dir, 'its .git file is gone');
	}
	if (!marker.isFile()) {
		throw notBatons(dir, `its .git is ${kindOf(marker)}, not the file git writes for a worktree`);
	}
	const match = /^gitdir: (.+)$/.exec((await readFile(dotGit, 'utf8')).trim());
	if (match === null) {
		throw notBatons(dir, 'its .git file does not name a git dir');
	}
	const gitDir = await realOf(path.resolve(dir, match[1] ?? ''));
	if (gitDir === undefined) {
		throw notBatons(dir, `its .git file points to ${match[1] ?? ''}, which does not exist`);
	}
	const commonText = await readFile(path.join(gitDir, 'commondir'), 'utf8').catch(() => undefined);
	const commonDir = commonText === undefined ? undefined : await realOf(path.resolve(gitDir, commonText.trim()));
	if (commonDir === undefined || path.dirname(gitDir) !== path.join(commonDir, 'worktrees')) {
		throw notBatons(dir, `its .git file points to ${gitDir}, which is not a worktree record of a repository`);
	}
	const back = (await readFile(path.join(gitDir, 'gitdir'), 'utf8').catch(() => '')).trim();
	if (back === '' || (await realOf(back)) !== (await realOf(dotGit))) {
		throw notBatons(dir, `its .git file points to ${gitDir}, the record of another worktree (${back || 'none'})`);
	}
	if (expect.root !== undefined) {
		const rootCommon = await git(expect.root, ['rev-parse', '--path-format=absolute', '--git-common-dir'], {
			okCodes: [128],
		});
		const expected = rootCommon.code === 0 ? await realOf(rootCommon.stdout.trim()) : undefined;
		if (expected !== commonDir) {
			throw notBatons(dir, `it belongs to the repository at ${commonDir}, not to ${expect.root}`);
		}
	}
	const realDir = (await realOf(dir)) ?? dir;
	const head = (await readFile(path.join(gitDir, 'HEAD'), 'utf8').catch(() => '')).trim();
	const branch = head.startsWith('ref: refs/heads/') ? head.slice('ref: refs/heads/'.length) : undefined;
	if (expect.branch !== undefined && branch !== expect.branch) {
		throw new BatonError(
			'conflict',
			`${dir} has ${branch ?? 'a detached HEAD'} checked out, not the card's branch ${expect.branch}; Baton changed nothing. Switch it back (\`git -C ${dir} switch ${expect.branch}\`), then try again.`,
			{ path: dir, branch: branch ?? null, expected: expect.branch },
		);
	}
	const main = (await listWorktrees(realDir))[0];
	if (main === undefined || main.bare) {
		throw notBatons(dir, `its repository (${commonDir}) has no main checkout`);
	}
	return {
		path: realDir,
		gitDir,
		commonDir,
		root: main.path,
		branch,
		hooksPath: await repoHooksPath(main.path, commonDir),
	};
}

/**
 * Throws unless `<root>/.baton` and `<root>/.baton/worktrees` are real folders or absent: a symlink
 * or file there (a branch that committed `.baton` and landed, or anyone else) would send Baton's
 * worktrees, and every removal of them, somewhere else.
 */
export async function checkBatonFolders(root: string): Promise<void> {
	for (const dir of [path.join(root, '.baton'), path.join(root, '.baton', 'worktrees')]) {
		const s = await lstatOf(dir);
		if (s === undefined) {
			return;
		}
		if (s.isSymbolicLink() || !s.isDirectory()) {
			throw new BatonError(
				'invalid_input',
				`${dir} is ${kindOf(s)} where Baton keeps its own folder of card worktrees; Baton made and removed nothing through it. Move it away (\`mv ${dir} ${dir}.moved\`; a branch may have committed it), then try again.`,
				{ path: dir },
			);
		}
	}
}

/**
 * True when `rel` (a relative path with `/` separators, as git prints it) can be written or deleted
 * under `base` without passing through a symlink or a file: every folder on the way is a real folder
 * (or does not exist yet). The last part itself is not looked at (the caller writes it exclusively or
 * deletes the entry itself, never what it points to).
 */
export async function plainPathUnder(base: string, rel: string): Promise<boolean> {
	const parts = rel.split('/');
	if (parts.some(p => p === '..' || p === '') || path.isAbsolute(rel)) {
		return false;
	}
	let at = base;
	for (const part of parts.slice(0, -1)) {
		at = path.join(at, part);
		const s = await lstatOf(at);
		if (s === undefined) {
			return true;
		}
		if (!s.isDirectory()) {
			return false;
		}
	}
	return true;
}
