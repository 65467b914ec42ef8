/**
 * Outgoing webhooks end to end: a real hub process and a real HTTP receiver on
 * 127.0.0.1 that answers, then hangs (slower than the hook's timeout), then answers 500, then is
 * down while the hub restarts, then is back. Every event after the hook was added arrives, in seq
 * order (hence per card), with a valid signature; retries after a timeout re-send the same delivery
 * id, so after de-duplication by that id each event is there exactly once. Claims finish while the
 * receiver hangs; `baton hooks` shows the failures; bad input to `hooks add` changes nothing.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { BacklogEvent, Hook } from '../../core/protocol';
import { openPostgres } from '../../core/store/postgres';
import { Webhooks } from '../../mcp-server/hub/webhooks';
import type { RpcClient } from '../../core/protocol/rpc';
import { verifyWebhook, webhookHeaders } from '../../core/formats/webhook';
import { dropSchema, openTestBacklog, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import {
	type HubProcess,
	batonJs,
	client,
	hubEnv,
	removeDataDir,
	startHub,
	tempDataDir,
	waitFor,
} from '../helpers/hub';

type Mode = 'ok' | 'hang' | 'error';

interface Received {
	delivery: string;
	valid: boolean;
	event: BacklogEvent | undefined;
	path: string;
}

/** A receiver on a fixed port that can be closed and opened again. */
class Receiver {
	mode: Mode = 'ok';
	readonly got: Received[] = [];
	/** Requests answered late (hang), still unanswered. */
	hanging = 0;
	private server: Server | undefined;
	port = 0;

	constructor(private readonly secret: string) {}

	async open(): Promise<void> {
		const server = createServer((req, res) => void this.handle(req, res));
		await new Promise<void>(resolve => server.listen(this.port, '127.0.0.1', resolve));
		this.port = (server.address() as AddressInfo).port;
		this.server = server;
	}

	async close(): Promise<void> {
		const server = this.server;
		this.server = undefined;
		if (server !== undefined) {
			server.closeAllConnections();
			await new Promise(resolve => server.close(resolve));
		}
	}

	url(path = '/hook'): string {
		return `http://127.0.0.1:${this.port}${path}`;
	}

	private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
		const chunks: Buffer[] = [];
		for await (const chunk of req) {
			chunks.push(chunk as Buffer);
		}
		const body = Buffer.concat(chunks).toString('utf8');
		const header = (name: string): string | undefined => {
			const v = req.headers[name];
			return Array.isArray(v) ? v[0] : v;
		};
		const valid = verifyWebhook(
			this.secret,
			body,
			header(webhookHeaders.timestamp),
			header(webhookHeaders.signature),
			Math.floor(Date.now() / 1000),
		);
		const parsed = JSON.parse(body) as { event?: BacklogEvent };
		this.got.push({ delivery: header(webhookHeaders.delivery) ?? '', valid, event: parsed.event, path: req.url ?? '' });
		if (this.mode === 'hang') {
			this.hanging++;
			setTimeout(() => {
				this.hanging--;
				res.end('late');
			}, 2_500).unref();
			return;
		}
		res.statusCode = this.mode === 'error' ? 500 : 200;
		res.end();
	}
}

function baton(args: string[], dataDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
	return new Promise(resolve => {
		execFile(
			process.execPath,
			[batonJs, ...args, '--data-dir', dataDir],
			{ env: hubEnv(), encoding: 'utf8' },
			(error, stdout, stderr) => {
				resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr });
			},
		);
	});
}

