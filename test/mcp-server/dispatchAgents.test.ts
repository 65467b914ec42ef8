/**
 * The agent command lines of `baton run` (mcp-server/dispatch/agents.ts, template.ts, prompt.ts,
 * mcpConfigFile.ts): the template's quote-aware split and its placeholders, checked before anything
 * starts (unknown placeholder, missing program: one clear error each); card text as exactly one argv
 * element, proven by spawning a real program without a shell and reading back its argv; the built-in
 * lines for claude, codex and gemini; the environment an agent gets; the MCP config file; the prompt.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import {
	agentTemplate,
	buildLaunch,
	checkTemplate,
	launchFor,
	promptText,
	type LaunchContext,
	resolveAgentCommand,
} from '../../mcp-server/dispatch/agents';
import {
	agentEnv,
	agentMcpServer,
	batonMcpCommand,
	mcpConfigText,
	writeMcpConfig,
} from '../../mcp-server/dispatch/mcpConfigFile';
import { agentPrompt, maxPromptBytes } from '../../mcp-server/dispatch/prompt';
import {
	expandArgs,
	parseTemplate,
	resolveProgram,
	splitWords,
	usedPlaceholders,
} from '../../mcp-server/dispatch/template';
import { refused } from '../helpers/refused';

const dirs: string[] = [];
after(() => {
	for (const d of dirs) {
		rmSync(d, { recursive: true, force: true });
	}
});

/** The BatonError `fn` throws (invalid_input): the refusals here are synchronous. */
function refusal(fn: () => unknown, code: 'invalid_input') {
	return refused(Promise.resolve().then(fn), code);
}

function tempDir(): string {
	const d = mkdtempSync(join(tmpdir(), 'bt-agents-'));
	dirs.push(d);
	return d;
}

/** A folder holding executable stand-ins named like the agent CLIs (for the PATH lookups). */
function binDir(names: string[]): string {
	const d = tempDir();
	for (const n of names) {
		writeFileSync(join(d, n), '#!/bin/sh\nexit 0\n');
		chmodSync(join(d, n), 0o755);
	}
	return d;
}

const identity = {
	cardId: 'BTN-7',
	agent: 'claude-default-s2-k3f9',
	session: 'sess-1',
	kind: 'claude',
	dataDir: '/home/u/.local/share/baton',
	project: 'acme',
};

function context(over: Partial<LaunchContext> = {}): LaunchContext {
	return {
		cardId: 'BTN-7',
		workspace: '/repo/.baton/worktrees/BTN-7',
		mcpConfigPath: '/data/dispatch/BTN-7/mcp.json',
		promptFile: '/data/dispatch/BTN-7/prompt.md',
		prompt: 'You are a coding agent. Card "x"; rm -rf / $(id) `id` \'q\'\nline 2',
		mcpServer: agentMcpServer({ command: '/usr/bin/node', args: ['/opt/baton/dist/baton.js', 'mcp'] }, identity),
		...over,
	};
}

