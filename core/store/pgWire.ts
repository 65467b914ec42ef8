/**
 * Rows out of a PostgreSQL backend's reply to one simple-protocol Query, read straight from the
 * bytes. PGlite's own path decodes every message into objects (a general parser with private-field
 * accessors) and then maps them again into results; for the hub's hot statements, which return one
 * small row, that was most of the JavaScript cost of a statement (docs/benchmarks.md). Errors are
 * rare, so an ErrorResponse is handed to PGlite's own protocol parser, and the caller gets the very
 * DatabaseError that PGlite would have thrown.
 */
import { protocol } from '@electric-sql/pglite';

/** Turns a column's text into its JavaScript value (PGlite's `parsers`, keyed by type OID). */
export type TypeParsers = Record<number | string, ((text: string, typeId: number) => unknown) | undefined>;

interface Column {
	name: string;
	typeId: number;
}

const utf8 = new TextDecoder();

const enum Message {
	RowDescription = 0x54, // 'T'
	DataRow = 0x44, // 'D'
	CommandComplete = 0x43, // 'C'
	ErrorResponse = 0x45, // 'E'
}

/**
 * The rows of the last result set in `reply` (every backend message PostgreSQL sent for one Query),
 * as objects keyed by column name; throws the statement's DatabaseError if it failed.
 */
export function rowsOfReply<T>(reply: Uint8Array, parsers: TypeParsers): T[] {
	const view = new DataView(reply.buffer, reply.byteOffset, reply.byteLength);
	let columns: Column[] = [];
	let rows: Record<string, unknown>[] = [];
	let done: Record<string, unknown>[] = [];
	let at = 0;
	while (at + 5 <= reply.length) {
		const type = reply[at];
		const end = at + 1 + view.getInt32(at + 1);
		let p = at + 5;
		switch (type) {
			case Message.RowDescription: {
				const count = view.getInt16(p);
				p += 2;
				columns = [];
				for (let i = 0; i < count; i++) {
					const nul = reply.indexOf(0, p);
					const name = utf8.decode(reply.subarray(p, nul));
					p = nul + 1 + 6; // table OID, column number
					columns.push({ name, typeId: view.getInt32(p) });
					p += 12; // type OID, type size, type modifier, format
				}
				rows = [];
				break;
			}
			case Message.DataRow: {
				const count = view.getInt16(p);
				p += 2;
				const row: Record<string, unknown> = {};
				for (let i = 0; i < count; i++) {
					const length = view.getInt32(p);
					p += 4;
					const column = columns[i];
					if (column === undefined) {
						throw new Error(`DataRow has ${count} fields, RowDescription ${columns.length}`);
					}
					if (length < 0) {
						row[column.name] = null;
						continue;
					}
					const text = utf8.decode(reply.subarray(p, p + length));
					p += length;
					const parse = parsers[column.typeId];
					row[column.name] = parse === undefined ? text : parse(text, column.typeId);
				}
				rows.push(row);
				break;
			}
			case Message.CommandComplete:
				done = rows;
				rows = [];
				break;
			case Message.ErrorResponse:
				throw databaseError(reply.subarray(at, end));
			default:
				break; // ReadyForQuery, notices, parameter status: nothing a statement's rows need
		}
		at = end;
	}
	return done as T[];
}

function databaseError(message: Uint8Array): Error {
	let error: Error | undefined;
	new protocol.Parser().parse(message, m => {
		if (m instanceof Error) {
			error ??= m;
		}
	});
	return error ?? new Error('PostgreSQL sent an ErrorResponse that PGlite could not parse');
}
