/**
 * The MCP server's stdio transport: newline-delimited JSON-RPC on stdin/stdout, as the SDK's
 * StdioServerTransport, but linear in the size of a message. The SDK's re-concatenates its whole
 * buffer and re-scans it for a newline on every 64 KB chunk (5.6 s for one 12 MB line on this
 * machine) and ends the session on a line over 10 MB. Here chunks are kept until their line ends, only
 * the new chunk is scanned, and a line too long to be any request the schema accepts is dropped up to
 * its newline with a warning in the log (stderr) — the session goes on. Message semantics stay the SDK's.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Readable, Writable } from 'node:stream';

import { createLogger } from '../../core/log';

const log = createLogger('mcp').child('stdio');

/** Longest line read: above the largest request the schema accepts (1,000 cards of ~90 KB: ~100 MB). */
export const stdioMaxLineBytes = 128 * 1024 * 1024;

export class LineStdioTransport implements Transport {
	onclose?: (() => void) | undefined;
	onerror?: ((error: Error) => void) | undefined;
	onmessage?: ((message: JSONRPCMessage) => void) | undefined;

	private chunks: Buffer[] = [];
	private length = 0;
	/** True while skipping the rest of an over-long line. */
	private skipping = false;
	private closed = false;

	constructor(
		private readonly input: Readable = process.stdin,
		private readonly output: Writable = process.stdout,
		private readonly maxLineBytes: number = stdioMaxLineBytes,
	) {}

	private readonly onData = (chunk: Buffer): void => {
		let start = 0;
		for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
			this.take(chunk.subarray(start, nl));
			this.endLine();
			start = nl + 1;
		}
		this.take(chunk.subarray(start));
	};

	private readonly onError = (error: Error): void => {
		this.onerror?.(error);
	};

	start(): Promise<void> {
		this.input.on('data', this.onData);
		this.input.on('error', this.onError);
		return Promise.resolve();
	}

	send(message: JSONRPCMessage): Promise<void> {
		return new Promise(resolve => {
			if (this.output.write(serializeMessage(message))) {
				resolve();
			} else {
				this.output.once('drain', resolve);
			}
		});
	}

	close(): Promise<void> {
		if (!this.closed) {
			this.closed = true;
			this.input.off('data', this.onData);
			this.input.off('error', this.onError);
			if (this.input.listenerCount('data') === 0) {
				this.input.pause();
			}
			this.chunks = [];
			this.onclose?.();
		}
		return Promise.resolve();
	}

	private take(part: Buffer): void {
		if (this.skipping || part.length === 0) {
			return;
		}
		if (this.length + part.length > this.maxLineBytes) {
			this.skipping = true;
			this.chunks = [];
			this.length = 0;
			log.warn(`dropped an MCP message over ${this.maxLineBytes} bytes`);
			return;
		}
		this.chunks.push(part);
		this.length += part.length;
	}

	private endLine(): void {
		const line = Buffer.concat(this.chunks, this.length).toString('utf8').replace(/\r$/, '');
		this.chunks = [];
		this.length = 0;
		if (this.skipping) {
			this.skipping = false;
			return;
		}
		if (line === '') {
			return;
		}
		let message: JSONRPCMessage;
		try {
			message = deserializeMessage(line);
		} catch (e) {
			this.onerror?.(e instanceof Error ? e : new Error(String(e)));
			return;
		}
		this.onmessage?.(message);
	}
}
