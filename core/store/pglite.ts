/**
 * PGlite behind the Db interface (the default, single-process store). A new data dir is
 * seeded from a pre-built, migrated empty database (template.tar.gz) instead of running initdb. What
 * may be opened, and the one case that is set aside, is dataDir.ts's decision.
 */
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';

import { bufferPoolFor } from './bufferPool';
import { markDataDirReady, prepareDataDir, refusal } from './dataDir';
import type { Db, Queryable, Row } from './db';
import { unpackTemplate } from './templateUnpack';
import { type Column, columnsOfReply, executeMessage, prepareMessage, rowsOfReply, textParam } from './pgWire';

export interface PgliteOptions {
	/** Data directory; omitted = in-memory. */
	dataDir?: string | undefined;
	/** Folder holding pglite.wasm, initdb.wasm, pglite.data and template.tar.gz (a bundle's dist/pglite). */
	assetsDir?: string | undefined;
	/** Seed a new database from template.tar.gz when there is one (default true; the template script says false). */
	useTemplate?: boolean | undefined;
	/**
	 * shared_buffers, as PostgreSQL writes it ('32MB'); omitted = chosen from the store's size
	 * (bufferPool.ts). All of it is zero-filled at start, so a smaller pool opens faster.
	 */
	bufferPool?: string | undefined;
	/**
	 * Send named statements by hand over the extended protocol (pgWire.ts; default true). False runs
	 * them through PGlite's `query()` like any other: a measurement switch
	 * (core/backlog/fastPaths.ts).
	 */
	wire?: boolean | undefined;
}

export { readyMarker } from './dataDir';

/** Where the template and migrations live when not bundled: next to this file. */
export const sourceStoreDir = __dirname;

export function templatePath(assetsDir: string | undefined): string {
	return join(assetsDir ?? sourceStoreDir, 'template.tar.gz');
}

/** core's lib has no DOM types (so no WebAssembly typings); Node has WebAssembly all the same. */
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<unknown> } }).WebAssembly;

async function assetOptions(assetsDir: string | undefined): Promise<Partial<PGliteOptions>> {
	if (assetsDir === undefined) {
		return {};
	}
	// esbuild does not follow PGlite's `new URL('./file', import.meta.url)`: hand it the files.
	const [pgliteWasmModule, initdbWasmModule] = await Promise.all([
		wasm.compile(readFileSync(join(assetsDir, 'pglite.wasm'))),
		wasm.compile(readFileSync(join(assetsDir, 'initdb.wasm'))),
	]);
	const modules: Record<string, unknown> = { pgliteWasmModule, initdbWasmModule };
	return { ...(modules as Partial<PGliteOptions>), fsBundle: new Blob([readFileSync(join(assetsDir, 'pglite.data'))]) };
}

/**
 * PGlite's pg_trgm bundle (migration 0012's trigram index for card/list {text}): a file URL, which
 * PGlite reads itself in Node. Bundled, esbuild.mjs copies it next to pglite.wasm; from source it is
 * in PGlite's own dist folder. Every open passes it: a store whose catalogue has the extension cannot
 * use the index (or restore a dump of it) without the library.
 */
function trigramBundle(assetsDir: string | undefined): URL {
	const dir = assetsDir ?? dirname(require.resolve('@electric-sql/pglite'));
	return pathToFileURL(join(dir, 'pg_trgm.tar.gz'));
}

/**
 * The template as a plain tar, unpacked once per process and path: an in-memory store is what tests
 * and benches open many times over, and the gunzip cost 0.17–0.35 s of CPU on every open (a hub opens
 * its store once, on disk, through unpackTemplate instead).
 */
const templateTars = new Map<string, Uint8Array<ArrayBuffer>>();

function templateBlob(assetsDir: string | undefined): Blob | undefined {
	const path = templatePath(assetsDir);
	if (!existsSync(path)) {
		return undefined;
	}
	// Node's native gunzip and a plain tar load faster than handing PGlite the .gz (measured 2.5 s ->
	// 1.8–2.1 s for a first start on a busy machine).
	let tar = templateTars.get(path);
	if (tar === undefined) {
		tar = new Uint8Array(gunzipSync(readFileSync(path)));
		templateTars.set(path, tar);
	}
	return new Blob([tar]);
}

