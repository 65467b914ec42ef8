/**
 * Test helpers for `baton run` as users run it: the real dist/baton.js in a child process with
 * --json, its event lines collected, waits on them, signals to it. The agent is a fake agent program
 * from test/fixtures started through --command. Starts nothing besides what a test asks for.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { batonJs, childEnv, repoRoot } from './mcp';
import { onJsonLines } from './jsonLines';

/** helper `agents`'s fake agent CLI (complete, crash, hang, noexit, ratelimit, fail by the card's title). */
export const fakeAgent = join(repoRoot, 'test', 'fixtures', 'fakeAgent.mjs');
/**
 * The supervisor's own fake agent, for what fakeAgent.mjs does not do: a hang that ignores TERM (the
 * KILL after the grace), a slow start (an agent that dies before its MCP session opens), a line of
 * output a second (`busy`), and FAKE_AGENT_LOG's record of every start.
 */
export const runAgent = join(repoRoot, 'test', 'fixtures', 'runAgent.mjs');
/** The --command of a fake agent (node by its absolute path: checked to exist before the run). */
export function agentCommand(script = fakeAgent): string {
	return `${process.execPath} ${script} {mcpConfig}`;
}
export const fakeCommand = agentCommand();

export interface RunEvent {
	event: string;
	at: string;
	[key: string]: unknown;
}

export interface RunningSupervisor {
	proc: ChildProcess;
	readonly events: RunEvent[];
	stderr(): string;
	/** Resolves with the first event (already seen or to come) that matches. */
	waitFor(match: (e: RunEvent) => boolean, timeoutMs: number, what: string): Promise<RunEvent>;
	exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `baton run --json --kind fake --command <agent> ...args` on the data dir, started in `<dataDir>/../work`
 * (outside any repository, so the agents work there and write their files there), or in `cwd`.
 */
export function startRun(
	dataDir: string,
	args: string[],
	env: Record<string, string> = {},
	agent = fakeAgent,
	cwd = join(dataDir, '..', 'work'),
): RunningSupervisor {
	mkdirSync(cwd, { recursive: true });
	const command = agentCommand(agent);
	const proc = spawn(process.execPath, [batonJs, 'run', '--json', '--kind', 'fake', '--command', command, ...args], {
		env: childEnv(dataDir, env),
		cwd,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const events: RunEvent[] = [];
	const waiters: (() => void)[] = [];
	let stderr = '';
	onJsonLines(proc.stdout, e => events.push(e as RunEvent), {
		afterChunk: () => {
			for (const w of waiters.splice(0)) {
				w();
			}
		},
	});
	proc.stderr.setEncoding('utf8');
	proc.stderr.on('data', (chunk: string) => {
		stderr += chunk;
	});
	const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(resolve => {
		proc.on('exit', (code, signal) => {
			resolve({ code, signal });
			for (const w of waiters.splice(0)) {
				w();
			}
		});
	});
	let done = false;
	void exited.then(() => {
		done = true;
	});
	return {
		proc,
		events,
		stderr: () => stderr,
		exited,
		async waitFor(match, timeoutMs, what) {
			const deadline = Date.now() + timeoutMs;
			for (;;) {
				const found = events.find(match);
				if (found !== undefined) {
					return found;
				}
				if (done) {
					throw new Error(
						`baton run exited before ${what}; events:\n${events.map(e => JSON.stringify(e)).join('\n')}\n${stderr}`,
					);
				}
				const left = deadline - Date.now();
				if (left <= 0) {
					throw new Error(
						`timed out waiting for ${what}; events:\n${events.map(e => JSON.stringify(e)).join('\n')}\n${stderr}`,
					);
				}
				await new Promise<void>(resolve => {
					const timer = setTimeout(resolve, Math.min(left, 1000));
					waiters.push(() => {
						clearTimeout(timer);
						resolve();
					});
				});
			}
		},
	};
}

/** The most seats in use at once, from the run's started/exited events. */
export function maxConcurrent(events: readonly RunEvent[]): number {
	let now = 0;
	let max = 0;
	for (const e of events) {
		if (e.event === 'started' || e.event === 'adopted') {
			now++;
			max = Math.max(max, now);
		} else if (e.event === 'exited' && e.reason !== 'start_failed') {
			now--;
		}
	}
	return max;
}
