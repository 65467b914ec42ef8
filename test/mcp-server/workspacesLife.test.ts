/**
 * Workspaces while working with real processes: the built `baton` hub, `baton mcp` agents
 * driven by the MCP SDK client, the CLI (in process: runCliHere), and real git repositories. Proves that an agent killed with
 * SIGKILL (its `baton mcp` and its own editing process) in the middle of its edits loses nothing: the
 * hub snapshots every edit into refs/baton/wip/<ID>/<attempt> and the next claimer's worktree has
 * 100 % of the files byte for byte (tracked modified, deleted, untracked; ignored ones not); that
 * complete commits what is uncommitted and reports the branch's counts; that release and fail snapshot
 * before the card changes, and a lease that runs out or a person's reclaim as soon as the hub sees it;
 * and that team mode pushes to a bare origin, a failed push being reported without losing the completion.
 * Project settings go through the protocol (`project/settings/update`), as `baton settings` sends them.
 * Its waits (a snapshot within 30 s of a 5 s lease running out or of an agent's death, a card back in
 * ready within 10 s) are many times what the events take, so it runs with the others two at a time
 * (scripts/testSuite.mjs), not alone.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
	type Agent,
	cleanupDataDir,
	ensureBuilt,
	isAlive,
	runCliHere,
	startAgent,
	tempDataDir,
	waitFor,
} from '../helpers/mcp';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { type HubProcess, client, hubEnv, startHub } from '../helpers/hub';
import { folderPicture, gitOut, makeRepo, type TestRepo, writeFiles } from '../helpers/workspaceRepo';

interface CardView {
	id: string;
	title: string;
	status: string;
	claimEpoch: number;
	project?: string;
	workspace?: {
		root?: string;
		host?: string;
		path: string;
		branch: string;
		base: string;
		head?: string;
		filesChanged?: number;
		insertions?: number;
		deletions?: number;
	};
}
interface Claimed {
	card: CardView | null;
	lease: { epoch: number } | null;
	workspace?: { path: string; branch: string; base: string };
	reason?: string;
}

let dataDir: string;
let schema: string;
let hub: HubProcess;
let repo: TestRepo;
let scratch: string;
let project: string;
const agents: Agent[] = [];
const editors: ChildProcess[] = [];
/** Ignored by the repository's .gitignore: never snapshotted, never restored. */
const ignoredAndGit = ['.git', '.baton', 'node_modules', 'debug.log'];

async function agent(id: string): Promise<Agent> {
	const a = await startAgent(dataDir, { cwd: repo.root, env: { BATON_AGENT: id } });
	agents.push(a);
	return a;
}

/** The person's CLI, in process (runCliHere): its words and exit codes; the bundle end to end is cliRun.test.ts's. */
async function baton(args: string[], cwd = repo.root): Promise<string> {
	const r = await runCliHere(args, { dataDir, cwd, env: { BATON_AGENT: 'person' } });
	assert.equal(r.code, 0, `baton ${args.join(' ')}: ${r.stderr}${r.stdout}`);
	return r.stdout;
}

/** `review`: a card of review none lands at complete (landingComplete.test.ts); these read the branch after it. */
async function createCard(title: string, review: 'none' | 'human' = 'none'): Promise<string> {
	const out = await baton(['create', title, '--review', review, '--json']);
	return (JSON.parse(out) as { cards: CardView[] }).cards[0]?.id ?? '';
}

/** Every file of a commit's tree as folderPicture sees a folder (modes, symlinks, bytes). */
function commitPicture(commit: string): Map<string, string> {
	const dir = mkdtempSync(path.join(scratch, 'tree-'));
	const tar = execFileSync('git', ['-C', repo.root, 'archive', '--format=tar', commit]);
	execFileSync('tar', ['-x', '-C', dir], { input: tar });
	return folderPicture(dir, ignoredAndGit);
}

function wipRefs(cardId: string): string[] {
	return gitOut(repo.root, 'for-each-ref', '--format=%(refname)', `refs/baton/wip/${cardId}/`)
		.split('\n')
		.filter(l => l !== '');
}

/** Differences between two pictures: files missing or different in `got`, and files only in `got`. */
function differences(want: Map<string, string>, got: Map<string, string>): { missing: string[]; extra: string[] } {
	return {
		missing: [...want].filter(([f, c]) => got.get(f) !== c).map(([f]) => f),
		extra: [...got.keys()].filter(f => !want.has(f)),
	};
}

/**
 * The "coding agent": edits the worktree without pause (new files in new folders, a changed file, a
 * deleted one, an executable, ignored files), printing "editing" once it is under way, until killed.
 */
