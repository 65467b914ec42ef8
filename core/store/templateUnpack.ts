/**
 * Writes the pre-built empty database (template.tar.gz, a gzipped dumpDataDir tar whose paths are
 * relative to the data dir) into a new PGlite data dir as a stream: gunzip and tar are read block
 * by block and each file written as it passes. Handing PGlite the whole tar instead (loadDataDir)
 * held three copies of its 25 MB at once (the gunzipped buffer, the Blob, PGlite's ArrayBuffer), and
 * the C heap they were allocated from stayed resident for the hub's whole life (+~100 MB of idle RSS
 * after a first start; docs/benchmarks.md). Only regular files and directories; refuses paths that
 * leave the dir. Does not decide when a dir is new: dataDir.ts does.
 */
import { closeSync, createReadStream, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';

const block = 512;

/** Unpacks `templateGz` into `dataDir` (which exists and holds no database yet). */
export async function unpackTemplate(templateGz: string, dataDir: string): Promise<void> {
	let pending: Buffer = Buffer.alloc(0);
	let fd: number | null = null;
	let left = 0; // bytes of the current file still to write
	let skip = 0; // padding to the next 512-byte boundary
	let ended = false;

	const target = (name: string): string => {
		const relative = normalize(name.replace(/^\/+/, ''));
		if (relative.startsWith('..') || relative.startsWith('/')) {
			throw new Error(`template entry leaves the data dir: ${name}`);
		}
		return join(dataDir, relative);
	};
	const field = (header: Buffer, start: number, length: number): string =>
		header
			.subarray(start, start + length)
			.toString('utf8')
			.replace(/\0.*$/s, '');

	const consume = (): void => {
		for (;;) {
			if (fd !== null && left > 0) {
				const n = Math.min(left, pending.length);
				if (n === 0) {
					return;
				}
				writeSync(fd, pending, 0, n);
				pending = pending.subarray(n);
				left -= n;
				if (left > 0) {
					return;
				}
			}
			if (fd !== null) {
				closeSync(fd);
				fd = null;
			}
			if (skip > 0) {
				const n = Math.min(skip, pending.length);
				pending = pending.subarray(n);
				skip -= n;
				if (skip > 0) {
					return;
				}
			}
			if (ended || pending.length < block) {
				return;
			}
			const header = pending.subarray(0, block);
			pending = pending.subarray(block);
			if (header.every(b => b === 0)) {
				ended = true;
				return;
			}
			const name = `${field(header, 345, 155)}${field(header, 0, 100)}`;
			const size = parseInt(field(header, 124, 12).trim() || '0', 8);
			const type = field(header, 156, 1);
			if (type === '5') {
				mkdirSync(target(name), { recursive: true, mode: 0o700 });
			} else if (type === '0' || type === '') {
				const path = target(name);
				mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
				fd = openSync(path, 'w', 0o600);
				left = size;
			} else {
				throw new Error(`template entry of an unexpected type (${type}): ${name}`);
			}
			skip = (block - (size % block)) % block;
			if (type === '5') {
				skip += size; // a directory has no data; skip any all the same
			}
		}
	};

	const sink = new Writable({
		write(chunk: Buffer, _encoding, done) {
			try {
				pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
				consume();
				done();
			} catch (e) {
				done(e as Error);
			}
		},
	});
	const closeOpenFile = (): void => {
		if (fd !== null) {
			closeSync(fd);
			fd = null;
		}
	};
	try {
		await pipeline(createReadStream(templateGz), createGunzip(), sink);
	} finally {
		closeOpenFile();
	}
	// A closure sets it while the stream runs, which the checker's narrowing does not see.
	const finished = (): boolean => ended;
	if (!finished()) {
		throw new Error(`${templateGz} ended before its last entry`);
	}
}
