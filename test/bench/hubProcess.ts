/**
 * A real hub (`node dist/baton.js hub --data-dir D`) as a child process of a bench: start it, connect
 * clients to it, read its peak RSS from /proc, stop it. The bench owns the process by pid and kills
 * only that pid. Needs `npm run build` first (npm run bench does it).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { connectHub } from '../../core/client/connectHub';
import type { AgentInfo, ClientKind } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';

export const batonJs = join(__dirname, '..', '..', 'dist', 'baton.js');

export function requireBuild(): void {
	if (!existsSync(batonJs)) {
		throw new Error(`${batonJs} is missing: run "npm run build" first (npm run bench does).`);
	}
}

/** Connects to a running hub without ever spawning one (the bench decides who starts hubs). */
export function connect(dataDir: string, client: ClientKind = 'test', agent?: AgentInfo): Promise<RpcClient> {
	return connectHub({ dataDir, client, spawnHub: false, reconnect: false, ...(agent ? { agent } : {}) });
}

export interface HubHandle {
	proc: ChildProcess;
	pid: number;
	/** ms from spawn until a client's hello was answered. */
	startMs: number;
	/** CPU (user + system) the hub process had used by then, in ms. */
	startCpuMs: number;
	/** The hub's own "opened the … store in N ms" log line, when it printed one. */
	storeOpenMs: number | undefined;
	stop(): Promise<void>;
}

/**
 * Starts a hub on `dataDir` and waits until it answers a hello (up to `timeoutMs`). `env` adds to this
 * process's environment (BATON_FAST_PATHS for an A/B run); `script` is another build's baton.js (the
 * inbox bench's baseline); `nodeArgs` go to node before the script (the fleet bench's --cpu-prof).
 */
export async function startHub(
	dataDir: string,
	timeoutMs = 60_000,
	env: NodeJS.ProcessEnv = {},
	script = batonJs,
	nodeArgs: readonly string[] = [],
): Promise<HubHandle> {
	requireBuild();
	const t0 = performance.now();
	const proc = spawn(process.execPath, ['--v8-pool-size=1', ...nodeArgs, script, 'hub', '--data-dir', dataDir], {
		stdio: ['ignore', 'ignore', 'pipe'],
		// As core/client/connectHub.ts starts a hub for a user (withLeanMalloc, defaultSpawnCommand).
		env: { MALLOC_MMAP_THRESHOLD_: '131072', ...process.env, ...env, BATON_DATA_DIR: dataDir },
	});
	let stderr = '';
	proc.stderr.setEncoding('utf8');
	proc.stderr.on('data', (chunk: string) => {
		stderr = (stderr + chunk).slice(-4000);
	});
	// An object, not a let: the exit callback writes it between loop iterations.
	const state = { exited: false };
	proc.once('exit', () => (state.exited = true));
	const pid = proc.pid;
	if (pid === undefined) {
		throw new Error('could not spawn the hub');
	}
	for (;;) {
		if (state.exited) {
			throw new Error(`the hub exited during start-up:\n${stderr}`);
		}
		try {
			const client = await connect(dataDir);
			client.close();
			break;
		} catch {
			if (performance.now() - t0 > timeoutMs) {
				proc.kill('SIGKILL');
				throw new Error(`the hub did not answer within ${timeoutMs} ms:\n${stderr}`);
			}
			await new Promise(r => setTimeout(r, 20));
		}
	}
	const startMs = performance.now() - t0;
	return {
		proc,
		pid,
		startMs,
		startCpuMs: cpuMsOf(pid),
		storeOpenMs: parseStoreOpen(stderr),
		stop: () => stopPid(proc),
	};
}

/** SIGTERM (the hub closes PGlite cleanly), SIGKILL after 10 s. */
export function stopPid(proc: ChildProcess): Promise<void> {
	if (proc.exitCode !== null || proc.signalCode !== null) {
		return Promise.resolve();
	}
	return new Promise(resolve => {
		const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
		proc.once('exit', () => {
			clearTimeout(timer);
			resolve();
		});
		proc.kill('SIGTERM');
	});
}

/** Peak and current resident set of a live process in MB (Linux /proc; VmHWM is the high-water mark). */
export function rssOf(pid: number): { peakMb: number; currentMb: number } {
	const status = readFileSync(`/proc/${pid}/status`, 'utf8');
	return { peakMb: mbOf(status, 'VmHWM'), currentMb: mbOf(status, 'VmRSS') };
}

/** A `Field:   1234 kB` line of a /proc file, in MB (NaN when absent). */
function mbOf(text: string, field: string): number {
	return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) / 1024;
}

/**
 * Resident and proportional memory of a live process (/proc/<pid>/smaps_rollup), in MB. PSS divides
 * each shared page among the processes mapping it: summed over 64 `baton mcp` processes it is what
 * the fleet carries, where RSS counts the node binary's pages once per process.
 */
export function memoryOf(pid: number): { rssMb: number; pssMb: number } {
	const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
	return { rssMb: mbOf(rollup, 'Rss'), pssMb: mbOf(rollup, 'Pss') };
}

let clockTicks: number | undefined;

/**
 * CPU time (user + system) a live process has used so far, in ms, from /proc/<pid>/stat. On a shared
 * machine CPU per operation is far steadier than wall-clock latency, so benches report both.
 */
export function cpuMsOf(pid: number): number {
	clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
	const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
	// Fields after the command name (which may contain spaces) start after the last ')'.
	const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
	const utime = Number(fields[11]);
	const stime = Number(fields[12]);
	return ((utime + stime) / clockTicks) * 1000;
}

/** Reads "opened the pglite store in 2635 ms" from the hub's stderr (its start-up log). */
function parseStoreOpen(stderr: string): number | undefined {
	const m = /opened the \w+ store in (\d+) ms/.exec(stderr);
	return m?.[1] === undefined ? undefined : Number(m[1]);
}