const editorScript = `
const fs = require('node:fs');
const path = require('node:path');
const dir = process.argv[1];
fs.writeFileSync(path.join(dir, 'src/edit.ts'), Buffer.from([0, 1, 2, 255, 254, 10]));
fs.rmSync(path.join(dir, 'src/gone.ts'));
fs.writeFileSync(path.join(dir, 'bin/run.sh'), '#!/bin/sh\\necho changed\\n', { mode: 0o755 });
fs.chmodSync(path.join(dir, 'bin/run.sh'), 0o755);
fs.mkdirSync(path.join(dir, 'node_modules/dep'), { recursive: true });
fs.writeFileSync(path.join(dir, 'node_modules/dep/index.js'), 'ignored');
fs.writeFileSync(path.join(dir, 'debug.log'), 'ignored too');
let i = 0;
function more() {
	for (let n = 0; n < 20; n++, i++) {
		fs.mkdirSync(path.join(dir, 'gen', String(i % 7)), { recursive: true });
		fs.writeFileSync(path.join(dir, 'gen', String(i % 7), 'f' + i + '.txt'), 'line ' + i + '\\n'.repeat(i % 50 + 1));
	}
	if (i === 100) process.stdout.write('editing\\n');
	setImmediate(more);
}
more();
`;

function startEditor(worktree: string): Promise<ChildProcess> {
	const editor = spawn(process.execPath, ['-e', editorScript, worktree], { stdio: ['ignore', 'pipe', 'inherit'] });
	editors.push(editor);
	return new Promise((resolve, reject) => {
		editor.stdout.on('data', (chunk: Buffer) => {
			if (chunk.toString().includes('editing')) {
				resolve(editor);
			}
		});
		editor.on('exit', () => reject(new Error('the editor exited before it was under way')));
	});
}

before(async () => {
	ensureBuilt();
	dataDir = tempDataDir();
	repo = makeRepo({
		'.gitignore': 'node_modules\n*.log\n',
		'README.md': '# demo\n',
		'src/keep.ts': 'export const keep = 1;\n',
		'src/edit.ts': 'export const edit = 1;\n',
		'src/gone.ts': 'export const gone = 1;\n',
		'bin/run.sh': '#!/bin/sh\necho run\n',
	});
	scratch = path.join(repo.parent, 'scratch');
	mkdirSync(scratch);
	// The store is not what these cases prove; a PostgreSQL hub keeps PGlite's hundreds of MB out of
	// the process that spawns git for every claim and snapshot (each child forks it: 7x the CPU).
	schema = uniqueSchema();
	hub = await startHub({ dataDir, env: hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema }) });
	// The first card names the repository's project; then worktrees go on for it.
	const first = (JSON.parse(await baton(['create', 'Names the project', '--json'])) as { cards: CardView[] }).cards[0];
	assert.ok(first?.project !== undefined, 'the repository names a project');
	project = first.project;
	await baton(['delete', first.id]);
	await projectSettings({ worktrees: true, roots: { [hostname()]: repo.root } });
});

/** Changes the project's settings through the protocol, as `baton settings` does. */
async function projectSettings(patch: Record<string, unknown>): Promise<void> {
	const rpc = await client(dataDir);
	try {
		await rpc.request('project/settings/update', { project, ...patch });
	} finally {
		rpc.close();
	}
}

after(async () => {
	for (const e of editors) {
		e.kill('SIGKILL');
	}
	await Promise.all(agents.map(a => a.close().catch(() => undefined)));
	await hub.stop();
	await cleanupDataDir(dataDir);
	await dropSchema(schema);
	repo.cleanup();
});

