/**
 * Starting and stopping one agent process. The agent runs in its own process group (so a
 * Ctrl-C in the supervisor's terminal drains instead of killing it, and stopping it stops what it
 * started) with its output going straight to its log file, so it outlives a supervisor killed with -9.
 * An agent adopted after a restart is not our child: it is watched by its pid, and only counted as
 * alive while /proc/<pid>/environ still names its card (a recycled pid is not our agent).
 * Must not: signal a pid it has not checked, or wait on an agent in a way that blocks the loop.
 */
import { spawn } from 'node:child_process';
import { closeSync, readFileSync, readdirSync } from 'node:fs';
import { constants } from 'node:os';
import { basename } from 'node:path';

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
		child.once('exit', (exitCode, exitSignal) => {
			done = true;
			const { code, signal } = sandboxExit(input.command, exitCode, exitSignal);
			// Nothing it started outlives it: its group, and in a sandbox the pid namespace's init (still
			// in the group while it reaps what the agent left running), whose end ends the namespace.
			signalGroup(pid, 'SIGKILL');
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
 * bubblewrap exits with 128 + N when the agent it ran was killed by signal N: told as that signal, as
 * for an agent started plainly.
 */
function sandboxExit(
	command: string,
	code: number | null,
	signal: NodeJS.Signals | null,
): { code: number | null; signal: NodeJS.Signals | null } {
	if (basename(command) !== 'bwrap' || code === null || code <= 128) {
		return { code, signal };
	}
	const name = Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0];
	return name === undefined ? { code, signal } : { code: null, signal: name as NodeJS.Signals };
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
				// What it left running in its group (a sandbox's init and everything under it) goes too: only
				// once the leader is gone, so the group is still its own (a pid in use as a group id is not reused).
				killOrphanedGroup(pid);
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

/**
 * Signals the agent's process group. A sandboxed agent's group leader is bubblewrap, which would die of
 * a TERM at once (it forwards no signal) and take the agent's grace with it: the TERM goes to the rest
 * of its group but bubblewrap's processes (the agent and what it started), and bubblewrap ends with it. A KILL goes to all: the sandbox's pid
 * namespace then ends with everything in it.
 */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
	// Not to the sandbox's own init either (also bubblewrap): it would end the namespace at once. When
	// nothing but bubblewrap is in the group yet (a stop right after the start, before the agent's exec),
	// there is no grace to keep: the TERM goes to bubblewrap, which ends, and stopGroup's KILL then
	// takes whatever it had started. Otherwise that TERM reached nobody and the agent ran on for the grace.
	const members = signal !== 'SIGKILL' && isSandbox(pid) ? groupMembers(pid).filter(m => !isSandbox(m)) : [];
	if (members.length > 0) {
		for (const member of members) {
			try {
				process.kill(member, signal);
			} catch {
				// Gone already.
			}
		}
		return;
	}
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

function killOrphanedGroup(pgid: number): void {
	try {
		process.kill(pgid, 0);
		return; // The pid is alive: another process now, not ours to signal.
	} catch {
		// Gone: signal what is left of its group.
	}
	try {
		process.kill(-pgid, 'SIGKILL');
	} catch {
		// Nothing left.
	}
}

/** Whether `pid` is bubblewrap (a sandboxed agent's leader, sandbox.ts). */
function isSandbox(pid: number): boolean {
	try {
		return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'bwrap';
	} catch {
		return false;
	}
}

/** The other processes of process group `pgid` (Linux /proc). */
function groupMembers(pgid: number): number[] {
	const found: number[] = [];
	let entries: string[];
	try {
		entries = readdirSync('/proc');
	} catch {
		return found;
	}
	for (const entry of entries) {
		if (!/^\d+$/.test(entry) || Number(entry) === pgid) {
			continue;
		}
		try {
			const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
			// Field 5 of stat is the process group; comm (field 2) may hold spaces, so read after ')'.
			if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid) {
				found.push(Number(entry));
			}
		} catch {
			// Gone, or not ours to read.
		}
	}
	return found;
}

function procMounted(): boolean {
	try {
		readFileSync('/proc/self/stat');
		return true;
	} catch {
		return false;
	}
}
