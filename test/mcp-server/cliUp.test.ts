/**
 * `baton up` and `baton demo` as a newcomer runs them, through the built dist/baton.js: up prints the
 * MCP setup and board link and streams live activity until SIGINT; demo runs its three MCP agents
 * through a crash and a recovery and finishes by itself well under a minute.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { batonJs, childEnv, cleanupDataDir, ensureBuilt, runBaton, tempDataDir, waitFor } from '../helpers/mcp';

let dataDir: string;
const dirs: string[] = [];

before(() => {
	ensureBuilt();
	dataDir = tempDataDir();
	dirs.push(dataDir);
});

after(async () => {
	for (const d of dirs) {
		await cleanupDataDir(d);
	}
});

describe('baton up', () => {
	it('--once --json: the hub, the MCP configs of every client and a board link', async () => {
		const r = await runBaton(['up', '--once', '--json'], { dataDir });
		assert.equal(r.code, 0, r.stderr);
		const up = JSON.parse(r.stdout) as {
			hub: { pid: number; dataDir: string };
			boardUrl: string | null;
			mcp: {
				claudeCode: string;
				claudeCodeJson: unknown;
				cursor: unknown;
				vscode: { servers: { baton: { args: string[] } } };
			};
		};
		assert.equal(typeof up.hub.pid, 'number');
		// The hub a command starts runs lean: one V8 background thread, glibc's 128 KB mmap threshold.
		assert.ok(readFileSync(`/proc/${up.hub.pid}/cmdline`, 'utf8').split('\0').includes('--v8-pool-size=1'));
		assert.ok(
			readFileSync(`/proc/${up.hub.pid}/environ`, 'utf8').split('\0').includes('MALLOC_MMAP_THRESHOLD_=131072'),
		);
		assert.match(up.boardUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+\/board\?ticket=/);
		assert.match(up.mcp.claudeCode, new RegExp(`^claude mcp add baton -e BATON_DATA_DIR=\\S+ -- \\S+ ${batonJs} mcp$`));
		assert.deepEqual(up.mcp.vscode.servers.baton.args, [batonJs, 'mcp']);
		assert.ok(up.mcp.cursor !== undefined && up.mcp.claudeCodeJson !== undefined);
	});

	it('prints the setup for people, then streams activity until Ctrl-C', async () => {
		const child = spawn(process.execPath, [batonJs, 'up'], {
			env: childEnv(dataDir),
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let out = '';
		child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
		try {
			await waitFor(() => out.includes('Live activity'), 20_000, 'baton up to be ready');
			for (const heading of [
				'Claude Code:',
				'Cursor (~/.cursor/mcp.json):',
				'VS Code (.vscode/mcp.json):',
				'Any stdio MCP client:',
				'Board: http://127.0.0.1:',
			]) {
				assert.ok(out.includes(heading), `missing "${heading}"`);
			}
			const created = await runBaton(['create', 'Seen live', '--id', 'UP1', '--json'], {
				dataDir,
				env: { BATON_AGENT: 'someone' },
			});
			assert.equal(created.code, 0);
			await waitFor(() => /#\d+ {2}someone created UP1/.test(out), 5_000, 'the created event in the activity feed');
		} finally {
			child.kill('SIGINT');
		}
		const code = await new Promise<number | null>(resolve => child.on('close', resolve));
		assert.equal(code, 0);
		assert.match(out, /Stopped watching/);
	});
});

describe('baton events --follow', () => {
	it('streams new events as JSON lines until Ctrl-C', async () => {
		const child = spawn(process.execPath, [batonJs, 'events', '--follow', '--json'], {
			env: childEnv(dataDir),
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let out = '';
		child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
		try {
			// The follower is subscribed once the hub counts it as a client; create until it sees one.
			await waitFor(
				async () => {
					await runBaton(['create', 'Followed', '--json'], { dataDir, env: { BATON_AGENT: 'follower-test' } });
					return out.includes('"follower-test"');
				},
				20_000,
				'a followed event',
			);
		} finally {
			child.kill('SIGINT');
		}
		assert.equal(await new Promise<number | null>(resolve => child.on('close', resolve)), 0);
		const events = out
			.trim()
			.split('\n')
			.map(l => JSON.parse(l) as { seq: number; type: string; actor: string });
		assert.ok(events.every(e => typeof e.seq === 'number' && e.type === 'created'));
		assert.deepEqual(
			events.map(e => e.seq),
			[...events.map(e => e.seq)].sort((a, b) => a - b),
			'in seq order',
		);
	});
});

describe('baton demo', () => {
	it(
		'runs three MCP agents through a crash and a recovery, by itself, in well under a minute',
		{ timeout: 90_000 },
		async () => {
			const parent = tempDataDir();
			const dir = join(parent, 'demo');
			// The demo's own data dir first (cleanupDataDir stops a hub left in it), then its parent.
			dirs.push(dir, parent);
			const t0 = Date.now();
			const r = await runBaton(['demo', '--data-dir', dir], { dataDir: dir, timeoutMs: 80_000 });
			const seconds = (Date.now() - t0) / 1000;
			console.log(`baton demo finished in ${seconds.toFixed(1)} s`);
			assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
			assert.match(r.stdout, /created a 7-card plan in 3 phases/);
			for (const name of ['ada', 'bob', 'cy']) {
				assert.match(r.stdout, new RegExp(`${name} +claims `));
			}
			assert.match(r.stdout, /kill -9 (ada|bob|cy) \(pid \d+\) while it holds build-/);
			assert.match(r.stdout, /hub +released \S+ \(agent disconnected\)/i);
			assert.match(r.stdout, /all 7 of 7 cards done/);
			assert.ok(seconds < 45, `${seconds} s`);
			assert.ok(existsSync(dir), 'a --data-dir the user named is kept');
		},
	);
});
