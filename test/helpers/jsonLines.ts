/**
 * Reads a child's stdout as JSON lines (`baton run --json`): each complete, non-blank line parsed and
 * handed to `onLine`, then `afterChunk` (to wake waiters). A line that is not JSON goes to `onNotJson`
 * when given, else the parse error is thrown. Test-only; reads, never writes.
 */
import type { Readable } from 'node:stream';

export function onJsonLines(
	stream: Readable,
	onLine: (value: unknown) => void,
	options: { afterChunk?: () => void; onNotJson?: (line: string) => void } = {},
): void {
	let partial = '';
	stream.setEncoding('utf8');
	stream.on('data', (chunk: string) => {
		const lines = (partial + chunk).split('\n');
		partial = lines.pop() ?? '';
		for (const line of lines) {
			if (line.trim() === '') {
				continue;
			}
			let value: unknown;
			try {
				value = JSON.parse(line);
			} catch (e) {
				if (options.onNotJson === undefined) {
					throw e;
				}
				options.onNotJson(line);
				continue;
			}
			onLine(value);
		}
		options.afterChunk?.();
	});
}
