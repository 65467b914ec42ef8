/**
 * PostgreSQL going away is named, from real errors of the real driver: a refused connection and a
 * connection the server terminated both become `unavailable` with host:port (never the password), and
 * an ordinary SQL error is left alone for the caller.
 */
import assert from 'node:assert/strict';
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
