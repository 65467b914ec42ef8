/**
 * Real git repositories for the workspaces tests: a temp repository on `main` with files
 * committed, helpers to write files, commit and read git's answers, and a byte-for-byte picture of a
 * folder (contents, modes, symlinks) to compare checkouts. Sets a commit identity through
 * GIT_AUTHOR_* and GIT_COMMITTER_* and hides the machine's global git config, so runs do not depend on
 * it. Runs only `git`; creates folders under /tmp only.
 */
import { execFileSync } from 'node:child_process';
import {
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	readlinkSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import path from 'node:path';

process.env.GIT_AUTHOR_NAME = 'Test Author';
process.env.GIT_AUTHOR_EMAIL = 'author@example.com';
process.env.GIT_COMMITTER_NAME = 'Test Committer';
process.env.GIT_COMMITTER_EMAIL = 'committer@example.com';
process.env.GIT_CONFIG_GLOBAL = '/dev/null';
process.env.GIT_CONFIG_NOSYSTEM = '1';

/** `git -C dir …args`, stdout as text (throws on a non-zero exit). */
export function gitOut(dir: string, ...args: string[]): string {
	return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** Writes `files` (relative path → content) under `dir`, making folders as needed. */
export function writeFiles(dir: string, files: Record<string, string | Buffer>): void {
	for (const [rel, content] of Object.entries(files)) {
		const file = path.join(dir, rel);
		mkdirSync(path.dirname(file), { recursive: true });
		writeFileSync(file, content);
	}
}

/** Stages everything in `dir` and commits it; returns the commit. */
export function commitAllFiles(dir: string, message: string): string {
	gitOut(dir, 'add', '-A');
	gitOut(dir, 'commit', '-q', '--allow-empty', '-m', message);
	return gitOut(dir, 'rev-parse', 'HEAD');
}

export interface TestRepo {
	/** The temp folder holding the repository (and, when made, its bare origin). */
	parent: string;
	root: string;
	cleanup(): void;
}

/** A repository on `main` under a fresh /tmp folder, with `files` in its first commit. */
export function makeRepo(files: Record<string, string | Buffer> = { 'README.md': '# demo\n' }): TestRepo {
	const parent = mkdtempSync('/tmp/bt-ws-');
	const root = path.join(parent, 'repo');
	mkdirSync(root);
	gitOut(root, 'init', '-q', '-b', 'main');
	writeFiles(root, files);
	commitAllFiles(root, 'initial');
	return { parent, root, cleanup: () => rmSync(parent, { recursive: true, force: true }) };
}

/**
 * Every file under `dir` (but .git and the folders named in `skip`) as "path → mode:content" (symlinks
 * as their target), for byte-for-byte comparisons of two checkouts.
 */
export function folderPicture(dir: string, skip: readonly string[] = ['.git', '.baton']): Map<string, string> {
	const out = new Map<string, string>();
	const walk = (rel: string) => {
		for (const name of readdirSync(path.join(dir, rel))) {
			const child = rel === '' ? name : `${rel}/${name}`;
			if (skip.includes(child)) {
				continue;
			}
			const full = path.join(dir, child);
			const stat = lstatSync(full);
			if (stat.isDirectory()) {
				walk(child);
			} else if (stat.isSymbolicLink()) {
				out.set(child, `link:${readlinkSync(full)}`);
			} else {
				out.set(child, `${(stat.mode & 0o111) === 0 ? '644' : '755'}:${readFileSync(full).toString('base64')}`);
			}
		}
	};
	walk('');
	return out;
}