/**
 * Quotes a value as an SQL literal for EXECUTE inside a transaction (PGlite's transaction object
 * speaks only its own protocol). standard_conforming_strings is on, so only single quotes need doubling.
 */
export function sqlLiteral(value: unknown): string {
	if (value === null || value === undefined) {
		return 'NULL';
	}
	if (typeof value === 'boolean') {
		return value ? 'TRUE' : 'FALSE';
	}
	if (Array.isArray(value)) {
		return `ARRAY[${value.map(v => sqlLiteral(v)).join(',')}]::text[]`;
	}
	// The same text the extended protocol sends (finite numbers, no NUL, ISO dates, JSON objects).
	const text = textParam(value) ?? '';
	return typeof value === 'number' ? text : `'${text.replaceAll("'", "''")}'`;
}

type PgliteTarget = Pick<PGlite, 'query' | 'exec'>;

/** The instance itself, for statements run outside any transaction. */
interface Root {
	pglite: PGlite;
	inFlight: InFlight;
	/** False: named statements go through PGlite's query() too (PgliteOptions.wire). */
	wire: boolean;
}

/**
 * Counts the calls into PGlite that are under way (a query awaiting its turn, an open transaction, a
 * dump). When there are none, nothing else can be inside PGlite either, because every call goes
 * through here, and a statement may run synchronously without taking PGlite's locks.
 */
class InFlight {
	private count = 0;

	get idle(): boolean {
		return this.count === 0;
	}

	async run<T>(fn: () => Promise<T>): Promise<T> {
		this.count++;
		try {
			return await fn();
		} finally {
			this.count--;
		}
	}
}

/**
 * Sends frontend messages outside any transaction and resolves to the backend's whole reply. When no
 * other call is under way this runs synchronously and lock-free: PGlite does all the work inside
 * execProtocolRawStream before it returns its promise (the promise is async only for syncToFs), so
 * nothing can interleave. Otherwise it waits for PGlite's two locks like any query. It skips the
 * after-query syncToFs, which is empty for the two file systems Baton uses (NodeFS writes through to
 * the data dir, memory:// has nothing to sync; PGlite 0.5.16); the SIGKILL crash proof checks that
 * acknowledged writes survive this path.
 */
function send(root: Root, message: Uint8Array): Promise<Uint8Array> {
	const { pglite, inFlight } = root;
	if (inFlight.idle) {
		return sendNow(pglite, message);
	}
	return inFlight.run(() =>
		pglite._runExclusiveTransaction(() => pglite._runExclusiveQuery(() => sendNow(pglite, message))),
	);
}

/** Sends `message` and resolves to everything the backend answered. */
async function sendNow(pglite: PGlite, message: Uint8Array): Promise<Uint8Array> {
	const chunks: Uint8Array[] = [];
	let length = 0;
	await pglite.execProtocolRawStream(message, {
		syncToFs: false,
		onRawData: data => {
			chunks.push(data.slice()); // a view of WASM memory, reused by the next write
			length += data.length;
		},
	});
	const [only] = chunks;
	if (only !== undefined && chunks.length === 1) {
		return only;
	}
	const whole = new Uint8Array(length);
	let at = 0;
	for (const chunk of chunks) {
		whole.set(chunk, at);
		at += chunk.length;
	}
	return whole;
}

/** A named statement prepared (or being prepared) in this instance; concurrent first callers share it. */
interface PreparedEntry {
	done: boolean;
	ready: Promise<void>;
	/** Its result columns, from Describe. */
	columns: Column[];
}

class PgliteQueryable implements Queryable {
	/** `root` is set when this is the instance itself (outside any transaction). */
	constructor(
		private readonly target: PgliteTarget,
		private readonly prepared: Map<string, PreparedEntry>,
		private readonly root?: Root,
	) {}

