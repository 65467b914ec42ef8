/**
 * Free space on the filesystem that holds a PGlite store, and the `disk_full` sentence users see.
 * PGlite cannot survive running out of space mid-write: a failed WAL write left it spinning inside
 * its WASM call (measured: 100 % CPU, no answer, until killed). So Baton keeps a reserve free and
 * refuses writes before PostgreSQL could hit ENOSPC. Used by the hub (before writes, at start) and by
 * clients (when a hub they started exits without a word, because its log could not be written).
 * Node only (statfs); never imported by the webview.
 */
import { statSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { BatonError } from '../errors';

const mib = 1024 * 1024;

/**
 * Free space a write needs beyond its own size: PostgreSQL creates its WAL in 16 MiB segments, and a
 * write that needs a new segment must find the whole segment free, plus room for the heap, TOAST
 * and index pages the write adds.
 */
export const writeReserveBytes = 32 * mib;
/**
 * A request of N bytes may write about this many times N, nearly all of it WAL. Card
 * text goes into a trigram GIN index (card_text, migration 0012): each distinct trigram of a body is
 * an index insert with its own WAL record, and PGlite has no checkpointer, so the WAL is not recycled
 * before 1 GB. Measured on PGlite, `card/create` of 100 cards × 20 KB of random base64 (the worst
 * case: about one new trigram per byte): 42–67× in WAL and 50–72× on disk over the first 8 MB of
 * text, rising to 84–108× as the index grows to 14 MB of text; one 60 KB card: 15–20× on disk, with
 * a new 16 MiB WAL segment every few cards. Ordinary prose: 0.3×. 128 covers the worst measured.
 */
export const writeGrowthFactor = 128;
/**
 * The disk counts as full (the `disk_full` store state every face shows) when a request of this size,
 * one card with the largest body, could not be written; a larger request refused with more free is
 * refused alone, with a sentence saying a smaller one may fit.
 */
export const fullDiskProbeBytes = 64 * 1024;
/** Free space a hub needs to open a store: WAL replay and the end-of-recovery checkpoint. */
export const startReserveBytes = 16 * mib;

/** Bytes available to an unprivileged writer on the filesystem of `path` (or its nearest existing parent). */
export function freeBytes(path: string): number {
	const stats = statfsSync(existingAncestor(path));
	return stats.bavail * stats.bsize;
}

/** The bytes a write of a `requestBytes` request needs free before it may start. */
export function bytesNeededToWrite(requestBytes: number): number {
	return writeReserveBytes + writeGrowthFactor * requestBytes;
}

/** The mount point of the filesystem holding `path`: the highest ancestor on the same device. */
export function mountPointOf(path: string): string {
	let dir = existingAncestor(path);
	const device = statSync(dir).dev;
	for (;;) {
		const parent = dirname(dir);
		if (parent === dir || statSync(parent).dev !== device) {
			return dir;
		}
		dir = parent;
	}
}

/**
 * `disk_full` with a sentence naming the filesystem, what is free, what Baton keeps free and what to
 * do. `forStart`: the hub refuses to start rather than refusing a write.
 */
export function diskFullError(
	path: string,
	free: number,
	needed: number,
	forStart = false,
	smallerMayFit = false,
): BatonError {
	let where = path;
	try {
		where = mountPointOf(path);
	} catch {
		// The sentence still names the data dir.
	}
	const what = forStart
		? 'The Baton hub cannot start: the disk holding the backlog is full'
		: 'The Baton backlog refuses writes: the disk holding it is full';
	const resume = forStart
		? 'then run the command again.'
		: smallerMayFit
			? 'a smaller request (fewer or shorter cards) may still fit, and reads keep working.'
			: 'writes resume by themselves within seconds, and reads keep working meanwhile.';
	return new BatonError(
		'disk_full',
		`${what} (${where} has ${megabytes(free)} free; Baton keeps ${megabytes(needed)} free so a write can always finish). Free some space on ${where}, or move the backlog to a larger disk with BATON_DATA_DIR; ${resume}`,
		{ filesystem: where, freeBytes: free, neededBytes: needed },
	);
}

/** Throws `disk_full` when the filesystem of `path` has less than `needed` bytes free. */
export function checkFreeSpace(path: string, needed: number, forStart = false): void {
	const free = freeBytes(path);
	if (free < needed) {
		throw diskFullError(path, free, needed, forStart);
	}
}

function megabytes(bytes: number): string {
	return `${(bytes / mib).toFixed(bytes < 10 * mib ? 1 : 0)} MB`;
}

function existingAncestor(path: string): string {
	let dir = path;
	for (;;) {
		try {
			statSync(dir);
			return dir;
		} catch {
			const parent = dirname(dir);
			if (parent === dir) {
				return dir;
			}
			dir = parent;
		}
	}
}
