/**
 * `baton hub stop --force`: ends a hub that does not answer. Signals the pid the hub announced for
 * this data dir (hub.json, else its owner socket): SIGCONT + SIGTERM first (a hub that can still run
 * its handlers closes the store cleanly), SIGKILL after the grace period. Nothing acknowledged is lost
 * either way: the next hub recovers from the store's write-ahead log. Touches no other process.
 */
import { rmSync } from 'node:fs';

import { hubPid, isAlive } from '../../core/client/hubDiagnosis';
import type { HubPaths } from '../../core/paths';

export interface ForcedStop {
	pid: number | undefined;
	/** How it ended: it was not running, SIGTERM sufficed, or it took SIGKILL. */
	how: 'not running' | 'SIGTERM' | 'SIGKILL';
}

async function exited(pid: number, withinMs: number): Promise<boolean> {
	const deadline = Date.now() + withinMs;
	while (Date.now() < deadline) {
		if (!isAlive(pid)) {
			return true;
		}
		await new Promise(resolve => setTimeout(resolve, 50));
	}
	return !isAlive(pid);
}

function signal(pid: number, name: NodeJS.Signals): void {
	try {
		process.kill(pid, name);
	} catch {
		// Gone between the check and the signal: that is what we wanted.
	}
}

export async function forceStopHub(paths: HubPaths, graceMs = 3_000): Promise<ForcedStop> {
	const pid = await hubPid(paths);
	if (pid === undefined || !isAlive(pid)) {
		return { pid, how: 'not running' };
	}
	signal(pid, 'SIGCONT');
	signal(pid, 'SIGTERM');
	if (await exited(pid, graceMs)) {
		return { pid, how: 'SIGTERM' };
	}
	signal(pid, 'SIGKILL');
	await exited(pid, 5_000);
	// A killed hub leaves hub.json behind; clients would read a dead pid from it.
	rmSync(paths.hubJson, { force: true });
	return { pid, how: 'SIGKILL' };
}
