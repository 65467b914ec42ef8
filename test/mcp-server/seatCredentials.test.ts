/**
 * Seat credentials at the hub (mcp-server/hub/seatCredentials.ts), over real websockets to a real hub:
 * only the session holding a dispatched card gets one; a hello with it is that card's agent whatever
 * the hello claims to be; it acts on its card and reads anything, and is refused (`unauthorized`, the
 * card untouched) on another card, for human verbs and for minting; a forged one is refused at hello;
 * once the card leaves the seat the credential opens nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { hubPaths } from '../../core/paths';
import type { RpcClient } from '../../core/protocol/rpc';
import { type HubProcess, RawClient, client, removeDataDir, startHub, tempDataDir } from '../helpers/hub';

let dataDir: string;
let hub: HubProcess;
let admin: RpcClient;
let seat: RpcClient;

const errorCode = (frame: Record<string, unknown>): string =>
	(frame.error as { code?: string } | undefined)?.code ?? 'ok';

before(async () => {
	dataDir = tempDataDir();
	hub = await startHub({ dataDir });
	admin = await client(dataDir, { agent: { id: 'vscode:alice' } });
	// What `baton run`'s seat connection is: a person's process with an agent id and a session.
	seat = await client(dataDir, {
		client: 'cli',
		agent: { id: 'fake-seats-s1-abcd', kind: 'fake' },
		session: 'seat-session-0123456789abcdef',
	});
	await admin.request('run/register', {
		name: 'seats',
		host: 'here',
		pid: process.pid,
		seats: 1,
		kinds: ['fake'],
		project: null,
	});
});

after(async () => {
	seat.close();
	admin.close();
	await hub.stop();
	removeDataDir(dataDir);
});

describe('seat credentials', () => {
	it('holds an agent to its card until the card leaves the seat', async () => {
		const { cards } = await admin.request('card/create', {
			cards: [{ title: 'mine', phase: 'seat' }, { title: 'theirs' }],
		});
		const [mine, theirs] = cards;
		assert.ok(mine && theirs);
		const claimed = await seat.request('card/claim', {
			phase: 'seat',
			dispatch: { run: 'seats', seat: 1, kind: 'fake' },
		});
		assert.equal(claimed.card?.id, mine.id);
		const epoch = claimed.lease?.epoch ?? 0;
		// Another card, or another epoch: no credential.
		await assert.rejects(seat.request('dispatch/seat', { cardId: theirs.id, epoch: 1 }), { code: 'lease_lost' });
		await assert.rejects(seat.request('dispatch/seat', { cardId: mine.id, epoch: epoch + 1 }), {
			code: 'lease_lost',
		});
		// A person's connection without a session holds nothing.
		await assert.rejects(admin.request('dispatch/seat', { cardId: mine.id, epoch }), { code: 'invalid_input' });
		const { token } = await seat.request('dispatch/seat', { cardId: mine.id, epoch });

		const paths = hubPaths(dataDir);
		const forged = await RawClient.unix(paths);
		const refused = await forged.hello({ seat: `${token.slice(0, -4)}AAAA` });
		assert.equal(refused.hello, 'error');
		assert.equal((refused.error as { code: string }).code, 'unauthorized');
		await forged.waitClosed();

		const agent = await RawClient.unix(paths);
		// Whatever the hello says it is, the connection is the seat's agent and session.
		const ok = await agent.hello({ client: 'cli', seat: token, agent: { id: 'vscode:alice' } });
		assert.equal(ok.hello, 'ok');
		assert.equal(ok.actor, 'fake-seats-s1-abcd');
		assert.equal(errorCode(await agent.request('card/heartbeat', { cardId: mine.id, epoch, note: 'on it' })), 'ok');
		assert.equal(errorCode(await agent.request('card/comment', { cardId: mine.id, text: 'mine' })), 'ok');
		assert.equal(errorCode(await agent.request('card/get', { cardId: theirs.id })), 'ok');
		assert.equal(errorCode(await agent.request('card/list', {})), 'ok');
		const denied = await agent.request('card/comment', { cardId: theirs.id, text: 'not mine' });
		assert.equal(errorCode(denied), 'unauthorized');
		assert.match(
			(denied.error as { message: string }).message,
			new RegExp(`card ${mine.id} and acts on that card only`),
		);
		for (const [method, params] of [
			['card/review', { cardId: theirs.id, approve: true }],
			['card/update', { cardId: theirs.id, title: 'taken over' }],
			['settings/update', { review: 'none' }],
			['pause/set', { scope: 'all' }],
			['pause/clear', { all: true }],
			['card/assign', { cardId: theirs.id, assignee: 'kind:fake' }],
			['hooks/add', { url: 'https://example.com/hook' }],
			['dispatch/seat', { cardId: mine.id, epoch }],
			['card/complete', { cardId: mine.id, epoch, next: {} }],
		] as const) {
			assert.equal(errorCode(await agent.request(method, params)), 'unauthorized', method);
		}
		const theirsNow = await admin.request('card/get', { cardId: theirs.id });
		assert.equal(theirsNow.card.title, 'theirs');
		assert.equal(theirsNow.messages.length, 0);
		assert.deepEqual((await admin.request('pause/list', {})).pauses, []);

		// The card leaves the seat: the credential opens nothing more, on this connection or a new one.
		await seat.request('card/release', { cardId: mine.id, epoch, reason: 'seat closing' });
		assert.equal(errorCode(await agent.request('card/get', { cardId: mine.id })), 'unauthorized');
		assert.equal(errorCode(await agent.request('card/claim', { cardId: mine.id })), 'unauthorized');
		assert.equal((await admin.request('card/get', { cardId: mine.id })).card.status, 'ready');
		agent.close();
		const late = await RawClient.unix(paths);
		const lateHello = await late.hello({ seat: token });
		assert.equal(lateHello.hello, 'error');
		assert.match((lateHello.error as { message: string }).message, /has ended/);
		late.close();
	});
});
