/**
 * How much buffer pool (shared_buffers) a PGlite store gets, from the size of its relation files at
 * open. PostgreSQL asks for its shared memory once, at start; PGlite's Emscripten `mmap`
 * zero-fills it, so all of it is resident from the first second, used or not: a fixed 64 MB pool made
 * a ten-card hub pay for a 100k-card backlog's hot pages. Node only (reads the data dir); decides,
 * never opens anything.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The pool a 100k-card backlog needs (32 MB began to slow its claims; docs/benchmarks.md). */
export const largePool = '64MB';

/** The pool of a smaller store: half the large one, about 32 MB less resident from the first second. */
export const smallPool = '32MB';

/**
 * The pool for a store whose relation files (`base/`) hold `bytes`: 32 MB below 24 MB of data, else
 * 64 MB. Not less than 32 MB: a store that grows past its pool keeps it until the hub starts again
 * (PostgreSQL cannot resize it while running), and a fresh hub that is handed 20,000 cards at once
 * (the fleet bench) must not claim from a 16 MB pool; the hub restarts after its idle minutes anyway.
 */
export function poolForBytes(bytes: number): string {
	return bytes < 24 * 1024 * 1024 ? smallPool : largePool;
}

/** The pool for the data dir `dataDir` (a fresh dir: its template's size); in memory: the large one. */
export function bufferPoolFor(dataDir: string | undefined): string {
	return dataDir === undefined ? largePool : poolForBytes(sizeOf(join(dataDir, 'base')));
}

/** Bytes of the files under `dir` (0 when it does not exist). */
function sizeOf(dir: string): number {
	let total = 0;
	let entries;
	try {
		entries = readdirSync(dir, { withFileTypes: true });
	} catch {
		return 0;
	}
	for (const e of entries) {
		const path = join(dir, e.name);
		if (e.isDirectory()) {
			total += sizeOf(path);
		} else if (e.isFile()) {
			try {
				total += statSync(path).size;
			} catch {
				// removed meanwhile: not part of the store any more
			}
		}
	}
	return total;
}
