/**
 * One card's scope cannot freeze the hub, on a real hub: the scope of the report (`*a`
 * × 100 then braces, 237 characters) is refused at create with the limit named, in well under 5 s,
 * and nothing is stored; two cards with the costliest scopes the limits let in are claimed one after
 * the other by id, and another client's `card/stats` answers within 1 s throughout.
 * @serial card/stats within 1 s while the costliest scopes are refused and claimed: run alone (scripts/testSuite.mjs).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { BatonError } from '../../core/errors';
import type { RpcClient } from '../../core/protocol/rpc';
import { type HubProcess, client, removeDataDir, startHub, tempDataDir } from '../helpers/hub';

const project = 'github.com/acme/web';

describe('a costly scope and the hub', () => {
	let dataDir: string;
	let hub: HubProcess;
	let planner: RpcClient;
	let watcher: RpcClient;
	let agents: RpcClient[];

	before(async () => {
		dataDir = tempDataDir();
		hub = await startHub({ dataDir });
		planner = await client(dataDir);
		watcher = await client(dataDir);
		agents = [await client(dataDir, { agent: { id: 'agent-1' } }), await client(dataDir, { agent: { id: 'agent-2' } })];
	});
	after(async () => {
		for (const c of [planner, watcher, ...agents]) {
			c.close();
		}
		await hub.stop();
		removeDataDir(dataDir);
	});

	/** Runs `work` while the watcher asks card/stats back to back; returns the slowest answer in ms. */
	async function slowestStatsDuring(work: () => Promise<void>): Promise<number> {
		let done = false;
		let slowest = 0;
		const watch = (async () => {
			while (!done) {
				const t = performance.now();
				await watcher.request('card/stats', {});
				slowest = Math.max(slowest, performance.now() - t);
			}
		})();
		try {
			await work();
		} finally {
			done = true;
			await watch;
		}
		return slowest;
	}

	it('refuses the reported scope at create, naming the limit, and stores nothing', async () => {
		const scope = ['*a'.repeat(100) + '*{b,c,d,e,f,g,h,i}{j,k,l,m,n,o,p,q}A1'];
		const slowest = await slowestStatsDuring(async () => {
			const t = performance.now();
			await assert.rejects(
				planner.request('card/create', {
					cards: [
						{ id: 'SLOW-1', title: 'one', project, scope },
						{ id: 'SLOW-2', title: 'two', project, scope },
					],
				}),
				(e: unknown) =>
					BatonError.is(e, 'invalid_input') &&
					/Card SLOW-1: Scope entry .* has 101 "\*" in one segment; at most 8/.test(e.message),
			);
			assert.ok(performance.now() - t < 5_000, `refused in ${Math.round(performance.now() - t)} ms`);
		});
		assert.ok(slowest < 1_000, `card/stats took ${Math.round(slowest)} ms`);
		assert.equal((await planner.request('card/list', {})).cards.length, 0);
	});

	it('claims two cards of the costliest scopes the limits let in without holding up another client', async () => {
		const pad = (i: number): string => String(i).padStart(2, '0');
		await planner.request('card/create', {
			cards: [
				{ id: 'COST-1', title: 'long names', project, scope: [0, 1, 2, 3].map(i => 'a'.repeat(240) + pad(i)) },
				{
					id: 'COST-2',
					title: 'long starred runs',
					project,
					scope: [0, 1, 2, 3].map(i => `*${'a'.repeat(115)}b*${'a'.repeat(115)}${pad(i)}*`),
				},
			],
		});
		const [one, two] = agents as [RpcClient, RpcClient];
		const slowest = await slowestStatsDuring(async () => {
			const t = performance.now();
			assert.equal((await one.request('card/claim', { cardId: 'COST-1', project })).card?.id, 'COST-1');
			assert.equal((await two.request('card/claim', { cardId: 'COST-2', project })).card?.id, 'COST-2');
			assert.ok(performance.now() - t < 5_000, `claimed in ${Math.round(performance.now() - t)} ms`);
		});
		assert.ok(slowest < 1_000, `card/stats took ${Math.round(slowest)} ms`);
	});
});
