/**
 * Bounded reads of files a user names: imports, restore, plan and body files, secret
 * files. Each read has a byte limit that is enforced while reading (never trusted from `stat().size`,
 * which is 0 for devices, FIFOs and /proc files); a path must be a regular file (a FIFO is opened
 * with O_NONBLOCK, so it is refused at once instead of waiting for a writer); and a file found inside
 * a folder being imported may be refused when a symlink leads it out of that folder. Stdin ("-") is
 * read with the same limit, from a pipe, a file or a terminal, never a device. Node only; knows nothing of formats; every refusal is one `BatonError`.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync, type Stats } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import { isatty } from 'node:tty';
import { gunzipSync } from 'node:zlib';

import { BatonError } from '../errors';

const mib = 1024 * 1024;

/** A secret file holds one line; 64 KiB is far beyond any HMAC secret. */
export const maxSecretBytes = 64 * 1024;
/** A plan (`create --file`) or body file: past the 8 MB a message may be, so the hub names that limit. */
export const maxPlanBytes = 64 * mib;
/** A full backup or JSONL export (restore, import FILE): past the largest string Node can decode. */
export const maxBackupBytes = 512 * mib;

export interface BoundedReadOptions {
	/** Refuse past this many bytes (the read stops one byte later). */
	maxBytes: number;
	/** What the file is for messages: "the secret file", "the plan file" (default "the file"). */
	what?: string;
}

/** Reads `path` ("-" = stdin) to a Buffer, or throws one BatonError saying why it was refused. */
export function readBounded(path: string, options: BoundedReadOptions): Buffer {
	if (path === '-') {
		// A pipe, a file or a terminal; a device such as /dev/zero behind `<` would only fill the limit.
		const stats = fstatSync(0);
		if ((stats.isCharacterDevice() && !isatty(0)) || stats.isBlockDevice()) {
			throw notRegular(path, stats, options);
		}
		return readFd(0, '-', options, true);
	}
	let fd: number;
	try {
		// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer for ever.
		fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
	} catch (e) {
		throw cannotRead(path, e, options);
	}
	try {
		const stats = fstatSync(fd);
		if (!stats.isFile()) {
			throw notRegular(path, stats, options);
		}
		return readFd(fd, path, options, false);
	} finally {
		closeSync(fd);
	}
}

/** `readBounded` as UTF-8 text. */
export function readBoundedText(path: string, options: BoundedReadOptions): string {
	return readBounded(path, options).toString('utf8');
}

/**
 * Whether `path` (a name inside `folder`) resolves, through symlinks, to somewhere outside `folder`.
 * A dangling link counts as outside: there is nothing in the folder to read.
 */
export function leavesFolder(path: string, folder: string): boolean {
	let real: string;
	try {
		real = realpathSync(path);
	} catch {
		return true;
	}
	let root: string;
	try {
		root = realpathSync(folder);
	} catch {
		return true;
	}
	const rel = relative(root, real);
	return rel === '' || rel.startsWith('..') || isAbsolute(rel);
}

/** Whether `path` itself is a symlink (not following it). */
export function isSymlink(path: string): boolean {
	try {
		return lstatSync(path).isSymbolicLink();
	} catch {
		return false;
	}
}

/**
 * Decompresses gzip `data` to at most `maxBackupBytes` (a small file must not inflate without bound);
 * a truncated or corrupt stream is an `invalid_input` error.
 */
export function gunzipBounded(data: Buffer, what = 'The file'): Buffer {
	try {
		return gunzipSync(data, { maxOutputLength: maxBackupBytes });
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
			throw new BatonError(
				'too_large',
				`${what} decompresses to more than ${sizeText(maxBackupBytes)}, the most Baton reads; nothing was changed.`,
			);
		}
		throw new BatonError('invalid_input', `${what} looks gzip-compressed but cannot be decompressed (truncated?).`);
	}
}

/** What kind of thing a non-regular file is, for messages. */
export function fileKind(stats: Stats): string {
	if (stats.isDirectory()) {
		return 'a folder';
	}
	if (stats.isFIFO()) {
		return 'a FIFO (named pipe)';
	}
	if (stats.isCharacterDevice()) {
		return 'a character device';
	}
	if (stats.isBlockDevice()) {
		return 'a block device';
	}
	if (stats.isSocket()) {
		return 'a socket';
	}
	return 'not a regular file';
}

function readFd(fd: number, path: string, options: BoundedReadOptions, stdin: boolean): Buffer {
	const chunks: Buffer[] = [];
	let total = 0;
	for (;;) {
		// One byte past the limit tells "exactly the limit" from "more".
		const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, options.maxBytes + 1 - total));
		let n: number;
		try {
			n = readSync(fd, chunk, 0, chunk.length, null);
		} catch (e) {
			const code = (e as NodeJS.ErrnoException).code;
			if (code === 'EAGAIN' && stdin) {
				// A non-blocking stdin pipe with nothing in it yet: wait a moment for the writer.
				Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
				continue;
			}
			if (code === 'EOF') {
				break; // Windows' end of a pipe
			}
			throw cannotRead(path, e, options);
		}
		if (n === 0) {
			break;
		}
		chunks.push(chunk.subarray(0, n));
		total += n;
		if (total > options.maxBytes) {
			throw tooLarge(path, options);
		}
	}
	return Buffer.concat(chunks, total);
}

function label(path: string, options: BoundedReadOptions): string {
	const what = options.what ?? 'the file';
	return path === '-' ? `${what} on stdin` : `${what} ${path}`;
}

function sizeText(bytes: number): string {
	return bytes >= mib ? `${bytes / mib} MiB` : `${bytes / 1024} KiB`;
}

function tooLarge(path: string, options: BoundedReadOptions): BatonError {
	return new BatonError(
		'too_large',
		`${capital(label(path, options))} is larger than ${sizeText(options.maxBytes)}, the most Baton reads there; nothing was changed.`,
		{ file: path, maxBytes: options.maxBytes },
	);
}

function notRegular(path: string, stats: Stats, options: BoundedReadOptions): BatonError {
	const only = path === '-' ? 'a pipe, a file or a terminal' : 'regular files';
	return new BatonError(
		'invalid_input',
		`${capital(label(path, options))} is ${fileKind(stats)}, not a regular file; Baton reads only ${only} there.`,
		{ file: path },
	);
}

function cannotRead(path: string, e: unknown, options: BoundedReadOptions): BatonError {
	const code = (e as NodeJS.ErrnoException).code;
	if (code === 'ENXIO') {
		// open() of a Unix socket.
		return new BatonError(
			'invalid_input',
			`${capital(label(path, options))} is a socket, not a regular file; Baton reads only regular files there.`,
			{ file: path },
		);
	}
	return new BatonError(
		'invalid_input',
		`Cannot read ${label(path, options)}: ${code ?? (e instanceof Error ? e.message : String(e))}.`,
		{ file: path, ...(code === undefined ? {} : { errno: code }) },
	);
}

function capital(text: string): string {
	return text.charAt(0).toUpperCase() + text.slice(1);
}
