/**
 * What attempts cost, in core on real PGlite and PostgreSQL: a seat's usage report is the attempt's
 * running total (the last one counts), accepted from the claim's holder after the claim ended and from
 * nobody else; an agent's own heartbeat reports it too; card/get carries it per attempt and summed; a
 * cost nobody reported stays unknown in every sum; card/stats sums by kind and by project; a bad report
 * changes nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { backlogForSuite, storeKinds } from '../helpers/backlog';
import { refused } from '../helpers/refused';
import { methods } from '../../core/protocol';

const human: OpContext = { actor: 'cli:alice' };
const claude: OpContext = { actor: 'claude-default-s1-ab12', session: 'session-claude-s1-0000', kind: 'claude' };
const codex: OpContext = { actor: 'codex-default-s2-cd34', session: 'session-codex-s2-00000', kind: 'codex' };
const worker: OpContext = { actor: 'worker-1', session: 'session-worker-1-000000' };

for (const store of storeKinds) {
	describe(`attempt usage on ${store}`, () => {
		let b: Backlog;
		backlogForSuite(store, {}, t => {
			b = t.backlog;
		});

		it('keeps the last report of each attempt, sums attempts, and says unknown for a cost nobody reported', async () => {
			await b.create(human, { cards: [{ id: 'u1', title: 'Costly', project: 'web', maxAttempts: 5 }] });
			const first = await b.claim(claude, { cardId: 'u1', dispatch: { run: 'default', seat: 1, kind: 'claude' } });
			const e1 = first.lease?.epoch ?? -1;
			await b.dispatch.usage(claude, {
				cardId: 'u1',
				epoch: e1,
				usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.01 },
			});
			await b.dispatch.usage(claude, {
				cardId: 'u1',
				epoch: e1,
				usage: { inputTokens: 1000, outputTokens: 200, costUsd: 0.05 },
			});
			await b.release(claude, { cardId: 'u1', epoch: e1, reason: 'handed back' });
			// After its claim ended, the holder's last report still counts; another agent's is refused.
			await b.dispatch.usage(claude, {
				cardId: 'u1',
				epoch: e1,
				usage: { inputTokens: 1200, outputTokens: 300, costUsd: 0.06 },
			});
			await refused(
				b.dispatch.usage(codex, { cardId: 'u1', epoch: e1, usage: { inputTokens: 1, outputTokens: 1, costUsd: 9 } }),
				'lease_lost',
				/only its holder reports its usage/,
			);
			let got = await b.get(human, { cardId: 'u1' });
			assert.deepEqual(got.usage, { inputTokens: 1200, outputTokens: 300, costUsd: 0.06 });
			assert.deepEqual(got.attempts[0]?.usage, got.usage);

			// The second attempt reports through its own heartbeat, tokens without a cost.
			const second = await b.claim(worker, { cardId: 'u1' });
			const e2 = second.lease?.epoch ?? -1;
			await b.heartbeat(worker, { cardId: 'u1', epoch: e2, usage: { inputTokens: 50, outputTokens: 5 } });
			got = await b.get(human, { cardId: 'u1' });
			assert.equal(got.attempts.length, 2);
			assert.deepEqual(got.attempts[1]?.usage, { inputTokens: 50, outputTokens: 5, costUsd: null });
			assert.deepEqual(
				got.usage,
				{ inputTokens: 1250, outputTokens: 305, costUsd: null },
				'a sum with an unknown cost is unknown',
			);

			const stats = await b.stats(human, {});
			assert.deepEqual(stats.usage?.total, { inputTokens: 1250, outputTokens: 305, costUsd: null, knownCostUsd: 0.06 });
			assert.deepEqual(stats.usage.byKind.claude, {
				inputTokens: 1200,
				outputTokens: 300,
				costUsd: 0.06,
				knownCostUsd: 0.06,
			});
			assert.deepEqual(stats.usage.byKind.none, { inputTokens: 50, outputTokens: 5, costUsd: null, knownCostUsd: 0 });
			assert.deepEqual(stats.usage.byProject.web, stats.usage.total);
		});

		it('sums by project as stats narrows them, and a card nobody reported on has no usage', async () => {
			await b.create(human, {
				cards: [
					{ id: 'u2', title: 'Other project', project: 'api' },
					{ id: 'u3', title: 'Quiet' },
				],
			});
			const c = await b.claim(codex, { cardId: 'u2', dispatch: { run: 'default', seat: 2, kind: 'codex' } });
			await b.dispatch.usage(codex, {
				cardId: 'u2',
				epoch: c.lease?.epoch ?? -1,
				usage: { inputTokens: 7, outputTokens: 3, costUsd: 0.5 },
			});
			const api = await b.stats(human, { project: 'api' });
			assert.deepEqual(api.usage?.total, { inputTokens: 7, outputTokens: 3, costUsd: 0.5, knownCostUsd: 0.5 });
			assert.deepEqual(Object.keys(api.usage.byProject), ['api']);
			const all = await b.stats(human, {});
			assert.deepEqual(all.usage?.byKind.codex, { inputTokens: 7, outputTokens: 3, costUsd: 0.5, knownCostUsd: 0.5 });
			const quiet = await b.get(human, { cardId: 'u3' });
			assert.equal(quiet.usage, undefined);
		});

		it('keeps the sums equal to the attempts regrouped, also when a card moves to another project', async () => {
			await b.create(human, { cards: [{ id: 'u4', title: 'Moving', project: 'old' }] });
			const c = await b.claim(codex, { cardId: 'u4', dispatch: { run: 'default', seat: 3, kind: 'codex' } });
			const epoch = c.lease?.epoch ?? -1;
			await b.dispatch.usage(codex, {
				cardId: 'u4',
				epoch,
				usage: { inputTokens: 10, outputTokens: 1, costUsd: 0.25 },
			});
			// Its project changes once the claim ended; the holder's last report comes after that.
			await b.release(codex, { cardId: 'u4', epoch });
			await b.update(human, { cardId: 'u4', project: 'new' });
			await b.dispatch.usage(codex, {
				cardId: 'u4',
				epoch,
				usage: { inputTokens: 30, outputTokens: 3, costUsd: 0.75 },
			});
			const stats = await b.stats(human, {});
			assert.ok(stats.usage !== undefined);
			assert.equal(stats.usage.byProject.old, undefined, 'nothing is left under the old project');
			assert.deepEqual(stats.usage.byProject.new, {
				inputTokens: 30,
				outputTokens: 3,
				costUsd: 0.75,
				knownCostUsd: 0.75,
			});
			const db = (b as unknown as { uow: { db: { query<T>(sql: string): Promise<T[]> } } }).uow.db;
			const [regrouped] = await db.query<{ input: number; output: number }>(
				'SELECT sum(input_tokens)::float8 AS input, sum(output_tokens)::float8 AS output FROM attempt_usage',
			);
			assert.equal(stats.usage.total.inputTokens, regrouped?.input);
			assert.equal(stats.usage.total.outputTokens, regrouped?.output);
		});

		it('refuses negative or fractional numbers before anything is written', () => {
			const params = methods['dispatch/usage'].params;
			for (const usage of [
				{ inputTokens: -1, outputTokens: 0, costUsd: 0 },
				{ inputTokens: 1.5, outputTokens: 0 },
				{ inputTokens: 1, outputTokens: 0, costUsd: -0.01 },
				{ inputTokens: 1 },
			]) {
				assert.equal(params.safeParse({ cardId: 'u1', epoch: 1, usage }).success, false, JSON.stringify(usage));
			}
			assert.equal(
				methods['card/heartbeat'].params.safeParse({ cardId: 'u1', usage: { inputTokens: -5, outputTokens: 0 } })
					.success,
				false,
			);
		});
	});
}
