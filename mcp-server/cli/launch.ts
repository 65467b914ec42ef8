/**
 * How an MCP client starts this Baton: the one launch command that `baton init` writes
 * and `baton up` prints. It is the Baton that is running: `npx -y baton-mcp mcp` only when this one
 * was itself run through npx, `baton mcp` when the `baton` on PATH is this same install, else this
 * Node and this copy's absolute dist/baton.js (a clone, a tarball, a prefix not on PATH). `checkLaunch`
 * runs the command with `--version` (bounded) so a config that cannot start is never written.
 * Reads the file system and the environment; writes nothing.
 */
import { execFile } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { delimiter, join, sep } from 'node:path';

import { BatonError } from '../../core/errors';
import type { McpLaunch } from '../../core/formats/mcpConfig';

/** The npm package that carries the `baton` program. */
export const packageName = 'baton-mcp';

export const launchKinds = ['npx', 'baton', 'node'] as const;
export type LaunchKind = (typeof launchKinds)[number];

export function isLaunchKind(v: string): v is LaunchKind {
	return (launchKinds as readonly string[]).includes(v);
}

/** What the running Baton is: its script (process.argv[1]), environment and Node. */
export interface RunningBaton {
	script: string;
	env: NodeJS.ProcessEnv;
	execPath: string;
}

export function runningBaton(): RunningBaton {
	const script = process.argv[1];
	if (script === undefined) {
		throw new Error('Cannot tell where baton.js is: run it as "node dist/baton.js".');
	}
	return { script, env: process.env, execPath: process.execPath };
}

function real(path: string): string {
	try {
		return realpathSync(path);
	} catch {
		return path;
	}
}

/** The first `name` on `pathVar` that is a file, as found (not resolved); undefined if none. */
export function findOnPath(name: string, pathVar: string | undefined): string | undefined {
	for (const dir of (pathVar ?? '').split(delimiter)) {
		const candidate = join(dir, name);
		try {
			if (dir !== '' && statSync(candidate).isFile()) {
				return candidate;
			}
		} catch {
			// Not in this folder.
		}
	}
	return undefined;
}

/**
 * Whether this Baton was started by npx: its script lives in npx's cache (`…/_npx/<hash>/…`), or npm
 * ran it as `npm exec` (npx) from a package's node_modules.
 */
export function ranThroughNpx(run: RunningBaton): boolean {
	const script = real(run.script);
	if (script.includes(`${sep}_npx${sep}`)) {
		return true;
	}
	return run.env.npm_command === 'exec' && script.includes(`${sep}node_modules${sep}${packageName}${sep}`);
}

/** The launch kind that starts the running Baton, and why, in words for `init` and `up`. */
export function detectLaunch(run: RunningBaton): { kind: LaunchKind; why: string } {
	if (ranThroughNpx(run)) {
		return { kind: 'npx', why: 'this Baton was run through npx' };
	}
	const onPath = findOnPath('baton', run.env.PATH);
	if (onPath !== undefined && real(onPath) === real(run.script)) {
		return { kind: 'baton', why: `the baton on PATH (${onPath}) is this install` };
	}
	return {
		kind: 'node',
		why:
			onPath === undefined
				? 'no baton on PATH: this copy, by absolute path'
				: `the baton on PATH (${onPath}) is another install: this copy, by absolute path`,
	};
}

/** The command and args of `kind` (env is the caller's: init pins --data-dir, up pins a non-default dir). */
export function launchCommand(kind: LaunchKind, run: RunningBaton): { command: string; args: string[] } {
	switch (kind) {
		case 'npx':
			return { command: 'npx', args: ['-y', packageName, 'mcp'] };
		case 'baton':
			return { command: 'baton', args: ['mcp'] };
		case 'node':
			return { command: run.execPath, args: [real(run.script), 'mcp'] };
	}
}

/** The command line as one would type it. */
export function launchLine(launch: { command: string; args: string[] }): string {
	return [launch.command, ...launch.args]
		.map(s => (/^[\w./:=@+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`))
		.join(' ');
}

/** How long `checkLaunch` waits: npx may have to fetch the package first. */
export const launchCheckMs: Record<LaunchKind, number> = { npx: 60_000, baton: 15_000, node: 15_000 };

/** What to do when a kind's command does not start. */
export const launchAdvice: Record<LaunchKind, string> = {
	npx: `Until ${packageName} is installable from npm, use --launch node (this copy) or --launch baton (a global install).`,
	baton: `Install Baton globally (npm i -g ${packageName}) or use --launch node.`,
	node: 'Check that this copy is built (npm run build).',
};

/**
 * Runs the launch command with `--version` appended (`baton mcp --version`), as the MCP client
 * will, with its env; resolves with the version printed, throws a BatonError naming the command,
 * what went wrong and `advice` when it does not start within `timeoutMs`.
 */
export function checkLaunch(
	launch: McpLaunch,
	env: NodeJS.ProcessEnv,
	timeoutMs: number,
	/** Appended to the refusal: what happened instead and what to do. */
	advice = '',
): Promise<string> {
	const line = `${launchLine(launch)} --version`;
	return new Promise((resolve, reject) => {
		execFile(
			launch.command,
			[...launch.args, '--version'],
			{ env: { ...env, ...launch.env }, timeout: timeoutMs, encoding: 'utf8', maxBuffer: 1 << 20 },
			(error, stdout, stderr) => {
				const version = stdout.trim();
				if (error === null && /^\d+\.\d+\.\d+/.test(version)) {
					resolve(version);
					return;
				}
				const e = error as (NodeJS.ErrnoException & { killed?: boolean }) | null;
				const why =
					e?.code === 'ENOENT'
						? `${launch.command} was not found on PATH`
						: e?.killed === true
							? `it did not finish within ${Math.round(timeoutMs / 1000)} s`
							: `it exited ${typeof e?.code === 'number' ? e.code : 'with no version'}${
									stderr.trim() === '' ? '' : `: ${stderr.trim().split('\n').slice(-3).join(' ').slice(0, 300)}`
								}`;
				reject(
					new BatonError(
						'unavailable',
						`The MCP launch command does not start: "${line}" failed (${why}).${advice === '' ? '' : ` ${advice}`}`,
						{
							command: launch.command,
							args: launch.args,
						},
					),
				);
			},
		);
	});
}
