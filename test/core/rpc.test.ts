/**
 * RpcClient's connection lifecycle on the test clock and an in-memory hub: reconnects with the one
 * backoff policy (core/backoff.ts), stays 'offline' through failed attempts (no 'connecting' flicker),
 * re-sends what was pending once back, and times requests out on its clock; an inbox notice that
 * arrives with the hello's answer reaches the first listener; a resume the hub answers `resync` (the
 * log was compacted past the client's seq) tells the listeners to reload; a method named `unchecked`
 * takes its result as sent; a hello the hub never answers is given up after helloTimeoutMs and the
 * connection tried again. Nothing here sleeps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ManualClock } from '../../core/clock';
import { BatonError } from '../../core/errors';
import type { BacklogEvent, HelloOk, Message } from '../../core/protocol';
import { type ConnectionState, RpcClient, type Transport } from '../../core/protocol/rpc';

const helloOk: HelloOk = {
	hello: 'ok',
	protocol: 1,
	hubPid: 4242,
	seq: 0,
	actor: 'cli:1',
	thresholds: { healthySeconds: 30, lateSeconds: 100, staleSeconds: 300, stallSeconds: 900 },
};

/** A hub in memory: answers the hello, and `events/subscribe` with `{seq}` unless `silent`. */
class FakeHub {
	up = true;
	silent = false;
	/** Accepts connections but never answers their hello (a hub stalled at its store). */
	muteHello = false;
	closes = 0;
	/** The answer to `events/subscribe` (and every other request). */
	answer: unknown = { seq: 7 };
	/** Pushed right behind the hello's answer, as the hub pushes an MCP agent's inbox. */
	inboxAfterHello: Message[] | undefined;
	readonly connectsAt: number[] = [];
	readonly requests: string[] = [];
	private open: Transport | undefined;

	constructor(private readonly clock: ManualClock) {}

	connect = (): Promise<Transport> => {
		this.connectsAt.push(this.clock.now().getTime() % 100_000);
		if (!this.up) {
			return Promise.reject(new Error('connect ECONNREFUSED hub.sock'));
		}
		const transport: Transport = {
			send: raw => {
				const frame = JSON.parse(raw) as { hello?: string; id?: number; method?: string };
				const reply = (answer: unknown): void => {
					queueMicrotask(() => transport.onmessage?.(JSON.stringify(answer)));
				};
				if (frame.hello === 'baton') {
					if (this.muteHello) {
						return;
					}
					reply(helloOk);
					if (this.inboxAfterHello !== undefined) {
						reply({ notice: 'inbox', messages: this.inboxAfterHello });
					}
				} else if (frame.method !== undefined) {
					this.requests.push(frame.method);
					if (!this.silent) {
						reply({ id: frame.id, result: this.answer });
					}
				}
			},
			close: () => {
				this.closes++;
			},
		};
		this.open = transport;
		return Promise.resolve(transport);
	};

	/** Pushes a frame on the open connection. */
	push(frame: unknown): void {
		this.open?.onmessage?.(JSON.stringify(frame));
	}

	/** The hub goes away: the open connection closes and new ones are refused. */
	stop(): void {
		this.up = false;
		this.open?.onclose?.('hub stopped');
		this.open = undefined;
	}
}

function clientOn(options: { maxOfflineMs?: number; unchecked?: readonly 'card/list'[] } = {}) {
	const clock = new ManualClock('2026-01-01T00:00:00.000Z');
	const hub = new FakeHub(clock);
	const client = new RpcClient({ connect: hub.connect, hello: { client: 'cli' }, clock, ...options });
	const states: ConnectionState[] = [];
	client.onState(s => states.push(s));
	return { clock, hub, client, states };
}

