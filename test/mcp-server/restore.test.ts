/**
 * `baton backup` / `export --with-history` / `baton restore` through the CLI (in process: runCliHere,
 * its own part without starting the bundle per command) and the real hub processes it starts: a
 * restore stops the running hub process, keeps the current store aside, and brings back exactly what
 * the backup held — cards, attempts, the event history, agents, settings — while later changes are gone.
 * A damaged file, a foreign file and a newer schema are refused with a sentence, changing nothing.
 * A cards-only export restores as its cards; a full backup is not merged by `import`.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';

import { hubPaths } from '../../core/paths';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { cleanupDataDir, ensureBuilt, hubPid, isAlive, runCliHere, tempDataDir, waitFor } from '../helpers/mcp';

interface Shown {
	card: { id: string; status: string; attempts: number };
	history?: { type: string }[];
	events?: { type: string }[];
}

describe('baton restore', () => {
	let dataDir: string;
	let other: string;
	/** The CLI in process (runCliHere): its words, exit codes and store; the hubs it starts are the bundle's. */
	const baton = async (
		args: string[],
		dir = dataDir,
	): Promise<{ code: number | null; stdout: string; stderr: string }> =>
		runCliHere(args, { dataDir: dir, env: { BATON_AGENT: 'restorer' } });
	const json = async <T>(args: string[], dir = dataDir): Promise<T> => {
		const r = await baton([...args, '--json'], dir);
		assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}${r.stdout}`);
		return JSON.parse(r.stdout) as T;
	};
	const ids = async (dir = dataDir): Promise<string[]> =>
		(await json<{ cards: { id: string }[] }>(['list', '--all'], dir)).cards.map(c => c.id).sort();

	before(async () => {
		ensureBuilt();
		dataDir = tempDataDir();
		other = tempDataDir();
		await json(['create', 'First card', '--id', 'R1']);
		await json(['create', 'Second card', '--id', 'R2', '--depends-on', 'R1']);
		await json(['create', 'Third card', '--id', 'R3']);
		const claimed = await json<{ lease: { epoch: number } }>(['claim', 'R3']);
		await json(['fail', 'R3', '--epoch', String(claimed.lease.epoch), '--reason', 'flaky build']);
		await json(['settings', '--stall-release-seconds', '900']);
	});
	after(async () => {
		await cleanupDataDir(dataDir);
		await cleanupDataDir(other);
	});

	it('backs up the whole store and restores it, stopping the hub and keeping the old store aside', async () => {
		const backup = await json<{ path: string; cards: number; events: number }>(['backup']);
		assert.equal(backup.cards, 3);
		assert.ok(backup.events >= 5, `${backup.events} events`);
		const before = await json<Shown>(['show', 'R3']);
		await json(['create', 'Made after the backup', '--id', 'LATE']);
		assert.deepEqual(await ids(), ['LATE', 'R1', 'R2', 'R3']);
		const hub = hubPid(dataDir);
		assert.ok(hub !== undefined && isAlive(hub), 'a hub process runs before the restore');

		const r = await json<{ cards: number; events: number; keptAside: string; hubStopped: boolean }>([
			'restore',
			backup.path,
		]);
		assert.equal(r.cards, 3);
		assert.equal(r.events, backup.events);
		assert.equal(r.hubStopped, true);
		await waitFor(() => !isAlive(hub), 10_000, `the hub process ${hub} to exit`);
		assert.ok(existsSync(join(r.keptAside, 'PG_VERSION')), 'the store from before the restore is kept');

		assert.deepEqual(await ids(), ['R1', 'R2', 'R3'], 'the card made after the backup is gone');
		const after = await json<Shown>(['show', 'R3']);
		assert.deepEqual(after, before, 'the card, its attempts and its history came back exactly');
		const settings = await json<{ stallReleaseSeconds: number | null }>(['settings']);
		assert.equal(settings.stallReleaseSeconds, 900);
		// The restored store goes on: its event log continues.
		await json(['create', 'After the restore', '--id', 'R4']);
		assert.deepEqual(await ids(), ['R1', 'R2', 'R3', 'R4']);
	});

	it('export --with-history is a backup another data dir restores from', async () => {
		const file = join(other, 'history.jsonl');
		const out = await json<{ cards: number; events: number }>(['export', '--with-history', '--out', file]);
		assert.equal(out.cards, 4);
		const r = await baton(['restore', file], other);
		assert.equal(r.code, 0, r.stderr);
		assert.match(r.stdout, /Restored 4 cards and \d+ events into .*pgdata/);
		assert.deepEqual(await ids(other), ['R1', 'R2', 'R3', 'R4']);
		assert.deepEqual(await json<Shown>(['show', 'R3'], other), await json<Shown>(['show', 'R3']));
	});

	it('refuses garbage, a truncated file and a newer schema, changing nothing', async () => {
		const backups = hubPaths(dataDir).backups;
		const newest = readdirSync(backups).sort().at(-1) ?? '';
		const good = gunzipSync(readFileSync(join(backups, newest))).toString('utf8');
		const cases: [string, string | Buffer, RegExp][] = [
			['garbage.txt', 'not a backup at all\n', /not a Baton backup or export/],
			['cut.jsonl.gz', gzipSync(good).subarray(0, 200), /cannot be decompressed/],
			['short.jsonl', good.split('\n').slice(0, 3).join('\n'), /The backup is incomplete/],
			['newer.jsonl', good.replace(/"schema":\d+/, '"schema":9999'), /newer Baton \(schema 9999\); upgrade Baton/],
		];
		const asides = (): string[] => readdirSync(dataDir).filter(f => f.includes('before-restore'));
		const beforeAsides = asides();
		for (const [name, content, message] of cases) {
			const file = join(other, name);
			writeFileSync(file, content);
			const r = await baton(['restore', file]);
			assert.equal(r.code, 1, `${name}: ${r.stdout}`);
			assert.match(r.stderr, message, name);
		}
		assert.deepEqual(asides(), beforeAsides, 'no store was moved aside');
		assert.deepEqual(await ids(), ['R1', 'R2', 'R3', 'R4'], 'the backlog is untouched');
	});

	it('restores a cards-only export, and import refuses a full backup', async () => {
		const plain = join(other, 'cards.jsonl');
		await json(['export', '--out', plain]);
		const fresh = tempDataDir();
		try {
			const r = await json<{ cards: number; keptAside?: string }>(['restore', plain], fresh);
			assert.equal(r.cards, 4);
			assert.equal(r.keptAside, undefined, 'a fresh data dir had no store to keep');
			assert.deepEqual(await ids(fresh), ['R1', 'R2', 'R3', 'R4']);
			const full = join(other, 'history.jsonl');
			const refused = await baton(['import', full], fresh);
			assert.equal(refused.code, 1);
			assert.match(refused.stderr, /is a full backup .* `baton restore/);
		} finally {
			await cleanupDataDir(fresh);
		}
	});

	it('PostgreSQL: restores into an empty schema, and refuses one that holds a backlog', async () => {
		const schema = uniqueSchema();
		const team = tempDataDir();
		const env = { BATON_AGENT: 'restorer', DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema };
		try {
			const file = join(other, 'history.jsonl');
			const first = await runCliHere(['restore', file, '--json'], { dataDir: team, env });
			assert.equal(first.code, 0, first.stderr);
			assert.equal((JSON.parse(first.stdout) as { mode: string }).mode, 'postgres');
			const listed = await runCliHere(['list', '--all', '--json'], { dataDir: team, env });
			const cards = (JSON.parse(listed.stdout) as { cards: { id: string }[] }).cards.map(c => c.id).sort();
			assert.deepEqual(cards, ['R1', 'R2', 'R3', 'R4']);
			const again = await runCliHere(['restore', file], { dataDir: team, env });
			assert.equal(again.code, 1);
			assert.match(again.stderr, /already holds a backlog; restore replaces nothing in PostgreSQL/);
		} finally {
			await runCliHere(['hub', 'stop'], { dataDir: team, env });
			await cleanupDataDir(team);
			await dropSchema(schema);
		}
	});
});
