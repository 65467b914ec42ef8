/**
 * Storage ownership and election against real hub processes (RELIABILITY 1, 3, 11, 12, 13, 15, 16):
 * the kernel's socket binding decides who owns a data dir; leftovers of a kill -9 never block the
 * next start; a stopped hub is waited for, never replaced.
 * @serial a second hub refused within 2 s; a stopped hub left alone for 3 s: run alone (scripts/testSuite.mjs).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connectHub } from '../../core/client/connectHub';
import { BatonError } from '../../core/errors';
import { acquireOwnership, openOwnedBacklog } from '../../mcp-server/hub/ownership';
import { hubPaths } from '../../core/paths';
import { protocolVersion } from '../../core/protocol';
import { RawClient, alive, client, hubCommand, removeDataDir, sleep, startHub, tempDataDir } from '../helpers/hub';

/** path -> "mtime size sha256" for every file under dir. */
function snapshot(dir: string): Map<string, string> {
	const out = new Map<string, string>();
	const walk = (d: string): void => {
		for (const e of readdirSync(d, { withFileTypes: true })) {
			const p = join(d, e.name);
			if (e.isDirectory()) {
				walk(p);
				out.set(p, `dir ${statSync(p).mtimeMs}`);
			} else if (e.isFile()) {
				const st = statSync(p);
				out.set(p, `${st.mtimeMs} ${st.size} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`);
			} else {
				out.set(p, `other ${statSync(p).mtimeMs}`);
			}
		}
	};
	walk(dir);
	return out;
}

const dirs: string[] = [];
function freshDir(): string {
	const d = tempDataDir();
	dirs.push(d);
	return d;
}

after(() => {
	for (const d of dirs) {
		removeDataDir(d);
	}
});