describe('outgoing webhooks against a slow, failing, down and returning receiver', () => {
	const secret = 'a-test-secret-of-32-characters!!';
	const receiver = new Receiver(secret);
	const env = hubEnv({ BATON_WEBHOOK_TIMEOUT_MS: '1000', BATON_WEBHOOK_BACKOFF_MS: '50,200' });
	let dataDir: string;
	let files: string;
	let secretFile: string;
	let hub: HubProcess;
	let agent: RpcClient;
	let hook: Hook;

	before(async () => {
		files = mkdtempSync('/tmp/bt-hooks-');
		secretFile = join(files, 'secret');
		writeFileSync(secretFile, `${secret}\n`);
		await receiver.open();
		dataDir = tempDataDir();
		hub = await startHub({ dataDir, env });
		agent = await client(dataDir, { agent: { id: 'worker-1' } });
	});
	after(async () => {
		agent.close();
		await hub.stop();
		await receiver.close();
		removeDataDir(dataDir);
		rmSync(files, { recursive: true, force: true });
	});

	async function hooks(): Promise<Hook[]> {
		return (await agent.request('hooks/list', { recent: 50 })).hooks;
	}

	it('adds a hook after a signed ping, and refuses bad input without changing anything', async () => {
		const added = await baton(['hooks', 'add', receiver.url(), '--secret-file', secretFile, '--json'], dataDir);
		assert.equal(added.code, 0, added.stderr);
		hook = (JSON.parse(added.stdout) as { hook: Hook }).hook;
		assert.match(hook.id, /^hk[0-9a-f]{8}$/);
		assert.ok(!added.stdout.includes(secret), 'the secret is never printed');
		assert.equal(receiver.got.length, 1);
		const pinged = receiver.got[0];
		assert.ok(pinged);
		assert.equal(pinged.delivery.startsWith('ping-'), true);
		assert.equal(pinged.valid, true, 'the ping is signed with the secret');

		// The CLI's own checks (scheme, secret file, the ping), run side by side to keep the test short.
		const cliBad: [string[], RegExp][] = [
			[['hooks', 'add', 'ftp://127.0.0.1/x', '--secret-file', secretFile], /http:\/\/ or https:\/\//],
			[['hooks', 'add', 'http://127.0.0.1:1/x', '--secret-file', secretFile], /did not answer the test ping/],
			[['hooks', 'add', receiver.url(), '--secret-file', join(files, 'missing')], /Cannot read the secret file/],
			[['hooks', 'remove', 'hk00000000'], /No hook hk00000000/],
		];
		const results = await Promise.all(cliBad.map(([args]) => baton(args, dataDir)));
		results.forEach((r, i) => {
			const [args, message] = cliBad[i] ?? [[], /$^/];
			assert.equal(r.code, 1, `${args.join(' ')} exits 1`);
			assert.match(r.stderr, message, args.join(' '));
		});
		// The hub's checks, whatever client sends the request.
		const hubBad: [() => Promise<unknown>, RegExp][] = [
			[() => agent.request('hooks/add', { url: 'not a url', secret }), /http:\/\/ or https:\/\//],
			[() => agent.request('hooks/add', { url: 'http://u:p@127.0.0.1/x', secret }), /without user:password/],
			[() => agent.request('hooks/add', { url: receiver.url(), secret: 'short' }), /at least 16 characters/],
			[() => agent.request('hooks/add', { url: receiver.url(), secret, events: ['nonsense' as 'created'] }), /events/],
			[() => agent.request('hooks/remove', { id: 'hk00000000' }), /No hook hk00000000/],
		];
		for (const [request, message] of hubBad) {
			await assert.rejects(request(), (e: Error) => message.test(`${e.message} ${JSON.stringify(e)}`));
		}
		const list = await hooks();
		assert.deepEqual(
			list.map(h => h.id),
			[hook.id],
			'nothing was added or removed',
		);
		assert.equal(JSON.stringify(list).includes(secret), false, 'hooks/list never returns the secret');
		assert.equal(receiver.got.length, 1, 'refused adds sent nothing to the receiver');
		assert.equal(hub.stderr().includes(secret), false, 'the hub never logs the secret');
	});

	it('delivers every event once, in order and signed, through hangs, 500s, an outage and a hub restart', async () => {
		const cards = ['W1', 'W2', 'W3', 'W4'];
		await agent.request('card/create', { cards: cards.map(id => ({ id, title: `work ${id}` })) });
		await waitFor(async () => (await hooks())[0]?.behind === 0, 10_000, 'the first events delivered');

		// The receiver hangs past the hook's timeout (1 s): claims finish while its request is unanswered.
		receiver.mode = 'hang';
		const first = await agent.request('card/claim', { cardId: 'W1' });
		assert.ok(first.lease);
		await waitFor(() => receiver.hanging > 0, 5_000, 'a delivery hanging');
		const claimMs: number[] = [];
		for (const id of ['W2']) {
			const started = Date.now();
			const { lease } = await agent.request('card/claim', { cardId: id });
			claimMs.push(Date.now() - started);
			assert.ok(lease);
			await agent.request('card/complete', { cardId: id, epoch: lease.epoch, result: 'done' });
		}
		await agent.request('card/complete', { cardId: 'W1', epoch: first.lease.epoch, result: 'done' });
		assert.ok(receiver.hanging > 0, 'the claims finished while the receiver still had not answered');
		console.log(`claim latency while the receiver hangs: ${claimMs.map(ms => `${ms} ms`).join(', ')}`);
		await waitFor(async () => ((await hooks())[0]?.failures ?? 0) >= 1, 10_000, 'a timeout recorded');
		assert.match((await hooks())[0]?.lastError ?? '', /no answer within 1000 ms/);

		// Then 500s: `baton hooks` shows the hook failing, with the receiver's answer.
		receiver.mode = 'error';
		await waitFor(async () => (await hooks())[0]?.lastError?.includes('HTTP 500') === true, 10_000, 'a 500 recorded');
		const shown = await baton(['hooks'], dataDir);
		assert.equal(shown.code, 0, shown.stderr);
		assert.match(shown.stdout, /FAILING since/);
		assert.match(shown.stdout, /HTTP 500/);
		assert.match(shown.stdout, /failed/);

		// Down, and the hub restarts meanwhile: the cursor is in the store.
		await receiver.close();
		const { lease } = await agent.request('card/claim', { cardId: 'W3' });
		assert.ok(lease);
		await agent.request('card/comment', { cardId: 'W3', text: 'halfway' });
		const before = (await hooks())[0];
		assert.ok(before !== undefined && before.behind > 0);
		agent.close();
		await hub.stop();
		hub = await startHub({ dataDir, env });
		agent = await client(dataDir, { agent: { id: 'worker-1' } });
		const resumed = (await hooks())[0];
		assert.equal(resumed?.cursor, before.cursor, 'the restarted hub starts from the stored cursor');
		await agent.request('card/complete', { cardId: 'W3', epoch: lease.epoch, result: 'done' });
		await agent.request('card/block', { cardId: 'W4', reason: 'waiting on the vendor' });

		// Back: everything is delivered.
		receiver.mode = 'ok';
		await receiver.open();
		const lastSeq = (await agent.request('events/list', { limit: 1 })).lastSeq;
		await waitFor(async () => (await hooks())[0]?.cursor === lastSeq, 15_000, 'the backlog delivered');

		const log = await agent.request('events/list', { afterSeq: hook.cursor, limit: 1000 });
		const expected = log.events.map(e => e.seq);
		const deliveries = receiver.got.filter(g => g.event !== undefined);
		assert.ok(
			deliveries.every(g => g.valid),
			'every delivery carries a valid signature',
		);
		for (const g of deliveries) {
			assert.match(
				g.delivery,
				new RegExp(`^${hook.id}-[0-9a-f]{8}-${g.event?.seq ?? -1}$`),
				'the delivery id names the hook, its instance and the seq',
			);
		}
		const unique: BacklogEvent[] = [];
		const seen = new Set<string>();
		for (const g of deliveries) {
			if (g.event !== undefined && !seen.has(g.delivery)) {
				seen.add(g.delivery);
				unique.push(g.event);
			}
		}
		console.log(
			`events ${expected.length}, requests ${deliveries.length} (${deliveries.length - unique.length} retries of the same delivery id)`,
		);
		assert.deepEqual(
			unique.map(e => e.seq),
			expected,
			'every event once, in seq order',
		);
		for (const id of cards) {
			const perCard = unique.filter(e => e.cardId === id).map(e => e.seq);
			assert.deepEqual(
				perCard,
				[...perCard].sort((a, b) => a - b),
				`card ${id}'s events in order`,
			);
		}
		const final = (await hooks())[0];
		assert.ok(final);
		assert.equal(final.failures, 0);
		assert.equal(final.recent.at(-1)?.outcome, 'delivered');
		assert.ok(
			final.recent.some(d => d.outcome === 'failed'),
			'the failures are in the delivery log',
		);
	});

	it('delivers only the event types a hook asks for, and stops delivering once removed', async () => {
		// Through the protocol this time (the CLI's add and remove ran above): no ping, same hub checks.
		const { hook: only } = await agent.request('hooks/add', {
			url: receiver.url('/done'),
			secret,
			events: ['completed'],
		});
		await agent.request('card/create', { cards: [{ id: 'F1', title: 'filtered' }] });
		const { lease } = await agent.request('card/claim', { cardId: 'F1' });
		assert.ok(lease);
		await agent.request('card/complete', { cardId: 'F1', epoch: lease.epoch, result: 'ok' });
		const lastSeq = (await agent.request('events/list', { limit: 1 })).lastSeq;
		await waitFor(async () => (await hooks()).every(h => h.cursor === lastSeq), 10_000, 'both hooks caught up');
		const done = receiver.got.filter(g => g.path === '/done' && g.event !== undefined);
		assert.deepEqual(
			done.map(g => [g.event?.type, g.event?.cardId]),
			[['completed', 'F1']],
		);
		await agent.request('hooks/remove', { id: only.id });
		assert.deepEqual(
			(await hooks()).map(h => h.id),
			[hook.id],
		);
	});
});

describe('outgoing webhooks with two hubs on one PostgreSQL schema', () => {
	const secret = 'a-test-secret-of-32-characters!!';
	const receiver = new Receiver(secret);
	const schema = uniqueSchema();
	const env = hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema, BATON_WEBHOOK_BACKOFF_MS: '50,200' });
	const dirs = [tempDataDir(), tempDataDir()];
	let hubs: HubProcess[] = [];
	let clients: RpcClient[] = [];

	before(async () => {
		await receiver.open();
		hubs = await Promise.all(dirs.map(dataDir => startHub({ dataDir, env })));
		clients = await Promise.all(dirs.map(dataDir => client(dataDir, { agent: { id: 'worker' } })));
	});
	after(async () => {
		for (const c of clients) {
			c.close();
		}
		await Promise.all(hubs.map(h => h.stop()));
		await receiver.close();
		dirs.forEach(removeDataDir);
		await dropSchema(schema);
	});

	it('has one hub at a time deliver a hook: each event once, in order, and the other hub takes over on a stop', async () => {
		const [a, b0] = clients;
		assert.ok(a && b0);
		const { hook } = await a.request('hooks/add', { url: receiver.url(), secret });
		for (let i = 1; i <= 6; i++) {
			await (i % 2 === 0 ? a : b0).request('card/create', { cards: [{ id: `T${i}`, title: `team ${i}` }] });
		}
		const cursorOf = async (c: RpcClient): Promise<number> =>
			(await c.request('hooks/list', { recent: 0 })).hooks.find(h => h.id === hook.id)?.cursor ?? -1;
		const lastSeq = async (c: RpcClient): Promise<number> => (await c.request('events/list', { limit: 1 })).lastSeq;
		const first = await lastSeq(a);
		await waitFor(async () => (await cursorOf(a)) === first, 15_000, 'the first six delivered');
		// Stop the hub that holds the hook's lease (its pid is in the lease owner): the other one takes over.
		const db = await openPostgres({ databaseUrl: testDatabaseUrl, schema, poolSize: 1 });
		const owner = await db.query<{ lease_owner: string | null }>('SELECT lease_owner FROM webhooks');
		await db.close();
		const holder = hubs.findIndex(h => owner[0]?.lease_owner?.includes(`:${h.pid}:`) === true);
		assert.ok(holder >= 0, `a hub holds the lease (${owner[0]?.lease_owner ?? 'none'})`);
		const other = clients[1 - holder];
		assert.ok(other);
		clients[holder]?.close();
		await hubs[holder]?.stop();
		const b = other;
		for (let i = 7; i <= 9; i++) {
			await b.request('card/create', { cards: [{ id: `T${i}`, title: `team ${i}` }] });
		}
		const end = await lastSeq(b);
		await waitFor(async () => (await cursorOf(b)) === end, 20_000, 'the rest delivered by the remaining hub');
		const seqs = receiver.got.flatMap(g => (g.event === undefined ? [] : [g.event.seq]));
		assert.ok(
			receiver.got.every(g => g.valid),
			'signed',
		);
		assert.deepEqual(
			seqs,
			Array.from({ length: end - hook.cursor }, (_, i) => hook.cursor + 1 + i),
			'every event once and in order, although two hubs could deliver it',
		);
	});
});

