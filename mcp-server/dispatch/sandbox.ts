/**
 * The sandbox `baton run` starts every agent in (Linux: bubblewrap; macOS: Seatbelt, seatbelt.ts). Inside it the card's workspace, the
 * parts of the repository's git dir a commit writes (objects, the card branches' refs and reflogs, the
 * worktree's own admin dir; never `config`, `hooks` or another branch's ref), a private /tmp and the agent's own config and cache folders
 * (declared per kind below) are writable; the rest of the file system, the main checkout included, is
 * read-only; Baton's data dir is an empty read-only folder holding only the hub socket and the card's
 * MCP config and prompt (no token); the network is shared (agents need their model). The agent runs in
 * its own pid namespace, so when it exits everything it started ends with it. Where no sandbox can
 * run, `baton run` says once that the gate is advisory. Must not: spawn the agent (spawnAgent.ts does),
 * or widen what is writable beyond the declarations here.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';

import type { Launch } from './agents';

/**
 * What each kind of agent keeps in the home folder and must be able to write (its login, settings,
 * session files, caches): paths under $HOME, a folder when it ends with `/` (the kind's own are made when
 * missing, so a first run can log in), else a file (bound only when it exists). Every kind also gets `common`.
 */
export const agentHomeWrites: Readonly<Record<string, readonly string[]>> = {
	claude: ['.claude/', '.claude.json', '.claude.json.backup', '.config/claude/'],
	codex: ['.codex/'],
	gemini: ['.gemini/'],
	common: ['.cache/', '.npm/', '.local/state/', '.local/share/pnpm/', '.yarn/'],
};

/**
 * How agents are started: in a bubblewrap sandbox (Linux), in Seatbelt (macOS: seatbelt.ts), or plainly
 * (with why: the gate is advisory).
 */
export type SandboxChoice =
	{ kind: 'bwrap'; program: string } | { kind: 'seatbelt'; program: string } | { kind: 'none'; why: string };

/**
 * Whether bubblewrap can run here: on PATH (the supervisor's), and a trial sandbox starts (user
 * namespaces may be off). `off` is `--no-sandbox`.
 */
export function chooseSandbox(options: {
	off: boolean;
	pathVar: string | undefined;
	platform?: NodeJS.Platform;
	/** macOS: where sandbox-exec is (default its fixed place). */
	sandboxExec?: string;
}): SandboxChoice {
	if (options.off) {
		return { kind: 'none', why: '--no-sandbox was given' };
	}
	const platform = options.platform ?? process.platform;
	if (platform === 'darwin') {
		return chooseSeatbelt(options.sandboxExec ?? sandboxExecPath);
	}
	if (platform !== 'linux') {
		return { kind: 'none', why: `no sandbox is implemented on ${platform}` };
	}
	const program = findOnPath('bwrap', options.pathVar);
	if (program === undefined) {
		return {
			kind: 'none',
			why: 'bubblewrap (bwrap) is not on PATH; install it (Debian/Ubuntu: apt install bubblewrap)',
		};
	}
	const trial = spawnSync(
		program,
		['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--', 'true'],
		{ stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000, encoding: 'utf8' },
	);
	if (trial.status !== 0) {
		const said = [trial.stderr, trial.error?.message, `exit ${String(trial.status)}`]
			.find(t => t !== undefined && t.trim() !== '')
			?.trim()
			.split('\n')[0];
		return { kind: 'none', why: `bubblewrap cannot start a sandbox here: ${said ?? ''}` };
	}
	return { kind: 'bwrap', program };
}

/** Where macOS keeps sandbox-exec; never looked up on PATH (a writable PATH entry could shadow it). */
export const sandboxExecPath = '/usr/bin/sandbox-exec';

/** Seatbelt where `program` is there and a trial profile runs (it is deprecated, not removed). */
function chooseSeatbelt(program: string): SandboxChoice {
	if (!existsSync(program)) {
		return { kind: 'none', why: `${program} is not on this Mac` };
	}
	const trial = spawnSync(program, ['-p', '(version 1)(allow default)', '/usr/bin/true'], {
		stdio: ['ignore', 'ignore', 'pipe'],
		timeout: 10_000,
		encoding: 'utf8',
	});
	if (trial.status !== 0) {
		const said = [trial.stderr, trial.error?.message, `exit ${String(trial.status)}`]
			.find(t => t !== undefined && t.trim() !== '')
			?.trim()
			.split('\n')[0];
		return { kind: 'none', why: `sandbox-exec cannot start a sandbox here: ${said ?? ''}` };
	}
	return { kind: 'seatbelt', program };
}

/** The line `baton run` prints at start when agents run without a sandbox. */
export function advisoryText(why: string): string {
	return `Agents run without a sandbox (${why}): they have your full rights, so the review gate and the card boundary are advisory. See docs/guide.md, "baton run".`;
}

function findOnPath(program: string, pathVar: string | undefined): string | undefined {
	for (const dir of (pathVar ?? '').split(delimiter)) {
		if (dir === '' || !isAbsolute(dir)) {
			continue;
		}
		const candidate = join(dir, program);
		try {
			if (statSync(candidate).isFile()) {
				return candidate;
			}
		} catch {
			// Not here.
		}
	}
	return undefined;
}