describe('workspaces while working', () => {
	it('kill -9 of an agent mid-edit: every edit is in the WIP ref and the next claimer has 100 % of the files', async () => {
		const cardId = await createCard('Killed mid-edit');
		const a = await agent('agent-killed');
		const claimed = await a.json<Claimed>('claim', { cardId });
		assert.equal(claimed.card?.id, cardId);
		const ws = claimed.workspace;
		assert.ok(ws !== undefined, 'the claim returns the worktree');
		const epoch = claimed.lease?.epoch;
		const editor = await startEditor(ws.path);
		// Both at once, mid-edit: the agent's MCP server and its editing process.
		process.kill(a.pid, 'SIGKILL');
		editor.kill('SIGKILL');
		await waitFor(
			() => !isAlive(a.pid) && editor.exitCode === null && editor.signalCode !== null,
			10_000,
			'both to die',
		);
		const leftBehind = folderPicture(ws.path, ignoredAndGit);
		assert.ok(leftBehind.size > 100, `the editor wrote ${leftBehind.size} files`);

		// The hub notices the dead session and snapshots the worktree under the ended claim's epoch.
		const ref = `refs/baton/wip/${cardId}/${epoch}`;
		await waitFor(() => wipRefs(cardId).includes(ref), 30_000, ref);
		assert.deepEqual(differences(leftBehind, commitPicture(ref)), { missing: [], extra: [] });
		const tree = gitOut(repo.root, 'ls-tree', '-r', '--name-only', ref);
		assert.ok(!tree.includes('node_modules') && !tree.includes('debug.log'), 'ignored files stay out');
		assert.ok(!tree.split('\n').includes('src/gone.ts'), 'the deletion is in the snapshot');

		// The next claimer, in a fresh worktree (the old one removed), gets every file byte for byte.
		await waitFor(
			async () => (JSON.parse(await baton(['show', cardId, '--json'])) as { card: CardView }).card.status === 'ready',
			10_000,
			'the card back in ready',
		);
		gitOut(repo.root, 'worktree', 'remove', '--force', ws.path);
		const b = await agent('agent-next');
		const next = await b.json<Claimed>('claim', { cardId });
		assert.equal(next.card?.id, cardId);
		assert.equal(next.workspace?.path, ws.path);
		assert.deepEqual(differences(leftBehind, folderPicture(ws.path, ignoredAndGit)), { missing: [], extra: [] });
		assert.equal(gitOut(ws.path, 'diff', '--cached', '--name-only'), '', 'nothing staged: as the agent left it');
		await b.json('release', { cardId });
	});

	it('complete commits the uncommitted work with the card id and title, and show and complete carry the counts', async () => {
		const cardId = await createCard('Complete commits', 'human');
		const a = await agent('agent-complete');
		const claimed = await a.json<Claimed>('claim', { cardId });
		assert.equal(claimed.card?.id, cardId);
		const ws = claimed.workspace;
		assert.ok(ws !== undefined);
		writeFiles(ws.path, { 'src/edit.ts': 'export const edit = 2;\nexport const more = 3;\n', 'src/new.ts': 'new\n' });
		rmSync(path.join(ws.path, 'src/gone.ts'));
		writeFiles(ws.path, { 'debug.log': 'ignored\n' });
		const done = await a.json<{ card: CardView }>('complete', { cardId, result: 'done' });
		assert.equal(done.card.status, 'review');
		const head = gitOut(ws.path, 'rev-parse', 'HEAD');
		assert.equal(gitOut(ws.path, 'log', '-1', '--format=%s'), `${cardId}: Complete commits`);
		assert.equal(gitOut(ws.path, 'status', '--porcelain'), '', 'nothing left uncommitted');
		const counts = { head, filesChanged: 3, insertions: 3, deletions: 2 };
		assert.deepEqual(
			{
				head: done.card.workspace?.head,
				filesChanged: done.card.workspace?.filesChanged,
				insertions: done.card.workspace?.insertions,
				deletions: done.card.workspace?.deletions,
			},
			counts,
		);
		assert.equal(done.card.workspace?.root, undefined, 'the MCP output leaves the root and host out');
		const shown = (JSON.parse(await baton(['show', cardId, '--json'])) as { card: CardView }).card;
		assert.equal(shown.workspace?.head, head);
		assert.equal(shown.workspace.filesChanged, 3);
		assert.match(await baton(['show', cardId]), new RegExp(`changes\\s+3 files, \\+3 −2 at ${head.slice(0, 8)}`));
	});

	it('the CLI complete reports the counts; release and fail snapshot before the card changes', async () => {
		const cardId = await createCard('Released with edits', 'human');
		const a = await agent('agent-release');
		const claimed = await a.json<Claimed>('claim', { cardId });
		assert.equal(claimed.card?.id, cardId);
		const ws = claimed.workspace;
		assert.ok(ws !== undefined);
		writeFiles(ws.path, { 'half.txt': 'half done\n' });
		const epoch = claimed.lease?.epoch;
		await a.json('release', { cardId, reason: 'stuck' });
		// Already there when release answers: the snapshot came before the write.
		assert.deepEqual(wipRefs(cardId), [`refs/baton/wip/${cardId}/${epoch}`]);

		const again = await a.json<Claimed>('claim', { cardId });
		assert.equal(again.card?.id, cardId);
		writeFiles(ws.path, { 'half.txt': 'failed halfway\n' });
		await a.json('fail', { cardId, reason: 'broken', backoffSeconds: 0 });
		const refs = wipRefs(cardId);
		assert.ok(refs.includes(`refs/baton/wip/${cardId}/${again.lease?.epoch}`), refs.join(' '));
		assert.equal(
			gitOut(repo.root, 'show', `refs/baton/wip/${cardId}/${again.lease?.epoch}:half.txt`),
			'failed halfway',
		);

		// A person claims it from the CLI in the repository and completes it there.
		await waitFor(
			async () => (JSON.parse(await baton(['show', cardId, '--json'])) as { card: CardView }).card.status === 'ready',
			30_000,
			'the card back in ready',
		);
		const cli = JSON.parse(await baton(['claim', cardId, '--json'])) as Claimed;
		assert.equal(cli.card?.id, cardId);
		const out = await baton(['complete', cardId, '--result', 'ok']);
		assert.match(out, new RegExp(`Branch baton/${cardId}: 1 file, \\+1 −0 at [0-9a-f]{8} against main\\.`));
	});

	it('team mode pushes the branch to a bare origin; a failed push is reported and the completion stands', async () => {
		const origin = path.join(repo.parent, 'origin.git');
		gitOut(repo.parent, 'init', '-q', '--bare', origin);
		gitOut(repo.root, 'remote', 'add', 'origin', origin);
		await projectSettings({ push: true });
		const a = await agent('agent-push');
		const pushed = await createCard('Pushed at complete', 'human');
		const claimed = await a.json<Claimed>('claim', { cardId: pushed });
		assert.equal(claimed.card?.id, pushed);
		writeFiles(claimed.workspace?.path ?? '', { 'pushed.txt': 'to origin\n' });
		const ok = await a.json<{ card: CardView; push?: { ok: boolean; commit?: string } }>('complete', {
			cardId: pushed,
		});
		assert.equal(ok.push?.ok, true);
		assert.equal(gitOut(origin, 'rev-parse', `refs/heads/baton/${pushed}`), ok.card.workspace?.head);

		// The remote goes away: the completion stands, the result and the card's messages say so.
		gitOut(repo.root, 'remote', 'set-url', 'origin', path.join(repo.parent, 'gone.git'));
		const lost = await createCard('Push fails', 'human');
		const next = await a.json<Claimed>('claim', { cardId: lost });
		assert.equal(next.card?.id, lost);
		writeFiles(next.workspace?.path ?? '', { 'lost.txt': 'not pushed\n' });
		const failed = await a.json<{ card: CardView; push?: { ok: boolean; error?: string } }>('complete', {
			cardId: lost,
		});
		assert.equal(failed.card.status, 'review');
		assert.equal(failed.push?.ok, false);
		assert.match(failed.push.error ?? '', /Pushing baton\/.* to origin .* failed/);
		const shown = JSON.parse(await baton(['show', lost, '--json'])) as {
			card: CardView;
			messages: { from: string; text: string }[];
		};
		assert.equal(shown.card.status, 'review');
		assert.ok(shown.messages.some(m => m.from === 'baton' && /pushing baton\/.* to origin failed/.test(m.text)));
		await projectSettings({ push: false });
	});

	it('lease expiry: the reaper takes the card back and the hub snapshots the worktree under the expired claim', async () => {
		const cardId = await createCard('Lease runs out');
		// The CLI keeps no lease alive: a 5 s lease without heartbeats expires.
		const claimed = JSON.parse(await baton(['claim', cardId, '--ttl', '5', '--json'])) as Claimed;
		assert.equal(claimed.card?.id, cardId);
		const ws = claimed.workspace;
		assert.ok(ws !== undefined);
		writeFiles(ws.path, { 'expired.txt': 'left when the lease ran out\n' });
		const ref = `refs/baton/wip/${cardId}/${claimed.lease?.epoch}`;
		await waitFor(() => wipRefs(cardId).includes(ref), 30_000, ref);
		assert.equal(gitOut(repo.root, 'show', `${ref}:expired.txt`), 'left when the lease ran out');
		const shown = JSON.parse(await baton(['show', cardId, '--json'])) as { card: CardView };
		assert.equal(shown.card.status, 'ready');
	});

	it('a person takes a card back (reclaim) from a live agent: the worktree is snapshotted under its claim', async () => {
		const cardId = await createCard('Taken back');
		const a = await agent('agent-taken');
		const claimed = await a.json<Claimed>('claim', { cardId });
		const ws = claimed.workspace;
		assert.ok(ws !== undefined);
		writeFiles(ws.path, { 'taken.txt': 'mid-work when taken\n' });
		await baton(['reclaim', cardId, '--reason', 'taking over']);
		const ref = `refs/baton/wip/${cardId}/${claimed.lease?.epoch}`;
		await waitFor(() => wipRefs(cardId).includes(ref), 30_000, ref);
		assert.equal(gitOut(repo.root, 'show', `${ref}:taken.txt`), 'mid-work when taken');
	});
});
