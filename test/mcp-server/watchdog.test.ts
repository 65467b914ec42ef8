/**
 * The hub's watchdog names what was stuck: a main thread busy in JavaScript with the
 * store's disk fine is "the event loop", not the store (it once logged that the store was stuck when
 * a scope check had blocked the loop for two minutes). A real Watchdog in a child process whose main
 * thread then spins; the worker ends it with SIGKILL and its line on stderr.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { repoRoot } from '../helpers/hub';

describe('hub watchdog', () => {
	it('ends a main thread blocked in JavaScript, naming the event loop, not the store', async () => {
		const dir = mkdtempSync(join(tmpdir(), 'bt-watchdog-'));
		try {
			const script = `
				const { Watchdog } = require(${JSON.stringify(join(repoRoot, 'mcp-server/hub/watchdog.ts'))});
				new Watchdog({ dir: ${JSON.stringify(dir)}, stuckMs: 500, hardStuckMs: 1500, minFreeBytes: 1 });
				setTimeout(() => { for (;;) {} }, 600);
			`;
			const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], {
				cwd: repoRoot,
				stdio: ['ignore', 'ignore', 'pipe'],
			});
			let stderr = '';
			child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
			const exit = await new Promise<NodeJS.Signals | null>(resolve =>
				child.on('exit', (_code, signal) => resolve(signal)),
			);
			assert.equal(exit, 'SIGKILL', stderr);
			assert.match(stderr, /hub\/watchdog: the hub's event loop has been blocked for \d+ s/);
			assert.doesNotMatch(stderr, /the store has been stuck/);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});
