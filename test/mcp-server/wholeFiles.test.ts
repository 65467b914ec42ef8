/**
 * Whole files or none, through the CLI (in process: runCliHere, its own part without
 * starting the bundle per command) and real hub processes on real small disks (tmpfs, root as on CI): an export or backup that does not fit exits 1 with one line and leaves no file, and older
 * backups stay; a backup that does not read back whole is removed; a card/create whose WAL would not
 * fit is refused as `disk_full` while the hub stays up and loses nothing; and `baton restore`/`import`
 * refuse rows that break the protocol before applying anything.
 * @first among the longest files of the MCP suite.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { parseBackup, writeBackupFile } from '../../mcp-server/hub/backupFormat';
import { bytesNeededToWrite, freeBytes, writeReserveBytes } from '../../core/files/diskSpace';
import { BatonError } from '../../core/errors';
import type { RpcClient } from '../../core/protocol/rpc';
import type { DumpRows } from '../../core/store/dump';
import { verifyBackup } from '../../mcp-server/hub/backups';
import {
	type HubProcess,
	alive,
	client,
	ensureBuilt,
	hubEnv,
	removeDataDir,
	startHub,
	tempDataDir,
} from '../helpers/hub';
import { runCliHere } from '../helpers/mcp';
import { mountTmpfs, tmpfsSkip, unmount } from '../helpers/tmpfs';

const mib = 1024 * 1024;

/** Random base64 (incompressible, and the worst case for the trigram index): `chars` long. */
const randomText = (chars: number): string =>
	randomBytes(Math.ceil((chars * 3) / 4))
		.toString('base64')
		.slice(0, chars);

/** One line on stderr, no stack trace. */
function oneLine(stderr: string): string {
	const lines = stderr.trim().split('\n');
	assert.equal(lines.length, 1, `expected one line, got:\n${stderr}`);
	assert.doesNotMatch(stderr, /\n\s+at /);
	return lines[0] ?? '';
}

describe('exports and backups on a disk that is too small', { skip: tmpfsSkip }, () => {
	let dataDir: string;
	let backupsDir: string;
	let out: string;
	let hub: HubProcess;

	before(async () => {
		ensureBuilt();
		dataDir = tempDataDir();
		// The data dir's backups/ is a 1 MB disk; exports go to another one.
		backupsDir = mountTmpfs(1, join(dataDir, 'backups'));
		out = mountTmpfs(1);
		hub = await startHub({ dataDir, env: hubEnv() });
		const c = await client(dataDir);
		try {
			await c.request('card/create', { cards: [{ id: 'S1', title: 'small' }] });
		} finally {
			c.close();
		}
	});
	after(async () => {
		await hub.stop();
		unmount(out);
		unmount(backupsDir);
		removeDataDir(dataDir);
	});

	it('a backup that does not fit exits 1 with one line, leaves no file and keeps every older backup', async () => {
		for (let i = 0; i < 3; i++) {
			const r = await runCliHere(['backup'], { dataDir });
			assert.equal(r.code, 0, r.stderr);
		}
		const good = readdirSync(backupsDir).sort();
		assert.equal(good.length, 3);
		// 30 cards of 60 KB of incompressible text: about 1.4 MB gzip, more than the 1 MB disk.
		const c = await client(dataDir);
		try {
			for (let i = 0; i < 3; i++) {
				const cards = Array.from({ length: 10 }, (_, j) => ({
					id: `B${i}-${j}`,
					title: 'big',
					body: randomText(60_000),
				}));
				await c.request('card/create', { cards });
			}
		} finally {
			c.close();
		}
		const started = Date.now();
		const r = await runCliHere(['backup'], { dataDir });
		assert.equal(r.code, 1, `baton backup reported success:\n${r.stdout}`);
		assert.match(
			oneLine(r.stderr),
			/^baton backup: Cannot write .*\.jsonl\.gz: the disk is full \(ENOSPC\)\. Nothing was written there/,
		);
		assert.ok(Date.now() - started < 5_000, `answered in ${Date.now() - started} ms`);
		assert.deepEqual(readdirSync(backupsDir).sort(), good, 'no partial file, no older backup pruned');
		for (const name of good) {
			const parsed = parseBackup(readFileSync(join(backupsDir, name)));
			assert.equal(parsed.kind === 'backup' ? parsed.rows.cards.length : -1, 1);
		}
	});

	for (const [args, name] of [
		[[], 'cards.jsonl'],
		[[], 'cards.jsonl.gz'],
		[['--with-history'], 'all.jsonl'],
		[['--with-history'], 'all.jsonl.gz'],
	] as const) {
		it(`export ${[...args, '--out', name].join(' ')} that does not fit exits 1 with one line and leaves no file`, async () => {
			if (args.length > 0) {
				// The hub writes --with-history's backup beside the store first: give it a real disk.
				unmount(backupsDir);
			}
			const path = join(out, name);
			const r = await runCliHere(['export', ...args, '--out', path], { dataDir });
			assert.equal(r.code, 1, `the export reported success:\n${r.stdout}${r.stderr}`);
			assert.equal(
				oneLine(r.stderr),
				`baton export: Cannot write ${path}: the disk is full (ENOSPC). Nothing was written there; free some space or choose another place.`,
			);
			assert.deepEqual(readdirSync(out), [], 'nothing is left on the small disk');
		});
	}
});

