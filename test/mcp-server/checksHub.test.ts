/**
 * Checks before review through an in-process hub (PGlite on disk, websocket clients) on a real git
 * repository: a claim gets its worktree, the agent's complete commits it and answers at once with the
 * card in review and `checks.state = 'running'`, and the hub records the outcome when the check ends:
 * a pass leaves the card in review, approvable (its approval lands it); a failure sends it back to ready
 * with a hand-over quoting the output, the branch and worktree kept; a check over its time limit is
 * `timed_out`; a command that does not exist comes back as exit 127 naming it; approval is refused
 * while the check runs; a hub stopped during a check runs it again at its next start; an agent cannot
 * set the check. Checks that must wait on the test block on a named pipe the test writes to.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Backlog } from '../../core/backlog';
import { hubPaths } from '../../core/paths';
import { type BacklogEvent, type Card, defaultHealthThresholds } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { ensureToken } from '../../mcp-server/hub/auth';
import { Hub } from '../../mcp-server/hub/hub';
import { client, removeDataDir, tempDataDir } from '../helpers/hub';
import { runCliHere } from '../helpers/mcp';
import { refused } from '../helpers/refused';
import { gitOut, makeRepo, writeFiles, type TestRepo } from '../helpers/workspaceRepo';

const host = hostname();
const project = 'checks-proj';
let dataDir: string;
let repo: TestRepo;
let hub: Hub;
let agent: RpcClient;
let person: RpcClient;
let reader: RpcClient;
const seen: BacklogEvent[] = [];
const waiters: { match: (e: BacklogEvent) => boolean; resolve: (e: BacklogEvent) => void }[] = [];
let counter = 0;

async function startHub(): Promise<void> {
	const paths = hubPaths(dataDir);
	mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
	const backlog = await Backlog.open({ pgliteDir: paths.pgdata });
	hub = new Hub({
		paths,
		backlog,
		token: ensureToken(paths.runDir, paths.token),
		metricsToken: ensureToken(paths.runDir, paths.metricsToken),
		thresholds: defaultHealthThresholds,
		version: 'test',
		idleMs: 3_600_000,
		backupIntervalMs: 0,
		webviewDir: path.join(dataDir, 'no-board'),
	});
	await hub.start();
	agent = await client(dataDir, { agent: { id: 'claude-1' }, reconnect: false });
	person = await client(dataDir, { agent: { id: 'vscode:alice' }, reconnect: false });
	reader = await client(dataDir, { agent: { id: 'reader' }, reconnect: false });
	reader.onEvent(e => {
		seen.push(e);
		for (const w of waiters.filter(x => x.match(e))) {
			waiters.splice(waiters.indexOf(w), 1);
			w.resolve(e);
		}
	});
	await reader.subscribe((await reader.request('events/list', { limit: 1 })).lastSeq);
}

async function stopHub(): Promise<void> {
	for (const c of [agent, person, reader] as (RpcClient | undefined)[]) {
		c?.close();
	}
	await (hub as Hub | undefined)?.stop('test');
}

/** The event `match` picks: one already seen, else the next that arrives. */
function eventOf(match: (e: BacklogEvent) => boolean): Promise<BacklogEvent> {
	const had = seen.find(match);
	return had !== undefined ? Promise.resolve(had) : new Promise(resolve => waiters.push({ match, resolve }));
}

const finished = (id: string) => eventOf(e => e.cardId === id && e.type === 'checks_finished');

async function setCheck(check: string | null, checkTimeoutSeconds?: number): Promise<void> {
	await person.request('project/settings/update', {
		project,
		check,
		...(checkTimeoutSeconds === undefined ? {} : { checkTimeoutSeconds }),
	});
}

/** A card of the project, claimed (its worktree made), a file written, completed: the complete's answer. */
async function completed(file = 'feature.txt') {
	const id = `CK${++counter}`;
	await person.request('card/create', { cards: [{ id, title: `Checked work ${counter}`, review: 'human', project }] });
	const claimed = await agent.request('card/claim', { cardId: id });
	const ws = claimed.workspace;
	assert.ok(ws !== undefined, 'the claim made a worktree');
	writeFiles(ws.path, { [file]: `work of ${id}\n` });
	const done = await agent.request('card/complete', { cardId: id, epoch: claimed.lease?.epoch });
	return { id, ws, card: done.card };
}

async function show(id: string): Promise<Card> {
	return (await person.request('card/get', { cardId: id })).card;
}

/** A named pipe: a check reading it blocks until the test writes a line. */
function gate(name: string): { path: string; open: () => void } {
	const fifo = path.join(repo.parent, name);
	execFileSync('mkfifo', [fifo]);
	return { path: fifo, open: () => writeFileSync(fifo, 'go\n') };
}

before(async () => {
	repo = makeRepo({ 'README.md': '# checked\n' });
	dataDir = tempDataDir();
	await startHub();
	await person.request('project/settings/update', { project, worktrees: true, roots: { [host]: repo.root } });
});

after(async () => {
	await stopHub();
	removeDataDir(dataDir);
	repo.cleanup();
});

