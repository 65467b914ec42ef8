/**
 * How the workspaces layer runs git: `execFile('git', ['-C', dir, …])` with explicit
 * arguments, never a shell; an environment that cannot prompt (GIT_TERMINAL_PROMPT=0), speaks C
 * (LC_ALL=C, so messages can be matched) and ignores a caller's GIT_DIR / GIT_INDEX_FILE (a hook's
 * environment must not redirect Baton's git); one in-process queue per repository for the steps that
 * change shared git metadata (refs, config, .git/worktrees), and a retry when another process holds
 * a git lock. Failures become BatonErrors that say what to do.
 * Must not: know about cards or landing (the other modules do), or run anything but `git`.
 */
import { execFile } from 'node:child_process';

import { BatonError } from '../../core/errors';

export interface GitOptions {
	/** Extra environment (GIT_INDEX_FILE for a temporary index, author identity of a replayed commit). */
	env?: Record<string, string>;
	/** Written to git's stdin. */
	input?: string;
	/** Exit codes that are answers rather than failures (merge-tree's 1 = conflicts). */
	okCodes?: readonly number[];
	/** Kills git after this long (default 120 s; a push over a slow network may need it). */
	timeoutMs?: number;
	/** Retry when git reports a lock held by someone else (default true: every refusal is before the change). */
	retryOnLock?: boolean;
	/**
	 * Hooks folder git must use (`-c core.hooksPath=…`, which beats every config file): the hub passes
	 * the repository's own, resolved from the main checkout, when it runs git in a card's worktree, so
	 * no hook the agent wrote (a relative hooks path points into its files) runs on the hub's behalf.
	 */
	hooksPath?: string;
}

export interface GitResult {
	stdout: string;
	stderr: string;
	code: number;
}

/** Variables of the caller's environment that would point git at another repository or index. */
const inheritedRedirects = [
	'GIT_DIR',
	'GIT_WORK_TREE',
	'GIT_INDEX_FILE',
	'GIT_COMMON_DIR',
	'GIT_OBJECT_DIRECTORY',
	'GIT_ALTERNATE_OBJECT_DIRECTORIES',
	'GIT_NAMESPACE',
	'GIT_PREFIX',
];

export function gitEnv(extra: Record<string, string> | undefined): NodeJS.ProcessEnv {
	const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !inheritedRedirects.includes(name)));
	return { ...env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', LANGUAGE: 'C', GIT_PAGER: 'cat', ...extra };
}

