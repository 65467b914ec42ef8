/**
 * The hub's local security (RELIABILITY 17–24), against a real `baton hub` process with
 * real websocket and HTTP clients: loopback-only TCP, token, Origin, Host, no CORS, token file
 * permissions, oversized and malformed frames, and the token never leaving the run dir.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, readFileSync, renameSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
	type HttpAnswer,
	type HubProcess,
	RawClient,
	batonJs,
	hubHttp,
	removeDataDir,
	startHub,
	tempDataDir,
} from '../helpers/hub';

async function upgradeStatus(
	url: string,
	options: { headers?: Record<string, string>; origin?: string } = {},
): Promise<number> {
	try {
		const c = await RawClient.open(url, options);
		c.close();
		return 101;
	} catch (e) {
		return (e as { status?: number }).status ?? -1;
	}
}

function corsHeaders(headers: HttpAnswer['headers']): string[] {
	return Object.keys(headers).filter(h => h.toLowerCase().startsWith('access-control-'));
}

describe('hub security', () => {
	let dataDir: string;
	let hub: HubProcess;
	let ws: string;
	let auth: Record<string, string>;

	before(async () => {
		dataDir = tempDataDir();
		hub = await startHub({ dataDir });
		ws = `ws://127.0.0.1:${hub.port}/ws`;
		auth = { Authorization: `Bearer ${hub.token}` };
	});

	after(async () => {
		await hub.stop();
		removeDataDir(dataDir);
	});

	it('listens on 127.0.0.1 only, and keeps hub.sock in a 0700 dir another uid cannot enter (17)', async () => {
		const nonLoopback = Object.values(networkInterfaces())
			.flat()
			.find(a => a?.family === 'IPv4' && !a.internal);
		if (nonLoopback) {
			const refused = await new Promise<string>(resolve => {
				const s = connect(hub.port, nonLoopback.address);
				s.on('connect', () => {
					s.destroy();
					resolve('connected');
				});
				s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
			});
			assert.equal(refused, 'ECONNREFUSED', `connecting via ${nonLoopback.address} must be refused`);
		}
		assert.equal(statSync(hub.paths.runDir).mode & 0o777, 0o700);
		// Open the folders above run/ so that only run/'s own mode stands between uid 65534 and the socket.
		chmodSync(dirname(dataDir), 0o755);
		chmodSync(dataDir, 0o755);
		try {
			const probe = spawnSync(
				process.execPath,
				[
					'-e',
					`require('net').connect(${JSON.stringify(hub.paths.socket)}).on('error', e => { console.log(e.code); }).on('connect', () => { console.log('connected'); process.exit(0); })`,
				],
				{ uid: 65534, gid: 65534, encoding: 'utf8' },
			);
			assert.equal(probe.stdout.trim(), 'EACCES');
		} finally {
			chmodSync(dataDir, 0o700);
			chmodSync(dirname(dataDir), 0o700);
		}
	});

	it('refuses upgrades without the right token with 401 (18)', async () => {
		assert.equal(await upgradeStatus(ws), 401, 'no token');
		assert.equal(await upgradeStatus(ws, { headers: { Authorization: 'Bearer nope' } }), 401, 'wrong token');
		const sameLength = hub.token.replace(/./g, c => (c === 'a' ? 'b' : 'a'));
		assert.equal(sameLength.length, hub.token.length);
		assert.equal(await upgradeStatus(ws, { headers: { Authorization: `Bearer ${sameLength}` } }), 401, 'same length');
		assert.equal(await upgradeStatus(`${ws}?token=${hub.token}`), 401, 'token in the query string');
		assert.equal(await upgradeStatus(ws, { headers: auth }), 101, 'right token');
	});

	it('refuses foreign Origins with 403 even with a valid token (19)', async () => {
		for (const origin of ['https://evil.example', 'null', 'http://localhost:3000']) {
			assert.equal(await upgradeStatus(ws, { headers: auth, origin }), 403, origin);
		}
		assert.equal(await upgradeStatus(ws, { headers: auth, origin: `http://127.0.0.1:${hub.port}` }), 101);
		assert.equal(await upgradeStatus(ws, { headers: auth, origin: `http://localhost:${hub.port}` }), 101);
	});

	it('refuses a non-loopback Host with 403 and accepts 127.0.0.1 and localhost (20)', async () => {
		assert.equal(await upgradeStatus(ws, { headers: { ...auth, Host: `evil.example:${hub.port}` } }), 403);
		assert.equal(await upgradeStatus(ws, { headers: { ...auth, Host: `127.0.0.1:${hub.port}` } }), 101);
		assert.equal(await upgradeStatus(ws, { headers: { ...auth, Host: `localhost:${hub.port}` } }), 101);
		const page = await hubHttp(hub.port, '/board', { headers: { Host: `evil.example:${hub.port}` } });
		assert.equal(page.status, 403);
	});

	it('answers plain HTTP with 404 and never a CORS header (21)', async () => {
		for (const path of ['/', '/ws', '/hub.json', '/board/../run/token']) {
			const answer = await hubHttp(hub.port, path, { headers: { Origin: 'https://evil.example' } });
			assert.equal(answer.status, 404, path);
			assert.deepEqual(corsHeaders(answer.headers), [], path);
		}
		const board = await hubHttp(hub.port, '/board', { headers: { Origin: 'https://evil.example' } });
		assert.equal(board.status, 401, 'the board needs a session');
		assert.deepEqual(corsHeaders(board.headers), []);
	});

	it('swaps a one-time board ticket for an HttpOnly SameSite=Strict cookie that opens /board and /ws', async () => {
		const c = await RawClient.unix(hub.paths);
		assert.equal((await c.hello({ token: hub.token })).hello, 'ok');
		const ticket = await c.request('hub/boardTicket', {});
		c.close();
		const url = new URL((ticket.result as { url: string }).url);
		assert.equal(url.origin, `http://127.0.0.1:${hub.port}`);
		assert.ok(!url.href.includes(hub.token), 'the token never appears in a URL');
		const swap = await hubHttp(hub.port, url.pathname + url.search);
		assert.equal(swap.status, 302);
		assert.equal(swap.headers.location, '/board');
		const setCookie = String(swap.headers['set-cookie']);
		assert.match(setCookie, /HttpOnly/);
		assert.match(setCookie, /SameSite=Strict/);
		const cookie = setCookie.split(';')[0]!;
		assert.equal((await hubHttp(hub.port, url.pathname + url.search)).status, 401, 'a ticket works once');
		const page = await hubHttp(hub.port, '/board', { headers: { Cookie: cookie } });
		assert.equal(page.status, 200);
		assert.match(page.body, /Content-Security-Policy/);
		assert.deepEqual(corsHeaders(page.headers), []);
		const script = await hubHttp(hub.port, '/board/board.js', { headers: { Cookie: cookie } });
		assert.equal(script.status, existsSync(join(dirname(batonJs), 'webview', 'board.js')) ? 200 : 404);
		assert.equal((await hubHttp(hub.port, '/board/board.js')).status, 401, 'assets need the session too');
		const board = await RawClient.open(ws, { headers: { Cookie: cookie }, origin: `http://127.0.0.1:${hub.port}` });
		const ok = await board.hello({ client: 'board' });
		assert.equal(ok.hello, 'ok');
		assert.equal((await board.request('card/stats', {})).error, undefined);
		board.close();
		assert.equal(await upgradeStatus(ws, { headers: { Cookie: 'baton_session=forged' } }), 401);
	});

	it('closes a hello with a wrong token on hub.sock', async () => {
		const c = await RawClient.unix(hub.paths);
		const answer = await c.hello({ token: 'f'.repeat(64) });
		assert.equal(answer.hello, 'error');
		assert.equal((answer.error as { code: string }).code, 'unauthorized');
		await c.waitClosed();
		const none = await RawClient.unix(hub.paths);
		assert.equal((await none.hello({})).hello, 'error');
		await none.waitClosed();
	});

	it('closes an oversized frame with 1009 and keeps serving others; malformed JSON gets an error (23)', async () => {
		const other = await RawClient.unix(hub.paths);
		assert.equal((await other.hello({ token: hub.token })).hello, 'ok');
		const big = await RawClient.unix(hub.paths);
		assert.equal((await big.hello({ token: hub.token })).hello, 'ok');
		big.send(JSON.stringify({ id: 1, method: 'card/stats', params: { pad: 'x'.repeat(9 * 1024 * 1024) } }));
		assert.equal((await big.waitClosed()).code, 1009);
		other.send('{"id": 7, "method": ');
		const malformed = (await other.next(f => 'error' in f)) as { error: { code: string } };
		assert.equal(malformed.error.code, 'invalid_input');
		other.send({ id: 8, method: 'card/create', params: { cards: [{ title: 'x', bogus: 1 }] } });
		const invalid = (await other.next(f => f.id === 8)) as { error: { code: string; message: string } };
		assert.equal(invalid.error.code, 'invalid_input');
		assert.match(invalid.error.message, /bogus/);
		const stats = await other.request('card/stats', {});
		assert.equal(stats.error, undefined, 'the hub still serves');
		other.close();
	});

	it('keeps the token out of argv, URLs and logs (24)', () => {
		const cmdline = readFileSync(`/proc/${hub.pid}/cmdline`, 'utf8');
		assert.ok(!cmdline.includes(hub.token));
		const ps = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).stdout;
		assert.ok(!ps.includes(hub.token));
		assert.ok(hub.stderr().length > 0);
		assert.ok(!hub.stderr().includes(hub.token));
		assert.ok(!readFileSync(hub.paths.hubJson, 'utf8').includes(hub.token));
	});
});

describe('hub token file permissions (22)', () => {
	it('creates the token 0600 in a 0700 dir owned by the user, and refuses loose, symlinked or foreign files', async () => {
		const dataDir = tempDataDir();
		try {
			let hub = await startHub({ dataDir });
			const st = statSync(hub.paths.token);
			assert.equal(st.mode & 0o777, 0o600);
			assert.equal(st.uid, process.getuid!());
			assert.equal(statSync(hub.paths.runDir).mode & 0o777, 0o700);
			await hub.stop();
			const token = hub.paths.token;

			const refused = async (what: string): Promise<string> => {
				const err = await startHub({ dataDir }).then(
					h => {
						void h.stop();
						return '';
					},
					(e: unknown) => (e instanceof Error ? e.message : String(e)),
				);
				assert.match(err, /Refusing to start/, what);
				return err;
			};

			chmodSync(token, 0o644);
			assert.match(await refused('0644 token'), /chmod 600/);
			chmodSync(token, 0o600);

			chownSync(token, 65534, 65534);
			assert.match(await refused('foreign token'), /owned by uid 65534/);
			chownSync(token, process.getuid!(), process.getgid!());

			const real = join(hub.paths.runDir, 'real-token');
			renameSync(token, real);
			symlinkSync(real, token);
			assert.match(await refused('symlinked token'), /symlink/);
			unlinkSync(token);
			renameSync(real, token);

			chmodSync(hub.paths.runDir, 0o755);
			assert.match(await refused('0755 run dir'), /chmod 700/);
			chmodSync(hub.paths.runDir, 0o700);

			hub = await startHub({ dataDir });
			await hub.stop();
		} finally {
			removeDataDir(dataDir);
		}
	});
});
