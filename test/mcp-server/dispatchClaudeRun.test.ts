/**
 * `baton run --agent claude` with the real Claude Code CLI, pinned and installed by the test
 * setup (test/helpers/claudeCli.ts), and no model reachable: no login, no API key, a throwaway HOME, the
 * API a closed local port. The supervisor starts the CLI with its built-in line, which the CLI accepts
 * (it gets past its argument parsing); each card then fails with the CLI's own error in the reason
 * ("Not logged in · Please run /login"), and after three failures in a row the kind `claude` is paused
 * with the reason. No test here reaches a model; every wait is bounded.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { RpcClient } from '../../core/protocol/rpc';
import { type BatonRun, endBatonRun, killReportedAgents, startBatonRun } from '../helpers/batonRun';
import { ensureClaude, offlineClaudeEnv } from '../helpers/claudeCli';
import { type HubProcess, client, startHub, waitFor } from '../helpers/hub';
import { childEnv, cleanupDataDir, ensureBuilt } from '../helpers/mcp';

let base: string;
let dataDir: string;
let hub: HubProcess;
let admin: RpcClient;
let run: BatonRun | undefined;
let claudeBin: string;
let claudeHome: string | undefined;

before(async () => {
	ensureBuilt();
	claudeBin = ensureClaude();
	base = mkdtempSync('/tmp/bt-cr-');
	dataDir = path.join(base, 'd');
	hub = await startHub({ dataDir });
	admin = await client(dataDir, { agent: { id: 'vscode:alice' } });
});

after(async () => {
	if (run !== undefined) {
		await endBatonRun(run);
	}
	killReportedAgents();
	admin.close();
	await hub.stop();
	await cleanupDataDir(dataDir);
	rmSync(base, { recursive: true, force: true });
	if (claudeHome !== undefined) {
		rmSync(claudeHome, { recursive: true, force: true });
	}
});

/** The supervisor's environment: the test's, without any model credentials, and Claude's offline one. */
function supervisorEnv(): Record<string, string> {
	const env = Object.fromEntries(
		Object.entries(childEnv(dataDir)).filter(([k]) => !/^(ANTHROPIC_|CLAUDE_|AWS_BEARER|CLAUDECODE)/.test(k)),
	);
	const offline = offlineClaudeEnv(`${claudeBin}:${process.env.PATH ?? ''}`);
	claudeHome = offline.HOME;
	return { ...env, ...offline };
}

describe('baton run --agent claude with no model reachable', () => {
	it("starts Claude Code with a line it accepts, fails each card with the CLI's own error, and pauses the kind after three", async () => {
		const { cards } = await admin.request('card/create', {
			cards: [1, 2, 3, 4].map(i => ({ title: `Offline card ${i}`, backoffSeconds: 0, maxAttempts: 1 })),
		});
		const env = supervisorEnv();
		run = startBatonRun({
			dataDir,
			cwd: base,
			rawEnv: env,
			args: ['--agent', 'claude', '--seats', '1', '--project', '*', '--max-seconds', '60'],
		});
		// Three agents exit on their own; then the kind is paused (the fourth card is never started).
		const kindPause = async () =>
			(await admin.request('pause/list', {})).pauses.find(p => p.scope === 'kind' && p.target === 'claude');
		await waitFor(async () => (await kindPause()) !== undefined, 150_000, 'the kind claude to be paused');
		const paused = await kindPause();
		assert.ok(paused !== undefined);
		console.log(`# kind paused: ${paused.reason ?? ''}`);
		assert.match(paused.reason ?? '', /3|three/i, 'the pause says why');

		const got = await Promise.all(cards.map(c => admin.request('card/get', { cardId: c.id })));
		const failed = got.filter(g => g.attempts.some(a => a.outcome === 'failed' || a.outcome === 'blocked'));
		assert.equal(failed.length, 3, got.map(g => `${g.card.id} ${g.card.status}`).join(', '));
		for (const g of failed) {
			const reason = g.attempts.map(a => a.reason ?? '').join('\n') + (g.card.blockedReason ?? '');
			assert.match(reason, /agent exited with code 1 before completing/, reason);
			assert.match(reason, /Not logged in/, `the CLI's own error is in the reason: ${reason}`);
			assert.doesNotMatch(reason, /unknown option|error: option|too many arguments/i, 'the CLI accepted its line');
		}
		const untouched = got.filter(g => !failed.includes(g));
		assert.equal(untouched.length, 1);
		assert.equal(untouched[0]?.card.status, 'ready', 'nothing starts once the kind is paused');
	});
});
