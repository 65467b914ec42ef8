/**
 * CLI agents are agents: a bash script started by the real `baton run --command` completes its card
 * using only the `baton` CLI (show, heartbeat, comment, complete), which inside the seat acts as the
 * seat's agent and session on the seat's card; a person's verb from the same seat is still refused.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { RpcClient } from '../../core/protocol/rpc';
import { type HubProcess, client, removeDataDir, startHub, tempDataDir } from '../helpers/hub';
import { batonJs, childEnv } from '../helpers/mcp';
import { startBatonRun } from '../helpers/batonRun';

const bashAgent = join(import.meta.dirname, '..', 'fixtures', 'bashAgentChecks.sh');

describe('a bash agent using only the CLI', () => {
	let dataDir: string;
	let hub: HubProcess;
	let api: RpcClient;
	let bin: string;
	before(async () => {
		dataDir = tempDataDir();
		hub = await startHub({ dataDir });
		api = await client(dataDir, { agent: { id: 'tester' } });
		// `baton` on the agent's PATH, as an installed Baton would be.
		bin = join(dataDir, '..', 'bin');
		mkdirSync(bin, { recursive: true });
		writeFileSync(join(bin, 'baton'), `#!/bin/sh\nexec "${process.execPath}" "${batonJs}" "$@"\n`);
		chmodSync(join(bin, 'baton'), 0o755);
	});
	after(async () => {
		api.close();
		await hub.stop();
		removeDataDir(dataDir);
	});

	it("heartbeats, comments, completes, releases and fails its card through baton run; a person's verb is refused", async () => {
		await api.request('card/create', {
			cards: [
				{ id: 'sh-1', title: 'A card for bash', maxAttempts: 1, priority: 30 },
				{ id: 'sh-fail', title: 'Failed by bash', maxAttempts: 1, priority: 20 },
				// Last: a released card is claimable again at once, and the run would take it again.
				{ id: 'sh-release', title: 'Handed back', maxAttempts: 1, priority: 10 },
			],
		});
		const cwd = join(dataDir, '..', 'work');
		mkdirSync(cwd, { recursive: true });
		const env = childEnv(dataDir, {});
		const run = startBatonRun({
			dataDir,
			cwd,
			args: ['--seats', '1', '--no-sandbox', '--kind', 'bash', '--command', `/bin/bash ${bashAgent}`],
			rawEnv: { ...env, PATH: `${bin}:${env.PATH ?? ''}` },
		});
		try {
			for (const id of ['sh-1', 'sh-fail', 'sh-release']) {
				await run.waitFor(l => l.event === 'exited' && l.cardId === id, 60_000, `the bash agent of ${id} to end`);
			}
		} finally {
			run.proc.kill('SIGINT');
			await run.exited;
		}
		const exits = new Map(run.lines.filter(l => l.event === 'exited').map(l => [l.cardId, l.reason]));
		assert.equal(exits.get('sh-1'), 'completed', JSON.stringify(run.lines));
		assert.equal(exits.get('sh-fail'), 'failed');
		assert.equal(exits.get('sh-release'), 'released', 'a release is not a failure');
		assert.equal(run.lines.filter(l => l.event === 'paused').length, 0);
		const got = await api.request('card/get', { cardId: 'sh-1' });
		assert.equal(got.card.status, 'done');
		assert.equal(got.card.result, 'bash agent wrote bash-sh-1.txt');
		assert.equal(got.attempts[0]?.progress, 50);
		assert.equal(got.messages.at(-1)?.text, 'wrote bash-sh-1.txt');
		const heartbeat = got.history.find(e => e.type === 'heartbeat');
		assert.equal(heartbeat?.actor, got.attempts[0].owner, 'the CLI acted as the seat agent');
		const released = await api.request('card/get', { cardId: 'sh-release' });
		assert.equal(released.attempts[0]?.outcome, 'released');
		assert.equal(released.attempts[0].reason, 'not mine to do');
		const failed = await api.request('card/get', { cardId: 'sh-fail' });
		assert.equal(failed.card.status, 'blocked');
		assert.equal(failed.attempts[0]?.reason, 'the tests do not build');
		// The person's verb, tried from inside each seat, was refused every time and paused nothing.
		const log = readFileSync(join(dataDir, 'runs', 'default', 'sh-1.log'), 'utf8');
		assert.match(log, /check: pause refused/);
		assert.doesNotMatch(log, /check: pause was allowed/);
		assert.deepEqual((await api.request('pause/list', {})).pauses, []);
	});
});
