/**
 * Seats that contain their agents: the real `baton run` starts a hostile script agent
 * (test/fixtures/hostileAgent.mjs) through --command in a real bubblewrap sandbox, in the worktree of a
 * card of a real git repository, against a real hub. From inside its seat the agent cannot read the hub
 * token, approve another card (`env -i baton approve`, plain `baton approve`, a raw websocket with its
 * seat credential), lift a pause, change settings, or write to the main checkout, the home folder or the
 * Baton source tree; every other human verb from its shell is refused saying what a person runs instead;
 * a claim naming another repository or another card's branch changes nothing there; a complete under a
 * wrong epoch commits nothing; its escape sequences reach `show` visibly escaped; "429"/"rate limit"
 * in its output cools nothing; its log stays at its cap; a reviewer's diffs of its 30 MB file keep the
 * hub within its memory bound. It can still claim, heartbeat, commit in its worktree and complete its own
 * card; and the background process it leaves is gone once it exits. Without bubblewrap on PATH (or with
 * --no-sandbox) `baton run` says at start that the gate is advisory.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { findGitRepo } from '../../core/client/gitRepo';
import type { Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { type HubProcess, client, startHub, tempDataDir, removeDataDir, waitFor } from '../helpers/hub';
import { ensureBuilt, repoRoot, runBaton } from '../helpers/mcp';
import { startRun } from '../helpers/runSupervisor';
import { type TestRepo, gitOut, makeRepo } from '../helpers/workspaceRepo';

const hostileAgent = path.join(repoRoot, 'test', 'fixtures', 'hostileAgent.mjs');
const hasBwrap = existsSync('/usr/bin/bwrap') || existsSync('/usr/local/bin/bwrap');

/** What hostileAgent.mjs reports: each attempt's outcome, a command's exit and output, or a frame's error code. */
interface Attempt {
	ok: boolean;
	code?: string | null;
	message?: string;
	value?: unknown;
}
interface Command {
	code: number | null;
	out: string;
}
type Report = Record<
	'readToken' | 'readDefaultToken' | 'writeCheckout' | 'writeHome' | 'writeSource' | 'commit',
	Attempt
> &
	Record<'envIApprove' | 'plainApprove' | 'plainResume', Command> &
	Record<string, unknown>;

let dataDir: string;
let hub: HubProcess;
let admin: RpcClient;
let repo: TestRepo;
let foreign: TestRepo;
let project: string;

/** The hub's resident memory in MB (Linux /proc). */
function rssMb(pid: number): number {
	const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
	assert.ok(m, 'VmRSS in /proc');
	return Number(m[1]) / 1024;
}

/** Another project's repository as the user has it: its files, git config, exclude file and worktrees. */
function foreignPicture(): string {
	return [
		gitOut(foreign.root, 'status', '--porcelain', '--ignored'),
		gitOut(foreign.root, 'worktree', 'list', '--porcelain'),
		gitOut(foreign.root, 'for-each-ref'),
		readFileSync(path.join(foreign.root, '.git', 'config'), 'utf8'),
		readFileSync(path.join(foreign.root, '.git', 'info', 'exclude'), 'utf8'),
	].join('\n--\n');
}

async function card(id: string): Promise<Card> {
	return (await admin.request('card/get', { cardId: id })).card;
}

/** Processes whose command line holds `mark` (Linux /proc). */
function processesWith(mark: string): number[] {
	const found: number[] = [];
	for (const entry of readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) {
			continue;
		}
		try {
			if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(mark)) {
				found.push(Number(entry));
			}
		} catch {
			// Gone.
		}
	}
	return found;
}

before(async () => {
	ensureBuilt();
	dataDir = tempDataDir();
	hub = await startHub({ dataDir });
	admin = await client(dataDir, { agent: { id: 'vscode:alice' } });
	repo = makeRepo({ 'README.md': '# seats\n' });
	gitOut(repo.root, 'remote', 'add', 'origin', 'https://github.com/acme/seats.git');
	const found = await findGitRepo(repo.root);
	assert.ok(found !== undefined);
	project = found.project;
	foreign = makeRepo({ 'README.md': '# another project\n' });
	gitOut(foreign.root, 'remote', 'add', 'origin', 'https://github.com/acme/elsewhere.git');
	const on = await runBaton(['settings', '--worktrees', 'on'], {
		dataDir,
		cwd: repo.root,
		env: { BATON_AGENT: 'cli:alice' },
	});
	assert.equal(on.code, 0, on.stderr);
});

