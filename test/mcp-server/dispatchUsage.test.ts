/**
 * Usage and budgets end to end: a real hub, the real `baton run` in a child process, a fake agent
 * (test/fixtures/usageAgent.mjs, real MCP) printing BATON_USAGE lines. Proves the last line counts (also
 * one printed after the completion), unreadable lines are ignored and logged once, `show` and `stats`
 * (text and --json) and /metrics carry the sums by kind without a card id, an agent reporting over MCP
 * (heartbeat's usage) without a cost leaves the cost unknown; --max-cost-usd stops the
 * agent and fails its card naming the budget; --run-budget-usd stops claiming and the run says so; bad
 * budgets and --max-in-review 0 start nothing.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { RpcClient } from '../../core/protocol/rpc';
import { type HubProcess, client, hubHttp, removeDataDir, startHub, tempDataDir } from '../helpers/hub';
import { runBaton } from '../helpers/mcp';
import { startRun } from '../helpers/runSupervisor';

const usageAgent = join(import.meta.dirname, '..', 'fixtures', 'usageAgent.mjs');
const line = (inputTokens: number, outputTokens: number, costUsd?: number): string =>
	`BATON_USAGE ${JSON.stringify({ inputTokens, outputTokens, ...(costUsd === undefined ? {} : { costUsd }) })}`;

describe('baton run: usage and budgets', () => {
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

	it('records the last BATON_USAGE line, ignores bad ones (logged once), and shows the sums', async () => {
		const body = [
			'BATON_USAGE not json',
			'BATON_USAGE {"inputTokens":-1,"outputTokens":0}',
			line(100, 10, 0.01),
			'---',
			line(1000, 200, 0.05),
		].join('\n');
		await api.request('card/create', {
			cards: [
				{ id: 'use-1', title: 'Report usage', body, priority: 2 },
				{
					id: 'use-mcp',
					title: 'Report over MCP',
					body: 'HEARTBEAT_USAGE {"inputTokens":40,"outputTokens":4}',
					priority: 1,
				},
			],
		});
		const run = startRun(dataDir, ['--seats', '1', '--no-sandbox'], {}, usageAgent);
		await run.waitFor(e => e.event === 'exited' && e.cardId === 'use-1', 60_000, 'use-1 to end');
		await run.waitFor(e => e.event === 'exited' && e.cardId === 'use-mcp', 60_000, 'use-mcp to end');
		run.proc.kill('SIGINT');
		await run.exited;
		assert.equal(run.stderr().match(/a BATON_USAGE line was ignored/g)?.length, 1, run.stderr());

		const shown = await runBaton(['show', 'use-1', '--json'], { dataDir });
		const got = JSON.parse(shown.stdout) as { usage?: unknown; attempts: { usage?: unknown }[] };
		const want = { inputTokens: 1000, outputTokens: 200, costUsd: 0.05 };
		assert.deepEqual(got.usage, want, 'the line printed after the completion is the attempt total');
		assert.deepEqual(got.attempts[0]?.usage, want);
		const text = await runBaton(['show', 'use-1'], { dataDir });
		assert.match(text.stdout, /Usage: 1,000 in \/ 200 out tokens, \$0\.0500/);

		const stats = JSON.parse((await runBaton(['stats', '--json', '--project', '*'], { dataDir })).stdout) as {
			usage: { total: unknown; byKind: Record<string, unknown>; byProject: Record<string, unknown> };
		};
		// The MCP agent reported tokens without a cost: the sums' cost is unknown, the reported dollars kept.
		const mcp = await runBaton(['show', 'use-mcp', '--json'], { dataDir });
		assert.deepEqual((JSON.parse(mcp.stdout) as { usage?: unknown }).usage, {
			inputTokens: 40,
			outputTokens: 4,
			costUsd: null,
		});
		assert.match(
			(await runBaton(['show', 'use-mcp'], { dataDir })).stdout,
			/Usage: 40 in \/ 4 out tokens, cost unknown/,
		);
		const sum = { inputTokens: 1040, outputTokens: 204, costUsd: null, knownCostUsd: 0.05 };
		assert.deepEqual(stats.usage.byKind.fake, sum);
		assert.deepEqual(stats.usage.total, sum);
		assert.deepEqual(stats.usage.byProject[''], sum);
		const statsText = await runBaton(['stats', '--project', '*'], { dataDir });
		assert.match(statsText.stdout, /usage +1,040 in \/ 204 out tokens, cost unknown \(\$0\.0500 reported\)/);

		const token = readFileSync(hub.paths.metricsToken, 'utf8').trim();
		const metrics = await hubHttp(hub.port, '/metrics', { headers: { Authorization: `Bearer ${token}` } });
		assert.match(metrics.body, /^baton_tokens_total\{kind="fake",direction="input"\} 1040$/m);
		assert.match(metrics.body, /^baton_tokens_total\{kind="fake",direction="output"\} 204$/m);
		assert.match(metrics.body, /^baton_cost_usd_total\{kind="fake"\} 0\.05$/m);
		assert.doesNotMatch(metrics.body, /use-1/, 'no card id in a label');
	});

	it('--max-cost-usd stops the agent at the line and fails its card naming the budget', async () => {
		await api.request('card/create', {
			cards: [{ id: 'use-2', title: 'Costly hang', body: line(10, 1, 0.5), maxAttempts: 1 }],
		});
		const run = startRun(
			dataDir,
			['--seats', '1', '--no-sandbox', '--max-cost-usd', '0.2', '--stop-grace-seconds', '2'],
			{},
			usageAgent,
		);
		const exited = await run.waitFor(e => e.event === 'exited' && e.cardId === 'use-2', 60_000, 'use-2 to be stopped');
		run.proc.kill('SIGINT');
		await run.exited;
		assert.equal(exited.reason, 'budget');
		const { card, attempts, usage } = await api.request('card/get', { cardId: 'use-2' });
		assert.equal(card.status, 'blocked');
		assert.match(attempts[0]?.reason ?? '', /its reported cost \$0\.5 passed the --max-cost-usd 0\.2 budget/);
		assert.deepEqual(usage, { inputTokens: 10, outputTokens: 1, costUsd: 0.5 });
	});

	it('--run-budget-usd stops claiming once the run has spent it, and the run says so', async () => {
		await api.request('card/create', {
			cards: [
				{ id: 'use-3', title: 'Spend one', body: line(5, 5, 0.3), priority: 30 },
				{ id: 'use-4', title: 'Spend two', body: line(5, 5, 0.3), priority: 20 },
				{ id: 'use-5', title: 'Never started', body: line(5, 5, 0.3), priority: 10 },
			],
		});
		const run = startRun(dataDir, ['--seats', '1', '--no-sandbox', '--run-budget-usd', '0.5'], {}, usageAgent);
		const held = await run.waitFor(e => e.event === 'held', 60_000, 'the run to stop claiming');
		assert.match(String(held.reason), /run budget spent: \$0\.6000 of --run-budget-usd 0\.5; no new card is claimed/);
		run.proc.kill('SIGINT');
		await run.exited;
		assert.deepEqual(
			run.events.filter(e => e.event === 'started').map(e => e.cardId),
			['use-3', 'use-4'],
		);
		assert.equal((await api.request('card/get', { cardId: 'use-5' })).card.status, 'ready');
	});

	it('refuses budgets that are not positive numbers and --max-in-review 0, starting nothing', async () => {
		for (const [flag, value, words] of [
			['--max-cost-usd', '0', /--max-cost-usd must be a positive number of dollars/],
			['--max-cost-usd=-1', undefined, /--max-cost-usd must be a positive number of dollars/],
			['--run-budget-usd', 'lots', /--run-budget-usd must be a positive number of dollars/],
			['--max-in-review', '0', /--max-in-review must be a whole number of at least 1/],
		] as const) {
			const r = await runBaton(
				[
					'run',
					'--command',
					`${process.execPath} ${usageAgent} {mcpConfig}`,
					flag,
					...(value === undefined ? [] : [value]),
				],
				{
					dataDir,
				},
			);
			assert.equal(r.code, 2, r.stderr);
			assert.match(r.stderr, words);
		}
		assert.deepEqual((await api.request('run/list', {})).runs, [], 'no run is registered');
	});
});