describe('a backup that does not read back whole', () => {
	it('is removed, with an error saying no older backup was pruned', () => {
		const dir = join(tempDataDir(), '..');
		try {
			const rows = {
				cards: [],
				edges: [],
				events: [],
				agents: [],
				request_log: [],
				settings: [],
				messages: [],
				log_state: [],
				webhooks: [],
				project_settings: [],
				id_counters: [],
				id_prefixes: [],
				pauses: [],
				attempt_usage: [],
				usage_totals: [],
			} as DumpRows;
			rows.settings.push('{"key":"review","value":"none"}');
			const path = join(dir, 'baton-x.jsonl.gz');
			writeBackupFile(path, rows, 16);
			verifyBackup(path, rows);
			// What a short write used to leave: the first half of the gzip stream.
			const whole = readFileSync(path);
			writeFileSync(path, whole.subarray(0, Math.floor(whole.length / 2)));
			assert.throws(
				() => verifyBackup(path, rows),
				(e: unknown) =>
					BatonError.is(e) &&
					/did not read back whole \(.*cannot be decompressed.*\); it was removed and no older backup was pruned/.test(
						e.message,
					),
			);
			assert.deepEqual(readdirSync(dir), []);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});

describe('the free-space guard counts the WAL a request writes', { skip: tmpfsSkip }, () => {
	let mount: string;

	before(() => {
		ensureBuilt();
		mount = mountTmpfs(200);
	});
	after(() => unmount(mount));

	it('refuses a create whose WAL would not fit as disk_full; the hub stays up and loses nothing', async () => {
		const dataDir = join(mount, 'd');
		const hub = await startHub({ dataDir, env: hubEnv() });
		let c: RpcClient | undefined = await client(dataDir, { requestTimeoutMs: 60_000 });
		const acknowledged: string[] = [];
		try {
			// The reproduction: 100 cards × 20 KB passed a guard that counted 4× the request, wrote
			// ~100 MB (160 MB of pg_wal) and the next one ended the hub with a PANIC.
			const plan = (n: number, tag: string): { cards: { title: string; body: string }[] } => ({
				cards: Array.from({ length: n }, (_, i) => ({ title: `${tag}-${i}`, body: randomText(20_000) })),
			});
			for (let round = 0; round < 2; round++) {
				const started = Date.now();
				await assert.rejects(
					c.request('card/create', plan(100, `big${round}`)),
					(e: unknown) =>
						BatonError.is(e, 'disk_full') &&
						/The Baton backlog refuses writes: the disk holding it is full \(.* has [0-9.]+ MB free; Baton keeps [0-9.]+ MB free so a write can always finish\)\..* a smaller request \(fewer or shorter cards\) may still fit/.test(
							e.message,
						),
				);
				assert.ok(Date.now() - started < 5_000, `refused after ${Date.now() - started} ms`);
			}
			// Smaller creates go through until the next would not fit; each used less than it was allowed.
			let refused: unknown;
			for (let round = 0; round < 12 && refused === undefined; round++) {
				const request = plan(20, `r${round}`);
				const bytes = JSON.stringify(request).length;
				const freeBefore = freeBytes(mount);
				try {
					const { cards } = await c.request('card/create', request);
					acknowledged.push(...cards.map(card => card.id));
					const used = freeBefore - freeBytes(mount);
					console.log(
						`# create of ${bytes} bytes used ${used} bytes (${(used / bytes).toFixed(1)}×), ${(freeBytes(mount) / mib).toFixed(0)} MB free`,
					);
					assert.ok(used < bytesNeededToWrite(bytes) - writeReserveBytes, `a ${bytes}-byte create used ${used} bytes`);
				} catch (e) {
					assert.ok(BatonError.is(e, 'disk_full'), `a create failed otherwise than disk_full: ${String(e)}`);
					refused = e;
				}
			}
			assert.ok(refused !== undefined, 'the disk never filled');
			assert.ok(acknowledged.length >= 20, `only ${acknowledged.length} cards were acknowledged`);
			assert.ok(alive(hub.pid), `the hub died:\n${hub.stderr()}`);
			assert.equal((await c.request('card/stats', {})).total, acknowledged.length);
			assert.doesNotMatch(hub.stderr(), /PANIC/);
			c.close();
			c = undefined;
			await hub.stop('SIGKILL');
			const fresh = await startHub({ dataDir, env: hubEnv() });
			const reader = await client(dataDir);
			try {
				// Pages stop at about 1 MB (20 KB cards: ~50 a page), so read on through the cursor.
				const ids = new Set<string>();
				let cursor: string | undefined;
				do {
					const page = await reader.request('card/list', { limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
					page.cards.forEach(card => ids.add(card.id));
					cursor = page.nextCursor;
				} while (cursor !== undefined);
				assert.deepEqual(
					acknowledged.filter(id => !ids.has(id)),
					[],
				);
			} finally {
				reader.close();
				await fresh.stop();
			}
		} finally {
			c?.close();
			await hub.stop('SIGKILL');
		}
	});
});

describe('restore and import refuse rows that break the protocol', () => {
	let dataDir: string;
	let backup: string[];

	before(async () => {
		ensureBuilt();
		dataDir = tempDataDir();
		const created = await runCliHere(['create', 'first'], { dataDir });
		assert.equal(created.code, 0, created.stderr);
		await runCliHere(['create', 'second'], { dataDir });
		// To a file: runCliHere does not capture what export writes to process.stdout itself.
		const file = join(dataDir, '..', 'backup.jsonl');
		const r = await runCliHere(['export', '--with-history', '--out', file], { dataDir });
		assert.equal(r.code, 0, r.stderr);
		backup = readFileSync(file, 'utf8').trimEnd().split('\n');
	});
	after(async () => {
		await runCliHere(['hub', 'stop'], { dataDir });
		removeDataDir(dataDir);
	});

	/** The backup with its first cards row changed by `edit`; returns the file and that row's line. */
	function edited(name: string, edit: (row: Record<string, unknown>) => void): { file: string; line: number } {
		const index = backup.findIndex(l => l.startsWith('{"t":"cards"'));
		const line = JSON.parse(backup[index] ?? '') as { t: string; r: Record<string, unknown> };
		edit(line.r);
		const lines = [...backup];
		lines[index] = JSON.stringify(line);
		const file = join(dataDir, '..', name);
		writeFileSync(file, `${lines.join('\n')}\n`);
		return { file, line: index + 1 };
	}

	async function assertUnchanged(): Promise<void> {
		const list = await runCliHere(['list', '--json'], { dataDir });
		assert.equal(list.code, 0, list.stderr);
		assert.deepEqual((JSON.parse(list.stdout) as { cards: { title: string }[] }).cards.map(c => c.title).sort(), [
			'first',
			'second',
		]);
	}

	it('refuses a card id that breaks the rules, naming the line, and applies nothing', async () => {
		const bad = "x'); DROP TABLE cards;--";
		const { file, line } = edited('bad-id.jsonl', r => {
			r.id = bad;
		});
		const started = Date.now();
		const r = await runCliHere(['restore', file], { dataDir });
		assert.equal(r.code, 1, r.stdout);
		assert.equal(
			oneLine(r.stderr),
			`baton restore: Line ${line} of the backup: card ${JSON.stringify(bad)} is not a valid card (id: ids use letters, digits and . _ : - and start with a letter or digit). Nothing was changed.`,
		);
		assert.ok(Date.now() - started < 5_000);
		await assertUnchanged();
	});

	it('refuses a claimed card with no owner', async () => {
		const { file, line } = edited('no-owner.jsonl.gz', r => {
			r.status = 'claimed';
			r.claim_owner = null;
		});
		writeFileSync(file, (await import('node:zlib')).gzipSync(readFileSync(file)));
		const r = await runCliHere(['restore', file], { dataDir });
		assert.equal(r.code, 1, r.stdout);
		assert.match(
			oneLine(r.stderr),
			new RegExp(
				`^baton restore: Line ${line} of the backup: card \\S+: status is claimed but it names no claimOwner and leaseExpiresAt\\. Nothing was changed\\.$`,
			),
		);
		await assertUnchanged();
	});

	it('refuses a claimed card with no owner in a cards export too', async () => {
		const exportFile = join(dataDir, '..', 'export.jsonl');
		await runCliHere(['export', '--out', exportFile], { dataDir });
		const lines = readFileSync(exportFile, 'utf8').trimEnd().split('\n');
		const card = JSON.parse(lines[1] ?? '') as Record<string, unknown>;
		card.id = 'N1';
		card.status = 'claimed';
		card.claimOwner = null;
		const file = join(dataDir, '..', 'cards.jsonl');
		writeFileSync(file, `${lines[0] ?? ''}\n${JSON.stringify(card)}\n`);
		for (const verb of ['import', 'restore']) {
			const r = await runCliHere([verb, file], { dataDir });
			assert.equal(r.code, 1, r.stdout);
			assert.match(
				oneLine(r.stderr),
				/Line 2 of the export: card N1: status is claimed but it names no claimOwner and leaseExpiresAt\.$/,
			);
		}
		await assertUnchanged();
	});
});
