/**
 * Team mode while PostgreSQL goes away (point 4), on a PostgreSQL this test starts itself
 * (test/helpers/pgCluster.ts), so the shared server is untouched. Two hubs share one schema; four MCP
 * agents (two per hub) create, claim and complete cards while the server is stopped twice (fast, then
 * immediate) and started again. Proven: every face (MCP tools, an agent session started during the
 * outage, the CLI, hub clients) answers `unavailable` "PostgreSQL at 127.0.0.1:PORT refused the
 * connection (retrying)" while it is down, never internal; both hubs survive and LISTEN again; every
 * acknowledged create, claim and complete is in the store; no card was claimed while another agent
 * held it; every subscriber got every committed event exactly once; and after the restart a waiting
 * claim on hub B is woken by a create on hub A through LISTEN/NOTIFY.
 * @serial wakes within 1 s and the relay back within 5 s of PostgreSQL returning: run alone (scripts/testSuite.mjs).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { BatonError } from '../../core/errors';
import type { RpcClient } from '../../core/protocol/rpc';
import { NotifyRelay } from '../../mcp-server/hub/notifyRelay';
import { type HubProcess, client, hubEnv, removeDataDir, sleep, startHub, tempDataDir, waitFor } from '../helpers/hub';
import { type Agent, runBaton, startAgent, textOf } from '../helpers/mcp';
import { type PgCluster, startPgCluster } from '../helpers/pgCluster';

const schema = 'baton_outage';

/** What one agent saw: acknowledged writes, and every refusal by kind. */
interface Tally {
	creates: string[];
	claims: { cardId: string; epoch: number }[];
	completes: string[];
	/** Refusals naming PostgreSQL as down ("… (retrying)"), and those saying it refused the connection. */
	down: number;
	refused: number;
	/** Complete refused after an earlier try met the outage: that try may have committed. */
	lostAnswers: number;
	unexpected: string[];
}

