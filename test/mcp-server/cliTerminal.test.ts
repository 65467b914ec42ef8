/**
 * The terminal's verbs through the built program (`node dist/baton.js`, each a process) against a hub
 * on a real git repository with workspaces on: `baton diff` (the patch, --stat, --json; a card without
 * a branch refused), `baton logs` (a card that never ran in a seat refused; a seat's output while a
 * `baton run` agent works, --follow ending when the card leaves its seat, then the whole log),
 * `baton approve A B C` and `--all-passing` (an unknown id approves none; dependencies land first,
 * each reported as it lands; a conflict comes back named, exit 1), `show` of a landed card, a card of
 * review none landing at `complete` through the hub, and what `settings` says a completed card does.
 * The cards' setup (create, claim, complete) runs in process (runCliHere) against the same hub.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';

import { endBatonRun, killReportedAgents, startBatonRun } from '../helpers/batonRun';
import {
	batonJs,
	childEnv,
	cleanupDataDir,
	ensureBuilt,
	neutralCwd,
	runBaton,
	runCliHere,
	tempDataDir,
	waitFor,
} from '../helpers/mcp';
import { fakeCommand } from '../helpers/runSupervisor';
import { gitOut, makeRepo, type TestRepo, writeFiles } from '../helpers/workspaceRepo';

let dataDir: string;
let repo: TestRepo;

/** The built program as a person runs it, in the repository. */
function baton(args: string[], env: Record<string, string> = {}) {
	return runBaton(args, { dataDir, cwd: repo.root, env: { BATON_AGENT: 'cli:alice', ...env }, timeoutMs: 60_000 });
}

/** Setup steps in process, as the agent claude-1 unless `human`. */
async function here(args: string[], human = false): Promise<string> {
	const r = await runCliHere(args, {
		dataDir,
		cwd: repo.root,
		env: { BATON_AGENT: human ? 'cli:alice' : 'claude-1' },
	});
	assert.equal(r.code, 0, `baton ${args.join(' ')}: ${r.stdout} ${r.stderr}`);
	return r.stdout;
}

/** A card of review human in the repository's project, claimed, `files` written, completed: in review. */
async function inReview(id: string, files: Record<string, string>): Promise<void> {
	await here(['create', `Work ${id}`, '--id', id, '--review', 'human'], true);
	const claimed = JSON.parse(await here(['claim', id, '--json'])) as { workspace: { path: string } };
	writeFiles(claimed.workspace.path, files);
	await here(['complete', id, '--result', 'done']);
}

before(async () => {
	ensureBuilt();
	dataDir = tempDataDir();
	repo = makeRepo({ 'README.md': '# r\n', 'a.txt': 'a1\na2\na3\n' });
	const on = await here(['settings', '--worktrees', 'on'], true);
	// The backlog's default review is none: the settings say a completed card lands by itself.
	assert.match(
		on,
		/^completed cards land on the default branch when complete \(review none\), and are done once landed/m,
	);
});

after(async () => {
	killReportedAgents();
	await cleanupDataDir(dataDir);
	repo.cleanup();
});

