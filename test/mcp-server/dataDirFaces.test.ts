/**
 * Data-dir safety through the CLI (in process: runCliHere; the hubs it starts are the bundle's) and a
 * real MCP agent: a store that lost its marker keeps its cards and `baton hub status` says it was
 * checked; a data dir Baton must not touch, or one a newer Baton wrote, makes the command fail at once
 * with the hub's sentence (not a start-up timeout), and the MCP agent gets a refusal that does not
 * leak the path; both leave the store as it was.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { readyMarker } from '../../core/store/dataDir';
import { openPglite } from '../../core/store/pglite';
import {
	type CliResult,
	cleanupDataDir,
	ensureBuilt,
	runCliHere,
	startAgent,
	tempDataDir,
	textOf,
} from '../helpers/mcp';

const dirs: string[] = [];

function fresh(): string {
	const dir = tempDataDir();
	dirs.push(dir);
	return dir;
}

/** The CLI in process (runCliHere): its words and exit codes; the hub it starts is the bundle's. */
function baton(dataDir: string, args: string[]): Promise<CliResult> {
	return runCliHere(args, { dataDir, env: { BATON_AGENT: 'cli-human' } });
}

async function ok(dataDir: string, args: string[]): Promise<string> {
	const r = await baton(dataDir, args);
	assert.equal(r.code, 0, `baton ${args.join(' ')} exited ${r.code}: ${r.stdout} ${r.stderr}`);
	return r.stdout;
}

describe('data dir safety through the faces', () => {
	before(() => ensureBuilt());
	after(async () => {
		for (const dir of dirs) {
			await cleanupDataDir(dir);
		}
	});

	it('keeps a store whose marker was deleted, and says so in hub status', async () => {
		const dataDir = fresh();
		await ok(dataDir, ['create', 'Survives the lost marker', '--id', 'S1']);
		await ok(dataDir, ['hub', 'stop']);
		// hub stop answers before the hub has closed the store: wait for hub.json to go.
		for (let i = 0; i < 200 && readdirSync(dataDir).includes('hub.json'); i++) {
			await new Promise(r => setTimeout(r, 50));
		}
		rmSync(join(dataDir, 'pgdata', readyMarker));
		const stats = JSON.parse(await ok(dataDir, ['stats', '--json'])) as { total: number };
		assert.equal(stats.total, 1, 'the same backlog, not an empty one');
		const status = await ok(dataDir, ['hub', 'status']);
		assert.match(status, /notice: The data dir .*pgdata had lost its baton-ready marker; .*1 cards/);
		assert.ok(readdirSync(join(dataDir, 'pgdata')).includes(readyMarker));
		assert.deepEqual(
			readdirSync(dataDir).filter(f => f.startsWith('pgdata.')),
			[],
			'nothing set aside',
		);
		await ok(dataDir, ['hub', 'stop']);
	});

	it('fails fast with the reason when the store is refused, and an agent is told without the path', async () => {
		const dataDir = fresh();
		const pgdata = join(dataDir, 'pgdata');
		await ok(dataDir, ['stats']);
		await ok(dataDir, ['hub', 'stop']);
		for (let i = 0; i < 200 && readdirSync(dataDir).includes('hub.json'); i++) {
			await new Promise(r => setTimeout(r, 50));
		}
		rmSync(pgdata, { recursive: true });
		mkdirSync(pgdata);
		writeFileSync(join(pgdata, 'notes.md'), 'not a database\n');
		const started = Date.now();
		const r = await baton(dataDir, ['stats']);
		assert.equal(r.code, 1);
		assert.match(
			r.stderr,
			new RegExp(`will not open the data dir ${pgdata}: it holds files that are not a PostgreSQL store`),
		);
		assert.ok(Date.now() - started < 15_000, `refused in ${Date.now() - started} ms, not after the start timeout`);
		assert.deepEqual(readdirSync(pgdata), ['notes.md']);

		const agent = await startAgent(dataDir, { clientName: 'refused-agent' });
		try {
			const res = await agent.call('list', {});
			assert.equal(res.isError, true);
			assert.match(textOf(res), /store_refused/);
			assert.ok(!textOf(res).includes(dataDir), 'the agent does not see local paths');
		} finally {
			await agent.close();
		}
	});

	it('refuses a backlog a newer Baton wrote, naming the schema, and leaves it as it was', async () => {
		const dataDir = fresh();
		await ok(dataDir, ['create', 'From an older day', '--id', 'N1']);
		await ok(dataDir, ['hub', 'stop']);
		for (let i = 0; i < 200 && readdirSync(dataDir).includes('hub.json'); i++) {
			await new Promise(r => setTimeout(r, 50));
		}
		const raw = await openPglite({ dataDir: join(dataDir, 'pgdata') });
		await raw.db.exec("INSERT INTO baton_migrations (version, name) VALUES (9999, 'from_the_future')");
		await raw.db.close();
		const r = await baton(dataDir, ['show', 'N1']);
		assert.equal(r.code, 1);
		assert.match(r.stderr, /this backlog was written by a newer Baton \(schema 9999\); upgrade Baton/);
		const again = await openPglite({ dataDir: join(dataDir, 'pgdata') });
		try {
			assert.deepEqual(await again.db.query('SELECT id FROM cards'), [{ id: 'N1' }]);
		} finally {
			await again.db.close();
		}
	});
});
