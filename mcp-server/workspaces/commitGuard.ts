/**
 * The commit guard of a card's worktree: `installCommitGuard` points that one worktree's git
 * at a hooks folder of its own whose pre-commit runs `baton commit-guard <ID>` (cli/commitGuard.ts:
 * refuses a commit that touches files held by another live claim of the project) and then execs the
 * repository's own pre-commit with the same arguments and stdin; every other hook execs the
 * repository's own unchanged. How only that worktree sees it: an `[includeIf "gitdir:<the worktree's
 * git dir>"]` section in the repository's config includes a file that sets `core.hooksPath`; the
 * condition is false in the main checkout and in every other worktree, and no config extension is
 * enabled (`extensions.worktreeConfig` makes go-git 5.17–5.19, libgit2 before 1.8 in format-1
 * repositories and tools bundling an old libgit2 refuse the whole repository, main checkout included:
 * docs/decisions/0141-ws-commit-guard.md). The hooks folder and the included file live in the worktree's
 * own git dir (`.git/worktrees/<name>/baton/`) and go with it; sections whose file is gone are pruned
 * at every install.
 * Must not: change what git does outside Baton's worktrees, or decide which paths are held (the CLI
 * verb does, with core/scope/).
 */
import { existsSync, lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { BatonError } from '../../core/errors';
import { git, gitText, serialized, splitNul } from './git';
import { inspectRepo } from './repo';

export interface CommitGuardOptions {
	/** The card the worktree belongs to (passed to `baton commit-guard`). */
	cardId: string;
	/**
	 * The program line that runs `baton` (node and dist/baton.js); default this process's when it runs
	 * as baton.js (the hub), which is what claims use.
	 */
	command?: readonly string[];
	/** The hub's data dir, passed as `--data-dir` so the hook asks the hub that made the worktree. */
	dataDir?: string;
}

export interface CommitGuard {
	/** The worktree's hooks folder (its `core.hooksPath`). */
	hooksPath: string;
	/** The repository's own hooks folder the hooks chain to (as configured: may be relative to the worktree). */
	chainsTo: string;
	/** Hook names written: pre-commit and the pass-throughs. */
	hooks: string[];
}

/**
 * Hooks git runs in a worktree on the client side; each gets a pass-through so the repository's own
 * still runs. `reference-transaction` (run on every ref update) and the rest get one only when the
 * repository has them: an empty pass-through would still cost a process per call.
 */
const clientHooks = [
	'applypatch-msg',
	'pre-applypatch',
	'post-applypatch',
	'pre-merge-commit',
	'prepare-commit-msg',
	'commit-msg',
	'post-commit',
	'pre-rebase',
	'post-checkout',
	'post-merge',
	'pre-push',
	'post-rewrite',
	'pre-auto-gc',
	'post-index-change',
	'sendemail-validate',
];

/** A shell word: single-quoted, `'` as `'\''`. */
export function shellQuote(word: string): string {
	return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** A literal path as a wildmatch pattern (includeIf's gitdir: is a glob). */
function globLiteral(p: string): string {
	return p.replace(/[*?[\\]/g, c => `\\${c}`);
}

/**
 * The `baton` program line of this process, when it runs as the `baton` program (the hub); else
 * undefined (in-process tests). The program's entry records its real file (mcp-server/bin.ts), so the
 * name that started it does not matter: npm starts it as `<prefix>/bin/baton`, a symlink to the
 * package's dist/baton.js. Without that record, the script is followed to its real file.
 */
export function batonCommand(
	script: string | undefined = (globalThis as { batonProgramFile?: string }).batonProgramFile ?? process.argv[1],
): string[] | undefined {
	if (script === undefined) {
		return undefined;
	}
	let real: string;
	try {
		real = realpathSync(path.resolve(script));
	} catch {
		return undefined;
	}
	const recorded = (globalThis as { batonProgramFile?: string }).batonProgramFile;
	return path.basename(real) === 'baton.js' || (recorded !== undefined && real === realpathSync(recorded))
		? [process.execPath, real]
		: undefined;
}

/**
 * The hooks folder git would use in `worktree` without Baton's include: the last `core.hooksPath`
 * from any other config file (system, global, the repository's, `-c`), else the common dir's hooks/.
 */
async function ownHooksPath(worktree: string, commonDir: string, included: string): Promise<string> {
	const out = await git(worktree, ['config', '--show-origin', '--type=path', '-z', '--get-all', 'core.hooksPath'], {
		okCodes: [1],
	});
	const parts = splitNul(out.stdout);
	let own: string | undefined;
	for (let i = 0; i + 1 < parts.length; i += 2) {
		if (parts[i] !== `file:${included}`) {
			own = parts[i + 1];
		}
	}
	return own === undefined || own === '' ? path.join(commonDir, 'hooks') : own;
}

function passThrough(own: string, name: string): string {
	return [
		'#!/bin/sh',
		`# Baton: this worktree's ${name} is the repository's own (docs/guide.md, Workspaces).`,
		`hook=${shellQuote(`${own}/${name}`)}`,
		'if [ -f "$hook" ] && [ -x "$hook" ]; then exec "$hook" "$@"; fi',
		'exit 0',
		'',
	].join('\n');
}

function preCommit(own: string, cardId: string, command: readonly string[], dataDir: string | undefined): string {
	const guard = [...command, 'commit-guard', cardId, ...(dataDir === undefined ? [] : ['--data-dir', dataDir])];
	const missing = command.filter(w => path.isAbsolute(w)).map(shellQuote);
	return [
		'#!/bin/sh',
		`# Baton's commit guard for card ${cardId} (docs/guide.md, Workspaces): a commit touching files held`,
		"# by another live claim of the project is refused; then the repository's own pre-commit runs.",
		'skip=',
		`for f in ${missing.join(' ')}; do`,
		'\tif [ ! -e "$f" ]; then',
		'\t\techo "baton: the commit guard is not installed right ($f is gone); this commit was not checked against other claims." >&2',
		'\t\tskip=1',
		'\tfi',
		'done',
		'if [ -z "$skip" ]; then',
		// A hub started by VS Code runs on its Electron binary, which is node only with ELECTRON_RUN_AS_NODE.
		`\t${'electron' in process.versions ? 'ELECTRON_RUN_AS_NODE=1 ' : ''}${guard.map(shellQuote).join(' ')} </dev/null || exit $?`,
		'fi',
		`hook=${shellQuote(`${own}/pre-commit`)}`,
		'if [ -f "$hook" ] && [ -x "$hook" ]; then exec "$hook" "$@"; fi',
		'exit 0',
		'',
	].join('\n');
}

/** Hook names present (executable, not `*.sample`) in the repository's own hooks folder. */
function presentHooks(own: string, worktree: string): string[] {
	const dir = path.resolve(worktree, own);
	try {
		return readdirSync(dir).filter(name => {
			if (name.endsWith('.sample') || name.startsWith('.')) {
				return false;
			}
			const s = statSync(path.join(dir, name));
			return s.isFile() && (s.mode & 0o111) !== 0;
		});
	} catch {
		return [];
	}
}

/**
 * Removes the includeIf sections of Baton's guards whose included file is gone (their worktree was
 * removed): they would be inert, but each costs every git command a pattern match.
 */
async function pruneStale(root: string, configFile: string, commonDir: string): Promise<void> {
	const out = await git(
		root,
		['config', '--file', configFile, '-z', '--get-regexp', '^includeif\\.gitdir:.*\\.path$'],
		{
			okCodes: [1],
		},
	);
	const worktrees = `${path.join(commonDir, 'worktrees')}${path.sep}`;
	for (const entry of splitNul(out.stdout)) {
		const nl = entry.indexOf('\n');
		const key = entry.slice(0, nl);
		const value = entry.slice(nl + 1);
		if (value.startsWith(worktrees) && value.endsWith(`${path.sep}baton${path.sep}config`) && !existsSync(value)) {
			// --remove-section matches the section name as written, and Baton writes `includeIf`.
			const section = `includeIf${key.slice('includeif'.length, -'.path'.length)}`;
			await git(root, ['config', '--file', configFile, '--remove-section', section], { okCodes: [128] });
		}
	}
}

/**
 * Installs (or refreshes: the scripts are rewritten, so a later repository hook or a moved `baton` is
 * picked up at the next claim) the commit guard of the Baton worktree at `worktreePath`. Commits
 * anywhere else see no change. Throws a BatonError when `worktreePath` is not a linked worktree or no
 * `baton` program line is known.
 */
export async function installCommitGuard(worktreePath: string, options: CommitGuardOptions): Promise<CommitGuard> {
	const command = options.command ?? batonCommand();
	if (command === undefined || command.length === 0) {
		throw new BatonError('internal', 'The commit guard needs the `baton` program line (node and baton.js) to run.');
	}
	const repo = await inspectRepo(worktreePath);
	const gitDir = realpathSync(await gitText(worktreePath, ['rev-parse', '--absolute-git-dir']));
	if (gitDir === realpathSync(repo.commonDir)) {
		throw new BatonError(
			'invalid_input',
			`${worktreePath} is the main checkout, not a card's worktree: no guard there.`,
		);
	}
	const base = path.join(gitDir, 'baton');
	const hooksPath = path.join(base, 'hooks');
	const included = path.join(base, 'config');
	const own = await ownHooksPath(worktreePath, repo.commonDir, included);
	// Never removed through a symlink: a link at `baton` or `baton/hooks` goes itself, not what it points to.
	for (const dir of [base, hooksPath]) {
		if (lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() === false) {
			await rm(dir, { force: true });
		}
	}
	await rm(hooksPath, { recursive: true, force: true });
	await mkdir(hooksPath, { recursive: true });
	const names = [...new Set([...clientHooks, ...presentHooks(own, worktreePath)])].filter(n => n !== 'pre-commit');
	for (const name of names) {
		await writeFile(path.join(hooksPath, name), passThrough(own, name));
		await chmod(path.join(hooksPath, name), 0o755);
	}
	await writeFile(path.join(hooksPath, 'pre-commit'), preCommit(own, options.cardId, command, options.dataDir));
	await chmod(path.join(hooksPath, 'pre-commit'), 0o755);
	await writeFile(
		included,
		`# Baton: this worktree's hooks (commit guard of card ${options.cardId}); read only in this worktree.\n[core]\n\thooksPath = "${hooksPath.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"\n`,
	);
	const configFile = path.join(repo.commonDir, 'config');
	await serialized(repo.commonDir, async () => {
		await pruneStale(repo.root, configFile, repo.commonDir);
		await git(repo.root, [
			'config',
			'--file',
			configFile,
			'--replace-all',
			`includeIf.gitdir:${globLiteral(gitDir)}.path`,
			included,
		]);
	});
	return { hooksPath, chainsTo: own, hooks: ['pre-commit', ...names] };
}