describe('baton diff, logs and approve of several cards', () => {
	it('diff shows the patch, --stat the files, --json the hub answer; a card without a branch is refused', async () => {
		await inReview('T1', { 't1.txt': 'one\n' });
		const patch = await baton(['diff', 'T1']);
		assert.equal(patch.code, 0, patch.stderr);
		assert.match(patch.stdout, /^\+\+\+ b\/t1\.txt$/m);
		assert.match(patch.stdout, /^\+one$/m);
		const stat = await baton(['diff', 'T1', '--stat']);
		assert.match(stat.stdout, /^A {2}t1\.txt {2}\+1 −0$/m);
		assert.match(stat.stdout, /^1 file changed, \+1 −0 \(baton\/T1 at [0-9a-f]{7} against main\)$/m);
		const json = JSON.parse((await baton(['diff', 'T1', '--stat', '--json'])).stdout) as {
			files: { path: string }[];
			patch?: string;
		};
		assert.deepEqual(
			json.files.map(f => f.path),
			['t1.txt'],
		);
		assert.equal(json.patch, undefined);
		await here(['create', 'No branch', '--id', 'NB', '--no-project'], true);
		const none = await baton(['diff', 'NB']);
		assert.equal(none.code, 1);
		assert.match(none.stderr, /Card NB has no workspace, so there is no branch to diff/);
	});

	it('logs: a card that never ran in a seat here is refused, saying so', async () => {
		const r = await baton(['logs', 'T1']);
		assert.equal(r.code, 1);
		assert.match(r.stderr, /Card T1 never ran in a seat on this machine/);
	});

	it('approve with an unknown id or a card not in review approves none, naming each', async () => {
		const before = gitOut(repo.root, 'rev-parse', 'main');
		const r = await baton(['approve', 'T1', 'NOPE', 'NB']);
		assert.equal(r.code, 1);
		assert.match(r.stderr, /Nothing was approved: NOPE: no such card/);
		assert.match(r.stderr, /NB is ready, not in review/);
		assert.equal(gitOut(repo.root, 'rev-parse', 'main'), before);
		assert.match(await here(['show', 'T1'], true), /in review/);
	});

	it('approve A B C lands dependencies first, each reported as it lands; show names the landed commit', async () => {
		await inReview('T2', { 't2.txt': 'two\n' });
		// T1 waits on T2 from now on: named first, it lands second.
		await here(['link', 'T1', 'T2'], true);
		const r = await baton(['approve', 'T1', 'T2']);
		assert.equal(r.code, 0, r.stdout + r.stderr);
		const lines = r.stdout.trim().split('\n');
		assert.match(lines[0] ?? '', /^Landed T2 on main as [0-9a-f]{7}$/);
		assert.match(lines[1] ?? '', /^Landed T1 on main as [0-9a-f]{7}$/);
		assert.equal(lines[2], 'All 2 landed.');
		const head = gitOut(repo.root, 'rev-parse', 'main');
		assert.equal(lines[1]?.slice(-7), head.slice(0, 7));
		assert.equal(gitOut(repo.root, 'show', 'main:t1.txt'), 'one');
		assert.equal(gitOut(repo.root, 'show', 'main:t2.txt'), 'two');
		const shown = await baton(['show', 'T1']);
		assert.match(shown.stdout, new RegExp(`^workspace +landed as ${head.slice(0, 12)} on main \\(squash, `, 'm'));
		assert.doesNotMatch(shown.stdout, /\.baton\/worktrees/);
	});

	it('a landing that conflicts comes back named, the others land, exit 1', async () => {
		await inReview('T4', { 'a.txt': 'a1\nT4 was here\na3\n' });
		await inReview('T5', { 'a.txt': 'a1\nT5 was here\na3\n' });
		const r = await baton(['approve', 'T4', 'T5']);
		assert.equal(r.code, 1, r.stdout + r.stderr);
		const lines = r.stdout.trim().split('\n');
		assert.match(lines[0] ?? '', /^Landed T4 on main as [0-9a-f]{7}$/);
		assert.match(
			lines[1] ?? '',
			/^T5 came back: Card T5 was not approved: landing baton\/T5 on main conflicts in a\.txt/,
		);
		assert.equal(lines.at(-1), '1 of 2 landed; not landed: T5.');
		assert.match(await here(['show', 'T5'], true), /status +ready/);
	});

	it("approve --all-passing lands every card in review of this folder's project (no check configured passes)", async () => {
		await inReview('T6', { 't6.txt': 'six\n' });
		const r = await baton(['approve', '--all-passing']);
		assert.equal(r.code, 0, r.stdout + r.stderr);
		assert.match(r.stdout, /^Landed T6 on main as [0-9a-f]{7}$/m);
		assert.equal(gitOut(repo.root, 'show', 'main:t6.txt'), 'six');
		const none = await baton(['approve', '--all-passing']);
		assert.equal(none.code, 0);
		assert.match(none.stdout, /nothing to approve/);
	});

	it('a card of review none lands when its agent completes it; show says where', async () => {
		await here(['create', 'Lands by itself', '--id', 'N1', '--review', 'none'], true);
		const claimed = JSON.parse(await here(['claim', 'N1', '--json'])) as { workspace: { path: string } };
		writeFiles(claimed.workspace.path, { 'n1.txt': 'landed at complete\n' });
		const out = await here(['complete', 'N1', '--result', 'done']);
		const head = gitOut(repo.root, 'rev-parse', 'main');
		assert.match(out, /^Completed N1\./);
		assert.match(out, new RegExp(`^Landed on main as ${head.slice(0, 12)} \\(squash\\): 1 file, \\+1 −0\\.$`, 'm'));
		assert.equal(gitOut(repo.root, 'show', 'main:n1.txt'), 'landed at complete');
		assert.equal(gitOut(repo.root, 'branch', '--list', 'baton/N1'), '');
		assert.match(
			(await baton(['show', 'N1'])).stdout,
			new RegExp(`^workspace +landed as ${head.slice(0, 12)} on main`, 'm'),
		);
	});

	it("logs: a seat agent's output, --follow until the card leaves its seat, then the whole log", async () => {
		await here(['create', 'Seat hang', '--id', 'H1', '--no-project'], true);
		const run = startBatonRun({
			dataDir,
			cwd: neutralCwd,
			args: ['--command', fakeCommand, '--seats', '1', '--project', '*', '--max-seconds', '120'],
		});
		try {
			await run.waitFor(l => l.event === 'started' && l.cardId === 'H1', 60_000, 'the agent of H1 to start');
			const follow = spawn(process.execPath, [batonJs, 'logs', 'H1', '--follow'], {
				cwd: neutralCwd,
				env: childEnv(dataDir, { BATON_AGENT: 'cli:alice' }),
				stdio: ['ignore', 'pipe', 'pipe'],
			});
			let out = '';
			let err = '';
			follow.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
			follow.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
			const ended = new Promise<number | null>(resolve => follow.on('close', resolve));
			await waitFor(() => out.includes('fake-agent: hanging'), 60_000, 'the followed log to reach "hanging"');
			// A person takes the card back: it leaves its seat, and the follow ends by itself.
			await here(['reclaim', 'H1'], true);
			assert.equal(await ended, 0, err);
			assert.match(err, /H1 left its seat: it is ready now/);
			assert.match(out, /fake-agent: claimed H1/);
			const whole = await baton(['logs', 'H1']);
			assert.equal(whole.code, 0, whole.stderr);
			assert.match(whole.stdout, /fake-agent: starting/);
			assert.match(whole.stdout, /fake-agent: hanging/);
		} finally {
			await endBatonRun(run);
		}
	});
});
