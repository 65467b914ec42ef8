/**
 * Landing and gc proofs through a real hub (`node dist/baton.js hub` on a PostgreSQL schema)
 * and the CLI (in process: runCliHere) on real git repositories: `baton approve` lands with squash,
 * merge and rebase exactly the branch's changes; a conflicting approve changes nothing in the base or
 * any checkout, sends the card back to ready with the hand-over and exits 1; a dirty checkout of the
 * base is never overwritten (exit 1, the card stays in review); the hub's maintenance runs the safe
 * part of gc; `baton gc --dry-run` lists exactly what `baton gc` then deletes, and unsnapshotted work
 * survives it; `--force` is refused inside a coding agent. The card's worktree is made with
 * ensureWorktree and recorded with setWorkspace on a second backlog of the same schema (the claim path
 * is another module's, tested there).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Backlog } from '../../core/backlog';
import type { Card, LandMode } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { client, type HubProcess, hubEnv, removeDataDir, startHub, tempDataDir } from '../helpers/hub';
import { ensureBuilt, runCliHere, waitFor } from '../helpers/mcp';
import { commitAllFiles, folderPicture, gitOut, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

const host = hostname();
const repos: TestRepo[] = [];
let schema: string;
let dataDir: string;
let hub: HubProcess;
let side: Backlog;
let agent: RpcClient;
/** The repository the hub's maintenance and `baton gc` clean (its project's root on this host). */
let gcRepo: TestRepo;
let counter = 0;

function state(dir: string): string {
	return [
		gitOut(dir, 'for-each-ref', '--format=%(refname) %(objectname)'),
		gitOut(dir, '--no-optional-locks', 'status', '--porcelain', '--untracked-files=all'),
		JSON.stringify([...folderPicture(dir)]),
	].join('\n');
}

/** The CLI in process (runCliHere) in `cwd`: its words and exit codes; the landing is the hub process's. */
function baton(args: string[], cwd: string, env: Record<string, string> = {}) {
	return runCliHere(args, { dataDir, cwd, env: { BATON_AGENT: 'vscode:alice', ...env } });
}

async function show(id: string): Promise<Card> {
	return (await agent.request('card/get', { cardId: id })).card;
}

before(async () => {
	ensureBuilt();
	// Before the hub starts: two workspaces of cards that never existed in its backlog, one merged by the
	// user (safe to delete), one with an edit no snapshot holds (never deleted without --force).
	gcRepo = makeRepo({ 'a.txt': 'a\n' });
	repos.push(gcRepo);
	const merged = await ensureWorktree({ repo: gcRepo.root, cardId: 'GONE1' });
	writeFiles(merged.path, { 'gone1.txt': 'merged\n' });
	commitAllFiles(merged.path, 'GONE1 work');
	gitOut(gcRepo.root, 'merge', '-q', '--no-ff', '-m', 'merge GONE1', 'baton/GONE1');
	const dirty = await ensureWorktree({ repo: gcRepo.root, cardId: 'GONE2' });
	writeFiles(dirty.path, { 'gone2.txt': 'precious\n' });
	schema = uniqueSchema();
	dataDir = tempDataDir();
	hub = await startHub({
		dataDir,
		env: hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema, BATON_LOG_LEVEL: 'debug' }),
	});
	agent = await client(dataDir, { agent: { id: 'claude-1' } });
	await agent.request('project/settings/update', { project: 'gc-proj', roots: { [host]: gcRepo.root } });
	side = await Backlog.open({ databaseUrl: testDatabaseUrl, schema });
});

after(async () => {
	agent.close();
	await side.close();
	await hub.stop();
	removeDataDir(dataDir);
	await dropSchema(schema);
	for (const r of repos) {
		r.cleanup();
	}
});

/**
 * A card of a project landing with `mode`, claimed by the agent, whose worktree changed a.txt, added
 * new.txt and deleted b.txt in one commit, completed into review.
 */
