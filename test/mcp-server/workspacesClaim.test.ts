/**
 * Workspaces turned on and claimed, on real git repositories
 * against one real hub: `baton settings --worktrees on|off` and each refusal (not a repository, bare,
 * detached, a missing base, git missing: exit 1, settings unchanged), `baton init --worktrees`; an MCP
 * claim (real SDK client, `baton mcp` started inside the repository) returns workspace {path, branch,
 * base}; `baton claim` does too; a released card's branch continues with its WIP restored; the include
 * files are copied and the setup command's outcome is in the card's history; a git refusal hands the
 * card back with the reason; a project without workspaces claims as before (no git, no folder).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { findGitRepo } from '../../core/client/gitRepo';
import type { BacklogEvent, ProjectSettings, Result, WorkspaceSetup } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { snapshotWip } from '../../mcp-server/workspaces/wip';
import { removeWorktree } from '../../mcp-server/workspaces/worktree';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { type HubProcess, client, hubEnv, startHub } from '../helpers/hub';
import { type Agent, type CliResult, cleanupDataDir, ensureBuilt, runCliHere, startAgent } from '../helpers/mcp';
import { gitOut, makeRepo, type TestRepo, writeFiles } from '../helpers/workspaceRepo';

let dataDir: string;
let schema: string;
let hub: HubProcess;
let admin: RpcClient;
const repos: TestRepo[] = [];
const agents: Agent[] = [];

/** A repository on main whose project is github.com/acme/<name> (an origin remote names it). */
async function repo(name: string, files?: Record<string, string>): Promise<{ root: string; project: string }> {
	const r = makeRepo(files);
	repos.push(r);
	gitOut(r.root, 'remote', 'add', 'origin', `https://github.com/acme/${name}.git`);
	const found = await findGitRepo(r.root);
	assert.ok(found !== undefined);
	return { root: r.root, project: found.project };
}

/** The CLI in this process (its words and exit codes; the process face has its own smoke tests). */
function baton(args: string[], cwd: string, env: Record<string, string> = {}): Promise<CliResult> {
	return runCliHere(args, { dataDir, cwd, env: { BATON_AGENT: 'cli:alice', ...env } });
}

async function settingsOf(project: string): Promise<ProjectSettings> {
	return admin.request('project/settings', { project });
}

/** A card's history, with the workspace setup keys an `updated` event may carry (protocol WorkspaceSetup). */
async function history(cardId: string): Promise<(BacklogEvent & { data: WorkspaceSetup })[]> {
	return (await admin.request('card/get', { cardId })).history;
}

before(async () => {
	ensureBuilt();
	dataDir = path.join(mkdtempSync('/tmp/bt-wc-'), 'd');
	// The store is not what these cases prove; a PostgreSQL hub keeps PGlite's hundreds of MB out of
	// the process that spawns git for every claim (each child forks it: 7x the CPU).
	schema = uniqueSchema();
	hub = await startHub({ dataDir, env: hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema }) });
	admin = await client(dataDir, { agent: { id: 'vscode:alice' } });
});

after(async () => {
	for (const a of agents) {
		await a.close().catch(() => undefined);
	}
	admin.close();
	await hub.stop();
	await cleanupDataDir(dataDir);
	await dropSchema(schema);
	rmSync(path.dirname(dataDir), { recursive: true, force: true });
	for (const r of repos) {
		r.cleanup();
	}
});

