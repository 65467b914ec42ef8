/**
 * A hub, or a supervisor, that restarts while `baton run`'s sandboxed agents work: a real hub, the real
 * `baton run` in a real bubblewrap sandbox, an agent (test/fixtures/restartAgent.mjs) heartbeating
 * through its own `baton` CLI with the seat credential. The hub is stopped mid-card and a new one serves
 * the same data dir (its socket a new inode: the supervisor's reconnect respawns it, as any client does);
 * the agent's later calls go through the run's relay (mcp-server/dispatch/hubRelay.ts) to the new hub
 * and it completes its card, its one claim kept. A supervisor killed mid-card cuts its agent off (the
 * relay was its way to the hub); the next one makes the relay again, adopts the agent, and the agent's
 * calls go through again. And the relay on its own: a pipe to whatever listens at the hub's path now,
 * in a 0700 folder, gone at the run's end.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { type Server, type Socket, connect, createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { hubPaths } from '../../core/paths';
import { HubRelay, relayPaths } from '../../mcp-server/dispatch/hubRelay';
import {
	type HubProcess,
	alive,
	client,
	readHubJson,
	removeDataDir,
	startHub,
	tempDataDir,
	waitFor,
} from '../helpers/hub';
import { startRun } from '../helpers/runSupervisor';

const bwrap = ['/usr/bin/bwrap', '/usr/local/bin/bwrap'].find(p => existsSync(p));
const restartAgent = join(import.meta.dirname, '..', 'fixtures', 'restartAgent.mjs');
const cleanups: (() => void | Promise<void>)[] = [];

after(async () => {
	for (const c of cleanups.reverse()) {
		await c();
	}
});

describe(
	'sandboxed agents across restarts',
	{ skip: bwrap === undefined ? 'bubblewrap is not installed' : false },
	() => {
		let dataDir: string;
		let hub: HubProcess;
		before(async () => {
			dataDir = tempDataDir();
			hub = await startHub({ dataDir });
			cleanups.push(() => removeDataDir(dataDir));
			cleanups.push(async () => {
				await hub.stop();
				// The hub the supervisor started in its place, when one did.
				const info = readHubJson(hubPaths(dataDir));
				if (info !== undefined && alive(info.pid)) {
					process.kill(info.pid, 'SIGTERM');
					await waitFor(() => !alive(info.pid), 10_000, 'the respawned hub to exit');
				}
			});
		});

		/** A card and a one-seat run on it whose agent is restartAgent.mjs, in a folder of its own; its first heartbeat went through. */
		async function startCard(name: string): Promise<{ cardId: string; work: string; said(): string; args: string[] }> {
			const api = await client(dataDir, { agent: { id: 'tester' } });
			const { cards } = await api.request('card/create', {
				cards: [{ title: `beat across a restart (${name})`, phase: name, maxAttempts: 1 }],
			});
			api.close();
			const work = join(dataDir, '..', `work-${name}`);
			const said = (): string => {
				try {
					return readFileSync(join(work, 'restart-agent.txt'), 'utf8');
				} catch {
					return '';
				}
			};
			return { cardId: cards[0]!.id, work, said, args: ['--seats', '1', '--name', name, '--phase', name] };
		}

		async function keptClaim(cardId: string): Promise<void> {
			const api = await client(dataDir, { agent: { id: 'tester' } });
			try {
				const got = await api.request('card/get', { cardId });
				assert.ok(['review', 'done'].includes(got.card.status), got.card.status);
				assert.equal(got.attempts.length, 1, 'one claim, never lost or taken again');
				const turns = got.history.filter(e => ['released', 'failed', 'reclaimed', 'claimed'].includes(e.type));
				assert.deepEqual(
					turns.map(e => e.type),
					['claimed'],
				);
			} finally {
				api.close();
			}
		}

		it('a hub restart: the agent reaches the new hub through the run relay and completes its card, its claim kept', async () => {
			const paths = hubPaths(dataDir);
			const c = await startCard('hub');
			const run = startRun(dataDir, c.args, {}, restartAgent, c.work);
			cleanups.push(async () => {
				run.proc.kill('SIGKILL');
				await run.exited;
			});
			await waitFor(() => / ok/.test(c.said()), 20_000, 'the agent’s first heartbeat');
			const before = statSync(paths.socket).ino;
			await hub.stop();
			// The supervisor's connections find no hub and start one, as every client does.
			await waitFor(
				() => {
					const info = readHubJson(paths);
					return info !== undefined && info.pid !== hub.pid && alive(info.pid) && existsSync(paths.socket);
				},
				20_000,
				'a new hub on the data dir',
			);
			assert.notEqual(statSync(paths.socket).ino, before, 'the new hub’s socket is a new file');
			writeFileSync(join(c.work, 'go-on'), '');
			const exited = await run.waitFor(e => e.event === 'exited' && e.cardId === c.cardId, 30_000, 'the agent’s end');
			assert.equal(exited.reason, 'completed', `${c.said()}\n${JSON.stringify(run.events)}`);
			assert.match(c.said(), /ok after go-on/);
			await keptClaim(c.cardId);
			run.proc.kill('SIGINT');
			assert.equal((await run.exited).code, 0, run.stderr());
			assert.equal(existsSync(join(dataDir, 'runs', 'hub', 'hub')), false, 'the relay ends with the run');
		});

		it('a supervisor killed and started again: the adopted agent reaches the hub through the relay made again', async () => {
			const c = await startCard('sup');
			const first = startRun(dataDir, c.args, {}, restartAgent, c.work);
			await waitFor(() => / ok/.test(c.said()), 20_000, 'the agent’s first heartbeat');
			first.proc.kill('SIGKILL');
			await first.exited;
			// Its way to the hub died with the supervisor: the relay, not the hub's socket.
			await waitFor(() => / failed/.test(c.said()), 20_000, 'a heartbeat refused while no supervisor runs');
			const second = startRun(dataDir, c.args, {}, restartAgent, c.work);
			cleanups.push(async () => {
				second.proc.kill('SIGKILL');
				await second.exited;
			});
			await second.waitFor(e => e.event === 'adopted' && e.cardId === c.cardId, 30_000, 'the adoption');
			writeFileSync(join(c.work, 'go-on'), '');
			const exited = await second.waitFor(
				e => e.event === 'exited' && e.cardId === c.cardId,
				30_000,
				'the agent’s end',
			);
			assert.equal(exited.reason, 'completed', `${c.said()}\n${JSON.stringify(second.events)}`);
			assert.match(c.said(), /ok after go-on/);
			await keptClaim(c.cardId);
			second.proc.kill('SIGINT');
			assert.equal((await second.exited).code, 0, second.stderr());
			assert.equal(existsSync(join(dataDir, 'runs', 'sup', 'hub')), false, 'the relay ends with the run');
		});
	},
);

