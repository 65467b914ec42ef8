/**
 * Nothing an agent started outlives its card, even outside a sandbox: the real `baton run --no-sandbox`
 * starts a bash agent (test/fixtures/detachAgent.sh) in the worktree of a card of a real git repository;
 * it leaves two children in sessions of their own (out of reach of the process-group kill) — one with
 * its environment, one under `env -i` — and completes. Once the card's agent ended, both are gone (the
 * sweep of mcp-server/dispatch/sweep.ts, counted on the `exited` line), while processes of the same user
 * left the same way but standing outside the worktree — in a folder whose name starts with the
 * worktree's, and in the main checkout — keep running, and so does the project's check that the hub runs
 * in the worktree after complete.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { findGitRepo } from '../../core/client/gitRepo';
import type { RpcClient } from '../../core/protocol/rpc';
import { type HubProcess, client, removeDataDir, startHub, tempDataDir, waitFor } from '../helpers/hub';
import { batonJs, childEnv, ensureBuilt, repoRoot, runBaton } from '../helpers/mcp';
import { startBatonRun } from '../helpers/batonRun';
import { type TestRepo, gitOut, makeRepo } from '../helpers/workspaceRepo';

const detachAgent = path.join(repoRoot, 'test', 'fixtures', 'detachAgent.sh');
const linux = process.platform === 'linux';

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

/** A `sleep` in a session of its own with an empty environment in `cwd`, named `mark` on its command line. */
function bystander(mark: string, cwd: string): ChildProcess {
	const sleep = execFileSync('sh', ['-c', 'command -v sleep'], { encoding: 'utf8' }).trim();
	const child = spawn(sleep, ['1000'], { argv0: mark, cwd, env: {}, detached: true, stdio: 'ignore' });
	child.unref();
	return child;
}

describe('the sweep at the end of a card', { skip: linux ? false : 'reads Linux /proc' }, () => {
	let dataDir: string;
	let hub: HubProcess;
	let admin: RpcClient;
	let repo: TestRepo;
	let project: string;
	let bin: string;
	const left: number[] = [];

	before(async () => {
		ensureBuilt();
		dataDir = tempDataDir();
		hub = await startHub({ dataDir });
		admin = await client(dataDir, { agent: { id: 'vscode:alice' } });
		repo = makeRepo({ 'README.md': '# sweep\n' });
		gitOut(repo.root, 'remote', 'add', 'origin', 'https://github.com/acme/sweep.git');
		const found = await findGitRepo(repo.root);
		assert.ok(found !== undefined);
		project = found.project;
		const on = await runBaton(['settings', '--worktrees', 'on'], {
			dataDir,
			cwd: repo.root,
			env: { BATON_AGENT: 'cli:alice' },
		});
		assert.equal(on.code, 0, on.stderr);
		// `baton` on the agent's PATH, as an installed Baton would be.
		bin = path.join(dataDir, '..', 'bin');
		mkdirSync(bin, { recursive: true });
		writeFileSync(path.join(bin, 'baton'), `#!/bin/sh\nexec "${process.execPath}" "${batonJs}" "$@"\n`);
		chmodSync(path.join(bin, 'baton'), 0o755);
	});

	after(async () => {
		for (const pid of left) {
			try {
				process.kill(pid, 'SIGKILL');
			} catch {
				// Gone.
			}
		}
		admin.close();
		await hub.stop();
		removeDataDir(dataDir);
		repo.cleanup();
	});

	it('kills the children an agent left in sessions of their own, and nothing outside its worktree', async () => {
		const card = (
			await admin.request('card/create', {
				// Review human: the worktree stays after complete (no landing removes it).
				cards: [{ title: 'leaves children behind', project, maxAttempts: 1, review: 'human' }],
			})
		).cards[0];
		assert.ok(card);
		const mark = `sweep-${card.id}`;
		// Same user, same kind of escape (own session, empty environment), standing just outside the
		// worktree: a folder whose path has the worktree's as its prefix (/wt/A vs /wt/AB), and the checkout.
		const worktree = path.join(repo.root, '.baton', 'worktrees', card.id);
		const neighbour = `${worktree}B`;
		mkdirSync(neighbour, { recursive: true });
		for (const [name, cwd] of [
			['neighbour', neighbour],
			['checkout', repo.root],
		] as const) {
			const child = bystander(`${mark}-${name}`, cwd);
			assert.ok(child.pid !== undefined);
			left.push(child.pid);
		}
		await waitFor(() => processesWith(`${mark}-checkout`).length === 1, 5_000, 'the bystanders started');
		// The project's check runs in the worktree after complete, the hub's child: still running when the
		// agent ends, and not the agent's to sweep.
		const check = await runBaton(['settings', '--check', 'sleep 4'], {
			dataDir,
			cwd: repo.root,
			env: { BATON_AGENT: 'cli:alice' },
		});
		assert.equal(check.code, 0, check.stderr);

		const env = childEnv(dataDir, { SWEEP_MARK: mark });
		const run = startBatonRun({
			dataDir,
			cwd: repo.root,
			args: [
				'--seats',
				'1',
				'--no-sandbox',
				'--name',
				'sweep',
				'--kind',
				'bash',
				'--command',
				`/bin/bash ${detachAgent}`,
			],
			rawEnv: { ...env, PATH: `${bin}:${env.PATH ?? ''}` },
		});
		try {
			const started = await run.waitFor(
				l => l.event === 'started' && l.cardId === card.id,
				60_000,
				'the agent started',
			);
			assert.equal(path.resolve(String(started.workspace)), worktree, 'the agent works in the card’s worktree');
			const exited = await run.waitFor(l => l.event === 'exited' && l.cardId === card.id, 60_000, 'the agent done');
			const log = readFileSync(path.join(dataDir, 'runs', 'sweep', `${card.id}.log`), 'utf8');
			assert.equal(exited.reason, 'completed', log);
			const done = (await admin.request('card/get', { cardId: card.id })).card;
			assert.equal(done.status, 'review');
			assert.equal(done.checks?.state, 'running', 'the check runs on after the agent ended');
			// Both children it left are gone once its card ended: the one with its environment and the
			// one under `env -i` in its worktree.
			await waitFor(
				() => processesWith(`${mark}-env`).length + processesWith(`${mark}-clean`).length === 0,
				5_000,
				`the agent's children gone (env: ${processesWith(`${mark}-env`).join(',')}, env -i: ${processesWith(`${mark}-clean`).join(',')})`,
			);
			assert.ok(Number(exited.swept) >= 2, `the exited line counts them: ${JSON.stringify(exited)}`);
			// What stands outside the worktree runs on.
			assert.equal(processesWith(`${mark}-neighbour`).length, 1, 'the process in the neighbouring folder lives');
			assert.equal(processesWith(`${mark}-checkout`).length, 1, 'the process in the main checkout lives');
			// And the hub's check in the worktree ran to its end.
			const checked = await waitFor(
				async () => {
					const c = (await admin.request('card/get', { cardId: card.id })).card.checks;
					return c?.state === 'running' ? undefined : c;
				},
				20_000,
				'the check to end',
			);
			assert.equal(checked.state, 'passed', JSON.stringify(checked));
		} finally {
			run.proc.kill('SIGINT');
			await run.exited;
			for (const m of ['env', 'clean']) {
				left.push(...processesWith(`${mark}-${m}`));
			}
		}
	});
});
