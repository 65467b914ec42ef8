/**
 * Opens real test backlogs: PGlite in memory or in a short temp dir, and PostgreSQL in a schema of its
 * own (DATABASE_URL_TEST, default the local `test` database) that is dropped afterwards, so runs never
 * see each other's rows.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { after, before } from 'node:test';
import pg from 'pg';

import { Backlog, type BacklogOptions } from '../../core/backlog';
import type { Card } from '../../core/protocol';
import { smallPool } from '../../core/store/bufferPool';

export type StoreKind = 'pglite' | 'postgres';

export const storeKinds: readonly StoreKind[] = ['pglite', 'postgres'];

export const testDatabaseUrl = process.env.DATABASE_URL_TEST ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestBacklog {
	backlog: Backlog;
	/** Options that open the same store again (another instance, or a reopen). */
	options: BacklogOptions;
	/** Closes the backlog and removes its data (schema or temp dir). */
	cleanup(): Promise<void>;
}

/** A short temp dir (Unix socket paths max 107 bytes). */
export function tempDir(): string {
	return mkdtempSync('/tmp/bt-');
}

export function uniqueSchema(): string {
	return `bt_${randomBytes(6).toString('hex')}`;
}

export async function dropSchema(schema: string): Promise<void> {
	const client = new pg.Client({ connectionString: testDatabaseUrl });
	await client.connect();
	try {
		await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
	} finally {
		await client.end();
	}
}

/** Every card of the backlog in id order, read page by page as an export does. */
export async function allCards(b: Backlog): Promise<Card[]> {
	const cards: Card[] = [];
	let cursor: string | undefined;
	do {
		const page = await b.exportCards(cursor === undefined ? {} : { cursor });
		cards.push(...page.cards);
		cursor = page.nextCursor;
	} while (cursor !== undefined);
	return cards;
}

/**
 * Opens a fresh backlog of `kind` before the enclosing suite's tests and cleans it up after them;
 * `onOpen` receives it (most suites keep only `t.backlog`).
 */
export function backlogForSuite(
	kind: StoreKind,
	extra: BacklogOptions & { onDisk?: boolean },
	onOpen: (t: TestBacklog) => void,
): void {
	let t: TestBacklog | undefined;
	before(async () => {
		t = await openTestBacklog(kind, extra);
		onOpen(t);
	});
	after(async () => {
		await t?.cleanup();
	});
}

/**
 * Opens a fresh backlog of `kind`. PGlite is in-memory unless `onDisk`; PostgreSQL gets a new schema.
 * Extra options (clock, thresholds, TTL) pass through.
 */
export async function openTestBacklog(
	kind: StoreKind,
	extra: BacklogOptions & { onDisk?: boolean } = {},
): Promise<TestBacklog> {
	const { onDisk, ...rest } = extra;
	if (kind === 'postgres') {
		const schema = uniqueSchema();
		const options: BacklogOptions = { ...rest, databaseUrl: testDatabaseUrl, schema };
		const backlog = await Backlog.open(options);
		return {
			backlog,
			options,
			async cleanup() {
				await backlog.close();
				await dropSchema(schema);
			},
		};
	}
	const dir = onDisk === true ? tempDir() : undefined;
	// In memory a store would get the pool of a 100k-card bench (bufferPool.ts); a test's backlog is
	// a small store, so it gets a small one's pool, which also opens faster (zero-filled at start).
	const options: BacklogOptions = {
		pgliteBufferPool: dir === undefined ? smallPool : undefined,
		...rest,
		...(dir !== undefined ? { pgliteDir: `${dir}/pg` } : {}),
	};
	const backlog = await Backlog.open(options);
	return {
		backlog,
		options,
		async cleanup() {
			await backlog.close();
			if (dir !== undefined) {
				rmSync(dir, { recursive: true, force: true });
			}
		},
	};
}