describe('command templates', () => {
	it('splits words like a shell does for a simple command, and gives nothing else a meaning', () => {
		assert.deepEqual(splitWords(`a  'b c' "d \\"e\\" \\\\" f\\ g $HOME; |>x \`id\` *`), [
			'a',
			'b c',
			'd "e" \\',
			'f g',
			'$HOME;',
			'|>x',
			'`id`',
			'*',
		]);
		assert.deepEqual(splitWords(`--x='{prompt}' ""`), ['--x={prompt}', '']);
	});

	it('refuses an unknown placeholder, naming it and the allowed ones', async () => {
		const r = await refusal(() => parseTemplate('my-agent --card {cardid} {prompt}'), 'invalid_input');
		assert.match(r.message, /unknown placeholder \{cardid\}/);
		assert.match(r.message, /\{mcpConfig\} \{promptFile\} \{prompt\} \{cardId\} \{workspace\}/);
	});

	it('refuses an unterminated quote, an empty template and a placeholder as the program', async () => {
		assert.match((await refusal(() => parseTemplate(`agent 'oops`), 'invalid_input')).message, /unterminated '/);
		assert.match((await refusal(() => parseTemplate(`agent "oops`), 'invalid_input')).message, /unterminated "/);
		assert.match((await refusal(() => parseTemplate('   '), 'invalid_input')).message, /empty/);
		assert.match(
			(await refusal(() => parseTemplate('{workspace}/run.sh {prompt}'), 'invalid_input')).message,
			/program .* cannot be a placeholder/,
		);
	});

	it('puts each placeholder inside one argv element, whatever the card text holds', () => {
		const t = parseTemplate(`agent --mcp-config={mcpConfig} -p {prompt} --id '{cardId}-x' {workspace}`);
		assert.deepEqual([...usedPlaceholders(t)].sort(), ['cardId', 'mcpConfig', 'prompt', 'workspace']);
		const hostile = `two words"; touch /tmp/pwned; echo '$(id)'\n--flag`;
		const args = expandArgs(t.args, {
			mcpConfig: '/d/m.json',
			promptFile: '/d/p.md',
			prompt: hostile,
			cardId: 'BTN-1',
			workspace: '/w s',
		});
		assert.deepEqual(args, ['--mcp-config=/d/m.json', '-p', hostile, '--id', 'BTN-1-x', '/w s']);
		// The real proof: a program started without a shell receives exactly these elements.
		const script = join(tempDir(), 'argv.mjs');
		writeFileSync(script, 'process.stdout.write(JSON.stringify(process.argv.slice(2)));\n');
		const echo = spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });
		assert.equal(echo.status, 0, echo.stderr);
		assert.deepEqual(JSON.parse(echo.stdout), args);
	});

	it('finds the program on PATH or by path, and names it when it is missing', async () => {
		const bin = binDir(['my-agent']);
		assert.equal(resolveProgram('my-agent', { cwd: '/', pathVar: `/nonexistent:${bin}` }), join(bin, 'my-agent'));
		assert.equal(resolveProgram('./my-agent', { cwd: bin, pathVar: '' }), join(bin, 'my-agent'));
		const missing = await refusal(() => resolveProgram('no-such-agent', { cwd: '/', pathVar: bin }), 'invalid_input');
		assert.equal(missing.message, 'The agent program no-such-agent is not on PATH.');
		writeFileSync(join(bin, 'plain.txt'), 'not a program');
		const notExec = await refusal(() => resolveProgram('./plain.txt', { cwd: bin, pathVar: '' }), 'invalid_input');
		assert.match(notExec.message, /does not exist or is not executable/);
	});
});

describe('the agent choice', () => {
	it('checks --agent and --command before anything starts', async () => {
		const bin = binDir(['claude', 'codex', 'gemini', 'fake-agent.mjs']);
		const ok = (o: { agent?: string; command?: string }) => resolveAgentCommand({ ...o, cwd: '/', pathVar: bin });
		assert.deepEqual(ok({ agent: 'codex' }), { kind: 'builtin', agent: 'codex', program: join(bin, 'codex') });
		const t = ok({ command: 'fake-agent.mjs {mcpConfig}' });
		assert.equal(t.program, join(bin, 'fake-agent.mjs'));
		assert.match(
			(await refusal(() => ok({ agent: 'cursor' }), 'invalid_input')).message,
			/Unknown agent "cursor": the built-in ones are claude, codex, gemini/,
		);
		assert.match((await refusal(() => ok({ agent: 'claude', command: 'x' }), 'invalid_input')).message, /not both/);
		const noClaude = await refusal(
			() => resolveAgentCommand({ agent: 'claude', cwd: '/', pathVar: tempDir() }),
			'invalid_input',
		);
		assert.equal(
			noClaude.message,
			'The agent program claude is not on PATH. Install Claude Code (npm install -g @anthropic-ai/claude-code) or use --command.',
		);
		assert.match(
			(await refusal(() => ok({ command: 'nope {prompt}' }), 'invalid_input')).message,
			/nope is not on PATH/,
		);
	});
});