describe('PostgreSQL stopped and started under 4 agents on 2 hubs', () => {
	let cluster: PgCluster | undefined;
	const dirs: string[] = [];
	const hubs: HubProcess[] = [];
	const clients: RpcClient[] = [];
	const agents: Agent[] = [];
	let env: Record<string, string> = {};

	before(async () => {
		cluster = await startPgCluster();
		env = { DATABASE_URL: cluster.url, BATON_PG_SCHEMA: schema };
		for (let i = 0; i < 2; i++) {
			const dataDir = tempDataDir();
			dirs.push(dataDir);
			hubs.push(await startHub({ dataDir, env: hubEnv(env) }));
		}
	});

	after(async () => {
		await Promise.all(agents.map(a => a.close().catch(() => undefined)));
		for (const c of clients) {
			c.close();
		}
		for (const h of hubs) {
			if (h.proc.exitCode !== null) {
				// A hub that died during the run: its last words are the diagnosis.
				console.log(`hub ${h.pid} exited with ${h.proc.exitCode}:\n${h.stderr().slice(-4_000)}`);
			}
			await h.stop();
		}
		for (const d of dirs) {
			removeDataDir(d);
		}
		cluster?.destroy();
	});

	const downText = (): RegExp => new RegExp(`PostgreSQL at 127\\.0\\.0\\.1:${cluster?.port ?? 0} .*\\(retrying\\)`);
	const refusedText = (): RegExp =>
		new RegExp(`PostgreSQL at 127\\.0\\.0\\.1:${cluster?.port ?? 0} refused the connection \\(retrying\\)`);

	/** Hub relay connections that have LISTENed (their last statement is LISTEN or an announcement). */
	async function relaysListening(): Promise<number> {
		const admin = new pg.Client({ connectionString: cluster!.url });
		admin.on('error', () => undefined);
		try {
			await admin.connect();
			const { rows } = await admin.query<{ n: number }>(
				`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'baton hub notify'
				 AND (query LIKE 'LISTEN %' OR query LIKE 'SELECT pg_notify%')`,
			);
			return rows[0]?.n ?? 0;
		} catch {
			return 0;
		} finally {
			await admin.end().catch(() => undefined);
		}
	}

	async function open(hub: number, id?: string): Promise<RpcClient> {
		const c = await client(dirs[hub]!, id === undefined ? {} : { agent: { id } });
		clients.push(c);
		return c;
	}

	/** One agent: create a card, claim one, complete it; on an outage refusal, wait a little and go on. */
	async function work(agent: Agent, name: string, stop: () => boolean): Promise<Tally> {
		const t: Tally = { creates: [], claims: [], completes: [], down: 0, refused: 0, lostAnswers: 0, unexpected: [] };
		/** true: PostgreSQL is down (counted), so back off; false: any other refusal (recorded). */
		const refusal = (what: string, text: string, allowed = /^$/): boolean => {
			if (downText().test(text) && text.startsWith('unavailable: ')) {
				t.down++;
				t.refused += refusedText().test(text) ? 1 : 0;
				return true;
			}
			if (!allowed.test(text)) {
				t.unexpected.push(`${what}: ${text}`);
			}
			return false;
		};
		for (let i = 0; !stop(); i++) {
			const id = `${name}-${i}`;
			const created = await agent.call('create', { id, title: `written by ${name}`, phase: 'work' });
			if (created.isError !== true) {
				t.creates.push(id);
			} else if (refusal('create', textOf(created))) {
				await sleep(100);
				continue;
			}
			const claimed = await agent.call('claim', { phase: 'work' });
			if (claimed.isError === true) {
				if (refusal('claim', textOf(claimed))) {
					await sleep(100);
				}
				continue;
			}
			const { card, lease } = claimed.structuredContent as {
				card: { id: string } | null;
				lease: { epoch: number } | null;
			};
			if (card === null || lease === null) {
				continue;
			}
			t.claims.push({ cardId: card.id, epoch: lease.epoch });
			for (let metOutage = false; ;) {
				const done = await agent.call('complete', { cardId: card.id, result: `by ${name}` });
				if (done.isError !== true) {
					t.completes.push(card.id);
					break;
				}
				// A complete whose answer the outage cut off may have committed: a retry finds the card done.
				if (!refusal('complete', textOf(done), metOutage ? /^(invalid_transition|lease_lost): / : /^$/)) {
					t.lostAnswers++;
					break;
				}
				metOutage = true;
				await sleep(100);
			}
		}
		return t;
	}

	/** Waits until a hub client's request is refused with the refused-connection sentence; never internal. */
	async function refusedThrough(c: RpcClient, what: string): Promise<void> {
		await waitFor(
			async () => {
				try {
					await c.request('card/stats', {});
					return false;
				} catch (e) {
					assert.ok(BatonError.is(e, 'unavailable'), `${what}: ${String(e)}`);
					assert.match(e.message, downText());
					return refusedText().test(e.message);
				}
			},
			10_000,
			`${what} to say PostgreSQL refused the connection`,
		);
	}

	it('names the outage on every face, loses no acknowledged write and claims no card twice', async () => {
		const pgc = cluster!;
		const watchers = [await open(0), await open(1)];
		const seen = watchers.map(() => [] as number[]);
		for (const [i, w] of watchers.entries()) {
			w.onEvent(e => seen[i]!.push(e.seq));
			await w.subscribe(0);
		}
		for (let i = 0; i < 4; i++) {
			agents.push(await startAgent(dirs[i % 2]!, { env: { ...env, BATON_AGENT: `w${i}` } }));
		}
		let stopping = false;
		const runs = agents.map((a, i) => work(a, `w${i}`, () => stopping));
		const tallies: Tally[] = [];
		const doneCount = async (): Promise<number> => (await watchers[0]!.request('card/stats', {})).counts.done;
		try {
			await waitFor(async () => (await doneCount()) >= 20, 20_000, 'the agents to complete 20 cards');
			for (const mode of ['fast', 'immediate'] as const) {
				// Each outage cuts live LISTEN connections.
				assert.equal(await relaysListening(), 2);
				const startedAt = Date.now();
				await pgc.stop(mode);
				// Hub clients (the CLI's, the extension's, the board's) on both hubs, then the CLI itself.
				await refusedThrough(watchers[0]!, `hub A after a ${mode} stop`);
				await refusedThrough(watchers[1]!, `hub B after a ${mode} stop`);
				const cli = await runBaton(['list'], { dataDir: dirs[0]!, env });
				assert.equal(cli.code, 1, cli.stderr);
				assert.match(cli.stderr, refusedText());
				// An agent session that starts now: its hello to the hub cannot register it, and says why.
				const late = await startAgent(dirs[1]!, { env: { ...env, BATON_AGENT: `late-${mode}` } });
				agents.push(late);
				const first = await late.call('list', {});
				assert.equal(first.isError, true);
				assert.match(textOf(first), new RegExp(`^unavailable: ${refusedText().source}`));
				// Every agent meets the outage through its MCP tools before the server comes back.
				await sleep(Math.max(0, 1_500 - (Date.now() - startedAt)));
				await pgc.start();
				const downMs = Date.now() - startedAt;
				await waitFor(
					async () => (await relaysListening()) === 2,
					15_000,
					`both hubs to LISTEN after the ${mode} restart`,
				);
				const relistenMs = Date.now() - startedAt - downMs;
				console.log(
					`PostgreSQL ${mode} stop: down for ${downMs} ms; both hubs LISTEN again ${relistenMs} ms after it is back`,
				);
				// The relays' reconnect backoff is capped at 2 s.
				assert.ok(relistenMs < 5_000, `relays back after ${relistenMs} ms`);
				const after = await doneCount();
				await waitFor(async () => (await doneCount()) >= after + 20, 20_000, `progress after the ${mode} restart`);
				// The session that started during the outage works now, without being restarted.
				await late.json('list', {});
			}
		} finally {
			stopping = true;
			tallies.push(...(await Promise.all(runs)));
		}
		for (const [i, t] of tallies.entries()) {
			console.log(
				`w${i}: ${t.creates.length} creates, ${t.claims.length} claims, ${t.completes.length} completes acknowledged; ` +
					`${t.down} refusals naming PostgreSQL (${t.refused} "refused the connection"), ${t.lostAnswers} completes whose answer was lost`,
			);
			assert.deepEqual(t.unexpected, [], `w${i} got only outage refusals`);
			assert.ok(t.refused > 0, `w${i} was told PostgreSQL refused the connection`);
		}
		for (const h of hubs) {
			assert.equal(h.proc.exitCode, null, `hub ${h.pid} still runs:\n${h.stderr()}`);
			assert.doesNotMatch(h.stderr(), /internal error/);
			// Hundreds of refused requests, a few log lines: one per 10 s of outage (and per component).
			const lines = h.stderr().split('\n');
			const refusals = lines.filter(l => l.includes('PostgreSQL at')).length;
			console.log(`hub ${h.pid}: ${lines.length} log lines, ${refusals} naming the outage`);
			assert.ok(refusals <= 4, `${refusals} refusal lines`);
		}

		// The store itself, read directly: acknowledged writes present, claims never overlapping.
		const db = new pg.Client({ connectionString: pgc.url });
		await db.connect();
		try {
			const cards = new Map(
				(
					await db.query<{ id: string; status: string; result: string | null }>(
						`SELECT id, status, result FROM ${schema}.cards`,
					)
				).rows.map(r => [r.id, r]),
			);
			const events = (
				await db.query<{ seq: string; card_id: string; actor: string; type: string; epoch: number | null }>(
					`SELECT seq, card_id, actor, type, (data->'card'->>'claimEpoch')::int AS epoch FROM ${schema}.events ORDER BY seq`,
				)
			).rows;
			const creates = tallies.flatMap(t => t.creates);
			const missing = creates.filter(id => !cards.has(id));
			assert.deepEqual(missing, [], 'every acknowledged create is stored');
			const notDone = tallies.flatMap((t, i) =>
				t.completes.filter(id => cards.get(id)?.status !== 'done' || cards.get(id)?.result !== `by w${i}`),
			);
			assert.deepEqual(notDone, [], 'every acknowledged complete is stored, with its agent’s result');

			const holder = new Map<string, string>();
			const completedTimes = new Map<string, number>();
			const overlaps: string[] = [];
			for (const e of events) {
				if (e.type === 'claimed') {
					if (holder.has(e.card_id)) {
						overlaps.push(`${e.card_id} claimed by ${e.actor} at seq ${e.seq} while ${holder.get(e.card_id)} held it`);
					}
					holder.set(e.card_id, e.actor);
				} else if (['completed', 'released', 'reclaimed', 'failed', 'blocked', 'deleted'].includes(e.type)) {
					holder.delete(e.card_id);
				}
				if (e.type === 'completed') {
					completedTimes.set(e.card_id, (completedTimes.get(e.card_id) ?? 0) + 1);
				}
			}
			const twiceDone = [...completedTimes].filter(([, n]) => n > 1);
			// Each acknowledged lease is a claim the store recorded for that agent, and no lease went to two.
			const leases = events.filter(e => e.type === 'claimed').map(e => `${e.card_id}@${e.epoch ?? '?'} ${e.actor}`);
			const ackedClaims = tallies.flatMap((t, i) => t.claims.map(c => `${c.cardId}@${c.epoch} w${i}`));
			const unrecorded = ackedClaims.filter(c => !leases.includes(c));
			const claimedEvents = leases.length;
			console.log(
				`store: ${cards.size} cards, ${events.length} events, ${claimedEvents} claims, ` +
					`${completedTimes.size} completed; acknowledged: ${creates.length} creates, ${ackedClaims.length} claims, ` +
					`${tallies.reduce((n, t) => n + t.completes.length, 0)} completes; ${overlaps.length} overlapping claims`,
			);
			assert.deepEqual(overlaps, [], 'no card was claimed while another agent held it');
			assert.deepEqual(twiceDone, [], 'no card was completed twice');
			assert.deepEqual(unrecorded, [], 'every acknowledged claim is the store’s lease for that agent');
			const epochs = leases.map(l => l.split(' ')[0]);
			assert.equal(new Set(epochs).size, epochs.length, 'no lease (card, epoch) was handed out twice');

			// Both hubs' subscribers got every committed event once, in order: no wake-up lost to the outage.
			const seqs = events.map(e => Number(e.seq));
			for (const [i, s] of seen.entries()) {
				await waitFor(() => (s.at(-1) ?? 0) >= seqs.at(-1)!, 10_000, `hub ${'AB'[i]}'s subscriber to catch up`);
				assert.deepEqual(s, seqs, `hub ${'AB'[i]}'s subscriber saw each committed event once`);
			}
		} finally {
			await db.end();
		}
	});

	it('wakes a waiting claim on hub B with a create on hub A after the restart', async () => {
		// Both hubs' relays listen again before the wake is timed, so it comes through LISTEN/NOTIFY.
		await waitFor(async () => (await relaysListening()) === 2, 15_000, 'both hubs to LISTEN again');
		const creator = await open(0);
		const waiter = await open(1, 'waiter');
		const latencies: number[] = [];
		for (let k = 0; k < 3; k++) {
			const phase = `wake-${k}`;
			const waiting = waiter.request('card/claim', { phase, waitSeconds: 20 }, { timeoutMs: 30_000 });
			await sleep(300);
			const t0 = performance.now();
			await creator.request('card/create', { cards: [{ id: `wake-${k}`, title: 'wakes hub B', phase }] });
			const { card } = await waiting;
			latencies.push(performance.now() - t0);
			assert.equal(card?.id, `wake-${k}`);
		}
		console.log(`cross-hub wake after the restart: ${latencies.map(l => l.toFixed(0)).join(', ')} ms`);
		// The relay's 3 s poll alone could not make three wakes this quick.
		assert.ok(Math.max(...latencies) < 1_000, `wakes took ${latencies.map(l => l.toFixed(0)).join(', ')} ms`);
	});

	it('NotifyRelay: listens again after a restart, reads what it missed, and hears other hubs again', async () => {
		const pgc = cluster!;
		let kicks = 0;
		const relay = new NotifyRelay(pgc.url, () => kicks++, { pollMs: 0 });
		const other = new pg.Client({ connectionString: pgc.url });
		try {
			await relay.start();
			await pgc.stop('fast');
			await sleep(300);
			assert.equal(kicks, 0);
			await pgc.start();
			// The kick on reconnect is the read of everything written while no one listened.
			await waitFor(() => kicks === 1, 10_000, 'the relay to reconnect and read the log');
			await other.connect();
			await other.query("NOTIFY baton_events, '1'");
			await waitFor(() => kicks === 2, 5_000, 'a NOTIFY from another hub after the restart');
		} finally {
			await relay.close();
			await other.end().catch(() => undefined);
		}
	});
});
