/**
 * Starting and stopping one agent process (issue 30). The agent runs in its own process group (so a
 * Ctrl-C in the supervisor's terminal drains instead of killing it, and stopping it stops what it
 * started) with its output going straight to its log file, so it outlives a supervisor killed with -9.
 * An agent adopted after a restart is not our child: it is watched by its pid, and only counted as
 * alive while /proc/<pid>/environ still names its card (a recycled pid is not our agent).
 * Must not: signal a pid it has not checked, or wait on an agent in a way that blocks the loop.
 */
import { spawn } from 'node:child_process';
import { closeSync, readFileSync } from 'node:fs';

export interface AgentExit {
	/** The exit code, or null when a signal ended it or it was adopted (not our child). */
	code: number | null;
	signal: NodeJS.Signals | null;
}

export interface AgentProcess {
	readonly pid: number;
	readonly exited: Promise<AgentExit>;
	/** TERM to the group, then KILL after `graceMs` if it is still there; resolves at its exit. */
	stop(graceMs: number): Promise<AgentExit>;
}

export interface SpawnInput {
	command: string;
	args: string[];
	cwd: string;
	env: Record<string, string>;
	/** The log file's descriptor: the agent's stdout and stderr. Closed here once the child has it. */
	logFd: number;
}

/** Spawns the agent; throws (with the OS's reason) when it cannot start, e.g. ENOENT, EACCES. */
export async function spawnAgent(input: SpawnInput): Promise<AgentProcess> {
	const child = spawn(input.command, input.args, {
		cwd: input.cwd,
		env: input.env,
		stdio: ['ignore', input.logFd, input.logFd],
		detached: true,
	});
	try {
		await new Promise<void>((resolve, reject) => {
			child.once('spawn', resolve);
			child.once('error', reject);
		});
	} finally {
		closeSync(input.logFd);
	}
	const pid = child.pid;
	if (pid === undefined) {
		throw new Error(`${input.command} did not start`);
	}
	let done = false;
	const exited = new Promise<AgentExit>(resolve => {
		child.once('exit', (code, signal) => {
			done = true;
			resolve({ code, signal });
		});
	});
	return {
		pid,
		exited,
		stop: graceMs => stopGroup(pid, exited, () => done, graceMs),
	};
}

/**
 * Watches an agent another supervisor run started (adoption after a restart): polls that the pid is
 * alive and still this card's agent. Its exit code cannot be known.
 */
export function watchAdopted(pid: number, cardId: string, pollMs = 1000): AgentProcess {
	let done = false;
	const exited = new Promise<AgentExit>(resolve => {
		const timer = setInterval(() => {
			if (!isAgentOf(pid, cardId)) {
				clearInterval(timer);
				done = true;
				resolve({ code: null, signal: null });
			}
		}, pollMs);
	});
	return {
		pid,
		exited,
		stop: graceMs => stopGroup(pid, exited, () => done || !isAgentOf(pid, cardId), graceMs),
	};
}

async function stopGroup(
	pid: number,
	exited: Promise<AgentExit>,
	gone: () => boolean,
	graceMs: number,
): Promise<AgentExit> {
	if (!gone()) {
		signalGroup(pid, 'SIGTERM');
		const timer = setTimeout(() => {
			if (!gone()) {
				signalGroup(pid, 'SIGKILL');
			}
		}, graceMs);
		const result = await exited;
		clearTimeout(timer);
		// Whatever it started in its group goes with it (an agent CLI's tools, its `baton mcp`).
		signalGroup(pid, 'SIGKILL');
		return result;
	}
	return exited;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(-pid, signal);
	} catch {
		try {
			process.kill(pid, signal);
		} catch {
			// Gone already.
		}
	}
}

/**
 * Whether `pid` is alive and is the agent of `cardId`: its environment (Linux /proc) has
 * BATON_CARD_ID=<cardId>. Where /proc cannot be read (another OS, another user) a live pid counts.
 */
export function isAgentOf(pid: number, cardId: string): boolean {
	try {
		process.kill(pid, 0);
	} catch {
		// ESRCH: gone; EPERM: another user's process, so not an agent this supervisor started.
		return false;
	}
	let environ: Buffer;
	try {
		environ = readFileSync(`/proc/${pid}/environ`);
	} catch (e) {
		const code = (e as NodeJS.ErrnoException).code;
		// No /proc on this system: the live pid is all we can know.
		return code === 'ENOENT' && !procMounted();
	}
	const wanted = `BATON_CARD_ID=${cardId}`;
	return environ
		.toString('utf8')
		.split('\0')
		.some(entry => entry === wanted);
}

function procMounted(): boolean {
	try {
		readFileSync('/proc/self/stat');
		return true;
	} catch {
		return false;
	}
}