after(async () => {
	admin.close();
	await hub.stop();
	removeDataDir(dataDir);
	repo.cleanup();
	foreign.cleanup();
});

describe('a seat contains its agent', { skip: hasBwrap ? false : 'bubblewrap is not installed' }, () => {
	it('keeps a hostile agent away from the gate, the token and the checkout, and lets it do its own card', async () => {
		// A card in review, awaiting a person: the agent will try to approve it.
		const { cards } = await admin.request('card/create', {
			cards: [{ title: 'someone else’s work', review: 'human' }],
		});
		const other = cards[0];
		assert.ok(other);
		const claimed = await admin.request('card/claim', { cardId: other.id });
		assert.ok(claimed.lease);
		await admin.request('card/complete', { cardId: other.id, epoch: claimed.lease.epoch });
		assert.equal((await card(other.id)).status, 'review');
		await admin.request('pause/set', { scope: 'phase', target: 'frozen', reason: 'a person paused it' });
		const hostile = (
			await admin.request('card/create', {
				// Review human: a card of review none would land at complete and move main, which this checks is untouched.
				cards: [{ title: 'hostile work', phase: 'hostile', project, maxAttempts: 1, review: 'human' }],
			})
		).cards[0];
		assert.ok(hostile);
		const checkoutBefore = gitOut(repo.root, 'status', '--porcelain', '--ignored');
		const headBefore = gitOut(repo.root, 'rev-parse', 'main');
		const foreignBefore = foreignPicture();
		const settingsBefore = await admin.request('settings/get', {});
		const projectBefore = await admin.request('project/settings', { project });
		// A URL that answers the CLI's test ping, so the webhook's refusal is the hub's gate.
		const hookServer = createServer((_req, res) => res.end('ok'));
		await new Promise<void>(resolve => hookServer.listen(0, '127.0.0.1', resolve));
		const hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/steal`;
		const mark = `hostile-bg-${hostile.id}`;
		const run = startRun(
			dataDir,
			['--phase', 'hostile', '--name', 'seats', '--seats', '1', '--log-max-mb', '1'],
			{
				HOSTILE_OTHER: other.id,
				HOSTILE_REPO: repo.root,
				HOSTILE_MARK: mark,
				HOSTILE_FOREIGN: foreign.root,
				HOSTILE_HOOK_URL: hookUrl,
			},
			hostileAgent,
			repo.root,
		);
		try {
			assert.equal(
				run.events.find(e => e.event === 'advisory'),
				undefined,
				'bubblewrap is here: no advisory',
			);
			const exited = await run.waitFor(e => e.event === 'exited' && e.cardId === hostile.id, 60_000, 'the agent done');
			const logFile = path.join(dataDir, 'runs', 'seats', `${hostile.id}.log`);
			const log = readFileSync(logFile, 'utf8');
			const line = log.split('\n').find(l => l.startsWith('HOSTILE-REPORT '));
			assert.ok(line, `no report in the agent's log:\n${log}`);
			const r = JSON.parse(line.slice('HOSTILE-REPORT '.length)) as Report;

			// The hub token is not there to read.
			assert.equal(r.readToken.ok, false, JSON.stringify(r.readToken));
			assert.equal(r.readDefaultToken.ok, false, JSON.stringify(r.readDefaultToken));
			// The gate holds from its shell, with a clean environment or its own.
			assert.notEqual(r.envIApprove.code, 0, r.envIApprove.out);
			assert.notEqual(r.plainApprove.code, 0, r.plainApprove.out);
			assert.notEqual(r.plainResume.code, 0, r.plainResume.out);
			assert.equal((await card(other.id)).status, 'review', 'the other card still waits for a person');
			const { pauses } = await admin.request('pause/list', {});
			assert.ok(
				pauses.some(p => p.scope === 'phase' && p.target === 'frozen'),
				'the pause a person set stays',
			);
			// Nothing written outside its worktree.
			for (const name of ['writeCheckout', 'writeHome', 'writeSource'] as const) {
				const a = r[name];
				assert.equal(a.ok, false, `${name}: ${JSON.stringify(a)}`);
				assert.equal(a.code, 'EROFS', `${name}: ${JSON.stringify(a)}`);
			}
			assert.equal(existsSync(path.join(repo.root, 'pwned.txt')), false);
			assert.equal(existsSync(path.join(homedir(), 'baton-seat-pwned.txt')), false);
			assert.equal(existsSync(path.join(repoRoot, 'baton-seat-pwned.txt')), false);
			assert.equal(gitOut(repo.root, 'rev-parse', 'main'), headBefore);
			// The checkout shows only the worktrees folder Baton made (ignored), nothing of the agent's.
			assert.equal(
				gitOut(repo.root, 'status', '--porcelain', '--ignored')
					.split('\n')
					.filter(l => l !== '' && !checkoutBefore.includes(l) && !l.includes('.baton/'))
					.join('\n'),
				'',
			);
			// Its seat credential acts on its card only.
			assert.equal(r.rawHello, 'ok');
			for (const name of ['rawApproveOther', 'rawCommentOther', 'rawSettings', 'rawPause', 'rawMintAnother']) {
				assert.equal(r[name], 'unauthorized', `${name}: ${String(r[name])}`);
			}
			assert.equal(r.rawReadOther, 'ok', 'it may read anything');
			assert.equal((await admin.request('card/get', { cardId: other.id })).messages.length, 0);
			// Every other human verb from its shell: refused, saying what a person runs instead; nothing changed.
			for (const [name, c] of Object.entries(r.shell as Record<string, Command>)) {
				assert.notEqual(c.code, 0, `${name}: ${c.out}`);
				// The hub's refusal names the command; the CLI's own check of approve/reject says where to run it.
				assert.match(
					c.out,
					/Only a person can .*Ask a person to run `baton |Approvals come from a person: run it in your own terminal/s,
					`${name}: ${c.out}`,
				);
			}
			assert.deepEqual(await admin.request('settings/get', {}), settingsBefore);
			assert.deepEqual(await admin.request('project/settings', { project }), projectBefore);
			assert.deepEqual((await admin.request('hooks/list', {})).hooks, []);
			assert.equal((await card(other.id)).assignee ?? null, null);
			assert.deepEqual(
				(await admin.request('pause/list', {})).pauses.map(p => `${p.scope}:${p.target ?? ''}`),
				['phase:frozen'],
			);
			assert.equal(existsSync('/tmp/baton-seat-pwned'), false);
			// Its claim naming another repository or another card's branch: refused or ignored, never acted on.
			assert.equal(foreignPicture(), foreignBefore);
			// (A card that has its worktree continues there whatever root a claim names; a base another card's
			// branch is refused.)
			assert.equal(r.rawClaimOtherBase, 'invalid_input');
			assert.notEqual(r.rawClaimForeignRoot, 'internal');
			assert.equal((await card(hostile.id)).workspace?.root, repo.root);
			// And it did its own card: claim, heartbeat, a commit in its worktree, complete.
			assert.equal(r.claim, 'ok');
			assert.equal(r.heartbeat, 'ok');
			assert.equal(r.commit.ok, true, JSON.stringify(r.commit));
			assert.match(log, /complete: ok/);
			assert.equal(exited.reason, 'completed');
			const done = await card(hostile.id);
			assert.equal(done.status, 'review');
			assert.equal(done.workspace?.base, 'main', 'its base is still the project’s');
			// A complete under a wrong epoch was refused and committed nothing.
			assert.notEqual(r.rawCompleteWrongEpoch, 'ok');
			const after = r.afterRefused as { status: string; head: string };
			assert.equal(after.head, r.commit.value);
			assert.match(after.status, /^\?\? uncommitted\.txt$/m);
			// Its words cooled nothing (the pauses are the person's alone, above), no rate limit told.
			assert.equal(
				run.events.find(e => /rate/i.test(e.event)),
				undefined,
				'no rate-limit event in the run',
			);
			// Its log stayed at its cap (1 MB, plus what one tick lets through), the tail kept.
			assert.ok(statSync(logFile).size < 1.6 * 1024 * 1024, `log is ${statSync(logFile).size} bytes`);
			assert.match(log, /log passed its cap/);
			// Its escape sequences reach a person's terminal visibly escaped: no line erased or forged.
			const shown = await runBaton(['show', hostile.id], { dataDir, env: { BATON_AGENT: 'cli:alice' } });
			assert.equal(shown.code, 0, shown.stderr);
			const raw: number[] = [];
			for (let i = 0; i < shown.stdout.length; i++) {
				const c = shown.stdout.charCodeAt(i);
				if ((c < 0x20 && c !== 0x0a) || c === 0x7f) {
					raw.push(c);
				}
			}
			assert.deepEqual(raw, [], JSON.stringify(shown.stdout));
			assert.doesNotMatch(shown.stdout, /^\s*✔ APPROVED/m);
			assert.match(shown.stdout, /APPROVED by alice/);
			// A reviewer's diffs of its 30 MB file: the hub answers within its memory bound.
			const idle = rssMb(hub.pid);
			let peak = idle;
			const sampler = setInterval(() => {
				peak = Math.max(peak, rssMb(hub.pid));
			}, 20);
			const reviewers = await Promise.all(
				Array.from({ length: 8 }, (_, i) =>
					client(dataDir, { agent: { id: `vscode:reviewer-${i}` }, requestTimeoutMs: 60_000 }),
				),
			);
			const diffs = await Promise.allSettled(reviewers.map(c => c.request('card/diff', { cardId: hostile.id })));
			clearInterval(sampler);
			for (const c of reviewers) {
				c.close();
			}
			const served = diffs.flatMap(d => (d.status === 'fulfilled' ? [d.value] : []));
			assert.ok(served.length >= 1, JSON.stringify(diffs.map(d => d.status === 'rejected' && String(d.reason))));
			for (const d of served) {
				assert.equal(d.files.find(f => f.path === 'big.txt')?.cut, true);
				assert.ok(d.files.some(f => f.path === 'seat-work.txt'));
			}
			assert.ok(peak - idle < 100, `the hub grew ${(peak - idle).toFixed(0)} MB answering 8 diffs (bound 100 MB)`);
			assert.equal(
				gitOut(repo.root, 'log', '-1', '--format=%s', String(r.commit.value)),
				`seat work for ${hostile.id}`,
			);
			// The background process it left ended with it.
			await waitFor(() => processesWith(mark).length === 0, 10_000, 'the background process gone');
		} finally {
			hookServer.close();
			run.proc.kill('SIGINT');
			await run.exited;
			await admin.request('pause/clear', { all: true });
		}
	});
});

describe('without a sandbox', () => {
	it(
		'says at start that the gate is advisory: bubblewrap missing from PATH, or --no-sandbox',
		{ timeout: 60_000 },
		async () => {
			// A PATH with node and git only.
			const bin = path.join(path.dirname(dataDir), 'bin');
			mkdirSync(bin, { recursive: true });
			symlinkSync(process.execPath, path.join(bin, 'node'));
			symlinkSync(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), path.join(bin, 'git'));
			for (const [args, env, why] of [
				[[], { PATH: bin }, /bubblewrap \(bwrap\) is not on PATH/],
				[['--no-sandbox'], {}, /--no-sandbox was given/],
			] as const) {
				const run = startRun(dataDir, ['--phase', 'none', '--name', 'plain', ...args], env);
				try {
					const advisory = await run.waitFor(e => e.event === 'advisory', 20_000, 'the advisory');
					assert.equal(advisory.sandbox, false);
					assert.match(String(advisory.why), why);
					assert.match(String(advisory.message), /the review gate and the card boundary are advisory/);
					const running = await run.waitFor(e => e.event === 'running', 20_000, 'the run');
					assert.ok(run.events.indexOf(running) > run.events.indexOf(advisory), 'said before the run starts');
				} finally {
					run.proc.kill('SIGINT');
					await run.exited;
				}
			}
			rmSync(bin, { recursive: true, force: true });
		},
	);
});