async function inReview(mode: LandMode, mainMoves?: Record<string, string>) {
	const r = makeRepo({ 'README.md': '# r\n', 'a.txt': 'a1\na2\na3\n', 'b.txt': 'b\n' });
	repos.push(r);
	const n = ++counter;
	const project = `land-${n}`;
	await agent.request('project/settings/update', { project, land: mode });
	const id = `H${n}`;
	await agent.request('card/create', { cards: [{ id, title: `Hub landing ${n}`, review: 'human', project }] });
	const claimed = await agent.request('card/claim', { cardId: id });
	const ws = await ensureWorktree({ repo: r.root, cardId: id });
	writeFiles(ws.path, { 'a.txt': 'a1\na2 changed\na3\n', 'new.txt': 'new\n' });
	gitOut(ws.path, 'rm', '-q', 'b.txt');
	const tip = commitAllFiles(ws.path, `${id}: work`);
	await side.setWorkspace({ actor: 'claude-1' }, id, {
		root: r.root,
		path: ws.path,
		branch: ws.branch,
		base: 'main',
		host,
	});
	await agent.request('card/complete', { cardId: id, ...(claimed.lease ? { epoch: claimed.lease.epoch } : {}) });
	if (mainMoves !== undefined) {
		writeFiles(r.root, mainMoves);
		commitAllFiles(r.root, 'main moves on');
	}
	return { root: r.root, id, ws, tip, oldBase: gitOut(r.root, 'rev-parse', 'main'), picture: folderPicture(ws.path) };
}

describe('approve lands through the hub and the CLI', () => {
	it('the hub maintenance ran the safe part of gc: merged work gone, unsnapshotted work kept', async () => {
		await waitFor(() => hub.stderr().includes('maintenance gc went over'), 60_000, 'the start maintenance');
		assert.ok(!existsSync(path.join(gcRepo.root, '.baton/worktrees/GONE1')));
		assert.equal(gitOut(gcRepo.root, 'branch', '--list', 'baton/GONE1'), '');
		assert.equal(readFileSync(path.join(gcRepo.root, '.baton/worktrees/GONE2/gone2.txt'), 'utf8'), 'precious\n');
	});

	for (const mode of ['squash', 'merge', 'rebase'] as const) {
		it(`baton approve with ${mode} lands exactly the branch's changes`, async () => {
			const s = await inReview(mode);
			const r = await baton(['approve', s.id], s.root);
			assert.equal(r.code, 0, r.stderr);
			assert.match(r.stdout, /done/);
			assert.match(r.stdout, new RegExp(`Landed baton/${s.id} on main \\(${mode}\\) as [0-9a-f]{12}\\.`));
			assert.equal(gitOut(s.root, 'rev-parse', 'main^{tree}'), gitOut(s.root, 'rev-parse', `${s.tip}^{tree}`));
			assert.deepEqual(folderPicture(s.root), s.picture, "the user's checkout on main has the landed files");
			const card = await show(s.id);
			assert.equal(card.status, 'done');
			assert.equal(card.workspace?.landed?.mode, mode);
			assert.equal(card.workspace.landed.commit, gitOut(s.root, 'rev-parse', 'main'));
			assert.ok(!existsSync(s.ws.path));
			assert.equal(gitOut(s.root, 'branch', '--list', s.ws.branch), '');
		});
	}

	it('a conflicting approve changes nothing anywhere, sends the card back to ready and exits 1', async () => {
		const s = await inReview('squash', { 'a.txt': 'a1\na2 on main\na3\n' });
		const before = [state(s.root), state(s.ws.path)];
		const r = await baton(['approve', s.id], s.root);
		assert.equal(r.code, 1);
		assert.match(r.stderr, new RegExp(`${s.id} was not approved: landing baton/${s.id} on main conflicts in a\\.txt`));
		assert.deepEqual([state(s.root), state(s.ws.path)], before);
		const card = await show(s.id);
		assert.equal(card.status, 'ready');
		assert.equal(card.handoff, `rebase \`baton/${s.id}\` on \`main\`: conflicts in a.txt`);
		const events = (await agent.request('events/list', { cardId: s.id })).events;
		const conflict = events.find(e => e.type === 'land_conflicted');
		assert.deepEqual(conflict?.data.files, ['a.txt']);
	});

	it('a dirty checkout of the base is never overwritten: exit 1 naming the file, the card stays in review', async () => {
		const s = await inReview('rebase');
		writeFiles(s.root, { 'a.txt': 'my own edit\n' });
		const before = [state(s.root), state(s.ws.path)];
		const r = await baton(['approve', s.id, '--json'], s.root);
		assert.equal(r.code, 1);
		const body = JSON.parse(r.stdout) as { error: { code: string; message: string } };
		assert.equal(body.error.code, 'conflict');
		assert.match(body.error.message, /has main checked out with changes to files this landing changes: a\.txt/);
		assert.deepEqual([state(s.root), state(s.ws.path)], before);
		assert.equal((await show(s.id)).status, 'review');
	});
});

