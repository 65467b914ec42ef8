/**
 * The buffer pool a PGlite store gets from its size at open: the small pool for a small
 * backlog, the large one once its relation files pass 24 MB, the large one in memory; a fresh dir is judged by its
 * template's files. Real files in a temp dir; no PGlite needed to decide.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { bufferPoolFor, largePool, poolForBytes, smallPool } from '../../core/store/bufferPool';

const MB = 1024 * 1024;

describe('the buffer pool from the store size', () => {
	const temp = mkdtempSync(join(tmpdir(), 'baton-pool-'));
	after(() => rmSync(temp, { recursive: true, force: true }));

	it('takes the large pool from 24 MB of relation files on', () => {
		assert.deepEqual([0, 8 * MB, 23.9 * MB, 24 * MB, 900 * MB].map(poolForBytes), [
			smallPool,
			smallPool,
			smallPool,
			largePool,
			largePool,
		]);
	});

	it('sums the files under base/ of a data dir, and takes the large pool in memory', () => {
		assert.equal(bufferPoolFor(undefined), largePool);
		assert.equal(bufferPoolFor(join(temp, 'none')), smallPool);
		const dir = join(temp, 'store');
		mkdirSync(join(dir, 'base', '5'), { recursive: true });
		mkdirSync(join(dir, 'pg_wal'), { recursive: true });
		writeFileSync(join(dir, 'pg_wal', 'big'), Buffer.alloc(30 * MB)); // not relation data
		writeFileSync(join(dir, 'base', '5', '16384'), Buffer.alloc(10 * MB));
		assert.equal(bufferPoolFor(dir), smallPool);
		writeFileSync(join(dir, 'base', '5', '16385'), Buffer.alloc(15 * MB));
		assert.equal(bufferPoolFor(dir), largePool);
	});
});
