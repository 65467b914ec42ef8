/**
 * The built-in `--agent claude` command line against the real Claude Code CLI, pinned and
 * installed by the test setup (test/helpers/claudeCli.ts): the CLI accepts the line (gets past its
 * argument parsing: a bad flag, the control, is refused by it), starts the `baton` MCP server of the
 * {mcpConfig} file with the card's environment, and with no model reachable (no login, the API a closed
 * port) exits 1 with its own error on its output. No test here reaches a model; every run is bounded.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { type Launch, launchFor, resolveAgentCommand } from '../../mcp-server/dispatch/agents';
import { agentMcpServer, writeMcpConfig } from '../../mcp-server/dispatch/mcpConfigFile';
import { agentPrompt } from '../../mcp-server/dispatch/prompt';
import { ensureClaude, offlineClaudeEnv } from '../helpers/claudeCli';

const dirs: string[] = [];
after(() => {
	for (const d of dirs) {
		rmSync(d, { recursive: true, force: true });
	}
});

/** Runs a launch to its end (killed after `ms`): exit code and everything it printed. */
function run(launch: Launch, ms = 60_000): Promise<{ code: number | null; output: string }> {
	return new Promise((resolve, reject) => {
		const child = spawn(launch.command, launch.args, {
			cwd: launch.cwd,
			env: launch.env,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let output = '';
		child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
		child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
		const timer = setTimeout(() => {
			child.kill('SIGKILL');
			reject(new Error(`claude did not exit within ${ms} ms; it printed:\n${output}`));
		}, ms);
		child.on('error', reject);
		child.on('close', code => {
			clearTimeout(timer);
			resolve({ code, output });
		});
	});
}

describe('the real Claude Code CLI with the built-in command line', () => {
	let bin = '';
	before(() => {
		bin = ensureClaude();
	});

	it('accepts the line, starts Baton from --mcp-config with the card env, and fails with its own error offline', async () => {
		const dir = mkdtempSync(join(tmpdir(), 'bt-claude-'));
		dirs.push(dir);
		const workspace = join(dir, 'work');
		const recorded = join(dir, 'mcp-started.json');
		// The MCP server entry records how it was started and exits: this test is about the CLI's side.
		const recorder = join(dir, 'recorder.mjs');
		writeFileSync(
			recorder,
			`import { writeFileSync } from 'node:fs';\nconst env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('BATON_')));\nwriteFileSync(process.argv[2], JSON.stringify({ argv: process.argv.slice(2), env, cwd: process.cwd() }));\n`,
		);
		const identity = {
			cardId: 'BTN-7',
			agent: 'claude-default-s1-ab12',
			session: 'sess-xyz',
			kind: 'claude',
			dataDir: join(dir, 'data'),
		};
		const server = agentMcpServer({ command: process.execPath, args: [recorder, recorded] }, identity);
		const mcpConfigPath = join(dir, 'mcp.json');
		writeMcpConfig(mcpConfigPath, server);
		mkdirSync(workspace);
		const prompt = agentPrompt({
			card: {
				id: 'BTN-7',
				title: 'Say "hi"; then $(exit 1) `x`',
				body: '--help',
				acceptance: ['-p'],
				attempts: 1,
				maxAttempts: 3,
			},
			workspace,
		});
		const env = offlineClaudeEnv(`${bin}:/usr/bin:/bin`);
		dirs.push(env.HOME!);
		const command = resolveAgentCommand({ agent: 'claude', cwd: dir, pathVar: env.PATH });
		const launch = launchFor(
			command,
			{ cardId: 'BTN-7', workspace, mcpConfigPath, promptFile: join(dir, 'prompt.md'), prompt, mcpServer: server },
			env,
		);

		const r = await run(launch);
		assert.equal(r.code, 1, r.output);
		assert.doesNotMatch(
			r.output,
			/unknown option|error: option|too many arguments/i,
			'the CLI refused the command line',
		);
		assert.match(r.output, /Not logged in/, "the CLI's own error when no model is reachable");
		// The CLI started the `baton` server of the file, with the card's identity in its environment.
		assert.ok(existsSync(recorded), `claude did not start the MCP server; it printed:\n${r.output}`);
		const started = JSON.parse(readFileSync(recorded, 'utf8')) as { argv: string[]; env: Record<string, string> };
		assert.deepEqual(started.argv, [recorded]);
		assert.equal(started.env.BATON_CARD_ID, 'BTN-7');
		assert.equal(started.env.BATON_SESSION, 'sess-xyz');
		assert.equal(started.env.BATON_AGENT, 'claude-default-s1-ab12');

		// The control: the same CLI refuses a line it does not accept, so the check above can fail.
		const bad = await run({ ...launch, args: [...launch.args, '--permission-mode', 'askEveryone'] });
		assert.notEqual(bad.code, 0);
		assert.match(bad.output, /argument 'askEveryone' is invalid/);
	});
});
