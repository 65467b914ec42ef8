/**
 * A stuck hub is diagnosed and can be ended: with the hub's process stopped (SIGSTOP), a
 * command fails within seconds naming the pid, that the process is alive but stopped, and
 * `baton hub stop --force`, which ends it; the next command starts a fresh hub with every card
 * acknowledged before. A process burning CPU is reported busy, with its CPU share.
 * @serial it keeps a core busy on purpose (a spinning process) and answers within 25 s: run alone (scripts/testSuite.mjs).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { diagnoseHub, isAlive } from '../../core/client/hubDiagnosis';
import { hubPaths } from '../../core/paths';
import { cleanupDataDir, ensureBuilt, runBaton, tempDataDir } from '../helpers/mcp';

describe('a stuck hub', () => {
	let dataDir: string;

	before(() => {
		ensureBuilt();
		dataDir = tempDataDir();
	});
	after(async () => {
		await cleanupDataDir(dataDir);
	});

	it('is named with its pid and state, and hub stop --force ends it without losing a card', async () => {
		const created = await runBaton(['create', 'Survives a stuck hub', '--id', 'S1'], { dataDir });
		assert.equal(created.code, 0, created.stderr);
		const pid = (JSON.parse(readFileSync(hubPaths(dataDir).hubJson, 'utf8')) as { pid: number }).pid;
		process.kill(pid, 'SIGSTOP');
		try {
			const started = Date.now();
			const stuck = await runBaton(['list'], { dataDir });
			assert.equal(stuck.code, 1);
			assert.match(stuck.stderr, new RegExp(`The Baton hub \\(pid ${pid}\\) is alive but stopped`));
			assert.match(stuck.stderr, /baton hub stop --force/);
			// The handshake (5 s) or the request timeout (15 s) ends the wait, whichever the client meets first.
			assert.ok(Date.now() - started < 25_000, `answered in ${Date.now() - started} ms`);

			const stop = await runBaton(['hub', 'stop', '--force', '--json'], { dataDir });
			assert.equal(stop.code, 0, stop.stderr);
			const r = JSON.parse(stop.stdout) as { pid: number; how: string };
			assert.equal(r.pid, pid);
			assert.ok(['SIGTERM', 'SIGKILL'].includes(r.how), r.how);
			assert.equal(isAlive(pid), false, 'the stuck hub is gone');
		} finally {
			if (isAlive(pid)) {
				process.kill(pid, 'SIGKILL');
			}
		}
		const listed = await runBaton(['list', '--json'], { dataDir });
		assert.equal(listed.code, 0, listed.stderr);
		assert.deepEqual(
			(JSON.parse(listed.stdout) as { cards: { id: string }[] }).cards.map(c => c.id),
			['S1'],
		);
		const again = await runBaton(['hub', 'stop', '--force'], { dataDir });
		assert.equal(again.code, 0);
		assert.match(again.stdout, /Ended the Baton hub \(pid \d+\) with SIGTERM/);
	});

	it('reports a hub process that burns CPU as busy', async () => {
		const fake = tempDataDir();
		const spinner = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
		try {
			assert.ok(spinner.pid);
			mkdirSync(fake, { recursive: true });
			writeFileSync(hubPaths(fake).hubJson, JSON.stringify({ pid: spinner.pid, port: 1, protocol: 1 }));
			await new Promise(resolve => setTimeout(resolve, 200));
			const d = await diagnoseHub(hubPaths(fake), 500);
			assert.equal(d.alive, true);
			assert.equal(d.activity, 'busy', JSON.stringify(d));
			assert.match(d.sentence, new RegExp(`pid ${spinner.pid}\\) is alive and busy \\(\\d+ % CPU\\)`));
		} finally {
			spinner.kill('SIGKILL');
			await cleanupDataDir(fake);
		}
	});
});