describe('progress events compacted away before delivery', () => {
	it('are recorded as skipped, and everything after them is delivered', async () => {
		const secret = 'a-test-secret-of-32-characters!!';
		const receiver = new Receiver(secret);
		await receiver.open();
		// The hub's delivery worker on a real PGlite backlog, in this process (no hub needed for this part).
		const store = await openTestBacklog('pglite');
		const b = store.backlog;
		const worker = new Webhooks({
			backlog: b,
			seq: () => settled,
			userAgent: 'baton/test',
			backoff: { minMs: 20, maxMs: 50 },
			soleHub: true,
			mayWrite: () => true,
		});
		let settled = 0;
		try {
			const alice = { actor: 'alice' };
			const { hook } = await b.addHook(alice, { url: receiver.url(), secret });
			await b.create(alice, { cards: [{ id: 'P1', title: 'progress' }] });
			const { lease } = await b.claim(alice, { cardId: 'P1' });
			assert.ok(lease);
			for (let i = 1; i <= 5; i++) {
				await b.heartbeat(alice, { cardId: 'P1', epoch: lease.epoch, progress: i * 10, note: `step ${i}` });
			}
			await b.complete(alice, { cardId: 'P1', epoch: lease.epoch, result: 'ok' });
			// Keep one progress event per card: compaction deletes four before the hook could send them.
			await b.updateSettings(alice, { progressEventsPerCard: 1 });
			const report = await b.compactLog({ settleMs: 0 });
			assert.equal(report.deleted, 4);
			settled = await b.lastSeq();
			await worker.start();
			await waitFor(
				async () => (await b.listHooks({ recent: 0 })).hooks[0]?.cursor === settled,
				10_000,
				'the hook caught up',
			);
			const listed = (await b.listHooks({ recent: 50 })).hooks[0];
			assert.ok(listed);
			const skipped = listed.recent.filter(d => d.outcome === 'skipped');
			assert.equal(skipped.length, 1, JSON.stringify(listed.recent));
			assert.match(skipped[0]?.error ?? '', /compacted away before delivery/);
			const kept = (await b.listEvents({ afterSeq: hook.cursor, limit: 100 })).events.map(e => e.seq);
			assert.deepEqual(
				receiver.got.map(g => g.event?.seq),
				kept,
				'every event the log still holds, in order',
			);
		} finally {
			await worker.stop();
			await store.cleanup();
			await receiver.close();
		}
	});
});
