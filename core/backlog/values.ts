/** Narrowing and conversion of values read from the store. Pure; decides nothing. */
import { BatonError } from '../errors';

export const toDate = (iso: string | null): Date | null => (iso === null ? null : new Date(iso));

/** Narrows a value the surrounding logic guarantees; a miss is a bug, reported as `internal`. */
export function present<T>(value: T | null | undefined): T {
	if (value === null || value === undefined) {
		throw new BatonError('internal', 'Baton lost track of a value it had just read; please report this.');
	}
	return value;
}

/** node-postgres returns bigint as a string, PGlite as a number. */
export const num = (v: unknown): number => Number(v);

/** A timestamp read from the store (a Date from node-postgres and PGlite, or text) as ISO-8601. */
export const toIso = (v: Date | string): string => (v instanceof Date ? v : new Date(v)).toISOString();
