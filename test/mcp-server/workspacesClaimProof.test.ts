/**
 * Workspaces' proof for claims: 20 agents (20 real hub clients, each its own agent) claim 20 cards of
 * one repository at once against one real hub (on PostgreSQL), each sending the checkout as `root`: 20 claims, 20
 * distinct worktrees on 20 distinct branches, no git lock error. The slowest claim is printed; the
 * bound asserted is a generous liveness bound only (the 3 s target is measured in test/bench/workspaces.ts).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { findGitRepo } from '../../core/client/gitRepo';
import type { Result } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { type HubProcess, client, hubEnv, startHub } from '../helpers/hub';
import { cleanupDataDir, ensureBuilt } from '../helpers/mcp';
import { gitOut, makeRepo, type TestRepo } from '../helpers/workspaceRepo';

const agents = 20;
let dataDir: string;
let schema: string;
let hub: HubProcess;
let repo: TestRepo;

before(async () => {
	ensureBuilt();
	dataDir = path.join(mkdtempSync('/tmp/bt-wp-'), 'd');
	// PostgreSQL, the store of a team's hub, where claims really run side by side; and it keeps PGlite's
	// hundreds of MB out of the hub that spawns git for every claim (each child forks it: 7x the CPU).
	schema = uniqueSchema();
	hub = await startHub({ dataDir, env: hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema }) });
	const files: Record<string, string> = {};
	for (let i = 0; i < 200; i++) {
		files[`src/m${i}.ts`] = `export const v${i} = ${i};\n`;
	}
	repo = makeRepo(files);
});

after(async () => {
	await hub.stop();
	await cleanupDataDir(dataDir);
	await dropSchema(schema);
	rmSync(path.dirname(dataDir), { recursive: true, force: true });
	repo.cleanup();
});

describe('20 agents claim 20 cards of one repository at once', () => {
	it('get 20 distinct worktrees and branches, with no git lock error', async () => {
		const project = (await findGitRepo(repo.root))?.project ?? '';
		const admin = await client(dataDir, { agent: { id: 'vscode:alice' } });
		const clients: RpcClient[] = [];
		try {
			await admin.request('project/settings/update', { project, worktrees: true });
			const ids = Array.from({ length: agents }, (_, i) => `P-${i + 1}`);
			await admin.request('card/create', { cards: ids.map(id => ({ id, title: `Card ${id}`, project })) });
			for (let i = 0; i < agents; i++) {
				clients.push(await client(dataDir, { agent: { id: `agent-${i + 1}` }, requestTimeoutMs: 120_000 }));
			}
			const results = await Promise.all(
				clients.map(async c => {
					const started = performance.now();
					const r: Result<'card/claim'> = await c.request('card/claim', { project, root: repo.root });
					return { r, ms: performance.now() - started };
				}),
			);
			const paths = new Set(results.map(x => x.r.workspace?.path));
			const branches = new Set(results.map(x => x.r.workspace?.branch));
			assert.equal(new Set(results.map(x => x.r.card?.id)).size, agents, 'every agent got its own card');
			assert.equal(paths.size, agents);
			assert.equal(branches.size, agents);
			for (const { r } of results) {
				const ws = r.workspace;
				assert.ok(ws !== undefined && r.card !== null);
				assert.equal(ws.branch, `baton/${r.card.id}`);
				assert.ok(existsSync(path.join(ws.path, 'src/m199.ts')), `${ws.path} is checked out`);
			}
			const listed = gitOut(repo.root, 'worktree', 'list', '--porcelain')
				.split('\n')
				.filter(l => l.startsWith('worktree '));
			assert.equal(listed.length, agents + 1, 'the main checkout and 20 worktrees');
			const slowest = Math.max(...results.map(x => x.ms));
			console.log(`# slowest of ${agents} concurrent claims with a worktree: ${Math.round(slowest)} ms`);
			assert.ok(slowest < 30_000, `liveness bound: the slowest claim took ${Math.round(slowest)} ms`);
			assert.doesNotMatch(hub.stderr(), /\.lock|Unable to create/, 'no git lock error reached the hub log');
		} finally {
			for (const c of clients) {
				c.close();
			}
			admin.close();
		}
	});
});