describe('checks before review in the hub', () => {
	it('a passing check: complete answers with checks running, then the card waits in review, approvable', async () => {
		await setCheck('test -f feature.txt && echo "ok 1 - feature is there"');
		const { id, card } = await completed();
		assert.equal(card.status, 'review');
		assert.equal(card.checks?.state, 'running');
		const end = await finished(id);
		assert.deepEqual([end.data.state, end.data.exitCode], ['passed', 0]);
		assert.equal(typeof end.data.durationMs, 'number');
		const passed = await show(id);
		assert.equal(passed.status, 'review');
		assert.equal(passed.checks?.state, 'passed');
		assert.match(passed.checks.tail ?? '', /ok 1 - feature is there/);
		const approved = await person.request('card/review', { cardId: id, approve: true });
		assert.equal(approved.card.status, 'done');
		assert.equal(gitOut(repo.root, 'show', 'main:feature.txt'), `work of ${id}`);
	});

	it('a failing check sends the card back to ready with the output in the hand-over; branch and worktree stay', async () => {
		await setCheck('echo "not ok 1 - parse is not defined" >&2; exit 3');
		const { id, ws } = await completed('broken.txt');
		const end = await finished(id);
		assert.deepEqual([end.data.state, end.data.exitCode, end.data.retry], ['failed', 3, true]);
		const back = await show(id);
		assert.equal(back.status, 'ready');
		assert.equal(back.checks?.state, 'failed');
		assert.match(back.handoff ?? '', /The check `echo .*` exited 3/);
		assert.match(back.handoff ?? '', /not ok 1 - parse is not defined/);
		assert.equal(gitOut(repo.root, 'rev-parse', '--verify', '-q', `refs/heads/${ws.branch}`).length, 40);
		assert.ok(existsSync(path.join(ws.path, 'broken.txt')), 'the worktree keeps the work');
	});

	it('a check over its time limit is timed_out and comes back to an agent', async () => {
		await setCheck('echo started; sleep 60', 1);
		const { id } = await completed('slow.txt');
		const end = await finished(id);
		assert.deepEqual([end.data.state, end.data.exitCode], ['timed_out', null]);
		const back = await show(id);
		assert.equal(back.status, 'ready');
		assert.match(back.handoff ?? '', /timed out after 1 s/);
		assert.match(back.handoff ?? '', /started/);
	});

	it('a check command that does not exist comes back as exit 127, naming it', async () => {
		await setCheck('./no-such-check.sh', 600);
		const { id } = await completed('missing.txt');
		const end = await finished(id);
		assert.equal(end.data.exitCode, 127);
		const back = await show(id);
		assert.match(back.handoff ?? '', /`\.\/no-such-check\.sh` exited 127 \(the command was not found\)/);
		assert.match(back.checks?.tail ?? '', /no-such-check\.sh/);
	});

	it('approval is refused while the check runs, and allowed once it passed', async () => {
		const g = gate('approve.fifo');
		await setCheck(`read line < ${g.path}`);
		const { id } = await completed('gated.txt');
		await refused(
			person.request('card/review', { cardId: id, approve: true }),
			'invalid_transition',
			/checks still running for CK\d+/,
		);
		assert.equal((await show(id)).status, 'review');
		g.open();
		assert.equal((await finished(id)).data.state, 'passed');
		assert.equal((await person.request('card/review', { cardId: id, approve: true })).card.status, 'done');
	});

	it('a hub stopped during a check runs it again at its next start', async () => {
		const g = gate('restart.fifo');
		await setCheck(`read line < ${g.path}`);
		const { id, card } = await completed('restart.txt');
		await stopHub();
		await startHub();
		const still = await show(id);
		assert.equal(still.checks?.state, 'running');
		assert.equal(still.checks.startedAt, card.checks?.startedAt, 'the same run, not a new attempt');
		g.open();
		assert.equal((await finished(id)).data.state, 'passed');
		assert.equal((await show(id)).status, 'review');
	});

	it("setting the check is a person's verb", async () => {
		const mcp = await client(dataDir, { client: 'mcp', agent: { id: 'claude-9' }, reconnect: false });
		try {
			await refused(
				mcp.request('project/settings/update', { project, check: 'true' }),
				'unauthorized',
				/Only a person/,
			);
		} finally {
			mcp.close();
		}
	});

	it('the CLI sets the check and shows its outcome (settings --check, show, show --json)', async () => {
		const cli = (args: string[]) => runCliHere(args, { dataDir, cwd: repo.root, env: { BATON_AGENT: 'vscode:alice' } });
		const had = await person.request('project/settings', { project });
		for (const given of ['0', '-5', '1.5', 'soon']) {
			const bad = await cli(['settings', '--project', project, '--check', 'true', `--check-timeout=${given}`]);
			assert.equal(bad.code, 1, `--check-timeout ${given}`);
			assert.match(bad.stderr, /--check-timeout must be a positive whole number of seconds/);
		}
		assert.deepEqual(await person.request('project/settings', { project }), had, 'nothing was changed');
		const alone = await cli(['init', '--check', 'npm test']);
		assert.equal(alone.code, 2);
		assert.match(alone.stderr, /--check and --check-timeout go with --worktrees/);
		const set = await cli([
			'settings',
			'--project',
			project,
			'--check',
			'echo ok from the check',
			'--check-timeout',
			'30',
		]);
		assert.equal(set.code, 0, set.stderr);
		assert.match(
			set.stdout,
			/checks +echo ok from the check after complete, in the card's worktree \(time limit 30 s\)/,
		);
		const { id } = await completed('cli.txt');
		await finished(id);
		const shown = await cli(['show', id]);
		assert.equal(shown.code, 0, shown.stderr);
		assert.match(shown.stdout, /^checks +passed \(echo ok from the check, \d+ s\)$/m);
		const json = JSON.parse((await cli(['show', id, '--json'])).stdout) as { card: Card };
		assert.equal(json.card.checks?.state, 'passed');
		assert.equal(json.card.checks.command, 'echo ok from the check');
		const cleared = await cli(['settings', '--project', project, '--check', '']);
		assert.match(cleared.stdout, /checks +none/);
		assert.equal((await person.request('project/settings', { project })).check, undefined);
	});
});