describe('stacked work through the claim path', () => {
	it("with --land none, a dependent's claimed worktree starts from its approved dependency's branch", async () => {
		const r = makeRepo({ 'README.md': '# r\n' });
		repos.push(r);
		await agent.request('project/settings/update', {
			project: 'stacked',
			worktrees: true,
			land: 'none',
			roots: { [host]: r.root },
		});
		await agent.request('card/create', {
			cards: [
				{ id: 'ST1', title: 'Schema', review: 'human', project: 'stacked' },
				{ id: 'ST2', title: 'API on the schema', dependsOn: ['ST1'], project: 'stacked' },
			],
		});
		const first = await agent.request('card/claim', { cardId: 'ST1', root: r.root });
		assert.equal(first.workspace?.base, 'main');
		const path1 = first.workspace.path;
		writeFiles(path1, { 'schema.sql': 'create table t ();\n' });
		commitAllFiles(path1, 'ST1: schema');
		await agent.request('card/complete', { cardId: 'ST1', ...(first.lease ? { epoch: first.lease.epoch } : {}) });
		const approved = await baton(['approve', 'ST1'], r.root);
		assert.equal(approved.code, 0, approved.stderr);
		assert.equal(gitOut(r.root, 'ls-tree', '--name-only', 'main'), 'README.md', 'none lands nothing');
		const second = await agent.request('card/claim', { cardId: 'ST2', root: r.root });
		assert.equal(second.workspace?.base, 'baton/ST1');
		assert.equal(readFileSync(path.join(second.workspace.path, 'schema.sql'), 'utf8'), 'create table t ();\n');
	});
});

describe('baton gc through the hub', () => {
	it('--dry-run lists exactly what gc then deletes; unsnapshotted work survives gc', async () => {
		const root = gcRepo.root;
		// GC1: done, its branch merged by the user. GC2: deleted, an unlanded commit in a clean worktree.
		await agent.request('card/create', {
			cards: [
				{ id: 'GC1', title: 'done and merged', project: 'gc-proj' },
				{ id: 'GC2', title: 'deleted', project: 'gc-proj' },
			],
		});
		const gc1 = await ensureWorktree({ repo: root, cardId: 'GC1' });
		writeFiles(gc1.path, { 'gc1.txt': 'one\n' });
		commitAllFiles(gc1.path, 'GC1 work');
		gitOut(root, 'merge', '-q', '--no-ff', '-m', 'merge GC1', 'baton/GC1');
		const claimed = await agent.request('card/claim', { cardId: 'GC1' });
		await agent.request('card/complete', { cardId: 'GC1', ...(claimed.lease ? { epoch: claimed.lease.epoch } : {}) });
		const gc2 = await ensureWorktree({ repo: root, cardId: 'GC2' });
		writeFiles(gc2.path, { 'gc2.txt': 'unlanded\n' });
		commitAllFiles(gc2.path, 'GC2 work');
		await agent.request('card/delete', { cardId: 'GC2' });

		const dryText = await baton(['gc', '--dry-run'], root);
		assert.equal(dryText.code, 0, dryText.stderr);
		const dryJson = await baton(['gc', '--dry-run', '--json'], root);
		const plan = (
			JSON.parse(dryJson.stdout) as { repos: { root: string; items: { kind: string; target: string }[] }[] }
		).repos;
		assert.equal(plan.length, 1);
		assert.deepEqual(plan[0]?.items.map(i => `${i.kind} ${i.target}`).sort(), [
			'branch refs/heads/baton/GC1',
			`worktree ${gc1.path}`,
			`worktree ${gc2.path}`,
		]);
		assert.ok(existsSync(gc1.path), 'the dry run deleted nothing');
		const real = await baton(['gc'], root);
		assert.equal(real.code, 0, real.stderr);
		const would = dryText.stdout.split('\n').filter(l => l.startsWith('  would delete '));
		const deleted = real.stdout.split('\n').filter(l => l.startsWith('  deleted '));
		assert.equal(would.length, 3);
		assert.deepEqual(
			deleted.map(l => l.replace('  deleted ', '')),
			would.map(l => l.replace('  would delete ', '')),
		);
		assert.match(real.stdout, /kept +worktree .*GONE2.*changes that are not snapshotted/);
		assert.ok(!existsSync(gc1.path) && !existsSync(gc2.path));
		assert.notEqual(gitOut(root, 'branch', '--list', 'baton/GC2'), '', 'unlanded commits stay');
		assert.equal(readFileSync(path.join(root, '.baton/worktrees/GONE2/gone2.txt'), 'utf8'), 'precious\n');
	});

	it('--force is refused from inside a coding agent, deleting nothing', async () => {
		const before = state(gcRepo.root);
		const r = await baton(['gc', '--force'], gcRepo.root, { CLAUDECODE: '1' });
		assert.equal(r.code, 1);
		assert.match(r.stderr, /Only a person can delete unlanded work with gc --force/);
		assert.equal(state(gcRepo.root), before);
	});
});
