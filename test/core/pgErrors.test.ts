/**
 * PostgreSQL going away is named, from real errors of the real driver: a refused connection and a
 * connection the server terminated both become `unavailable` with host:port (never the password), so
 * does a server that never answers within the connect timeout, and an ordinary SQL error is left alone.
 */
import assert from 'node:assert/strict';
import { type AddressInfo, type Socket, createServer } from 'node:net';
import { describe, it } from 'node:test';
import pg from 'pg';

import { postgresUnavailable, serverAddress } from '../../core/store/pgErrors';
import { testDatabaseUrl } from '../helpers/backlog';

async function errorOf(run: () => Promise<unknown>): Promise<unknown> {
	try {
		await run();
	} catch (e) {
		return e;
	}
	assert.fail('expected an error');
}

describe('PostgreSQL unreachable', () => {
	it('names a refused connection with host and port, without credentials', async () => {
		const url = 'postgres://alice:s3cret@127.0.0.1:1/test';
		const client = new pg.Client({ connectionString: url });
		const e = await errorOf(() => client.connect());
		const named = postgresUnavailable(e, url, false);
		assert.ok(named, String(e));
		assert.equal(named.code, 'unavailable');
		assert.match(named.message, /^PostgreSQL at 127\.0\.0\.1:1 refused the connection\. Start it/);
		assert.doesNotMatch(named.message, /s3cret|alice/);
		assert.equal(serverAddress('postgres://db.example/x'), 'db.example:5432');
	});

	it('names a server that does not answer within the pool’s connect timeout', async () => {
		// A listener that accepts and never speaks: the driver gives up after connectionTimeoutMillis.
		const sockets: Socket[] = [];
		const silent = createServer(socket => sockets.push(socket));
		await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve));
		const port = (silent.address() as AddressInfo).port;
		const url = `postgres://postgres@127.0.0.1:${port}/test`;
		const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 200 });
		try {
			const e = await errorOf(() => pool.query('SELECT 1'));
			const named = postgresUnavailable(e, url);
			assert.ok(named, String(e));
			assert.match(named.message, new RegExp(`^PostgreSQL at 127\\.0\\.0\\.1:${port} did not answer \\(retrying\\)`));
		} finally {
			await pool.end();
			for (const socket of sockets) {
				socket.destroy();
			}
			silent.close();
		}
	});

	it('names a connection the server terminated, and leaves SQL errors alone', async () => {
		const victim = new pg.Client({ connectionString: testDatabaseUrl });
		victim.on('error', () => undefined);
		await victim.connect();
		const pid = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
		const sqlError = await errorOf(() => victim.query('SELECT * FROM no_such_table'));
		assert.equal(postgresUnavailable(sqlError, testDatabaseUrl), undefined);
		const admin = new pg.Client({ connectionString: testDatabaseUrl });
		await admin.connect();
		await admin.query('SELECT pg_terminate_backend($1)', [pid]);
		await admin.end();
		const e = await errorOf(() => victim.query('SELECT 1'));
		const named = postgresUnavailable(e, testDatabaseUrl);
		assert.ok(named, String(e));
		assert.equal(named.code, 'unavailable');
		assert.match(named.message, /^PostgreSQL at 127\.0\.0\.1:5432 .*\(retrying\)/);
		await victim.end().catch(() => undefined);
	});
});
