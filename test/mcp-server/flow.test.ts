/**
 * One connection's flow control (mcp-server/hub/flow.ts) over a real websocket pair, with small limits:
 * requests run a few at a time in arrival order, none starts while the client leaves answers unread,
 * the socket pauses while too many wait and resumes as they drain, and a client that does not read is
 * cut off once over the byte cap or after the stall time, freeing what was queued.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { setImmediate as tick } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';

import { ConnectionFlow, type FlowLimits, flowLimits } from '../../mcp-server/hub/flow';
import { waitFor } from '../helpers/hub';

const limits: FlowLimits = {
	...flowLimits,
	maxRunning: 2,
	maxWaiting: 4,
	highWater: 256 * 1024,
	eventLag: 512 * 1024,
	maxQueued: 64 * 1024 * 1024,
	stallMs: 60_000,
};

/** A task that starts when the flow runs it and ends when the test says so. */
class Gate {
	readonly started: number[] = [];
	private readonly ends = new Map<number, () => void>();
	task(n: number): () => Promise<void> {
		return () => {
			this.started.push(n);
			return new Promise(resolve => this.ends.set(n, resolve));
		};
	}
	end(n: number): void {
		this.ends.get(n)?.();
	}
}

describe('connection flow control', () => {
	let wss: WebSocketServer;
	let port: number;

	before(async () => {
		wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
		await new Promise(resolve => wss.once('listening', resolve));
		port = (wss.address() as AddressInfo).port;
	});
	after(() => {
		wss.close();
	});

	/** A connected pair: the hub side wrapped in a flow, and the client. */
	async function pair(
		overrides: Partial<FlowLimits> = {},
	): Promise<{ flow: ConnectionFlow; server: WebSocket; client: WebSocket }> {
		const accepted = new Promise<WebSocket>(resolve => wss.once('connection', resolve));
		const client = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false });
		client.on('error', () => undefined);
		await new Promise(resolve => client.once('open', resolve));
		const server = await accepted;
		server.on('error', () => undefined);
		return {
			flow: new ConnectionFlow(server, () => 'connection 1 (test)', { ...limits, ...overrides }),
			server,
			client,
		};
	}

	/**
	 * Sends from the hub side until well over `bytes` wait unsent (the kernel's buffers fill first; 1 MB
	 * more, so that buffers the kernel grows meanwhile cannot bring it back under).
	 */
	async function fill(flow: ConnectionFlow, bytes: number): Promise<void> {
		const chunk = 'x'.repeat(64 * 1024);
		for (let i = 0; flow.unsentBytes <= bytes + 1024 * 1024 && i < 4096; i++) {
			flow.send(chunk);
			await tick();
		}
		assert.ok(flow.unsentBytes > bytes, `${flow.unsentBytes} bytes unsent`);
	}

	it('runs requests at most maxRunning at a time, in the order they came', async () => {
		const { flow, client } = await pair();
		const gate = new Gate();
		for (let n = 1; n <= 5; n++) {
			flow.admit(gate.task(n), 10);
		}
		assert.deepEqual(gate.started, [1, 2]);
		gate.end(2);
		await waitFor(() => gate.started.length === 3);
		gate.end(1);
		await waitFor(() => gate.started.length === 4);
		assert.deepEqual(gate.started, [1, 2, 3, 4]);
		gate.end(3);
		gate.end(4);
		await waitFor(() => gate.started.length === 5);
		gate.end(5);
		client.terminate();
		flow.close();
	});

	it('pauses the socket while maxWaiting requests wait, and resumes as they drain', async () => {
		const { flow, server, client } = await pair();
		const gate = new Gate();
		for (let n = 1; n <= 2 + 4; n++) {
			flow.admit(gate.task(n), 10);
		}
		assert.equal(server.isPaused, true, 'paused with 4 waiting');
		gate.end(1);
		gate.end(2);
		await waitFor(() => gate.started.length === 4);
		assert.equal(server.isPaused, false, 'resumed with 2 waiting');
		for (let n = 3; n <= 6; n++) {
			gate.end(n);
		}
		client.terminate();
		flow.close();
	});

	it('starts no request while the client leaves more than highWater unread, and goes on once it reads', async () => {
		const { flow, client } = await pair();
		client.pause();
		await fill(flow, limits.highWater);
		const gate = new Gate();
		flow.admit(gate.task(1), 10);
		await tick();
		assert.deepEqual(gate.started, [], 'waits while the client does not read');
		let drained = false;
		void flow.drained().then(() => (drained = true));
		client.resume();
		await waitFor(() => gate.started.length === 1, 10_000, 'the request to start');
		assert.equal(drained, true);
		assert.ok(flow.unsentBytes <= limits.highWater);
		gate.end(1);
		client.terminate();
		flow.close();
	});

	it('reports a subscriber past eventLag as lagging', async () => {
		const { flow, client } = await pair();
		client.pause();
		assert.equal(flow.lagging, false);
		await fill(flow, limits.eventLag);
		assert.equal(flow.lagging, true);
		client.terminate();
		flow.close();
	});

	it('cuts off a client over maxQueued unsent: the frame is refused and the socket destroyed', async () => {
		const { flow, server, client } = await pair({ maxQueued: 2 * 1024 * 1024 });
		client.pause();
		const chunk = 'x'.repeat(256 * 1024);
		let refused = false;
		for (let i = 0; i < 4096 && !refused; i++) {
			refused = !flow.send(chunk);
			await tick();
		}
		assert.equal(refused, true);
		await waitFor(() => server.readyState === WebSocket.CLOSED, 5_000, 'the socket to close');
		assert.equal(flow.send('{}'), false, 'nothing more is queued');
		client.terminate();
	});

	it('cuts off a client that takes no byte for stallMs while over highWater', async () => {
		const { flow, server, client } = await pair({ stallMs: 300 });
		client.pause();
		await fill(flow, limits.highWater);
		const gate = new Gate();
		flow.admit(gate.task(1), 10);
		await waitFor(() => server.readyState === WebSocket.CLOSED, 10_000, 'the stalled socket to close');
		assert.deepEqual(gate.started, [], 'its waiting request was dropped, never run');
		client.terminate();
	});
});
