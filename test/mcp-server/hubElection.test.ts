/**
 * Election and failover through real processes (RELIABILITY 9, 10, 14): clients that find no hub
 * spawn `baton hub` detached; racing spawns end with one hub; kill -9 under load elects exactly one
 * successor and every acknowledged write is there exactly once.
 * @serial one hub elected among 8 starting clients and after each kill -9, within the clients' timeouts: run alone (scripts/testSuite.mjs).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { connectHub } from '../../core/client/connectHub';
import { BatonError } from '../../core/errors';
import { hubPaths } from '../../core/paths';
import type { RpcClient } from '../../core/protocol/rpc';
import {
	alive,
	amcheckIndexes,
	ensureBuilt,
	hubCommand,
	hubEnv,
	removeDataDir,
	sleep,
	tempDataDir,
	waitFor,
} from '../helpers/hub';

const dirs: string[] = [];
const clients: RpcClient[] = [];

after(() => {
	for (const c of clients) {
		c.close();
	}
	for (const d of dirs) {
		removeDataDir(d);
	}
});

function spawningClient(dataDir: string, tag: string): Promise<RpcClient> {
	const { command, args } = hubCommand(dataDir, [], 30);
	return connectHub({
		dataDir,
		client: 'test',
		agent: { id: `agent-${tag}` },
		spawnHub: { command, args, env: hubEnv() },
		requestTimeoutMs: 20_000,
	}).then(c => {
		clients.push(c);
		return c;
	});
}

function count(text: string, re: RegExp): number {
	return text.split('\n').filter(l => re.test(l)).length;
}

describe('hub election', () => {
	it('8 clients starting at once end with exactly one hub that opened the store (9)', async () => {
		ensureBuilt();
		const dataDir = tempDataDir();
		dirs.push(dataDir);
		const started = await Promise.all(Array.from({ length: 8 }, (_, i) => spawningClient(dataDir, `race-${i}`)));
		const pids = new Set(started.map(c => c.hello?.hubPid));
		assert.equal(pids.size, 1, `one hub for all: ${[...pids].join(', ')}`);
		const log = readFileSync(hubPaths(dataDir).hubLog, 'utf8');
		assert.equal(count(log, /opened the pglite store/), 1, 'exactly one process opened PGlite');
		assert.equal(count(log, /serving/), 1);
		assert.ok(!log.includes(readFileSync(hubPaths(dataDir).token, 'utf8').trim()), 'the token is not in hub.log');
		const losers = count(log, /is owned by pid/);
		console.log(`8 racing clients: 1 hub (pid ${[...pids][0]}), ${losers} spawned hubs lost the election and exited`);
		const status = await started[0]!.request('hub/status', {});
		assert.equal(status.clients, 8);
		const hubPid = [...pids][0]!;
		await started[0]!.request('hub/stop', {});
		for (const c of started) {
			c.close();
		}
		await waitFor(() => !alive(hubPid), 10_000, 'hub exit');
	});

	it('kill -9 under load, twice: one successor each time, no acked write lost or doubled (10, 14)', async () => {
		ensureBuilt();
		const dataDir = tempDataDir();
		dirs.push(dataDir);
		const writers = await Promise.all([spawningClient(dataDir, 'w1'), spawningClient(dataDir, 'w2')]);
		const acked = new Map<string, number>();
		let running = true;
		let failures = 0;
		const loops = writers.map(async (c, w) => {
			for (let i = 0; running; i++) {
				const title = `w${w}-${i}`;
				try {
					const { cards } = await c.request('card/create', { cards: [{ title }] });
					acked.set(title, (acked.get(title) ?? 0) + 1);
					assert.equal(cards.length, 1);
				} catch (e) {
					// A request can fail only by timing out during the failover; it is not acked.
					assert.ok(BatonError.is(e), String(e));
					failures++;
				}
			}
		});
		const hubPids: number[] = [writers[0].hello!.hubPid];
		// The writers stop however this part ends: a failed wait must not leave them looping after the
		// suite's `after` closed their clients (each request then fails at once, a loop that never ends).
		try {
			for (let round = 0; round < 2; round++) {
				await sleep(700);
				const victim = hubPids[hubPids.length - 1]!;
				process.kill(victim, 'SIGKILL');
				await waitFor(() => !alive(victim), 5_000, 'the killed hub to vanish');
				const t0 = Date.now();
				await waitFor(
					() =>
						writers.every(c => c.connectionState === 'connected' && c.hello !== undefined && c.hello.hubPid !== victim),
					30_000,
					'failover',
				).catch((e: unknown) => {
					const states = writers.map(c => `${c.connectionState} on ${c.hello?.hubPid}`).join(', ');
					const log = readFileSync(hubPaths(dataDir).hubLog, 'utf8').split('\n').slice(-40).join('\n');
					throw new Error(`${String(e)} after killing ${victim} (writers: ${states}); hub.log ends:\n${log}`);
				});
				const successor = writers[0].hello!.hubPid;
				assert.equal(writers[1].hello!.hubPid, successor, 'both writers on the same successor');
				console.log(`failover ${round + 1}: hub ${victim} -> ${successor} in ${Date.now() - t0} ms`);
				hubPids.push(successor);
			}
			await sleep(500);
		} finally {
			running = false;
			await Promise.all(loops);
		}
		// A write sent with a key and re-sent by hand after the failover is applied once (14).
		const key = 'manual-retry-key';
		const first = await writers[0].request('card/create', { cards: [{ title: 'retried' }] }, { key });
		const again = await writers[1].request('card/create', { cards: [{ title: 'retried' }] }, { key });
		assert.equal(again.cards[0]!.id, first.cards[0]!.id);

		const all = [];
		let cursor: string | undefined;
		do {
			const page = await writers[0].request('data/export', cursor === undefined ? {} : { cursor });
			all.push(...page.cards);
			cursor = page.nextCursor;
		} while (cursor !== undefined);
		const byTitle = new Map<string, number>();
		for (const card of all) {
			byTitle.set(card.title, (byTitle.get(card.title) ?? 0) + 1);
		}
		const missing = [...acked.keys()].filter(t => !byTitle.has(t));
		const doubled = [...byTitle].filter(([, n]) => n > 1);
		console.log(
			`kill -9 x2 under load: ${acked.size} acked creates, ${all.length} cards, ${missing.length} missing, ${doubled.length} duplicated, ${failures} timed-out requests`,
		);
		assert.deepEqual(missing, []);
		assert.deepEqual(doubled, []);
		assert.equal(new Set(hubPids).size, 3);
		const log = readFileSync(hubPaths(dataDir).hubLog, 'utf8');
		assert.equal(count(log, /opened the pglite store/), 3, 'one store open per hub generation');
		const last = hubPids[2]!;
		await writers[0].request('hub/stop', {}).catch(() => undefined);
		for (const c of writers) {
			c.close();
		}
		await waitFor(() => !alive(last), 10_000, 'hub exit');
		const checked = await amcheckIndexes(hubPaths(dataDir).pgdata);
		console.log(`amcheck after two kill -9 failovers: ${checked} btree indexes clean`);
		assert.ok(checked > 0);
	});

	it('two clients writing 500 cards each at once end with exactly 1000 rows and clean indexes (2)', async () => {
		ensureBuilt();
		const dataDir = tempDataDir();
		dirs.push(dataDir);
		const [a, b] = await Promise.all([spawningClient(dataDir, 'a'), spawningClient(dataDir, 'b')]);
		const write = async (c: RpcClient, tag: string): Promise<void> => {
			// 10 requests in flight per client, 50 at a time: concurrent at the hub, one card per transaction.
			await Promise.all(
				Array.from({ length: 10 }, async (_, lane) => {
					for (let i = lane; i < 500; i += 10) {
						await c.request('card/create', { cards: [{ id: `${tag}-${i}`, title: `${tag} ${i}` }] });
					}
				}),
			);
		};
		const t0 = Date.now();
		await Promise.all([write(a, 'a'), write(b, 'b')]);
		const ms = Date.now() - t0;
		const stats = await a.request('card/stats', {});
		assert.equal(stats.total, 1000);
		const ids = new Set<string>();
		let cursor: string | undefined;
		do {
			const page = await a.request('data/export', cursor === undefined ? {} : { cursor });
			for (const card of page.cards) {
				assert.ok(!ids.has(card.id), `duplicate ${card.id}`);
				ids.add(card.id);
			}
			cursor = page.nextCursor;
		} while (cursor !== undefined);
		assert.equal(ids.size, 1000);
		const hubPid = a.hello!.hubPid;
		await a.request('hub/stop', {});
		a.close();
		b.close();
		await waitFor(() => !alive(hubPid), 10_000, 'hub exit');
		const checked = await amcheckIndexes(hubPaths(dataDir).pgdata);
		console.log(`2 x 500 concurrent creates in ${ms} ms: 1000 rows, no duplicates, ${checked} indexes clean`);
	});
});
