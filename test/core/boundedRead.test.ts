/**
 * Bounded reads and whole-file writes on real files, devices, FIFOs and sockets:
 * a limit enforced while reading (stat().size is 0 for /dev/zero), non-regular files refused at once
 * (a FIFO without a writer must not hang), symlinks out of a folder recognised, and a write that
 * fails leaves no file behind.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';

import { gunzipBounded, leavesFolder, readBounded, readBoundedText } from '../../core/files/boundedRead';
import { BatonError } from '../../core/errors';
import { writeFileWhole } from '../../core/files/wholeFile';

let dir: string;

before(() => {
	dir = mkdtempSync(join(tmpdir(), 'bt-read-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `read` and returns the BatonError it threw, checking it came within `ms`. */
function refusal(read: () => unknown, ms = 5_000): BatonError {
	const started = Date.now();
	try {
		read();
	} catch (e) {
		assert.ok(Date.now() - started < ms, `refused after ${Date.now() - started} ms`);
		assert.ok(BatonError.is(e), `not a BatonError: ${String(e)}`);
		return e;
	}
	assert.fail('the read was not refused');
}

describe('readBounded', () => {
	it('reads a regular file up to its limit and refuses one byte more', () => {
		const file = join(dir, 'exact.txt');
		writeFileSync(file, 'x'.repeat(1000));
		assert.equal(readBoundedText(file, { maxBytes: 1000 }).length, 1000);
		const e = refusal(() => readBounded(file, { maxBytes: 999, what: 'the plan file' }));
		assert.equal(e.code, 'too_large');
		assert.match(e.message, /^The plan file .*exact\.txt is larger than 0\.9\d* KiB, the most Baton reads there/);
	});

	it('refuses /dev/zero at once, whose size says 0', () => {
		const e = refusal(() => readBounded('/dev/zero', { maxBytes: 4 * 1024 * 1024, what: 'the secret file' }));
		assert.equal(e.code, 'invalid_input');
		assert.equal(
			e.message,
			'The secret file /dev/zero is a character device, not a regular file; Baton reads only regular files there.',
		);
	});

	it('refuses a FIFO without waiting for a writer', () => {
		const fifo = join(dir, 'fifo');
		execFileSync('mkfifo', [fifo]);
		const e = refusal(() => readBounded(fifo, { maxBytes: 1024 }), 1_000);
		assert.match(e.message, /is a FIFO \(named pipe\), not a regular file/);
	});

	it('refuses a socket and a folder', async () => {
		const path = join(dir, 'sock');
		const server = createServer();
		await new Promise<void>(resolve => server.listen(path, resolve));
		try {
			assert.match(refusal(() => readBounded(path, { maxBytes: 1024 })).message, /is a socket, not a regular file/);
		} finally {
			server.close();
		}
		assert.match(refusal(() => readBounded(dir, { maxBytes: 1024 })).message, /is a folder, not a regular file/);
	});

	it('names a missing file', () => {
		const e = refusal(() => readBounded(join(dir, 'missing'), { maxBytes: 1024, what: 'the backup' }));
		assert.match(e.message, /^Cannot read the backup .*missing: ENOENT\.$/);
	});
});

describe('leavesFolder', () => {
	it('tells links that stay in the folder from links that leave it', () => {
		const root = join(dir, 'project');
		mkdirSync(join(root, 'tasks'), { recursive: true });
		writeFileSync(join(root, 'tasks', 'a.md'), 'a');
		writeFileSync(join(dir, 'outside.md'), 'secret');
		symlinkSync(join(root, 'tasks', 'a.md'), join(root, 'tasks', 'inside-link.md'));
		symlinkSync(join(dir, 'outside.md'), join(root, 'tasks', 'outside-link.md'));
		symlinkSync('/dev/zero', join(root, 'tasks', 'zero.md'));
		symlinkSync(join(dir, 'nowhere'), join(root, 'tasks', 'dangling.md'));
		assert.equal(leavesFolder(join(root, 'tasks', 'a.md'), root), false);
		assert.equal(leavesFolder(join(root, 'tasks', 'inside-link.md'), root), false);
		assert.equal(leavesFolder(join(root, 'tasks', 'outside-link.md'), root), true);
		assert.equal(leavesFolder(join(root, 'tasks', 'zero.md'), root), true);
		assert.equal(leavesFolder(join(root, 'tasks', 'dangling.md'), root), true);
	});
});

describe('gunzipBounded', () => {
	it('decompresses whole streams and refuses a cut one', () => {
		const data = gzipSync('hello\n'.repeat(1000));
		assert.equal(gunzipBounded(data).length, 6000);
		assert.match(
			refusal(() => gunzipBounded(data.subarray(0, 20), 'The backup')).message,
			/^The backup .*cannot be decompressed/,
		);
	});
});

describe('writeFileWhole', () => {
	it('writes every byte, leaves no temp file and replaces the target', () => {
		const out = join(dir, 'out');
		mkdirSync(out);
		const big = Buffer.alloc(3 * 1024 * 1024 + 7, 'a');
		assert.equal(writeFileWhole(join(out, 'x.jsonl'), big), big.length);
		assert.equal(writeFileWhole(join(out, 'x.jsonl'), 'second\n'), 7);
		assert.equal(readFileSync(join(out, 'x.jsonl'), 'utf8'), 'second\n');
		assert.deepEqual(readdirSync(out), ['x.jsonl']);
	});

	it('says in one line why it could not write, and leaves nothing', () => {
		const e = refusal(() => writeFileWhole(join(dir, 'no-such-dir', 'x.jsonl'), 'x'));
		assert.equal(e.code, 'invalid_input');
		assert.match(e.message, /^Cannot write .*x\.jsonl \(ENOENT\); nothing was written there\.$/);
	});
});
