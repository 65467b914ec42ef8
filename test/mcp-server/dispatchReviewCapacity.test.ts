/**
 * Review capacity end to end: a real hub, the real `baton run --max-in-review 1` in a child process and
 * the fake agent (test/fixtures/fakeAgent.mjs, real MCP). With one card waiting for a person's review
 * the run claims nothing new, however many events wake it, and says "1 wait for your review"; once the
 * person approves, the next card starts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { RpcClient } from '../../core/protocol/rpc';
import { type HubProcess, client, removeDataDir, startHub, tempDataDir } from '../helpers/hub';
import { runBaton } from '../helpers/mcp';
import { startRun } from '../helpers/runSupervisor';

describe('baton run --max-in-review', () => {
	let dataDir: string;
	let hub: HubProcess;
	let api: RpcClient;
	before(async () => {
		dataDir = tempDataDir();
		hub = await startHub({ dataDir });
		api = await client(dataDir, { agent: { id: 'tester' } });
	});
	after(async () => {
		api.close();
		await hub.stop();
		removeDataDir(dataDir);
	});

	it('claims nothing new while a card waits for review, and starts the next once it is approved', async () => {
		await api.request('card/create', {
			cards: [
				{ id: 'rev-1', title: 'First complete', review: 'human', priority: 20 },
				{ id: 'rev-2', title: 'Second complete', review: 'human', priority: 10 },
			],
		});
		const run = startRun(dataDir, ['--seats', '1', '--no-sandbox', '--max-in-review', '1']);
		try {
			const held = await run.waitFor(e => e.event === 'held', 60_000, 'the run to hold for review');
			assert.match(String(held.reason), /^1 wait for your review \(--max-in-review 1\)/);
			assert.equal((await api.request('card/get', { cardId: 'rev-1' })).card.status, 'review');
			// More events wake the run (a new card, a comment): it still claims nothing.
			await api.request('card/create', { cards: [{ id: 'rev-3', title: 'Third complete', review: 'human' }] });
			const approved = await runBaton(['approve', 'rev-1'], { dataDir });
			assert.equal(approved.code, 0, approved.stderr);
			const started = await run.waitFor(
				e => e.event === 'started' && e.cardId === 'rev-2',
				60_000,
				'the next card to start after the approval',
			);
			const order = run.events.map(e => e.event);
			assert.ok(order.indexOf('claiming') > order.indexOf('held'), 'the run said it claims again');
			assert.ok(run.events.indexOf(started) > run.events.indexOf(held));
			assert.equal(
				run.events.filter(e => e.event === 'started').length,
				2,
				'nothing but rev-1 and, after the approval, rev-2 started',
			);
		} finally {
			run.proc.kill('SIGINT');
			await run.exited;
		}
	});
});