describe('baton settings --worktrees', () => {
	it('turns workspaces on inside the repository (recording its root here) and off again', async () => {
		const { root, project } = await repo('web');
		const on = await baton(['settings', '--worktrees', 'on', '--worktree-setup', 'true', '--land', 'merge'], root);
		assert.equal(on.code, 0, on.stderr);
		assert.match(on.stdout, new RegExp(`workspaces +on for ${project.replaceAll('.', '\\.')}`));
		assert.match(on.stdout, /branch baton\/<ID> from the default branch/);
		assert.match(on.stdout, new RegExp(`This machine \\(${hostname()}\\) uses the checkout ${root}`));
		const s = await settingsOf(project);
		assert.deepEqual(
			{ worktrees: s.worktrees, land: s.land, setup: s.setup, roots: s.roots },
			{ worktrees: true, land: 'merge', setup: 'true', roots: { [hostname()]: root } },
		);
		const shown = await baton(['settings'], root);
		assert.match(shown.stdout, /workspaces +on for/, 'plain `baton settings` in the repository shows them');
		const off = await baton(['settings', '--worktrees', 'off', '--json'], root);
		assert.equal(off.code, 0, off.stderr);
		assert.equal((JSON.parse(off.stdout) as ProjectSettings).worktrees, false);
		assert.deepEqual((await settingsOf(project)).roots, { [hostname()]: root }, 'the root stays recorded');
	});

	it('refuses a folder outside any repository, a bare one, a detached HEAD, a missing base and a missing git, changing nothing', async () => {
		const plain = mkdtempSync('/tmp/bt-wc-plain-');
		const { root, project } = await repo('api');
		const bare = path.join(path.dirname(root), 'bare.git');
		gitOut(root, 'clone', '-q', '--bare', root, bare);
		const cases: { cwd: string; args: string[]; env?: Record<string, string>; why: RegExp }[] = [
			{ cwd: plain, args: ['--project', project], why: /is not a git repository/ },
			{ cwd: bare, args: ['--project', project], why: /bare repository/ },
			{ cwd: root, args: ['--base', 'nope'], why: /Base branch "nope" does not exist/ },
			{ cwd: root, args: ['--project', project], env: { PATH: plain }, why: /git was not found on PATH/ },
		];
		try {
			for (const c of cases) {
				const r = await baton(['settings', '--worktrees', 'on', ...c.args], c.cwd, c.env);
				assert.equal(r.code, 1, `${c.why}: ${r.stdout}${r.stderr}`);
				assert.match(r.stderr, c.why);
			}
			gitOut(root, 'checkout', '-q', '--detach');
			const detached = await baton(['settings', '--worktrees', 'on'], root);
			assert.equal(detached.code, 1);
			assert.match(detached.stderr, /detached HEAD/);
			const outside = await baton(['settings', '--worktrees', 'on'], plain);
			assert.equal(outside.code, 1);
			assert.match(outside.stderr, /inside its git repository, or name it with --project/);
			const s = await settingsOf(project);
			assert.equal(s.worktrees, false, 'nothing was turned on');
			assert.deepEqual(s.roots, {});
			const badWord = await baton(['settings', '--worktrees', 'yes'], root);
			assert.equal(badWord.code, 2);
			assert.match(badWord.stderr, /--worktrees yes: use on or off/);
		} finally {
			rmSync(plain, { recursive: true, force: true });
		}
	});

	it('baton init --worktrees turns them on and says so', async () => {
		const { root, project } = await repo('docs');
		const r = await baton(['init', '--worktrees', '--launch', 'node'], root);
		assert.equal(r.code, 0, r.stderr);
		assert.match(r.stdout, /Workspaces turned on \(as baton settings --worktrees on\)/);
		assert.equal((await settingsOf(project)).worktrees, true);
	});
});