	async query<T = Row>(text: string, params: readonly unknown[] = [], name?: string): Promise<T[]> {
		if (name === undefined || this.root?.wire === false) {
			const result = await this.target.query<T>(text, params as unknown[]);
			return result.rows;
		}
		const entry = this.prepared.get(name);
		if (this.root === undefined) {
			// Inside a transaction. Never prepare here: the statement would wait on the instance lock this
			// transaction holds. Run it plainly until it has been prepared outside, then by name.
			if (entry?.done !== true) {
				const result = await this.target.query<T>(text, params as unknown[]);
				return result.rows;
			}
			const args = params.length > 0 ? `(${params.map(v => sqlLiteral(v)).join(', ')})` : '';
			const results = await this.target.exec(`EXECUTE ${name}${args}`);
			return (results.at(-1)?.rows ?? []) as T[];
		}
		// Outside: prepared once per instance with Parse, then Bind + Execute per call, which skips
		// parsing and planning the statement and its arguments (pgWire.ts; docs/benchmarks.md).
		const ready = entry ?? this.prepare(this.root, name, text);
		if (!ready.done) {
			await ready.ready;
		}
		const reply = await send(this.root, executeMessage(name, params));
		return rowsOfReply<T>(reply, this.root.pglite.parsers, ready.columns);
	}

	/** Prepares `name` outside any transaction (Db.prepare), unless done already. */
	async prepareOutside(name: string, text: string): Promise<void> {
		if (this.root === undefined) {
			throw new Error('prepareOutside runs on the instance, not inside a transaction');
		}
		await (this.prepared.get(name) ?? this.prepare(this.root, name, text)).ready;
	}

	/** Prepares `name` once; a failed prepare is forgotten so the next call retries. */
	private prepare(root: Root, name: string, text: string): PreparedEntry {
		const created: PreparedEntry = { done: false, ready: Promise.resolve(), columns: [] };
		created.ready = (async () => {
			try {
				// columnsOfReply throws the DatabaseError of a Parse that failed.
				created.columns = columnsOfReply(await send(root, prepareMessage(name, text)));
				created.done = true;
			} catch (e) {
				this.prepared.delete(name);
				throw e;
			}
		})();
		this.prepared.set(name, created);
		return created;
	}
}

export interface OpenedPglite {
	db: Db;
	/** The whole data dir as a gzipped tarball (PGlite's dumpDataDir). */
	dumpDataDir: () => Promise<File | Blob>;
	/** True when this open created the data dir (or the in-memory database). */
	fresh: boolean;
	/** True when the dir held a store without the ready marker: check it is a backlog before migrating. */
	unmarked: boolean;
	/** What the open did that users should hear of (a partial first init set aside). */
	notices: string[];
	/** Call after migrations succeeded on a fresh or unmarked dir: from now on the dir counts as initialised. */
	markReady(): void;
}

/**
 * Lock tables and per-backend arrays are sized by max_connections (default 100, ~8 MB of WASM memory);
 * PGlite runs one backend in single-user mode, so a few slots are plenty.
 */
const maxConnections = '4';

