/**
 * Hostile agents started the way Baton starts agents, `baton run --command` (test/fixtures/
 * hostileGitAgent.mjs: the MCP session the supervisor configured, then plain shell commands in its
 * worktree), against a real hub on a real repository with workspaces on:
 * - it commits a `.baton` symlink on its branch and completes; a person's approval is refused, and the
 *   other card's live worktree keeps its uncommitted work, main and the user's checkout are unchanged,
 *   nothing is written outside the repository, and the next claim still gets its worktree inside it;
 * - it deletes its worktree's `.git` and completes; the completion is refused and the user's main
 *   checkout (an edit in progress, an untracked private file) is neither committed nor snapshotted;
 * - three at once: one edits the repository's husky hook (the hub's commit runs the repository's own),
 *   one commits `.env` and `node_modules` (approval refused, the user's ignored files untouched), one
 *   writes inside an uninitialised submodule folder (reported at complete, kept at landing).
 * The include copy and snapshot restore through a committed symlink need a second attempt on a
 * re-made worktree: workspacesHostile.test.ts proves them on the hub's git steps directly.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { type HubProcess, client, hubEnv, removeDataDir, startHub, tempDataDir } from '../helpers/hub';
import { ensureBuilt, repoRoot, runBaton } from '../helpers/mcp';
import { startRun } from '../helpers/runSupervisor';
import { folderPicture, gitOut, makeRepo, type TestRepo, writeFiles } from '../helpers/workspaceRepo';

const hostileAgent = path.join(repoRoot, 'test', 'fixtures', 'hostileGitAgent.mjs');

let dataDir: string;
let schema: string;
let hub: HubProcess;
let api: RpcClient;
let repo: TestRepo;
let project: string;
let outsideDir: string;

function baton(args: string[]) {
	return runBaton(args, { dataDir, cwd: repo.root, env: { BATON_AGENT: 'cli:alice' } });
}

async function show(id: string): Promise<Card> {
	return (await api.request('card/get', { cardId: id })).card;
}

/** What the user has: main's commit, the main checkout's files (ignored ones too) and status. */
function userState(): string {
	return [
		gitOut(repo.root, 'rev-parse', 'main'),
		gitOut(repo.root, 'status', '--porcelain', '--ignored'),
		[...folderPicture(repo.root, ['.git', '.baton']).entries()].sort().join('\n'),
	].join('\n--\n');
}

function outsidePicture(): string {
	return [...folderPicture(outsideDir, []).entries()].sort().join('\n');
}

/** Runs the hostile agent on card `id` (its phase) until it exits; returns its exit code. */
async function runHostile(phase: string, id: string): Promise<unknown> {
	const run = startRun(
		dataDir,
		['--phase', phase, '--name', phase, '--seats', '1', '--project', project],
		{ HOSTILE_TARGET: outsideDir },
		hostileAgent,
	);
	try {
		const exited = await run.waitFor(e => e.event === 'exited' && e.cardId === id, 90_000, `${id}'s agent to exit`);
		return exited.code;
	} finally {
		run.proc.kill('SIGINT');
		await run.exited;
	}
}

before(async () => {
	ensureBuilt();
	dataDir = tempDataDir();
	// The store is not what these cases prove; a PostgreSQL hub keeps PGlite's hundreds of MB out of
	// the process that spawns git for every claim (each child forks it: 7x the CPU).
	schema = uniqueSchema();
	hub = await startHub({ dataDir, env: hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema }) });
	api = await client(dataDir, { agent: { id: 'vscode:alice' } });
	repo = makeRepo({ '.gitignore': '.env\n', 'README.md': '# hostile\n', 'src/a.ts': 'export const a = 1;\n' });
	gitOut(repo.root, 'remote', 'add', 'origin', 'https://github.com/acme/hostile.git');
	project = 'github.com/acme/hostile';
	outsideDir = mkdtempSync('/tmp/bt-outside-');
	writeFileSync(path.join(outsideDir, 'victim.txt'), 'keep me\n');
	const on = await baton(['settings', '--worktrees', 'on']);
	assert.equal(on.code, 0, on.stderr);
});

