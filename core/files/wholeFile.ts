/**
 * Whole files or none: every file Baton writes for a user (backups, exports, configs)
 * goes to a temp file beside its target, every byte is written (a short write is continued, never
 * ignored), the size is checked, the data fsynced, and only then renamed over the target. Any failure
 * removes the temp file and throws one `BatonError` sentence (`disk_full` for ENOSPC), so a full disk
 * never leaves a truncated file that looks like a good one. Node only; knows nothing of formats.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fstatSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

import { BatonError } from '../errors';

/** Writes all of `data` at the fd's position, continuing after short writes. */
export function writeAll(fd: number, data: Buffer): void {
	let done = 0;
	while (done < data.length) {
		const n = writeSync(fd, data, done, data.length - done);
		if (n <= 0) {
			// POSIX never returns 0 for a regular file with room; treat it as the disk refusing more.
			throw Object.assign(new Error('the write made no progress'), { code: 'ENOSPC' });
		}
		done += n;
	}
}

export interface WholeFileOptions {
	/** The new file's permission bits, set exactly whatever the umask (to keep a replaced file's mode). */
	mode?: number;
	/** The bits a new file is created with, under the umask; default 0600: backups hold the whole backlog. */
	createMode?: number;
}

/**
 * Writes `data` to `path` whole or not at all; returns the bytes written. Throws a `BatonError`
 * naming the path and the reason (`disk_full` when the disk or quota is full), having left no file.
 */
export function writeFileWhole(path: string, data: Buffer | string, options: WholeFileOptions = {}): number {
	const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
	const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.tmp`);
	let fd: number;
	try {
		fd = openSync(tmp, 'wx', options.createMode ?? 0o600);
	} catch (e) {
		throw writeError(path, e);
	}
	try {
		if (options.mode !== undefined) {
			fchmodSync(fd, options.mode);
		}
		writeAll(fd, bytes);
		const size = fstatSync(fd).size;
		if (size !== bytes.length) {
			throw Object.assign(new Error(`${size} of ${bytes.length} bytes reached the disk`), { code: 'EIO' });
		}
		fsyncSync(fd);
		closeSync(fd);
		fd = -1;
		renameSync(tmp, path);
	} catch (e) {
		if (fd >= 0) {
			closeQuietly(fd);
		}
		removeQuietly(tmp);
		throw writeError(path, e);
	}
	syncDir(dirname(path));
	return bytes.length;
}

/** The one-line reason a write failed, as the error the CLI prints and the hub answers. */
export function writeError(path: string, e: unknown): BatonError {
	if (BatonError.is(e)) {
		return e;
	}
	const code = (e as NodeJS.ErrnoException).code;
	if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'EFBIG') {
		return new BatonError(
			'disk_full',
			`Cannot write ${path}: the disk is full (${code}). Nothing was written there; free some space or choose another place.`,
			{ path, errno: code },
		);
	}
	const why = code ?? (e instanceof Error ? e.message : String(e));
	return new BatonError('invalid_input', `Cannot write ${path} (${why}); nothing was written there.`, {
		path,
		...(code === undefined ? {} : { errno: code }),
	});
}

/** The rename is durable once the folder's entry is: best effort (some filesystems refuse a dir fsync). */
function syncDir(dir: string): void {
	let fd: number | undefined;
	try {
		fd = openSync(dir, 'r');
		fsyncSync(fd);
	} catch {
		// Not supported here; the file's own data is already synced.
	} finally {
		if (fd !== undefined) {
			closeQuietly(fd);
		}
	}
}

function closeQuietly(fd: number): void {
	try {
		closeSync(fd);
	} catch {
		// Already failing; the caller reports the first error.
	}
}

function removeQuietly(path: string): void {
	try {
		unlinkSync(path);
	} catch {
		// Never created, or already gone.
	}
}
