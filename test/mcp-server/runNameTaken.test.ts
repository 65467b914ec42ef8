/**
 * One live supervisor per run name, end to end: the real hub, the real `baton run` in child processes.
 * A second `baton run --name twin` beside a live one exits 1 naming who holds the name, adopts nothing
 * and leaves the live run registered; once the first has ended, the name is free again.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { RunInfo } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { type HubProcess, client, removeDataDir, startHub, tempDataDir } from '../helpers/hub';
import { ensureBuilt, runBaton } from '../helpers/mcp';
import { type RunningSupervisor, fakeCommand, startRun } from '../helpers/runSupervisor';

let dataDir: string;
let hub: HubProcess;
let api: RpcClient;
const runs: RunningSupervisor[] = [];

before(async () => {
	ensureBuilt();
	dataDir = tempDataDir();
	hub = await startHub({ dataDir });
	api = await client(dataDir, { agent: { id: 'tester' } });
});

after(async () => {
	for (const r of runs) {
		r.proc.kill('SIGKILL');
	}
	api.close();
	await hub.stop();
	removeDataDir(dataDir);
});

async function twin(): Promise<RunInfo | undefined> {
	return (await api.request('run/list', {})).runs.find(r => r.name === 'twin');
}

describe('a run name belongs to one live supervisor', () => {
	it('a second baton run --name twin is refused with the live one’s pid; the name is free after it ends', async () => {
		const first = startRun(dataDir, ['--name', 'twin', '--phase', 'nothing-here']);
		runs.push(first);
		await first.waitFor(e => e.event === 'running', 30_000, 'the first run');
		const firstPid = first.proc.pid;
		assert.equal((await twin())?.pid, firstPid);

		const second = await runBaton(
			['run', '--kind', 'fake', '--command', fakeCommand, '--name', 'twin', '--phase', 'nothing-here'],
			{ dataDir, cwd: join(dataDir, '..', 'work') },
		);
		assert.equal(second.code, 1, second.stdout + second.stderr);
		assert.match(second.stderr, new RegExp(`A supervisor named twin is running: pid ${firstPid} on `));
		const still = await twin();
		assert.equal(still?.pid, firstPid, 'the refused supervisor ended or took the live run');
		assert.equal(still?.gone, false);

		first.proc.kill('SIGINT');
		assert.equal((await first.exited).code, 0);
		const third = startRun(dataDir, ['--name', 'twin', '--phase', 'nothing-here']);
		runs.push(third);
		await third.waitFor(e => e.event === 'running', 30_000, 'the third run');
		assert.equal((await twin())?.pid, third.proc.pid);
		third.proc.kill('SIGINT');
		await third.exited;
	});
});