describe('RpcClient reconnects', () => {
	it('retries with backoff, staying offline until an attempt succeeds', async () => {
		const { clock, hub, client, states } = clientOn();
		try {
			await client.start();
			hub.stop();
			await clock.tick(1_000);
			// Backoff 100, 200, 400 ms: attempts at 100, 300 and 700 ms.
			assert.deepEqual(hub.connectsAt, [0, 100, 300, 700]);
			assert.equal(client.connectionState, 'offline');
			hub.up = true;
			await clock.tick(499);
			assert.equal(client.connectionState, 'offline');
			await clock.tick(1);
			assert.deepEqual(hub.connectsAt, [0, 100, 300, 700, 1_500]);
			assert.deepEqual(states, ['connecting', 'connected', 'offline', 'connected'], 'no connecting flicker');
			// A success starts the backoff over.
			hub.stop();
			await clock.tick(100);
			assert.equal(hub.connectsAt.at(-1), 1_600);
		} finally {
			client.close();
		}
	});

	it('sends a request made while offline once the hub is back', async () => {
		const { clock, hub, client } = clientOn();
		try {
			await client.start();
			hub.stop();
			let answer: { seq: number } | undefined;
			const asked = client.request('events/subscribe', { afterSeq: 0 }).then(r => (answer = r));
			await clock.tick(1_000);
			assert.equal(answer, undefined);
			hub.up = true;
			await clock.tick(2_000);
			await asked;
			assert.deepEqual(answer, { seq: 7 });
			assert.deepEqual(hub.requests, ['events/subscribe']);
		} finally {
			client.close();
		}
	});

	it('closes a connection whose hello is not answered within helloTimeoutMs and tries again', async () => {
		const { clock, hub, client, states } = clientOn();
		try {
			hub.muteHello = true;
			const first = client.start().then(
				() => 'connected',
				(e: unknown) => (BatonError.is(e) ? e.code : String(e)),
			);
			let answer: { seq: number } | undefined;
			const asked = client.request('events/subscribe', { afterSeq: 0 }, { timeoutMs: 60_000 }).then(r => (answer = r));
			await clock.tick(14_999);
			assert.equal(client.connectionState, 'connecting');
			assert.equal(hub.closes, 0);
			await clock.tick(1);
			assert.equal(await first, 'timeout');
			assert.equal(client.connectionState, 'offline');
			assert.equal(hub.closes, 1, 'the silent connection is closed');
			hub.muteHello = false;
			await clock.tick(100);
			await asked;
			assert.deepEqual(answer, { seq: 7 }, 'the request queued behind the silent hello is sent on the next connection');
			assert.deepEqual(hub.connectsAt, [0, 15_100]);
			assert.deepEqual(states, ['connecting', 'offline', 'connected']);
		} finally {
			client.close();
		}
	});

	it('stops reconnecting once closed', async () => {
		const { clock, hub, client } = clientOn();
		await client.start();
		hub.stop();
		await clock.tick(150);
		assert.equal(clock.pendingTimers, 1, 'the next attempt is armed');
		client.close();
		assert.equal(clock.pendingTimers, 0);
		await clock.tick(10_000);
		assert.deepEqual(hub.connectsAt, [0, 100]);
		assert.equal(client.connectionState, 'closed');
	});

	it('gives up after maxOfflineMs and fails what was pending', async () => {
		const { clock, hub, client } = clientOn({ maxOfflineMs: 5_000 });
		try {
			await client.start();
			hub.stop();
			const asked = client.request('events/subscribe', { afterSeq: 0 }, { timeoutMs: 60_000 });
			const failed = assert.rejects(
				asked,
				(e: unknown) => BatonError.is(e, 'unavailable') && e.message.includes('5 s'),
			);
			await clock.tick(8_000);
			await failed;
			const attempts = hub.connectsAt.length;
			await clock.tick(60_000);
			assert.equal(hub.connectsAt.length, attempts, 'no more attempts');
			assert.equal(clock.pendingTimers, 0);
		} finally {
			client.close();
		}
	});
});

