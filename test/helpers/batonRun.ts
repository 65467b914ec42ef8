/**
 * `baton run` as a child process for the dispatch proofs: the built dist/baton.js with the
 * given flags and --json, its event lines collected (and the pids of the agents it reports, so a test
 * can end any it left behind), a wait on them, and its exit. Starts nothing else.
 */
import { type ChildProcess, spawn } from 'node:child_process';

import { batonJs, childEnv, isAlive } from './mcp';
import { onJsonLines } from './jsonLines';

export interface RunLine {
	event: string;
	[key: string]: unknown;
}

export interface BatonRun {
	proc: ChildProcess;
	readonly lines: RunLine[];
	stderr(): string;
	exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
	/** The first line (seen or to come) that matches; rejects after `ms` or when the run exits first. */
	waitFor(match: (l: RunLine) => boolean, ms: number, what: string): Promise<RunLine>;
}

/** Pids of the agents every run in this process reported (started or adopted). */
export const reportedAgentPids = new Set<number>();

export function startBatonRun(options: {
	dataDir: string;
	args: string[];
	env?: Record<string, string>;
	/** The supervisor's whole environment instead of childEnv(dataDir, env). */
	rawEnv?: Record<string, string>;
	cwd: string;
}): BatonRun {
	const proc = spawn(process.execPath, [batonJs, 'run', '--json', ...options.args], {
		cwd: options.cwd,
		env: options.rawEnv ?? childEnv(options.dataDir, options.env),
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const lines: RunLine[] = [];
	const wake: (() => void)[] = [];
	let stderr = '';
	onJsonLines(
		proc.stdout,
		value => {
			const line = value as RunLine;
			lines.push(line);
			if ((line.event === 'started' || line.event === 'adopted') && typeof line.pid === 'number') {
				reportedAgentPids.add(line.pid);
			}
		},
		{
			afterChunk: () => {
				for (const w of wake.splice(0)) {
					w();
				}
			},
			onNotJson: part => (stderr += `[stdout, not JSON] ${part}\n`),
		},
	);
	proc.stderr.setEncoding('utf8');
	proc.stderr.on('data', (chunk: string) => (stderr += chunk));
	let done = false;
	const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(resolve =>
		proc.on('exit', (code, signal) => {
			done = true;
			resolve({ code, signal });
			for (const w of wake.splice(0)) {
				w();
			}
		}),
	);
	return {
		proc,
		lines,
		stderr: () => stderr,
		exited,
		async waitFor(match, ms, what) {
			const deadline = Date.now() + ms;
			for (;;) {
				const found = lines.find(match);
				if (found !== undefined) {
					return found;
				}
				const left = deadline - Date.now();
				if (done || left <= 0) {
					throw new Error(
						`${done ? 'baton run exited' : 'timed out'} before ${what}; its lines:\n${lines.map(l => JSON.stringify(l)).join('\n')}\n${stderr}`,
					);
				}
				await new Promise<void>(resolve => {
					const timer = setTimeout(resolve, Math.min(left, 500));
					wake.push(() => {
						clearTimeout(timer);
						resolve();
					});
				});
			}
		},
	};
}

/** Ends a run: SIGINT (drain), then SIGKILL after `graceMs`; then every agent it reported. */
export async function endBatonRun(run: BatonRun, graceMs = 15_000): Promise<void> {
	if (run.proc.exitCode === null && run.proc.signalCode === null) {
		run.proc.kill('SIGINT');
		const timer = setTimeout(() => run.proc.kill('SIGKILL'), graceMs);
		await run.exited;
		clearTimeout(timer);
	}
}

/** Kills every agent a run reported that is still alive (a test's last resort, by pid). */
export function killReportedAgents(): void {
	for (const pid of reportedAgentPids) {
		if (isAlive(pid)) {
			process.kill(pid, 'SIGKILL');
		}
	}
}