after(async () => {
	api.close();
	await hub.stop();
	removeDataDir(dataDir);
	await dropSchema(schema);
	repo.cleanup();
	rmSync(outsideDir, { recursive: true, force: true });
});

describe('a hostile agent under baton run --command', () => {
	it('commits a .baton symlink: approval is refused and every other worktree, main and the outside are unchanged', async () => {
		// Another card's live worktree with uncommitted work, held by another agent.
		await api.request('card/create', { cards: [{ id: 'LIVE', title: 'Live work', project }] });
		const holder = await client(dataDir, { agent: { id: 'agent-live' } });
		try {
			const live = await holder.request('card/claim', { cardId: 'LIVE', root: repo.root });
			const liveWt = live.workspace?.path ?? '';
			writeFiles(liveWt, { 'src/live.ts': 'uncommitted work\n' });
			await api.request('card/create', {
				cards: [{ id: 'EVIL', title: 'baton-symlink attack', project, phase: 'evil', review: 'human', maxAttempts: 1 }],
			});
			assert.equal(await runHostile('evil', 'EVIL'), 0);
			assert.equal((await show('EVIL')).status, 'review');
			const before = userState();
			const approve = await baton(['approve', 'EVIL']);
			assert.equal(approve.code, 1, approve.stdout);
			assert.match(approve.stderr, /commits \.baton, where Baton keeps the card worktrees/);
			assert.equal((await show('EVIL')).status, 'review');
			assert.equal(userState(), before);
			assert.equal(readFileSync(path.join(liveWt, 'src/live.ts'), 'utf8'), 'uncommitted work\n');
			assert.equal(outsidePicture(), 'victim.txt,644:a2VlcCBtZQo=');
			// The next claim's worktree is inside the repository.
			await api.request('card/create', { cards: [{ id: 'NEXT', title: 'Next', project }] });
			const next = await holder.request('card/claim', { cardId: 'NEXT', root: repo.root });
			assert.equal(next.workspace?.path, path.join(repo.root, '.baton', 'worktrees', 'NEXT'));
		} finally {
			holder.close();
		}
	});

	it("deletes its worktree's .git: complete is refused, the user's checkout is not committed or snapshotted", async () => {
		writeFiles(repo.root, { 'src/a.ts': 'export const a = 2; // the user is editing\n', 'private.txt': 'mine\n' });
		mkdirSync(path.join(repo.root, 'notes'), { recursive: true });
		await api.request('card/create', {
			cards: [{ id: 'DROP', title: 'drop-git attack', project, phase: 'drop', maxAttempts: 1 }],
		});
		const before = userState();
		const wips = gitOut(repo.root, 'for-each-ref', 'refs/baton/');
		assert.equal(await runHostile('drop', 'DROP'), 5);
		assert.equal(userState(), before);
		assert.equal(gitOut(repo.root, 'for-each-ref', 'refs/baton/'), wips, 'no snapshot of the main checkout');
		assert.notEqual((await show('DROP')).status, 'done');
		assert.equal(outsidePicture(), 'victim.txt,644:a2VlcCBtZQo=');
	});
});

