/**
 * The hub's live behaviour through real clients: event replay + live push with no gap or duplicate
 * (also across a hub restart), the reaper's exact timers, claims that wait for work and are woken by
 * events, agent notices, and release of an MCP agent's claims when its last connection closes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BacklogEvent } from '../../core/protocol';
import {
	type HubProcess,
	RawClient,
	client,
	removeDataDir,
	sleep,
	startHub,
	tempDataDir,
	waitFor,
} from '../helpers/hub';

describe('hub events and timers', () => {
	let dataDir: string;
	let hub: HubProcess;

	before(async () => {
		dataDir = tempDataDir();
		hub = await startHub({ dataDir });
	});

	after(async () => {
		await hub.stop();
		removeDataDir(dataDir);
	});

	it('replays after a seq and then goes live, without gaps or duplicates, across a hub restart', async () => {
		const writer = await client(dataDir);
		const reader = await client(dataDir, { spawnHub: false });
		try {
			await writer.request('card/create', { cards: Array.from({ length: 30 }, (_, i) => ({ title: `r${i}` })) });
			const seen: number[] = [];
			reader.onEvent(e => seen.push(e.seq));
			const base = (await writer.request('events/list', { limit: 1 })).lastSeq;
			// Subscribe from the middle: exactly the events after seq 10 arrive, then live ones.
			await reader.subscribe(10);
			const more = writer.request('card/create', { cards: Array.from({ length: 20 }, (_, i) => ({ title: `l${i}` })) });
			for (let i = 0; i < 10; i++) {
				await writer.request('card/create', { cards: [{ title: `single${i}` }] });
			}
			await more;
			const lastBefore = (await writer.request('events/list', { limit: 1 })).lastSeq;
			await waitFor(() => seen.at(-1) === lastBefore, 5_000, 'live events');
			assert.ok(base >= 30);
			assert.deepEqual(seen, range(11, lastBefore), 'replay then live, in order, once each');

			// Restart the hub (graceful), write while the reader is offline, and let it resume.
			const states: string[] = [];
			reader.onState(s => states.push(s));
			const oldPid = hub.pid;
			await hub.stop();
			hub = await startHub({ dataDir });
			await waitFor(
				() => writer.connectionState === 'connected' && writer.hello?.hubPid === hub.pid,
				10_000,
				'writer reconnect',
			);
			await writer.request('card/create', { cards: [{ title: 'while offline' }] });
			await waitFor(
				() => reader.connectionState === 'connected' && reader.hello?.hubPid === hub.pid,
				10_000,
				'reader reconnect',
			);
			await writer.request('card/create', { cards: [{ title: 'after resume' }] });
			const lastAfter = (await writer.request('events/list', { limit: 1 })).lastSeq;
			await waitFor(() => seen.at(-1) === lastAfter, 5_000, 'resumed events');
			assert.notEqual(hub.pid, oldPid);
			assert.deepEqual(seen, range(11, lastAfter), 'no gap and no duplicate across the restart');
			// Reconnect attempts stay 'offline' until one succeeds: a board or status bar showing the
			// state must not flicker between "Offline" and "Connecting…" on every retry.
			assert.deepEqual(states, ['offline', 'connected'], `went through ${states.join(' → ')}`);
			console.log(`resume: ${seen.length} events delivered once each, seq 11..${lastAfter}`);
		} finally {
			writer.close();
			reader.close();
		}
	});

	it('returns an expired lease to ready within a second of its expiry', async () => {
		const c = await client(dataDir);
		await c.request('card/create', { cards: [{ id: 'reap-1', title: 'will expire', priority: 1_000_000 }] });
		const claim = await c.request('card/claim', { cardId: 'reap-1', ttlSeconds: 5 });
		assert.ok(claim.lease);
		const expiresAt = Date.parse(claim.lease.expiresAt);
		let reclaimedAt: number | undefined;
		c.onEvent(e => {
			if (e.cardId === 'reap-1' && e.type === 'reclaimed') {
				reclaimedAt = Date.now();
			}
		});
		await c.subscribe((await c.request('events/list', { limit: 1 })).lastSeq);
		await waitFor(() => reclaimedAt !== undefined, 8_000, 'the reclaimed event');
		const lateMs = reclaimedAt! - expiresAt;
		console.log(`reaper: lease returned ${lateMs} ms after expiry`);
		assert.ok(lateMs < 1_000, `reclaimed ${lateMs} ms after expiry`);
		const { card } = await c.request('card/get', { cardId: 'reap-1' });
		assert.equal(card.status, 'ready');
		assert.ok(card.claimEpoch > claim.lease.epoch, 'the epoch moved on');
		c.close();
	});

	it('wakes a waiting claim with the create that made work available, without polling', async () => {
		const waiter = await client(dataDir, { agent: { id: 'waiter', capabilities: ['lang:zz'] } });
		const creator = await client(dataDir);
		const t0 = Date.now();
		const pending = waiter.request('card/claim', { capabilities: ['lang:zz'], phase: 'wait-test', waitSeconds: 10 });
		await sleep(400);
		const createdAt = Date.now();
		await creator.request('card/create', { cards: [{ id: 'wake-1', title: 'arrives late', phase: 'wait-test' }] });
		const result = await pending;
		const woke = Date.now() - createdAt;
		assert.equal(result.card?.id, 'wake-1');
		assert.ok(Date.now() - t0 >= 400, 'the claim really waited');
		console.log(`waitSeconds claim woken ${woke} ms after the create`);
		assert.ok(woke < 500, `woken after ${woke} ms`);
		const none = await waiter.request('card/claim', { phase: 'wait-test', waitSeconds: 1 });
		assert.equal(none.card, null, 'times out empty-handed after waitSeconds');
		assert.match(none.reason ?? '', /Nothing claimable/, 'the final answer says why');
		waiter.close();
		creator.close();
	});

	it('pushes agent notices and releases an mcp agent’s claims when its last connection closes', async () => {
		const watcher = await RawClient.unix(hub.paths);
		assert.equal((await watcher.hello({ token: hub.token })).hello, 'ok');
		const sub = await watcher.request('events/subscribe', {});
		assert.equal(sub.error, undefined);
		const agent = await client(dataDir, { client: 'mcp', agent: { id: 'mcp-agent-1', name: 'Test agent' } });
		const notice = (await watcher.next(f => f.notice === 'agents' && JSON.stringify(f).includes('mcp-agent-1'))) as {
			agents: { id: string; connected: boolean }[];
		};
		assert.equal(notice.agents.find(a => a.id === 'mcp-agent-1')?.connected, true);
		await agent.request('card/create', { cards: [{ id: 'rel-1', title: 'held by an mcp agent', priority: 999_999 }] });
		const claim = await agent.request('card/claim', { cardId: 'rel-1' });
		assert.equal(claim.card?.claimOwner, 'mcp-agent-1');
		const closedAt = Date.now();
		agent.close();
		const released = (await watcher.next(
			f => (f.data as BacklogEvent | undefined)?.cardId === 'rel-1' && f.event === 'released',
			5_000,
		)) as { data: BacklogEvent };
		console.log(`mcp agent disconnect -> released in ${Date.now() - closedAt} ms`);
		assert.match(released.data.data.reason ?? '', /agent disconnected/);
		// Released, it holds nothing: it ended, and leaves the notice; --all still has it.
		await watcher.next(f => f.notice === 'agents' && !(f.agents as { id: string }[]).some(a => a.id === 'mcp-agent-1'));
		const all = (await watcher.request('agent/list', { all: true })) as {
			result: { agents: { id: string; connected: boolean; endedAt?: string | null }[] };
		};
		const ended = all.result.agents.find(a => a.id === 'mcp-agent-1');
		assert.equal(ended?.connected, false);
		assert.equal(typeof ended.endedAt, 'string');
		watcher.close();
	});

	it('sends no agent notices to MCP sessions, which never show agents', async () => {
		const watcher = await RawClient.unix(hub.paths);
		assert.equal((await watcher.hello({ token: hub.token })).hello, 'ok');
		const mcp = await RawClient.unix(hub.paths);
		assert.equal((await mcp.hello({ token: hub.token, client: 'mcp', agent: { id: 'quiet-mcp-agent' } })).hello, 'ok');
		const pinger = await client(dataDir, { client: 'mcp', agent: { id: 'pinging-mcp-agent' } });
		await pinger.request('agent/ping', {});
		await watcher.next(f => f.notice === 'agents' && JSON.stringify(f).includes('pinging-mcp-agent'));
		// The watcher got the notice; the MCP session, connected all along, got none.
		await sleep(300);
		assert.equal(mcp.frames.filter(f => (f as { notice?: string }).notice === 'agents').length, 0);
		pinger.close();
		mcp.close();
		watcher.close();
	});

	it('throttles agent notices to at most 4 a second however fast agents ping', async () => {
		const watcher = await RawClient.unix(hub.paths);
		assert.equal((await watcher.hello({ token: hub.token })).hello, 'ok');
		const pinger = await client(dataDir, { agent: { id: 'fast-pinger' } });
		await sleep(600);
		watcher.frames.length = 0;
		const t0 = Date.now();
		let pings = 0;
		while (Date.now() - t0 < 2_000) {
			await pinger.request('agent/ping', {});
			pings++;
		}
		await sleep(300);
		const notices = watcher.frames.filter(f => (f as { notice?: string }).notice === 'agents').length;
		console.log(`${pings} pings in 2 s -> ${notices} agent notices`);
		assert.ok(pings > 10, `only ${pings} pings`);
		assert.ok(notices >= 1 && notices <= 10, `${notices} notices`);
		pinger.close();
		watcher.close();
	});
});

function range(from: number, to: number): number[] {
	return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
