/**
 * PostgreSQL's extended query protocol, written and read by hand for PGlite's hot statements: Parse
 * and Describe once per named statement, then Bind + Execute + Sync per call, with the rows read
 * straight from the reply's bytes. PGlite's own path (and its protocol serializer) builds objects for
 * every message; for the hub's hot statements, which take a few parameters and return one small row,
 * that was most of a statement's JavaScript cost, and `EXECUTE name('literal', …)` made PostgreSQL
 * parse and plan every literal as an expression (docs/benchmarks.md). Errors are rare, so an
 * ErrorResponse is handed to PGlite's own protocol parser, and the caller gets the very DatabaseError
 * that PGlite would have thrown.
 */
import { protocol } from '@electric-sql/pglite';

/** Turns a column's text into its JavaScript value (PGlite's `parsers`, keyed by type OID). */
export type TypeParsers = Record<number | string, ((text: string, typeId: number) => unknown) | undefined>;

export interface Column {
	name: string;
	typeId: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Message type bytes (PostgreSQL docs, "Message Formats"). */
const Backend = {
	RowDescription: 0x54, // 'T'
	DataRow: 0x44, // 'D'
	CommandComplete: 0x43, // 'C'
	ErrorResponse: 0x45, // 'E'
} as const;

const Frontend = {
	Parse: 0x50, // 'P'
	Bind: 0x42, // 'B'
	Describe: 0x44, // 'D'
	Execute: 0x45, // 'E'
	Sync: 0x53, // 'S'
} as const;

/** A parameter as PostgreSQL's text input functions read it; null is SQL NULL. */
export function textParam(value: unknown): string | null {
	if (value === null || value === undefined) {
		return null;
	}
	switch (typeof value) {
		case 'string':
			return checkText(value);
		case 'number':
			if (!Number.isFinite(value)) {
				throw new Error(`not a finite number: ${value}`);
			}
			return String(value);
		case 'boolean':
			return value ? 't' : 'f';
		default:
			if (value instanceof Date) {
				return value.toISOString();
			}
			if (Array.isArray(value)) {
				return arrayLiteral(value);
			}
			return checkText(JSON.stringify(value));
	}
}

/** A one-dimensional array literal, every element quoted: `{"a","b \"c\""}`. */
function arrayLiteral(values: readonly unknown[]): string {
	const items = values.map(v => {
		if (Array.isArray(v)) {
			throw new Error('nested arrays are not supported as parameters');
		}
		const text = textParam(v);
		return text === null ? 'NULL' : `"${text.replace(/["\\]/g, c => `\\${c}`)}"`;
	});
	return `{${items.join(',')}}`;
}

function checkText(text: string): string {
	if (text.includes('\u0000')) {
		throw new Error('text must not contain NUL characters');
	}
	return text;
}

/** Lays out frontend messages: each is a type byte, an int32 length (itself included), the body. */
class Writer {
	private bytes = new Uint8Array(256);
	private view = new DataView(this.bytes.buffer);
	private at = 0;
	private start = 0;

	begin(type: number): this {
		this.reserve(5);
		this.start = this.at;
		this.bytes[this.at] = type;
		this.at += 5;
		return this;
	}

	end(): this {
		this.view.setInt32(this.start + 1, this.at - this.start - 1);
		return this;
	}

	byte(n: number): this {
		this.reserve(1);
		this.bytes[this.at++] = n;
		return this;
	}

	int16(n: number): this {
		this.reserve(2);
		this.view.setInt16(this.at, n);
		this.at += 2;
		return this;
	}

	int32(n: number): this {
		this.reserve(4);
		this.view.setInt32(this.at, n);
		this.at += 4;
		return this;
	}

	/** A NUL-terminated string. */
	cstring(text: string): this {
		this.utf8(text);
		this.reserve(1);
		this.bytes[this.at++] = 0;
		return this;
	}

	/** An int32 length and the UTF-8 bytes, or -1 for NULL. */
	value(text: string | null): this {
		if (text === null) {
			return this.int32(-1);
		}
		const lengthAt = this.at;
		this.int32(0);
		const written = this.utf8(text);
		this.view.setInt32(lengthAt, written);
		return this;
	}

	done(): Uint8Array {
		return this.bytes.subarray(0, this.at);
	}

	private utf8(text: string): number {
		this.reserve(text.length * 3);
		const { written } = encoder.encodeInto(text, this.bytes.subarray(this.at));
		this.at += written;
		return written;
	}

