/**
 * `card/diff` holds against an agent's huge files (a real `baton hub` on a PostgreSQL schema, a real
 * repository, real git): a card's branch carries a 200 MB text file (over 8 MB: left out of the patch after
 * a size check, git never reads it) and a 1 MB one (diffed as text, its patch read and dropped
 * past its budget), beside small files. 24 concurrent `card/diff` requests: the
 * hub stays alive and under a stated memory bound (its RSS read from /proc while they run), every
 * answer shows the small files' patch, marks the huge ones cut and says how to see them whole; the
 * requests past the hub's waiting line are refused `unavailable`, never crash it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { parsePatch } from 'diff';
import type { Backlog } from '../../core/backlog';
import { BatonError } from '../../core/errors';
import { diffLimits } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { type HubProcess, alive, client, hubEnv, removeDataDir, startHub, tempDataDir } from '../helpers/hub';
import { giveWorkspace, schemaBacklog } from '../helpers/workspaceCards';
import { type TestRepo, makeRepo } from '../helpers/workspaceRepo';

/** The hub's resident memory in MB (Linux /proc). */
function rssMb(pid: number): number {
	const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
	assert.ok(m, 'VmRSS in /proc');
	return Number(m[1]) / 1024;
}

/** `bytes` of text lines, written by the shell without passing through this process. */
function textFile(file: string, mb: number): void {
	execFileSync('sh', [
		'-c',
		`yes 'a line of generated text that an agent printed into a file' | head -c ${mb}M > "$0"`,
		file,
	]);
}

/** Over the hub's idle size: its patch budgets and answers, with room for V8's own growth. */
const boundMb = 100;

describe('card/diff within its budget', { skip: process.platform !== 'linux' && 'reads /proc' }, () => {
	const schema = uniqueSchema();
	const dataDir = tempDataDir();
	let hub: HubProcess;
	let backlog: Backlog;
	let reviewer: RpcClient;
	let repo: TestRepo;

	before(async () => {
		hub = await startHub({ dataDir, env: hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema }) });
		reviewer = await client(dataDir, { agent: { id: 'reviewer', name: 'reviewer', client: 'test' } });
		backlog = await schemaBacklog(schema);
		repo = makeRepo({ 'README.md': '# demo\n', 'src/app.ts': 'export const a = 1;\n' });
		await reviewer.request('card/create', { cards: [{ id: 'HUGE', title: 'An agent commits huge files' }] });
		const ws = await ensureWorktree({ repo: repo.root, cardId: 'HUGE' });
		textFile(path.join(ws.path, 'huge.txt'), 200);
		textFile(path.join(ws.path, 'long.txt'), 1);
		await giveWorkspace(backlog, repo.root, 'HUGE', {
			'src/app.ts': 'export const a = 2;\n',
			'src/zz-after.ts': 'export const after = true;\n',
		});
	});

	after(async () => {
		reviewer.close();
		await backlog.close();
		await hub.stop();
		removeDataDir(dataDir);
		await dropSchema(schema);
		repo.cleanup();
	});

	it('answers 24 concurrent diffs of a 200 MB file within its memory bound, the small files shown', async () => {
		const idle = rssMb(hub.pid);
		let peak = idle;
		const sampler = setInterval(() => {
			if (alive(hub.pid)) {
				peak = Math.max(peak, rssMb(hub.pid));
			}
		}, 20);
		// 24 reviewers, each on its own connection (one connection's requests are already queued by its flow control).
		const reviewers = await Promise.all(
			Array.from({ length: 24 }, (_, i) =>
				// Those waiting their turn wait a few seconds each on a loaded machine: more than the helper's 15 s.
				client(dataDir, {
					agent: { id: `reviewer-${i}`, name: `reviewer ${i}`, client: 'test' },
					requestTimeoutMs: 60_000,
				}),
			),
		);
		const started = Date.now();
		const answers = await Promise.allSettled(reviewers.map(r => r.request('card/diff', { cardId: 'HUGE' })));
		clearInterval(sampler);
		for (const r of reviewers) {
			r.close();
		}
		const seconds = (Date.now() - started) / 1000;
		assert.ok(alive(hub.pid), `the hub is alive; stderr:\n${hub.stderr()}`);
		const served = answers.flatMap(a => (a.status === 'fulfilled' ? [a.value] : []));
		for (const a of answers) {
			if (a.status === 'rejected') {
				// Past the waiting line: refused with a reason, never a crash or `internal`.
				assert.ok(a.reason instanceof BatonError && a.reason.code === 'unavailable', String(a.reason));
			}
		}
		assert.ok(served.length >= diffLimits.concurrent + diffLimits.waiting, `${served.length} served`);
		for (const d of served) {
			assert.equal(d.truncated, true);
			assert.deepEqual(
				d.files.map(f => [f.path, f.cut === true]),
				[
					['huge.txt', true],
					['long.txt', true],
					['src/app.ts', false],
					['src/zz-after.ts', false],
				],
			);
			assert.equal(
				d.files.find(f => f.path === 'huge.txt')?.insertions,
				null,
				'over 8 MB: git counts no lines, the patch leaves it out',
			);
			assert.ok(Buffer.byteLength(d.patch) <= diffLimits.patchBytes);
			assert.deepEqual(
				parsePatch(d.patch).map(p => p.newFileName),
				['b/src/app.ts', 'b/src/zz-after.ts'],
			);
			assert.match(d.patch, /^\+export const after = true;$/m, 'the file after the huge ones still shows');
			assert.equal(d.show, `git -C ${repo.root} diff ${d.mergeBase} ${d.head}`);
		}
		console.log(
			`card/diff x24 of a 200 MB + a 1 MB text file: ${served.length} served in ${seconds.toFixed(1)} s; hub RSS ${idle.toFixed(0)} MB idle, ${peak.toFixed(0)} MB peak`,
		);
		assert.ok(peak - idle < boundMb, `the hub grew ${(peak - idle).toFixed(0)} MB (bound ${boundMb} MB)`);
	});

	it('shows one huge file alone up to the whole cap when `paths` names it', async () => {
		const d = await reviewer.request('card/diff', { cardId: 'HUGE', paths: ['long.txt'] });
		assert.equal(d.truncated, true);
		assert.equal(d.files[0]?.cut, true, 'one 1 MB hunk never fits: it is left out, the command shows it');
		assert.equal(d.patch, '');
		assert.match(d.show ?? '', /^git -C .* diff [0-9a-f]{40} [0-9a-f]{40}$/);
	});
});