export interface SandboxPlan {
	/** The card's workspace (its worktree, else the checkout or folder the agent works in). */
	workspace: string;
	/** The repository's main checkout, shown read-only (even under /tmp). */
	repoRoot: string | undefined;
	/** Baton's data dir: hidden. */
	dataDir: string;
	/** Files of the data dir the agent needs: the hub socket (read-write), its MCP config and prompt. */
	socket: string;
	readable: string[];
	/** Other folders to show read-only again under the private /tmp (this Baton, the agent program). */
	programs: string[];
	/** The agent kind (its home folders: agentHomeWrites). */
	kind: string;
	home?: string;
}

/**
 * The kind's writable home paths (its own and the common ones), its own folders made when missing so
 * a first run can log in.
 */
export function homeWrites(kind: string, home: string): string[] {
	const own = agentHomeWrites[kind] ?? [];
	return [...own, ...(agentHomeWrites.common ?? [])].map(rel => {
		if (rel.endsWith('/') && own.includes(rel)) {
			try {
				mkdirSync(join(home, rel), { recursive: true, mode: 0o700 });
			} catch {
				// A read-only or foreign home: the agent goes without it.
			}
		}
		return join(home, rel);
	});
}

/** The agent's launch, wrapped in bubblewrap as the plan says. */
export function sandboxed(program: string, launch: Launch, plan: SandboxPlan): Launch {
	const args: string[] = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
	if (existsSync('/var/tmp')) {
		args.push('--tmpfs', '/var/tmp');
	}
	const ro = (path: string): void => {
		if (existsSync(path)) {
			args.push('--ro-bind', path, path);
		}
	};
	const rw = (path: string): void => {
		if (existsSync(path)) {
			args.push('--bind', path, path);
		}
	};
	// Read-only again what the private /tmp hid: the checkout, this Baton and the agent's program.
	for (const path of [plan.repoRoot, ...plan.programs]) {
		if (path !== undefined && isUnder(path, '/tmp')) {
			ro(path);
		}
	}
	rw(plan.workspace);
	for (const path of gitWrites(plan.workspace)) {
		rw(path);
	}
	const home = plan.home ?? homedir();
	for (const path of homeWrites(plan.kind, home)) {
		rw(path);
	}
	// Baton's data dirs last: nothing bound above shows through them. Only the socket and the card's
	// files are put back, then the folder is made read-only (no hub can be started in it).
	// A data dir inside another hidden one (the default ~/.config/baton/backlog) is hidden with it.
	const candidates = [resolve(plan.dataDir), join(home, '.config', 'baton')].filter(d => existsSync(d));
	const hidden = candidates.filter(
		(d, i) => candidates.indexOf(d) === i && !candidates.some(h => h !== d && isUnder(d, h)),
	);
	for (const dir of hidden) {
		args.push('--tmpfs', dir);
	}
	if (existsSync(plan.socket)) {
		args.push('--bind', plan.socket, plan.socket);
	}
	for (const file of plan.readable) {
		ro(file);
	}
	for (const dir of hidden) {
		args.push('--remount-ro', dir);
	}
	args.push('--unshare-pid', '--chdir', launch.cwd, '--setenv', 'TMPDIR', '/tmp', '--', launch.command, ...launch.args);
	return { command: program, args, cwd: launch.cwd, env: launch.env };
}

/**
 * The parts of the repository's git dir a commit in `workspace` writes, when it is a linked worktree
 * (its `.git` is a file naming `<common>/worktrees/<name>`): that admin dir, the common dir's objects,
 * and the refs and reflogs of the card branches (`refs/heads/baton/`), never another branch's. A workspace whose `.git` is a folder already has it inside.
 */
export function gitWrites(workspace: string): string[] {
	let text: string;
	try {
		text = readFileSync(join(workspace, '.git'), 'utf8');
	} catch {
		return [];
	}
	const match = /^gitdir:\s*(.+)$/m.exec(text);
	if (match?.[1] === undefined) {
		return [];
	}
	const admin = resolve(workspace, match[1].trim());
	let common: string;
	try {
		common = resolve(admin, readFileSync(join(admin, 'commondir'), 'utf8').trim());
	} catch {
		common = dirname(dirname(admin));
	}
	// Only the card branches' refs: with all of refs/ writable an agent could move main itself
	// (`git update-ref refs/heads/main …`) and skip the review. Its own branch is baton/<card>.
	const branches = [join(common, 'refs', 'heads', 'baton'), join(common, 'logs', 'refs', 'heads', 'baton')];
	for (const dir of branches) {
		try {
			mkdirSync(dir, { recursive: true });
		} catch {
			// Not ours to make: git then fails to commit there, and says so.
		}
	}
	return [admin, join(common, 'objects'), ...branches].map(real);
}

function real(path: string): string {
	try {
		return realpathSync(path);
	} catch {
		return path;
	}
}

function isUnder(path: string, dir: string): boolean {
	const p = resolve(path);
	return p === dir || p.startsWith(`${dir}/`);
}

/**
 * What a program line needs to be seen in the sandbox: the program and every absolute path among its
 * arguments that exists (a script), with the package folder of a `dist/*.js` (this Baton's bundles).
 */
export function programPaths(line: { command: string; args: readonly string[] }): string[] {
	const out: string[] = [];
	for (const word of [line.command, ...line.args]) {
		if (!isAbsolute(word) || !existsSync(word)) {
			continue;
		}
		out.push(word);
		if (/\/dist\/[^/]+\.js$/.test(word)) {
			out.push(dirname(dirname(word)));
		}
	}
	return out;
}