describe('built-in command lines', () => {
	const bin = binDir(['claude', 'codex', 'gemini']);
	const base = {
		PATH: '/usr/bin',
		HOME: '/home/u',
		BATON_AGENT: 'someone-else',
		BATON_CARD_ID: 'BTN-99',
		CLAUDECODE: '1',
	};

	it('claude: headless, Baton as its only MCP server, edits and Baton tools allowed', () => {
		const ctx = context();
		const l = launchFor(resolveAgentCommand({ agent: 'claude', cwd: '/', pathVar: bin }), ctx, base);
		assert.equal(l.command, join(bin, 'claude'));
		assert.deepEqual(l.args, [
			'-p',
			ctx.prompt,
			'--mcp-config',
			ctx.mcpConfigPath,
			'--strict-mcp-config',
			'--permission-mode',
			'acceptEdits',
			'--allowedTools',
			'mcp__baton',
			'--output-format',
			'text',
		]);
		assert.equal(l.cwd, ctx.workspace);
		// The card's identity replaces whatever the supervisor's own environment said; agent markers go.
		assert.equal(l.env.BATON_CARD_ID, 'BTN-7');
		assert.equal(l.env.BATON_AGENT, 'claude-default-s2-k3f9');
		assert.equal(l.env.BATON_SESSION, 'sess-1');
		assert.equal(l.env.BATON_AGENT_KIND, 'claude');
		assert.equal(l.env.BATON_PROJECT, 'acme');
		assert.equal(l.env.CLAUDECODE, undefined);
		assert.equal(l.env.HOME, '/home/u');
	});

	it('codex: exec, the Baton server as -c overrides (TOML), sandboxed to its folder, never asking', () => {
		const seat = { token: 'seat-secret-7f3a', socket: '/run/baton/hub.sock' };
		const ctx = context({
			mcpServer: agentMcpServer(
				{ command: '/opt/my "node"', args: ['C:\\baton\\baton.js', 'mcp'] },
				{ ...identity, kind: 'codex', seat },
			),
		});
		const l = launchFor(resolveAgentCommand({ agent: 'codex', cwd: '/', pathVar: bin }), ctx, base);
		assert.deepEqual(l.args, [
			'exec',
			'--sandbox',
			'workspace-write',
			'--skip-git-repo-check',
			'--color',
			'never',
			'-c',
			'approval_policy="never"',
			'-c',
			'mcp_servers.baton.command="/opt/my \\"node\\""',
			'-c',
			'mcp_servers.baton.args=["C:\\\\baton\\\\baton.js","mcp"]',
			'-c',
			'mcp_servers.baton.env={BATON_CARD_ID="BTN-7",BATON_AGENT="claude-default-s2-k3f9",BATON_SESSION="sess-1",BATON_AGENT_KIND="codex",BATON_DATA_DIR="/home/u/.local/share/baton",BATON_PROJECT="acme"}',
			'-c',
			'mcp_servers.baton.env_vars=["BATON_SEAT_TOKEN","BATON_HUB_SOCKET"]',
			'-c',
			'mcp_servers.baton.default_tools_approval_mode="approve"',
			ctx.prompt,
		]);
		// The seat credential is not on its command line (readable by every local user): Codex has it in
		// its own environment and forwards it to its `baton mcp` by the names in env_vars.
		assert.ok(!l.args.some(a => a.includes(seat.token) || a.includes(seat.socket)), l.args.join(' '));
		assert.equal(l.env.BATON_SEAT_TOKEN, seat.token);
		assert.equal(l.env.BATON_HUB_SOCKET, seat.socket);
	});

	it('gemini: headless, its settings file pointed at the MCP config, edits and Baton tools approved', () => {
		const ctx = context();
		const l = launchFor(resolveAgentCommand({ agent: 'gemini', cwd: '/', pathVar: bin }), ctx, base);
		assert.deepEqual(l.args, [
			'--prompt',
			ctx.prompt,
			'--approval-mode',
			'auto_edit',
			'--skip-trust',
			'--output-format',
			'text',
		]);
		assert.equal(l.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH, ctx.mcpConfigPath);
	});

	it('a template gets every placeholder and the same environment', () => {
		const fake = binDir(['my-agent']);
		const ctx = context();
		const cmd = resolveAgentCommand({
			command: 'my-agent {mcpConfig} {promptFile} {cardId} {workspace} {prompt}',
			cwd: '/',
			pathVar: fake,
		});
		const l = launchFor(cmd, ctx, base);
		assert.deepEqual(l.args, [ctx.mcpConfigPath, ctx.promptFile, 'BTN-7', ctx.workspace, ctx.prompt]);
		assert.equal(l.env.BATON_CARD_ID, 'BTN-7');
		assert.equal(l.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH, undefined);
	});
});