export async function openPglite(options: PgliteOptions): Promise<OpenedPglite> {
	const assets = await assetOptions(options.assetsDir);
	let prepared = { fresh: true, unmarked: false, notices: [] as string[] };
	if (options.dataDir !== undefined) {
		mkdirSync(dirname(options.dataDir), { recursive: true });
		prepared = prepareDataDir(options.dataDir);
	}
	const { fresh, unmarked, notices } = prepared;
	const useTemplate = fresh && options.useTemplate !== false && existsSync(templatePath(options.assetsDir));
	// On disk the template is streamed into the new dir (templateUnpack.ts: no 25 MB copies left in the
	// C heap); in memory PGlite loads it.
	if (useTemplate && options.dataDir !== undefined) {
		await unpackTemplate(templatePath(options.assetsDir), options.dataDir);
	}
	const template = useTemplate && options.dataDir === undefined ? templateBlob(options.assetsDir) : undefined;
	let pglite: PGlite;
	try {
		pglite = await PGlite.create({
			...assets,
			startParams: [
				...PGlite.defaultStartParams,
				'-c',
				`shared_buffers=${options.bufferPool ?? bufferPoolFor(options.dataDir)}`,
				'-c',
				`max_connections=${maxConnections}`,
			],
			extensions: { pg_trgm: trigramBundle(options.assetsDir) },
			...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
			...(template !== undefined ? { loadDataDir: template } : {}),
		});
	} catch (e) {
		if (options.dataDir === undefined || fresh) {
			throw e;
		}
		const why = e instanceof Error ? e.message : String(e);
		throw refusal(options.dataDir, `PostgreSQL could not start on it (${why.split('\n')[0]?.slice(0, 200)})`);
	}
	// Prepared hot statements must keep their generic plan: a custom plan re-plans the claim CTE on every
	// call (measured 8.9 ms planning against 0.5 ms executing).
	await pglite.exec('SET plan_cache_mode = force_generic_plan');
	const statements = new Map<string, PreparedEntry>();
	// Every call into the instance goes through inFlight, so the lock-free path knows when it is alone.
	const inFlight = new InFlight();
	const tracked: PgliteTarget = {
		query: (text, params) => inFlight.run(() => pglite.query(text, params)),
		exec: sql => inFlight.run(() => pglite.exec(sql)),
	};
	const wire = options.wire !== false;
	const root = new PgliteQueryable(tracked, statements, { pglite, inFlight, wire });
	const db: Db = {
		mode: 'pglite',
		query: (text, params, name) => root.query(text, params, name),
		transaction: fn => inFlight.run(() => pglite.transaction(tx => fn(new PgliteQueryable(tx, statements)))),
		exec: sql =>
			inFlight.run(async () => {
				try {
					await pglite.exec(sql);
				} catch (e) {
					// A failed script inside BEGIN leaves the session aborted: end it before anyone else queries.
					await pglite.exec('ROLLBACK').catch(() => undefined);
					throw e;
				}
			}),
		close: () => inFlight.run(() => pglite.close()),
		prepare: async list => {
			if (wire) {
				for (const { name, text } of list) {
					await root.prepareOutside(name, text);
				}
			}
		},
	};
	const dataDir = options.dataDir;
	return {
		db: withInjectedFault(db, pglite),
		dumpDataDir: () => inFlight.run(() => pglite.dumpDataDir('gzip')),
		fresh,
		unmarked,
		notices,
		markReady(): void {
			if (dataDir !== undefined && (fresh || unmarked)) {
				markDataDirReady(dataDir);
			}
		},
	};
}

/**
 * Test builds only: `BATON_TEST_STORE_FAULT=panic-after:N` makes the N-th write after open (a write
 * transaction, or a one-statement write: the hot claim, complete or single-card create) fail as PGlite
 * reports a PANIC and closes the instance under it, so every later call fails like a dead backend;
 * `hang-after:N` makes it spin synchronously forever, as PGlite did on a full disk. The hub's fault
 * handling and watchdog are proved with these (test/mcp-server/diskFull.test.ts).
 */
function withInjectedFault(db: Db, pglite: PGlite): Db {
	const spec = /^(panic|hang)-after:(\d+)$/.exec(process.env.BATON_TEST_STORE_FAULT ?? '');
	if (spec === null) {
		return db;
	}
	const kind = spec[1];
	let left = Number(spec[2]);
	const fail = async (): Promise<never> => {
		if (kind === 'hang') {
			for (;;) {
				// A synchronous spin: nothing on this thread runs again.
			}
		}
		await pglite.close();
		const panic = Object.assign(new Error('could not write to file "pg_wal/xlogtemp": Input/output error'), {
			severity: 'PANIC',
			code: '58030',
		});
		throw panic;
	};
	return {
		...db,
		transaction: async fn => (--left >= 0 ? db.transaction(fn) : fail()),
		query: async (text, params, name) =>
			!oneStatementWrite.test(text) || --left >= 0 ? db.query(text, params, name) : fail(),
	};
}

/** A statement that writes by itself, outside a transaction of ours (the fault's count, above). */
const oneStatementWrite = /^\s*WITH\b[\s\S]*\b(INSERT|UPDATE|DELETE)\b/i;
