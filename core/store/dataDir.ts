/**
 * What to do with a PGlite data dir before opening it. Baton never deletes a store, and never replaces
 * one it could open: the only dir it moves aside is its own first init that provably did not finish
 * (it wrote the init marker before starting and never wrote the ready marker), and that goes to a
 * timestamped folder nothing deletes. Everything else with content is opened and checked, or refused
 * with a sentence naming the dir. Plain file-system checks; opening the store is pglite.ts's job.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { BatonError } from '../errors';

/**
 * Written once the first open of a data dir has fully finished (template loaded, migrations applied).
 * Its absence alone proves nothing: a copy or a clean-up may have dropped it.
 */
export const readyMarker = 'baton-ready';

/**
 * Written into the empty dir before a first init starts, removed once the ready marker is written.
 * Init marker without ready marker: Baton's own first init was cut short, so no write was ever
 * acknowledged from this dir and it may be set aside. Beside the ready marker (a kill between the two
 * steps) it means nothing and is removed at the next open.
 */
export const initMarker = 'baton-init';

/** PostgreSQL's own file at the top of every data dir it created. */
const pgVersionFile = 'PG_VERSION';

export type DataDirState =
	/** Absent or empty: a first init. */
	| { kind: 'new' }
	/** Initialised by Baton: open it. */
	| { kind: 'ready' }
	/** PostgreSQL's files without Baton's marker: open it, check it is a Baton backlog, re-mark it. */
	| { kind: 'unmarked' }
	/** Baton's own first init, cut short: set aside and start over. */
	| { kind: 'partial' };

/** Reads the dir's state; throws a BatonError naming the dir when it holds something Baton must not touch. */
export function dataDirState(dataDir: string): DataDirState {
	if (!existsSync(dataDir)) {
		return { kind: 'new' };
	}
	let entries: string[];
	try {
		entries = readdirSync(dataDir);
	} catch (e) {
		throw refusal(dataDir, `it cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
	}
	if (entries.includes(readyMarker)) {
		return { kind: 'ready' };
	}
	if (entries.includes(initMarker)) {
		return { kind: 'partial' };
	}
	if (entries.length === 0) {
		return { kind: 'new' };
	}
	if (entries.includes(pgVersionFile)) {
		return { kind: 'unmarked' };
	}
	if (['pgdata', 'run', 'backups'].some(e => entries.includes(e))) {
		throw refusal(
			dataDir,
			'it looks like a Baton data dir (run/, pgdata/, backups/), not the PGlite directory inside one',
			`Set BATON_DATA_DIR to ${join(dataDir)} instead`,
		);
	}
	const shown = entries.slice(0, 3).join(', ') + (entries.length > 3 ? ', …' : '');
	throw refusal(dataDir, `it holds files that are not a PostgreSQL store (${shown})`);
}

/** The refusal every unusable dir gets: what is wrong, that nothing changed, what to do. */
export function refusal(dataDir: string, why: string, todo?: string): BatonError {
	return new BatonError(
		'store_refused',
		`Baton will not open the data dir ${dataDir}: ${why}. Nothing was changed. ${
			todo ??
			'Move it away, or point BATON_DATA_DIR at another folder, or bring a backup back with `baton restore FILE`'
		}.`,
		{ dataDir },
	);
}

export interface PreparedDataDir {
	/** True when the dir is to be created from scratch now. */
	fresh: boolean;
	/** True when the dir holds a store whose ready marker is missing: check it before anything else. */
	unmarked: boolean;
	/** Sentences for the log and for clients (hub/status notices). */
	notices: string[];
}

/** Prepares `dataDir` for opening. Never loops: at most one move aside, then a fresh init. */
export function prepareDataDir(dataDir: string, now: Date = new Date()): PreparedDataDir {
	const state = dataDirState(dataDir);
	const notices: string[] = [];
	switch (state.kind) {
		case 'ready':
			// Killed between markDataDirReady's two steps: the ready marker proves the init finished.
			rmSync(join(dataDir, initMarker), { force: true });
			return { fresh: false, unmarked: false, notices };
		case 'unmarked':
			return { fresh: false, unmarked: true, notices };
		case 'partial': {
			const aside = asidePath(dataDir, 'partial', now);
			renameSync(dataDir, aside);
			notices.push(
				`The data dir ${dataDir} held a first initialisation that was cut short before it ever served a request; it was moved to ${aside} (Baton never deletes it) and a new store was created.`,
			);
			break;
		}
		case 'new':
			break;
	}
	mkdirSync(dataDir, { recursive: true, mode: 0o700 });
	writeFileSync(join(dataDir, initMarker), `${now.toISOString()}\n`, { flush: true });
	return { fresh: true, unmarked: false, notices };
}

/** Marks a dir as fully initialised: ready marker first, then the init marker goes. */
export function markDataDirReady(dataDir: string, now: Date = new Date()): void {
	writeFileSync(join(dataDir, readyMarker), `${now.toISOString()}\n`, { flush: true });
	rmSync(join(dataDir, initMarker), { force: true });
}

/** `<dir>.<what>-<UTC stamp>`, with a counter when that exists already: never overwrites anything. */
export function asidePath(dataDir: string, what: string, now: Date): string {
	const stamp = now
		.toISOString()
		.replace(/[-:]/g, '')
		.replace(/\.\d+Z$/, 'Z');
	let path = `${dataDir}.${what}-${stamp}`;
	for (let n = 1; existsSync(path); n++) {
		path = `${dataDir}.${what}-${stamp}-${n}`;
	}
	return path;
}
