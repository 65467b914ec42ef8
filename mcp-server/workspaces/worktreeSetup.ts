/**
 * Making a fresh card worktree usable: copies the files `.baton/worktree-include` names
 * (gitignore patterns: ignored files such as `.env` that a checkout lacks) from the main checkout, and
 * runs the project's setup command (`npm ci`) with a time limit, returning its outcome for the card's
 * history; its runner also runs the project's check (hub/checks.ts). Must not: touch git metadata, or
 * run anything in the main checkout.
 */
import { spawn } from 'node:child_process';
import { copyFile, constants, lstat, mkdir, readlink, symlink, chmod, access } from 'node:fs/promises';
import path from 'node:path';

import { git, splitNul } from './git';
import { checkBatonFolders, plainPathUnder } from './worktreeCheck';

/** What the setup command did, for the card's history. */
export interface SetupOutcome {
	command: string;
	/** null when it was killed (timeout) or ended by a signal. */
	exitCode: number | null;
	timedOut: boolean;
	durationMs: number;
	/** The last lines of its combined output (at most 20). */
	tail: string[];
}

export const includeFile = path.join('.baton', 'worktree-include');

/**
 * Copies the untracked files of `root` that match `.baton/worktree-include` into `worktree` (same
 * relative paths, modes and symlinks kept; existing files in the worktree are left alone, and so is
 * a path whose folder in the worktree is a symlink or a file: the branch's content must not carry the
 * user's ignored files out of the worktree). Returns the relative paths copied; none when there is no
 * include file, or when `.baton` in the main checkout is not a real folder.
 */
export async function copyIncludedFiles(root: string, worktree: string): Promise<string[]> {
	const listFile = path.join(root, includeFile);
	try {
		await checkBatonFolders(root);
		if (!(await lstat(listFile)).isFile()) {
			return [];
		}
		await access(listFile);
	} catch {
		return [];
	}
	const out = await git(root, ['ls-files', '-z', '--others', '--ignored', `--exclude-from=${listFile}`]);
	const files = splitNul(out.stdout).filter(f => !f.startsWith('.baton/') && !f.endsWith('/'));
	const copied: string[] = [];
	let next = 0;
	const worker = async () => {
		for (let rel = files[next++]; rel !== undefined; rel = files[next++]) {
			if (!(await plainPathUnder(worktree, rel))) {
				continue;
			}
			if (await copyOne(path.join(root, rel), path.join(worktree, rel))) {
				copied.push(rel);
			}
		}
	};
	await Promise.all(Array.from({ length: Math.min(8, files.length) }, worker));
	return copied.sort();
}

async function copyOne(from: string, to: string): Promise<boolean> {
	const stat = await lstat(from);
	await mkdir(path.dirname(to), { recursive: true });
	try {
		if (stat.isSymbolicLink()) {
			await symlink(await readlink(from), to);
		} else if (stat.isFile()) {
			await copyFile(from, to, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
			await chmod(to, stat.mode & 0o7777);
		} else {
			return false;
		}
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
			return false;
		}
		throw e;
	}
	return true;
}

/**
 * Runs `command` through the shell in `cwd` (it is the user's own command line, e.g. `npm ci`), with
 * BATON_WORKTREE set; stops it and its children after `timeoutMs`. Never throws for a failing command:
 * the outcome says how it ended.
 */
export async function runSetupCommand(command: string, cwd: string, timeoutMs: number): Promise<SetupOutcome> {
	return (await runWorktreeCommand(command, cwd, timeoutMs)).outcome;
}

/**
 * The one runner of a user's command line in a worktree (the setup command, and the project's check
 * after complete, mcp-server/hub/checks.ts): `/bin/sh -c` in its own process group, so the time limit
 * (or `signal`, a stopping hub) kills its children too. Returns the outcome and the last 16 KB of the
 * combined output as text (`stopped`: ended by `signal`, not by itself or its time limit).
 */
export function runWorktreeCommand(
	command: string,
	cwd: string,
	timeoutMs: number,
	signal?: AbortSignal,
): Promise<{ outcome: SetupOutcome; output: string; stopped: boolean }> {
	const started = performance.now();
	return new Promise(resolve => {
		const windows = process.platform === 'win32';
		const child = spawn(
			windows ? (process.env.ComSpec ?? 'cmd.exe') : '/bin/sh',
			windows ? ['/d', '/s', '/c', command] : ['-c', command],
			{
				cwd,
				env: { ...process.env, BATON_WORKTREE: cwd },
				stdio: ['ignore', 'pipe', 'pipe'],
				detached: !windows,
				windowsHide: true,
			},
		);
		let output = '';
		const keep = (chunk: Buffer) => {
			output = (output + chunk.toString('utf8')).slice(-16_384);
		};
		child.stdout.on('data', keep);
		child.stderr.on('data', keep);
		let timedOut = false;
		let stopped = false;
		const kill = () => {
			try {
				if (!windows && child.pid !== undefined) {
					process.kill(-child.pid, 'SIGKILL');
				} else {
					child.kill('SIGKILL');
				}
			} catch {
				// Already gone between the timer firing and the kill: nothing left to stop.
			}
		};
		const timer = setTimeout(() => {
			timedOut = true;
			kill();
		}, timeoutMs);
		const onAbort = () => {
			stopped = true;
			kill();
		};
		signal?.addEventListener('abort', onAbort, { once: true });
		let ended = false;
		const finish = (exitCode: number | null) => {
			if (ended) {
				return;
			}
			ended = true;
			clearTimeout(timer);
			signal?.removeEventListener('abort', onAbort);
			const tail = output
				.split('\n')
				.map(l => l.trimEnd())
				.filter(l => l !== '')
				.slice(-20);
			resolve({
				outcome: {
					command,
					exitCode: timedOut ? null : exitCode,
					timedOut,
					durationMs: Math.round(performance.now() - started),
					tail,
				},
				output,
				stopped,
			});
		};
		child.on('error', e => {
			output += `\n${e.message}`;
			finish(null);
		});
		child.on('close', code => finish(code));
	});
}