describe('RpcClient timeouts', () => {
	it('fails a request the hub does not answer, on the client clock', async () => {
		const { clock, hub, client } = clientOn();
		try {
			await client.start();
			hub.silent = true;
			const asked = client.request('events/subscribe', { afterSeq: 0 }, { timeoutMs: 2_000 });
			const timedOut = assert.rejects(
				asked,
				(e: unknown) => BatonError.is(e, 'timeout') && e.message.includes('within 2 s'),
			);
			await clock.tick(1_999);
			assert.equal(clock.pendingTimers, 1);
			await clock.tick(1);
			await timedOut;
		} finally {
			client.close();
		}
	});
});

describe('RpcClient inbox notices', () => {
	it('keeps a notice that came with the hello for the first listener, registered after start', async () => {
		const { hub, client } = clientOn();
		const message: Message = {
			id: 1,
			cardId: 'C1',
			from: 'board:2',
			text: 'Use v2.',
			question: false,
			at: '2026-01-01T00:00:00.000Z',
		};
		hub.inboxAfterHello = [message];
		try {
			await client.start();
			const heard: Message[][] = [];
			client.onInbox(messages => heard.push(messages));
			assert.deepEqual(heard, [[message]]);
			const later: Message[][] = [];
			client.onInbox(messages => later.push(messages));
			assert.deepEqual(later, [], 'kept for the first listener only');
		} finally {
			client.close();
		}
	});
});

describe('RpcClient resync', () => {
	it('tells its listeners to reload when a resume after a reconnect is answered resync', async () => {
		const { clock, hub, client } = clientOn();
		try {
			await client.start();
			assert.equal(await client.subscribe(3), 7);
			hub.push({ event: 'created', seq: 8, data: event(8) });
			assert.equal(client.seq, 8);
			const resyncs: number[] = [];
			client.onResync(seq => resyncs.push(seq));
			hub.answer = { seq: 40, resync: true };
			hub.stop();
			hub.up = true;
			await clock.tick(200);
			assert.deepEqual(hub.requests, ['events/subscribe', 'events/subscribe'], 'resumed once, not re-sent');
			assert.deepEqual(resyncs, [40]);
			assert.equal(client.seq, 40, 'events before the new seq will never come');
			const seen: number[] = [];
			client.onEvent(e => seen.push(e.seq));
			hub.push({ event: 'created', seq: 39, data: event(39) });
			hub.push({ event: 'created', seq: 41, data: event(41) });
			assert.deepEqual(seen, [41]);
		} finally {
			client.close();
		}
	});

	it('reports a resync answered to subscribe() and one sent as a notice (the VS Code relay)', async () => {
		const { hub, client } = clientOn();
		try {
			await client.start();
			const resyncs: number[] = [];
			client.onResync(seq => resyncs.push(seq));
			hub.answer = { seq: 12, resync: true };
			assert.equal(await client.subscribe(1), 12);
			hub.push({ notice: 'resync', seq: 30 });
			assert.deepEqual(resyncs, [12, 30]);
			assert.equal(client.seq, 30);
		} finally {
			client.close();
		}
	});
});

describe('RpcClient unchecked results', () => {
	it('checks a result against the protocol unless its method is unchecked, which takes it as sent', async () => {
		const page = { cards: [], extra: 'kept only unchecked' };
		const checked = clientOn();
		const unchecked = clientOn({ unchecked: ['card/list'] });
		try {
			for (const { hub } of [checked, unchecked]) {
				hub.answer = page;
			}
			assert.deepEqual(await checked.client.request('card/list', {}), { cards: [] });
			assert.deepEqual(await unchecked.client.request('card/list', {}), page);
			// Only the methods named: another result is still checked (and refused when it is not one).
			await assert.rejects(unchecked.client.request('card/stats', {}), (e: unknown) => BatonError.is(e, 'internal'));
		} finally {
			checked.client.close();
			unchecked.client.close();
		}
	});
});

function event(seq: number): BacklogEvent {
	return { seq, at: '2026-01-01T00:00:00.000Z', cardId: 'C1', actor: 'a', type: 'created', data: { card: null } };
}
