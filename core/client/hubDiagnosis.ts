/**
 * What a client says when the hub does not answer: is the hub's process (pid from hub.json, or the
 * owner socket's announcement) still there, and is it busy (burning CPU), stopped, or idle? The
 * sentence names the pid and `baton hub stop --force`. Reads hub.json, the owner socket and, on Linux,
 * /proc; never signals or changes anything (ending the hub is `baton hub stop --force`, hubStop.ts).
 */
import { readFileSync } from 'node:fs';

import type { HubPaths } from '../paths';
import { probeOwner } from './ownerProbe';

export interface HubDiagnosis {
	pid: number | undefined;
	/** The process exists (signal 0 reaches it). */
	alive: boolean;
	/** Linux only: 'busy' (running, or on CPU for a fifth of a sample), 'stopped' (SIGSTOP, traced), 'idle', 'zombie'. */
	activity: 'busy' | 'idle' | 'stopped' | 'zombie' | 'unknown';
	cpuPercent: number | undefined;
	sentence: string;
}

/** The pid the hub announced in hub.json, else what its owner socket says. */
export async function hubPid(paths: HubPaths): Promise<number | undefined> {
	try {
		const info = JSON.parse(readFileSync(paths.hubJson, 'utf8')) as { pid?: unknown };
		if (typeof info.pid === 'number') {
			return info.pid;
		}
	} catch {
		// No hub.json: a hub that is still opening its store, or none.
	}
	const owner = await probeOwner(paths.ownerSocket, 500);
	return owner.state === 'alive' ? owner.pid : undefined;
}

export function isAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (e) {
		// EPERM: it exists but belongs to someone else.
		return (e as NodeJS.ErrnoException).code === 'EPERM';
	}
}

/** /proc/<pid>/stat: state letter and utime+stime in clock ticks. */
function procStat(pid: number): { state: string; ticks: number } | undefined {
	try {
		const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
		// The command name may hold spaces and parentheses: fields start after the last ')'.
		const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
		return { state: fields[0] ?? '?', ticks: Number(fields[11]) + Number(fields[12]) };
	} catch {
		return undefined;
	}
}

const clockTicksPerSecond = 100;

/** Samples the hub's process for `sampleMs` and words what it found. */
export async function diagnoseHub(paths: HubPaths, sampleMs = 300): Promise<HubDiagnosis> {
	const pid = await hubPid(paths);
	if (pid === undefined || !isAlive(pid)) {
		return {
			pid,
			alive: false,
			activity: 'unknown',
			cpuPercent: undefined,
			sentence: `The Baton hub${pid === undefined ? '' : ` (pid ${pid})`} is not running; the next command starts a fresh one.`,
		};
	}
	const first = procStat(pid);
	await new Promise(resolve => setTimeout(resolve, sampleMs));
	const second = procStat(pid);
	let activity: HubDiagnosis['activity'] = 'unknown';
	let cpuPercent: number | undefined;
	if (first !== undefined && second !== undefined) {
		cpuPercent = Math.round((((second.ticks - first.ticks) / clockTicksPerSecond) * 100_000) / sampleMs);
		activity =
			second.state === 'T' || second.state === 't'
				? 'stopped'
				: second.state === 'Z'
					? 'zombie'
					: // Running now, or on CPU for a good share of the sample even on a loaded machine.
						second.state === 'R' || cpuPercent >= 20
						? 'busy'
						: 'idle';
	}
	const how =
		activity === 'busy'
			? `is alive and busy (${cpuPercent} % CPU)`
			: activity === 'stopped'
				? 'is alive but stopped (SIGSTOP or a debugger)'
				: activity === 'idle'
					? 'is alive but idle'
					: 'is alive';
	return {
		pid,
		alive: true,
		activity,
		cpuPercent,
		sentence: `The Baton hub (pid ${pid}) ${how} and does not answer. If it stays stuck, end it with "baton hub stop --force" (data dir ${paths.dataDir}); the next command starts a fresh hub, which recovers everything acknowledged.`,
	};
}