	private reserve(n: number): void {
		if (this.at + n <= this.bytes.length) {
			return;
		}
		const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.at + n));
		grown.set(this.bytes.subarray(0, this.at));
		this.bytes = grown;
		this.view = new DataView(grown.buffer);
	}
}

/** Parse `text` as the named statement `name` (parameter types inferred), Describe it, Sync. */
export function prepareMessage(name: string, text: string): Uint8Array {
	const w = new Writer();
	w.begin(Frontend.Parse).cstring(name).cstring(text).int16(0).end();
	w.begin(Frontend.Describe).byte(0x53 /* 'S': a statement */).cstring(name).end();
	w.begin(Frontend.Sync).end();
	return w.done();
}

/** Bind `params` (text format) to the named statement, Execute it, Sync: one call, one transaction. */
export function executeMessage(name: string, params: readonly unknown[]): Uint8Array {
	const w = new Writer();
	w.begin(Frontend.Bind).cstring('').cstring(name).int16(0).int16(params.length);
	for (const p of params) {
		w.value(textParam(p));
	}
	w.int16(0).end();
	w.begin(Frontend.Execute).cstring('').int32(0).end();
	w.begin(Frontend.Sync).end();
	return w.done();
}

/** The result columns from the reply to prepareMessage (none for a statement that returns no rows). */
export function columnsOfReply(reply: Uint8Array): Column[] {
	let columns: Column[] = [];
	forEachMessage(reply, (type, body) => {
		if (type === Backend.RowDescription) {
			columns = readRowDescription(body);
		}
	});
	return columns;
}

/**
 * The rows of the last result set in `reply` (every backend message for one call), as objects keyed
 * by column name; `columns` describes them when the reply carries no RowDescription (the extended
 * protocol's Execute). Throws the statement's DatabaseError if it failed.
 */
export function rowsOfReply<T>(reply: Uint8Array, parsers: TypeParsers, columns: readonly Column[] = []): T[] {
	let described = columns;
	let rows: Record<string, unknown>[] = [];
	let done: Record<string, unknown>[] = [];
	forEachMessage(reply, (type, body) => {
		switch (type) {
			case Backend.RowDescription:
				described = readRowDescription(body);
				rows = [];
				break;
			case Backend.DataRow:
				rows.push(readDataRow(body, described, parsers));
				break;
			case Backend.CommandComplete:
				done = rows;
				rows = [];
				break;
			default:
				break; // BindComplete, ReadyForQuery, notices: nothing the rows need
		}
	});
	return done as T[];
}

/** Calls `fn` with each message's type and body; throws on an ErrorResponse. */
function forEachMessage(reply: Uint8Array, fn: (type: number, body: DataView) => void): void {
	const view = new DataView(reply.buffer, reply.byteOffset, reply.byteLength);
	let at = 0;
	while (at + 5 <= reply.length) {
		const type = reply[at] ?? 0;
		const end = at + 1 + view.getInt32(at + 1);
		if (type === Backend.ErrorResponse) {
			throw databaseError(reply.subarray(at, end));
		}
		fn(type, new DataView(reply.buffer, reply.byteOffset + at + 5, end - at - 5));
		at = end;
	}
}

function readRowDescription(body: DataView): Column[] {
	const bytes = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
	const count = body.getInt16(0);
	const columns: Column[] = [];
	let p = 2;
	for (let i = 0; i < count; i++) {
		const nul = bytes.indexOf(0, p);
		const name = decoder.decode(bytes.subarray(p, nul));
		p = nul + 1 + 6; // table OID, column number
		columns.push({ name, typeId: body.getInt32(p) });
		p += 12; // type OID, type size, type modifier, format code
	}
	return columns;
}

function readDataRow(body: DataView, columns: readonly Column[], parsers: TypeParsers): Record<string, unknown> {
	const bytes = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
	const count = body.getInt16(0);
	const row: Record<string, unknown> = {};
	let p = 2;
	for (let i = 0; i < count; i++) {
		const column = columns[i];
		if (column === undefined) {
			throw new Error(`a row has ${count} fields but the statement describes ${columns.length}`);
		}
		const length = body.getInt32(p);
		p += 4;
		if (length < 0) {
			row[column.name] = null;
			continue;
		}
		const text = decoder.decode(bytes.subarray(p, p + length));
		p += length;
		const parse = parsers[column.typeId];
		row[column.name] = parse === undefined ? text : parse(text, column.typeId);
	}
	return row;
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
