/**
 * Real git repositories for the workspaces tests: a temp repository on `main` with files
 * committed, helpers to write files, commit and read git's answers, and a byte-for-byte picture of a
 * folder (contents, modes, symlinks) to compare checkouts. Sets a commit identity through
 * GIT_AUTHOR_* and GIT_COMMITTER_* and hides the machine's global git config, so runs do not depend on
 * it. Runs only `git` (and `sh` to run several git commands as one child); creates folders under /tmp only.
 *
 * Spawning is what these tests pay for: every child forks the whole test process (with PGlite in it,
 * hundreds of MB of mappings), so a repository is built once per content and copied after (a plain
 * file copy of a repository is a valid repository), and a series of git commands runs in one child.
 */
import { execFileSync } from 'node:child_process';
import {
	cpSync,
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
	return (
		gitSeries([
			[dir, 'add', '-A'],
			[dir, 'commit', '-q', '--allow-empty', '-m', message],
			[dir, 'rev-parse', 'HEAD'],
		])[2] ?? ''
	);
}

export interface TestRepo {
	/** The temp folder holding the repository (and, when made, its bare origin). */
	parent: string;
	root: string;
	cleanup(): void;
}

/** The built repositories copies are made of, by content; removed when the process exits. */
const templates = new Map<string, string>();
let templateParent: string | undefined;

/**
 * A copy of the repository `build` makes in an empty folder, built on the first call for `key` only:
 * the same commits, refs, index and files as building it again, without the git children.
 */
export function repoFrom(key: string, build: (root: string) => void): TestRepo {
	let template = templates.get(key);
	if (template === undefined) {
		if (templateParent === undefined) {
			const made = mkdtempSync('/tmp/bt-tpl-');
			templateParent = made;
			process.once('exit', () => rmSync(made, { recursive: true, force: true }));
		}
		template = path.join(templateParent, String(templates.size));
		mkdirSync(template);
		build(template);
		templates.set(key, template);
	}
	const parent = mkdtempSync('/tmp/bt-ws-');
	const root = path.join(parent, 'repo');
	cpSync(template, root, { recursive: true, verbatimSymlinks: true });
	return { parent, root, cleanup: () => rmSync(parent, { recursive: true, force: true }) };
}

/** A repository on `main` under a fresh /tmp folder, with `files` in its first commit. */
export function makeRepo(files: Record<string, string | Buffer> = { 'README.md': '# demo\n' }): TestRepo {
	const key = JSON.stringify(
		Object.entries(files).map(([rel, content]) => [rel, Buffer.from(content).toString('base64')]),
	);
	return repoFrom(`files:${key}`, root => {
		gitOut(root, 'init', '-q', '-b', 'main');
		writeFiles(root, files);
		commitAllFiles(root, 'initial');
	});
}

/**
 * Runs each `[dir, ...args]` as `git -C dir ...args` in order, in one `sh` child, stopping at the first
 * that fails (thrown with its stderr); returns each command's stdout, trimmed.
 */
export function gitSeries(commands: readonly (readonly string[])[]): string[] {
	const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
	const separator = `--${'-'.repeat(8)}git-series--`;
	const script = commands
		.map(([dir = '.', ...args]) => `git -C ${quote(dir)} ${args.map(quote).join(' ')}; echo; echo ${separator}`)
		.join('\n');
	const out = execFileSync('sh', ['-ec', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
	return out
		.split(`\n${separator}\n`)
		.slice(0, commands.length)
		.map(part => part.trim());
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