describe("the supervisor's entry points", () => {
	it('checks a template or a built-in before anything starts, with an install hint for a built-in', () => {
		const bin = binDir(['claude', 'my-agent']);
		const env = { PATH: bin };
		checkTemplate(agentTemplate('claude', undefined), env);
		checkTemplate(agentTemplate(undefined, 'my-agent {mcpConfig} {prompt}'), env);
		assert.throws(
			() => checkTemplate(agentTemplate('codex', undefined), env),
			/codex is not on PATH\. Install Codex \(npm install -g @openai\/codex\)/,
		);
		assert.throws(() => checkTemplate('my-agent {nope}', env), /unknown placeholder \{nope\}/);
		assert.throws(() => agentTemplate('cursor', undefined), /Unknown agent "cursor"/);
		assert.match(
			agentTemplate('claude', undefined),
			/^claude -p \{prompt\} --mcp-config \{mcpConfig\} --strict-mcp-config/,
		);
	});

	it('builds a launch from the config file it wrote: the card env for the agent, the server for Codex', () => {
		const dir = tempDir();
		const bin = binDir(['claude', 'codex']);
		const server = agentMcpServer(
			{ command: '/usr/bin/node', args: ['/b/baton.js', 'mcp'] },
			{ ...identity, project: null },
		);
		const mcpConfigPath = join(dir, 'mcp.json');
		writeMcpConfig(mcpConfigPath, server);
		const input = {
			card: { id: 'BTN-7' },
			workspace: dir,
			mcpConfigPath,
			promptFile: join(dir, 'p.md'),
			prompt: 'Do it.',
		};
		const env = { PATH: bin, HOME: '/h', ...server.env, CLAUDECODE: '1' };
		const claude = buildLaunch({ ...input, agent: 'claude', env });
		assert.equal(claude.command, join(bin, 'claude'));
		assert.equal(claude.env.BATON_SESSION, 'sess-1');
		assert.equal(claude.env.CLAUDECODE, undefined);
		const codex = buildLaunch({ ...input, agent: 'codex', env });
		assert.ok(codex.args.includes('mcp_servers.baton.args=["/b/baton.js","mcp"]'), codex.args.join(' '));
		assert.ok(codex.args.some(a => a.startsWith('mcp_servers.baton.env={BATON_CARD_ID="BTN-7"')));
		const t = buildLaunch({ ...input, command: `${join(bin, 'claude')} {cardId} {prompt}`, env });
		assert.deepEqual(t.args, ['BTN-7', 'Do it.']);
		assert.match(
			promptText({ id: 'BTN-7', title: 'T', body: 'B', acceptance: [], attempts: 1, maxAttempts: 3 }, { handoff: 'H' }),
			/Hand-over note for this attempt \(start from it\):\nH/,
		);
	});
});