/** git's words for "someone else holds a lock": index.lock, a ref lock, config.lock, packed-refs.lock. */
const lockMessage =
	/\.lock': File exists|Unable to create '[^']*\.lock'|cannot lock ref|could not lock config file|Another git process seems to be running/;

export function isLockError(stderr: string): boolean {
	return lockMessage.test(stderr);
}

/** A git command that failed: the arguments, exit code and stderr, for the caller to map. */
export class GitFailure extends Error {
	constructor(
		readonly args: readonly string[],
		readonly code: number,
		readonly stderr: string,
		readonly stdout: string,
	) {
		super(`git ${args.join(' ')} exited with ${code}: ${firstLines(stderr, 3)}`);
	}
}

export function firstLines(text: string, n: number): string {
	return text
		.split('\n')
		.map(l => l.trim())
		.filter(l => l !== '')
		.slice(0, n)
		.join(' / ');
}

function gitMissing(): BatonError {
	return new BatonError(
		'unavailable',
		'git was not found on PATH. Install git (2.38 or newer) or add its folder to PATH, then try again.',
	);
}

function runOnce(dir: string, args: readonly string[], options: GitOptions): Promise<GitResult> {
	return new Promise((resolve, reject) => {
		const child = execFile(
			'git',
			['-C', dir, ...(options.hooksPath === undefined ? [] : ['-c', `core.hooksPath=${options.hooksPath}`]), ...args],
			{
				env: gitEnv(options.env),
				encoding: 'utf8',
				maxBuffer: 256 * 1024 * 1024,
				timeout: options.timeoutMs ?? 120_000,
				windowsHide: true,
			},
			(error, stdout, stderr) => {
				if (error === null) {
					resolve({ stdout, stderr, code: 0 });
					return;
				}
				const err = error as NodeJS.ErrnoException & { code?: unknown; killed?: boolean };
				if (err.code === 'ENOENT') {
					reject(gitMissing());
					return;
				}
				if (err.killed === true) {
					reject(
						new BatonError(
							'timeout',
							`git ${args[0] ?? ''} in ${dir} took longer than ${Math.round((options.timeoutMs ?? 120_000) / 1000)} s and was stopped.`,
						),
					);
					return;
				}
				resolve({ stdout, stderr, code: typeof err.code === 'number' ? err.code : 1 });
			},
		);
		if (options.input !== undefined) {
			child.stdin?.end(options.input);
		}
	});
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

/**
 * Runs `git -C dir …args`. Resolves with the output when the exit code is 0 or in `okCodes`; retries
 * lock refusals with backoff (25 ms doubling to 800 ms, about 6 s in all); otherwise rejects with a
 * GitFailure (or a BatonError when git is missing or timed out).
 */
export async function git(dir: string, args: readonly string[], options: GitOptions = {}): Promise<GitResult> {
	let delay = 25;
	for (let attempt = 0; ; attempt++) {
		const result = await runOnce(dir, args, options);
		if (result.code === 0 || options.okCodes?.includes(result.code) === true) {
			return result;
		}
		if (options.retryOnLock !== false && attempt < 12 && isLockError(result.stderr)) {
			await sleep(delay + Math.random() * delay);
			delay = Math.min(delay * 2, 800);
			continue;
		}
		throw new GitFailure(args, result.code, result.stderr, result.stdout);
	}
}

/** `git … ` stdout without the trailing newline. */
export async function gitText(dir: string, args: readonly string[], options: GitOptions = {}): Promise<string> {
	return (await git(dir, args, options)).stdout.replace(/\n$/, '');
}

/** True when the command exits 0, false on exit 1 (rev-parse --verify, merge-base --is-ancestor). */
export async function gitTest(dir: string, args: readonly string[]): Promise<boolean> {
	return (await git(dir, args, { okCodes: [1, 128] })).code === 0;
}

/** Splits NUL-separated output (`-z`), dropping the empty tail. */
export function splitNul(text: string): string[] {
	const parts = text.split('\0');
	if (parts.at(-1) === '') {
		parts.pop();
	}
	return parts;
}

const queues = new Map<string, Promise<unknown>>();

/**
 * Runs `task` after every earlier task queued under `key` (the repository's common git dir) has
 * finished, so this process never races itself for index.lock, ref locks, config.lock or
 * .git/worktrees. Other processes are handled by the lock retry in `git`.
 */
export function serialized<T>(key: string, task: () => Promise<T>): Promise<T> {
	const previous = queues.get(key) ?? Promise.resolve();
	const run = previous.then(task, task);
	const tail = run.then(
		() => undefined,
		() => undefined,
	);
	queues.set(key, tail);
	void tail.then(() => {
		if (queues.get(key) === tail) {
			queues.delete(key);
		}
	});
	return run;
}

const identityChecked = new Map<string, readonly string[]>();

/**
 * `-c user.name=Baton -c user.email=…` when git has no identity for commits in `dir` (a fresh machine,
 * a CI runner), else nothing: the user's own identity always wins. Cached per directory.
 */
export async function identityArgs(dir: string): Promise<readonly string[]> {
	const known = identityChecked.get(dir);
	if (known !== undefined) {
		return known;
	}
	const ok = (await git(dir, ['var', 'GIT_COMMITTER_IDENT'], { okCodes: [1, 128] })).code === 0;
	const args = ok ? [] : ['-c', 'user.name=Baton', '-c', 'user.email=baton@localhost'];
	identityChecked.set(dir, args);
	return args;
}