describe('claim with workspaces on', () => {
	it('an MCP claim returns workspace {path, branch, base}; the card records it', async () => {
		const { root, project } = await repo('shop', { 'README.md': '# shop\n', 'src/a.ts': 'export const a = 1;\n' });
		assert.equal((await baton(['settings', '--worktrees', 'on'], root)).code, 0);
		const agent = await startAgent(dataDir, { cwd: root, env: { BATON_AGENT: 'agent-mcp' } });
		agents.push(agent);
		await agent.json('create', { cards: [{ id: 'SHOP-1', title: 'Add a file' }] });
		const claimed = await agent.json<{ card: { id: string }; workspace?: Record<string, string> }>('claim', {
			cardId: 'SHOP-1',
		});
		const wsPath = path.join(root, '.baton', 'worktrees', 'SHOP-1');
		assert.deepEqual(claimed.workspace, { path: wsPath, branch: 'baton/SHOP-1', base: 'main' });
		assert.equal(readFileSync(path.join(wsPath, 'src/a.ts'), 'utf8'), 'export const a = 1;\n');
		assert.equal(gitOut(wsPath, 'rev-parse', '--abbrev-ref', 'HEAD'), 'baton/SHOP-1');
		assert.equal(gitOut(root, 'status', '--porcelain'), '', 'the main checkout does not see the worktree');
		const card = (await admin.request('card/get', { cardId: 'SHOP-1' })).card;
		assert.deepEqual(card.workspace, {
			root,
			path: wsPath,
			branch: 'baton/SHOP-1',
			base: 'main',
			host: hostname(),
		});
		assert.equal(card.project, project);
	});

	it('`baton claim` from inside the repository gets one too, and says where to work', async () => {
		const { root } = await repo('cli');
		assert.equal((await baton(['settings', '--worktrees', 'on'], root)).code, 0);
		assert.equal((await baton(['create', 'From the CLI', '--id', 'CLI-1'], root)).code, 0);
		const r = await baton(['claim', 'CLI-1'], root);
		assert.equal(r.code, 0, r.stderr);
		const wsPath = path.join(root, '.baton', 'worktrees', 'CLI-1');
		assert.match(
			r.stdout,
			new RegExp(`Workspace: ${wsPath} \\(branch baton/CLI-1 from main\\): work and commit only there`),
		);
		assert.ok(existsSync(path.join(wsPath, 'README.md')));
	});

	it('continues a released card on its branch with its newest WIP restored', async () => {
		const { root, project } = await repo('wip');
		await admin.request('project/settings/update', { project, worktrees: true, roots: { [hostname()]: root } });
		await admin.request('card/create', { cards: [{ id: 'WIP-1', title: 'Half done', project }] });
		const first = await client(dataDir, { agent: { id: 'agent-a' } });
		const second = await client(dataDir, { agent: { id: 'agent-b' } });
		try {
			const a = await first.request('card/claim', { cardId: 'WIP-1', project, root });
			const wsPath = a.workspace?.path ?? '';
			writeFiles(wsPath, { 'notes/plan.md': 'step 1 done\n', 'README.md': '# changed\n' });
			gitOut(wsPath, 'add', 'README.md');
			gitOut(wsPath, 'commit', '-q', '-m', 'first commit on the branch');
			writeFiles(wsPath, { 'src/new.ts': 'export const n = 2;\n' });
			// What the release path does (wipKeeper.ts): snapshot; then the worktree goes away.
			assert.ok((await snapshotWip({ worktree: wsPath, cardId: 'WIP-1', attempt: 1 })) !== null);
			await removeWorktree({ repo: root, cardId: 'WIP-1', force: true });
			await first.request('card/release', { cardId: 'WIP-1', reason: 'out of time' });
			const b = await second.request('card/claim', { cardId: 'WIP-1', project, root });
			assert.equal(b.workspace?.path, wsPath);
			assert.equal(readFileSync(path.join(wsPath, 'README.md'), 'utf8'), '# changed\n', 'the commit is on the branch');
			assert.equal(readFileSync(path.join(wsPath, 'notes/plan.md'), 'utf8'), 'step 1 done\n');
			assert.equal(readFileSync(path.join(wsPath, 'src/new.ts'), 'utf8'), 'export const n = 2;\n');
			const restored = (await history('WIP-1')).filter(e => e.data.restored !== undefined);
			assert.equal(restored.length, 1);
			assert.deepEqual(restored[0]?.data.restored?.files.sort(), ['notes/plan.md', 'src/new.ts']);
		} finally {
			first.close();
			second.close();
		}
	});

	it('copies the include files and records the setup command’s outcome in the history', async () => {
		const { root, project } = await repo('setup', { 'README.md': '# s\n', '.gitignore': '.env\n' });
		writeFileSync(path.join(root, '.env'), 'SECRET=1\n');
		writeFiles(root, { '.baton/worktree-include': '.env\n' });
		await admin.request('project/settings/update', {
			project,
			worktrees: true,
			setup: 'echo set-up-ok; touch .setup-done',
			roots: { [hostname()]: root },
		});
		await admin.request('card/create', {
			cards: [
				{ id: 'SET-1', title: 'Set up', project },
				{ id: 'SET-2', title: 'Set up badly', project },
			],
		});
		const agent = await client(dataDir, { agent: { id: 'agent-s' } });
		try {
			const r = await agent.request('card/claim', { cardId: 'SET-1', project });
			const wsPath = r.workspace?.path ?? '';
			assert.equal(readFileSync(path.join(wsPath, '.env'), 'utf8'), 'SECRET=1\n');
			assert.ok(existsSync(path.join(wsPath, '.setup-done')));
			const recorded = (await history('SET-1')).find(e => e.data.setup !== undefined);
			assert.equal(recorded?.type, 'updated');
			assert.deepEqual(recorded.data.copied, ['.env']);
			assert.deepEqual(
				{
					exitCode: recorded.data.setup?.exitCode,
					timedOut: recorded.data.setup?.timedOut,
					tail: recorded.data.setup?.tail,
				},
				{ exitCode: 0, timedOut: false, tail: ['set-up-ok'] },
			);
			// A failing setup is recorded too; the claim stands (the agent can see and fix it).
			await admin.request('project/settings/update', { project, setup: 'echo broken >&2; exit 3' });
			const bad = await agent.request('card/claim', { cardId: 'SET-2', project });
			assert.ok(bad.workspace !== undefined);
			const failed = (await history('SET-2')).find(e => e.data.setup !== undefined);
			assert.deepEqual(
				{ exitCode: failed?.data.setup?.exitCode, tail: failed?.data.setup?.tail },
				{ exitCode: 3, tail: ['broken'] },
			);
		} finally {
			agent.close();
		}
	});

	it('hands the card back with the reason when git refuses, changing nothing else', async () => {
		const { root, project } = await repo('clash');
		gitOut(root, 'branch', 'baton/CLASH-1'); // someone's own branch, not Baton's
		await admin.request('project/settings/update', { project, worktrees: true, roots: { [hostname()]: root } });
		await admin.request('card/create', { cards: [{ id: 'CLASH-1', title: 'Clash', project }] });
		const agent = await client(dataDir, { agent: { id: 'agent-c' } });
		try {
			await assert.rejects(agent.request('card/claim', { cardId: 'CLASH-1', project, root }), (e: Error) => {
				assert.match(e.message, /Branch baton\/CLASH-1 exists but was not made by Baton/);
				return true;
			});
			const got = await admin.request('card/get', { cardId: 'CLASH-1' });
			assert.equal(got.card.status, 'ready');
			assert.equal(got.card.claimOwner, null);
			assert.equal(got.card.workspace, undefined);
			const types = got.history.map(e => e.type);
			assert.deepEqual(types, ['created', 'claimed', 'released']);
			assert.match(got.history[2]?.data.reason ?? '', /^no workspace: Branch baton\/CLASH-1 exists/);
			assert.equal(existsSync(path.join(root, '.baton')), false);
		} finally {
			agent.close();
		}
	});
});

describe('claim without workspaces', () => {
	it('is unchanged: no workspace in the answer, on the card, or in the repository', async () => {
		const { root, project } = await repo('plain');
		await admin.request('card/create', {
			cards: [
				{ id: 'PLAIN-1', title: 'Plain', project },
				{ id: 'FREE-1', title: 'No project' },
			],
		});
		const agent = await client(dataDir, { agent: { id: 'agent-p' } });
		try {
			for (const cardId of ['PLAIN-1', 'FREE-1']) {
				const r: Result<'card/claim'> = await agent.request('card/claim', { cardId, project, root });
				assert.equal(r.card?.id, cardId);
				assert.equal('workspace' in r, false);
				assert.equal(JSON.stringify(r.card).includes('"workspace"'), false);
			}
			assert.equal(existsSync(path.join(root, '.baton')), false);
			assert.deepEqual(
				(await history('PLAIN-1')).map(e => e.type),
				['created', 'claimed'],
			);
		} finally {
			agent.close();
		}
	});
});