describe('the MCP config file', () => {
	it("starts this Baton's `baton mcp` with the card's environment, readable by its owner only", () => {
		const launch = batonMcpCommand('/opt/baton/dist/baton.js', '/usr/bin/node');
		assert.deepEqual(launch, { command: '/usr/bin/node', args: ['/opt/baton/dist/baton.js', 'mcp'] });
		const server = agentMcpServer(launch, { ...identity, project: null });
		assert.deepEqual(agentEnv({ ...identity, project: null }), server.env);
		assert.equal(server.env.BATON_PROJECT, undefined);
		assert.deepEqual(JSON.parse(mcpConfigText(server)), {
			mcpServers: {
				baton: {
					command: '/usr/bin/node',
					args: ['/opt/baton/dist/baton.js', 'mcp'],
					env: {
						BATON_CARD_ID: 'BTN-7',
						BATON_AGENT: 'claude-default-s2-k3f9',
						BATON_SESSION: 'sess-1',
						BATON_AGENT_KIND: 'claude',
						BATON_DATA_DIR: '/home/u/.local/share/baton',
					},
					trust: true,
				},
			},
		});
		const file = join(tempDir(), 'mcp.json');
		writeMcpConfig(file, server);
		assert.equal(statSync(file).mode & 0o777, 0o600);
		const written = JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: { baton: { args: string[] } } };
		assert.deepEqual(written.mcpServers.baton.args, launch.args);
	});
});

describe('the prompt', () => {
	const card = {
		id: 'BTN-7',
		title: 'Add the --json flag to baton show',
		body: 'The show verb prints text only.\nAdd --json.',
		acceptance: ['baton show --json prints the card as JSON', 'the README lists it'],
		scope: ['mcp-server/cli/**', 'README.md'],
		handoff: 'Reviewer: the flag is there but README is missing.',
		attempts: 2,
		maxAttempts: 3,
		project: 'acme',
		phase: 'build',
	};

	it('holds the card, the hand-over, earlier attempts, the messages and how to use Baton', () => {
		const p = agentPrompt({
			card,
			workspace: '/repo/.baton/worktrees/BTN-7',
			messages: [
				{ from: 'human-ann', text: 'Use the existing JSON printer.', at: '2026-01-01T10:00:00Z', question: false },
			],
			attempts: [
				{ outcome: 'failed', reason: 'agent exited with code 1 before completing', progressNote: null, endedAt: null },
			],
		});
		for (const part of [
			'BTN-7: Add the --json flag to baton show',
			'project acme · phase build · attempt 2 of 3',
			'Add --json.',
			'- baton show --json prints the card as JSON',
			'- mcp-server/cli/**',
			'Reviewer: the flag is there but README is missing.',
			'failed: agent exited with code 1 before completing',
			'human-ann at 2026-01-01T10:00:00Z: Use the existing JSON printer.',
			'call claim {} (no arguments)',
			'heartbeat {"cardId": "BTN-7"',
			'complete {"cardId": "BTN-7"',
			'fail {"cardId": "BTN-7"',
			'Work only in /repo/.baton/worktrees/BTN-7',
		]) {
			assert.ok(p.includes(part), `the prompt lacks ${JSON.stringify(part)}:\n${p}`);
		}
	});

	it('stays under the argv limit for a huge card, keeping the guide and pointing to the rest', () => {
		const big = { ...card, body: 'é'.repeat(300_000) };
		const messages = Array.from({ length: 200 }, (_, i) => ({
			from: 'h',
			text: `m${i} ${'x'.repeat(3000)}`,
			at: 't',
			question: i % 2 === 0,
		}));
		const p = agentPrompt({ card: big, workspace: '/w', messages });
		assert.ok(Buffer.byteLength(p) <= maxPromptBytes, `${Buffer.byteLength(p)} bytes`);
		assert.match(p, /cut here: \d+ more characters; call show \{"cardId": "BTN-7"\} for the full text/);
		assert.match(p, /call claim \{\} \(no arguments\)/);
		assert.match(p, /m199 /, 'the newest message stays');
		const hugeTitle = agentPrompt({ card: { ...card, title: 'T'.repeat(200_000) }, workspace: '/w' });
		assert.ok(Buffer.byteLength(hugeTitle) <= maxPromptBytes);
		assert.match(hugeTitle, /call claim \{\}/);
	});
});