describe('hub ownership', () => {
	it('refuses a second opener fast, naming the hub pid, and changes no file in the data dir (1)', async () => {
		const dataDir = freshDir();
		const hub = await startHub({ dataDir });
		try {
			const c = await client(dataDir);
			await c.request('card/create', { cards: [{ title: 'owned' }] });
			c.close();
			await sleep(500);
			const before = snapshot(dataDir);
			const t0 = performance.now();
			const err = await openOwnedBacklog(dataDir).then(
				() => assert.fail('a second owner opened the data dir'),
				(e: unknown) => e,
			);
			const ms = performance.now() - t0;
			assert.ok(BatonError.is(err, 'conflict'));
			assert.match(err.message, new RegExp(`owned by pid ${hub.pid} \\(baton hub\\)`));
			assert.match(err.message, /Use the hub/);
			assert.ok(ms < 2_000, `refused in ${ms.toFixed(0)} ms`);
			console.log(`second open refused in ${ms.toFixed(1)} ms`);
			assert.deepEqual(snapshot(dataDir), before, 'no file in the data dir changed');
		} finally {
			await hub.stop();
		}
	});

	it('starts after a kill -9 despite the leftover sockets and postmaster.pid, with no cleanup (3, 11)', async () => {
		const dataDir = freshDir();
		const paths = hubPaths(dataDir);
		const first = await startHub({ dataDir });
		const c = await client(dataDir, { reconnect: false });
		await c.request('card/create', { cards: [{ id: 'K1', title: 'survives kill -9' }] });
		c.close();
		await first.stop('SIGKILL');
		assert.ok(existsSync(paths.socket), 'hub.sock left behind');
		assert.ok(existsSync(paths.ownerSocket), 'owner.sock left behind');
		const pidFile = join(paths.pgdata, 'postmaster.pid');
		if (existsSync(pidFile)) {
			console.log(`postmaster.pid after kill -9 starts with ${readFileSync(pidFile, 'utf8').split('\n')[0]}`);
		} else {
			// Plant the file PGlite leaves in some versions: it must not matter (RELIABILITY 3).
			writeFileSync(pidFile, '-42\n');
		}
		const second = await startHub({ dataDir });
		try {
			const c2 = await client(dataDir);
			const { card } = await c2.request('card/get', { cardId: 'K1' });
			assert.equal(card.title, 'survives kill -9');
			c2.close();
		} finally {
			await second.stop();
		}
	});

	it('ignores a pid file naming a live unrelated process: liveness comes from the socket (13)', async () => {
		const dataDir = freshDir();
		const paths = hubPaths(dataDir);
		const unrelated = spawn('sleep', ['60'], { stdio: 'ignore' });
		try {
			mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
			writeFileSync(paths.hubJson, JSON.stringify({ port: 1, pid: unrelated.pid, protocol: protocolVersion }));
			writeFileSync(join(paths.runDir, 'hub.pid'), String(unrelated.pid));
			await assert.rejects(
				client(dataDir),
				(e: unknown) => BatonError.is(e, 'unavailable') && e.message.includes('No Baton hub is running'),
			);
			const hub = await startHub({ dataDir });
			assert.notEqual(hub.pid, unrelated.pid);
			const c = await client(dataDir);
			assert.equal(c.hello?.hubPid, hub.pid);
			c.close();
			await hub.stop();
			assert.ok(alive(unrelated.pid!), 'the unrelated process was left alone');
		} finally {
			unrelated.kill();
		}
	});

	it('a stopped hub is not replaced: requests time out as unresponsive and recover after SIGCONT (12, 16)', async () => {
		const dataDir = freshDir();
		const paths = hubPaths(dataDir);
		const hub = await startHub({ dataDir });
		const c = await client(dataDir, { requestTimeoutMs: 1_500 });
		await c.request('card/create', { cards: [{ id: 'S1', title: 'before stop' }] });
		process.kill(hub.pid, 'SIGSTOP');
		try {
			await assert.rejects(
				c.request('card/stats', {}),
				(e: unknown) =>
					BatonError.is(e, 'timeout') &&
					e.message.includes('is alive but stopped') &&
					e.message.includes('baton hub stop --force'),
			);
			// A newcomer must neither take over nor spawn a second owner while the hub is stopped.
			const newcomer = connectHub({
				dataDir,
				client: 'test',
				spawnHub: hubCommand(dataDir),
				handshakeTimeoutMs: 1_000,
				reconnect: false,
			});
			await assert.rejects(newcomer, (e: unknown) => BatonError.is(e) && e.message.includes('unresponsive'));
			const direct = await acquireOwnership(dataDir).then(
				o => {
					void o.release();
					return 'acquired';
				},
				(e: unknown) => (BatonError.is(e, 'conflict') ? e.message : String(e)),
			);
			assert.match(direct, /does not answer|owned by pid/);
			await sleep(3_000);
			const log = existsSync(paths.hubLog) ? readFileSync(paths.hubLog, 'utf8') : '';
			assert.doesNotMatch(log, /opened the/, 'no other process opened the store');
		} finally {
			process.kill(hub.pid, 'SIGCONT');
		}
		const stats = await c.request('card/stats', {});
		assert.equal(stats.total, 1);
		assert.equal(c.hello?.hubPid, hub.pid);
		c.close();
		await hub.stop();
	});

	it('refuses a client of another protocol version clearly, without opening anything (15)', async () => {
		const dataDir = freshDir();
		const hub = await startHub({ dataDir });
		try {
			const raw = await RawClient.unix(hub.paths);
			const answer = await raw.hello({ token: hub.token, protocol: protocolVersion + 1 });
			assert.equal(answer.hello, 'error');
			const error = answer.error as { code: string; message: string };
			assert.equal(error.code, 'protocol_mismatch');
			assert.match(
				error.message,
				new RegExp(`protocol ${protocolVersion} but the client speaks ${protocolVersion + 1}`),
			);
			await raw.waitClosed();
		} finally {
			await hub.stop();
		}
		// A hub.json announcing another protocol: the client refuses before connecting or spawning.
		const other = freshDir();
		const paths = hubPaths(other);
		mkdirSync(paths.dataDir, { recursive: true });
		writeFileSync(paths.hubJson, JSON.stringify({ port: 1, pid: 1, protocol: protocolVersion + 1 }));
		await assert.rejects(
			connectHub({ dataDir: other, client: 'test', spawnHub: hubCommand(other) }),
			(e: unknown) => BatonError.is(e, 'protocol_mismatch') && e.message.includes('hub stop'),
		);
		assert.ok(!existsSync(paths.pgdata), 'the client neither opened nor spawned anything');
		assert.ok(!existsSync(paths.runDir));
	});
});