describe('hostile agents editing what the hub acts on, three at once under baton run --command', () => {
	let hookMarks: string;
	before(async () => {
		// The repository's hooks path is husky's, with the user's own pre-commit; a submodule nobody
		// initialised; the user's ignored .env and node_modules/ in the main checkout.
		hookMarks = path.join(outsideDir, 'ran');
		writeFiles(repo.root, {
			'.husky/pre-commit': `#!/bin/sh\necho base-hook >> "${hookMarks}"\n`,
			'.gitignore': '.env\nnode_modules/\n',
			'.gitmodules': '[submodule "lib"]\n\tpath = vendor/lib\n\turl = ./nowhere\n',
		});
		gitOut(repo.root, 'add', '.husky/pre-commit', '.gitignore', '.gitmodules');
		gitOut(repo.root, 'update-index', '--chmod=+x', '.husky/pre-commit');
		gitOut(
			repo.root,
			'update-index',
			'--add',
			'--cacheinfo',
			`160000,${gitOut(repo.root, 'rev-parse', 'HEAD')},vendor/lib`,
		);
		gitOut(repo.root, 'commit', '-q', '--no-verify', '-m', 'husky, a submodule, ignores');
		gitOut(repo.root, 'checkout', '--', '.husky/pre-commit');
		gitOut(repo.root, 'config', 'core.hooksPath', '.husky');
		writeFiles(repo.root, { '.env': 'SECRET=user\n', 'node_modules/dep/index.js': 'dep\n' });
		await api.request('card/create', {
			cards: [
				{ id: 'HUSKY', title: 'husky attack', project, phase: 'more', review: 'human', maxAttempts: 1 },
				{ id: 'IGN', title: 'ignored-files attack', project, phase: 'more', review: 'human', maxAttempts: 1 },
				{ id: 'SUB', title: 'submodule attack', project, phase: 'more', review: 'human', maxAttempts: 1 },
			],
		});
		const run = startRun(
			dataDir,
			['--phase', 'more', '--name', 'more', '--seats', '3', '--project', project],
			{ HOSTILE_TARGET: outsideDir },
			hostileAgent,
		);
		try {
			for (const id of ['HUSKY', 'IGN', 'SUB']) {
				const exited = await run.waitFor(e => e.event === 'exited' && e.cardId === id, 90_000, `${id}'s agent to exit`);
				assert.equal(exited.code, 0, `${id}: ${run.stderr()}`);
			}
		} finally {
			run.proc.kill('SIGINT');
			await run.exited;
		}
	});

	after(() => {
		gitOut(repo.root, 'config', '--unset', 'core.hooksPath');
		rmSync(hookMarks, { force: true });
	});

	it("edits the husky hook: the hub's commit at complete runs the repository's hook, never the agent's", async () => {
		assert.equal((await show('HUSKY')).status, 'review');
		const ran = readFileSync(hookMarks, 'utf8');
		assert.match(ran, /^base-hook$/m, 'the hub committed with the repository’s hook');
		assert.equal(ran.includes('agent-code'), false);
	});

	it("commits .env and node_modules: approval is refused, the user's ignored files untouched", async () => {
		const before = userState();
		const approve = await baton(['approve', 'IGN']);
		assert.equal(approve.code, 1, approve.stdout);
		assert.match(approve.stderr, /untracked or ignored files or folders where baton\/IGN adds/);
		assert.equal(userState(), before);
		assert.equal(readFileSync(path.join(repo.root, '.env'), 'utf8'), 'SECRET=user\n');
		assert.equal(readFileSync(path.join(repo.root, 'node_modules/dep/index.js'), 'utf8'), 'dep\n');
		assert.equal((await show('IGN')).status, 'review');
	});

	it('writes inside an uninitialised submodule folder: reported at complete, kept at landing, not dropped', async () => {
		const sub = await api.request('card/get', { cardId: 'SUB' });
		assert.ok(
			sub.messages.some(m => m.text.includes('were not committed: vendor/lib/patched.c')),
			JSON.stringify(sub.messages.map(m => m.text)),
		);
		const wt = sub.card.workspace?.path ?? '';
		const approve = await baton(['approve', 'SUB']);
		assert.equal(approve.code, 0, approve.stderr);
		assert.equal((await show('SUB')).status, 'done');
		assert.equal(gitOut(repo.root, 'show', 'main:beside.txt'), 'beside');
		assert.equal(readFileSync(path.join(wt, 'vendor/lib/patched.c'), 'utf8'), 'int x;\n');
		assert.equal(outsidePicture().includes('agent-code'), false);
	});
});