/** A listener at `path` standing where the hub's socket is: it answers each connection with what `answer` makes of all it read. */
function listener(path: string, answer: (got: Buffer) => Buffer): Promise<Server> {
	const server = createServer({ allowHalfOpen: true }, socket => {
		const chunks: Buffer[] = [];
		socket.on('data', (c: Buffer) => chunks.push(c));
		// A connection the relay ended at its close is gone before the answer.
		socket.on('error', () => undefined);
		// Answers after the client's end: the relay passes a half close on.
		socket.on('end', () => socket.end(answer(Buffer.concat(chunks))));
	});
	return new Promise(resolve => server.listen(path, () => resolve(server)));
}

/** Sends `bytes` through the socket at `path`, ends its side, and resolves with everything read back. */
function exchange(path: string, bytes: Buffer): Promise<Buffer> {
	return new Promise((resolve, reject) => {
		const socket: Socket = connect({ path, allowHalfOpen: true });
		const chunks: Buffer[] = [];
		socket.on('data', (c: Buffer) => chunks.push(c));
		socket.on('end', () => resolve(Buffer.concat(chunks)));
		socket.on('error', reject);
		socket.end(bytes);
	});
}

function closed(server: Server): Promise<void> {
	return new Promise(resolve => server.close(() => resolve()));
}

describe('the run’s hub relay', () => {
	it('pipes bytes unchanged both ways, half closes included, to whatever listens at the hub’s path now; ends with the run', async () => {
		const dir = mkdtempSync('/tmp/bt-relay-');
		cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
		const hubSocket = join(dir, 'hub.sock');
		const paths = relayPaths(join(dir, 'd'), 'r');
		assert.deepEqual(paths, {
			dir: join(dir, 'd', 'runs', 'r', 'hub'),
			socket: join(dir, 'd', 'runs', 'r', 'hub', 'hub.sock'),
		});
		const first = await listener(hubSocket, got => Buffer.concat([Buffer.from('first:'), got]));
		const relay = await HubRelay.open(paths, hubSocket);
		assert.equal(statSync(paths.dir).mode & 0o777, 0o700, 'the relay folder is as private as run/');
		const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256));
		const back = await exchange(paths.socket, bytes);
		assert.ok(back.equals(Buffer.concat([Buffer.from('first:'), bytes])), 'every byte, in order, each way');
		// The hub restarts: its socket is a new file at the same path; the next connection reaches it.
		await closed(first);
		rmSync(hubSocket, { force: true });
		const down = await exchange(paths.socket, Buffer.from('x')).catch((e: unknown) => e);
		assert.ok(Buffer.isBuffer(down) ? down.length === 0 : down instanceof Error, 'no hub: the connection just ends');
		const second = await listener(hubSocket, got => Buffer.concat([Buffer.from('second:'), got]));
		assert.equal((await exchange(paths.socket, Buffer.from('hello'))).toString(), 'second:hello');
		// A connection still open at the run's end is ended with it; the socket and its folder go.
		const open = connect(paths.socket);
		await new Promise(resolve => open.once('connect', resolve));
		const gone = new Promise(resolve => open.once('close', resolve));
		open.on('error', () => undefined);
		await relay.close();
		await gone;
		assert.equal(existsSync(paths.socket), false);
		assert.equal(existsSync(paths.dir), false);
		await closed(second);
	});

	it('lives under the runtime or temp dir, in a private folder named by a hash, when the data dir’s path is too long', () => {
		const env = { XDG_RUNTIME_DIR: '/run/user/4242' };
		// Short enough for the hub's own sockets (run/owner.sock), too long for runs/<run>/hub/hub.sock.
		const dataDir = `/${'d'.repeat(85)}`;
		const long = relayPaths(dataDir, 'nightly', env, 107);
		assert.match(long.dir, /^\/run\/user\/4242\/baton-relay-[^/]+\/[0-9a-f]{16}$/);
		assert.equal(long.parent, join(long.dir, '..'));
		assert.equal(long.socket, join(long.dir, 'hub.sock'));
		assert.deepEqual(relayPaths(dataDir, 'nightly', env, 107), long, 'the same at every start of the run');
		assert.notEqual(relayPaths(dataDir, 'other', env, 107).dir, long.dir, 'each run its own');
		assert.match(
			relayPaths(dataDir, 'nightly', {}, 107).dir,
			/\/baton-relay-[^/]+\/[0-9a-f]{16}$/,
			'else the temp dir',
		);
		assert.throws(
			() => relayPaths(dataDir, 'nightly', { XDG_RUNTIME_DIR: `/${'r'.repeat(100)}` }, 107),
			/fits neither/,
		);
	});
});
