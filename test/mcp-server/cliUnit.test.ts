/**
 * CLI and MCP argument handling without a hub: flag parsing and usage errors (exit 2), help on every
 * command, the agent identity rules, table layout, and the MCP configs `baton up` prints.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { formatTable, truncate } from '../../mcp-server/cli/output';
import { cliAgent, commands, runCli } from '../../mcp-server/cli/run';
import { mcpConfigs } from '../../mcp-server/cli/up';
import { agentIdFromClient, parseMcpArgs } from '../../mcp-server/mcp/run';
import { captureOutput } from '../helpers/cliOutput';

describe('baton CLI parsing', () => {
	it('prints --help for every command and exits 0 without touching a hub', async () => {
		for (const command of commands) {
			const out = captureOutput();
			const code = await runCli([...command.name.split(' '), '--help'], out, {});
			assert.equal(code, 0, command.name);
			assert.match(out.stdout, new RegExp(`^Usage: baton ${command.name}`), command.name);
			assert.match(out.stdout, /--json/);
		}
		assert.ok(commands.length >= 25, `${commands.length} commands`);
	});

	it('covers every backlog operation an agent or a human needs', () => {
		const names = new Set(commands.map(c => c.name));
		for (const n of [
			'create',
			'list',
			'show',
			'claim',
			'heartbeat',
			'complete',
			'release',
			'fail',
			'reclaim',
			'block',
			'unblock',
			'reopen',
			'link',
			'unlink',
			'delete',
			'comment',
			'stats',
			'events',
			'agents',
			'export',
			'import',
			'backup',
			'restore',
			'hub status',
			'hub stop',
			'board',
			'up',
			'demo',
			'hooks',
			'hooks add',
			'hooks remove',
			'hooks resume',
			'hooks test',
		]) {
			assert.ok(names.has(n), n);
		}
	});

	const usage: [string, string[], RegExp][] = [
		['unknown command', ['frobnicate'], /Unknown command "frobnicate"/],
		['unknown hub command', ['hub', 'restart'], /Unknown command "hub restart"/],
		['unknown flag', ['list', '--colour'], /colour/],
		['missing argument', ['show'], /Missing argument/],
		['too many arguments', ['show', 'A1', 'A2'], /Too many arguments/],
		['not a number', ['list', '--limit', 'ten'], /--limit must be a whole number/],
		['missing required flag', ['fail', 'A1'], /--reason is required/],
		['title and file', ['create', 'T', '--file', 'plan.json'], /not both/],
		['bad agent id', ['stats', '--agent', 'has space'], /Agent id "has space"/],
	];
	for (const [what, argv, message] of usage) {
		it(`exits 2 on ${what}`, async () => {
			const out = captureOutput();
			assert.equal(await runCli(argv, out, {}), 2);
			assert.match(out.stderr, message);
			assert.equal(out.stdout, '');
		});
	}

	it('puts a usage error as JSON on stdout under --json', async () => {
		const out = captureOutput();
		assert.equal(await runCli(['list', '--limit', 'x', '--json'], out, {}), 2);
		const body = JSON.parse(out.stdout) as { error: { code: string; message: string } };
		assert.equal(body.error.code, 'usage');
		assert.match(body.error.message, /--limit/);
	});

	it('prints the command list on --help and on no command (exit 2)', async () => {
		const help = captureOutput();
		assert.equal(await runCli(['--help'], help, {}), 0);
		assert.match(help.stdout, /claim/);
		const none = captureOutput();
		assert.equal(await runCli([], none, {}), 2);
		assert.match(none.stderr, /Usage: baton <command>/);
	});
});

describe('agent identity', () => {
	it('CLI: --agent, else BATON_AGENT, else cli:<user>', () => {
		assert.equal(cliAgent('ci-bot', { BATON_AGENT: 'env-agent' }).id, 'ci-bot');
		assert.equal(cliAgent(undefined, { BATON_AGENT: 'env-agent' }).id, 'env-agent');
		assert.equal(cliAgent(undefined, { USER: 'alice' }).id, 'cli:alice');
		assert.equal(cliAgent(undefined, { USER: 'alice' }).client, 'cli');
	});

	it('MCP: --agent, else BATON_AGENT, else the client name plus a session id', () => {
		assert.deepEqual(parseMcpArgs(['--agent', 'codex-1', '--capabilities', 'lang:ts, repo:web'], {}), {
			agent: 'codex-1',
			capabilities: ['lang:ts', 'repo:web'],
			project: undefined,
			dataDir: undefined,
		});
		const fromEnv = parseMcpArgs([], { BATON_AGENT: 'claude-2', BATON_CAPABILITIES: 'lang:go' });
		assert.ok(typeof fromEnv === 'object');
		assert.equal(fromEnv.agent, 'claude-2');
		assert.deepEqual(fromEnv.capabilities, ['lang:go']);
		assert.equal(agentIdFromClient('Claude Code', 'a1b2c3'), 'claude-code-a1b2c3');
		assert.equal(agentIdFromClient(undefined, 'a1b2c3'), 'mcp-a1b2c3');
		assert.throws(() => parseMcpArgs(['--agent', 'two words'], {}), /not a valid agent id/);
		assert.throws(() => parseMcpArgs(['--capabilities', 'bad cap!'], {}), /capabilities/);
		assert.throws(() => parseMcpArgs(['--port', '80'], {}), /port/);
		assert.equal(parseMcpArgs(['--help'], {}), 'help');
		assert.equal(parseMcpArgs(['--version'], {}), 'version');
	});

	it('MCP: --project, else BATON_PROJECT (checked as project ids, "*" for any), else left to the git repository', () => {
		const project = (argv: string[], env: NodeJS.ProcessEnv): string | undefined => {
			const options = parseMcpArgs(argv, env);
			assert.ok(typeof options === 'object');
			return options.project;
		};
		assert.equal(project(['--project', 'github.com/acme/web'], { BATON_PROJECT: 'other' }), 'github.com/acme/web');
		assert.equal(project([], { BATON_PROJECT: ' github.com/acme/api ' }), 'github.com/acme/api');
		assert.equal(project(['--project', '*'], {}), '*');
		assert.equal(project([], { BATON_PROJECT: '' }), undefined);
		assert.throws(() => parseMcpArgs(['--project', 'a*b'], {}), /--project "a\*b" is not a project id/);
		assert.throws(() => parseMcpArgs([], { BATON_PROJECT: ' \u0007x' }), /BATON_PROJECT/);
	});
});

describe('CLI output', () => {
	it('aligns table columns and leaves the last one unpadded', () => {
		const table = formatTable(
			['ID', 'STATUS', 'TITLE'],
			[
				['A1', 'ready', 'First'],
				['B22', 'claimed', 'Second'],
			],
		);
		assert.equal(table, ['ID   STATUS   TITLE', 'A1   ready    First', 'B22  claimed  Second'].join('\n'));
	});

	it('truncates long text on one line', () => {
		assert.equal(truncate('a\nb', 10), 'a b');
		assert.equal(truncate('abcdefghij', 5), 'abcd…');
	});

	it('prints MCP configs for each client, pinning the data dir only when it is not the default', () => {
		const launch = { command: process.execPath, args: ['/opt/baton/dist/baton.js', 'mcp'] };
		const pinned = mcpConfigs(launch, '/srv/team backlog', '/home/u/.config/baton/backlog');
		assert.equal(
			pinned.claudeCode,
			`claude mcp add baton -e BATON_DATA_DIR='/srv/team backlog' -- ${process.execPath} /opt/baton/dist/baton.js mcp`,
		);
		assert.deepEqual(pinned.vscode, {
			servers: {
				baton: {
					type: 'stdio',
					command: process.execPath,
					args: ['/opt/baton/dist/baton.js', 'mcp'],
					env: { BATON_DATA_DIR: '/srv/team backlog' },
				},
			},
		});
		const plain = mcpConfigs(launch, '/home/u/.config/baton/backlog', '/home/u/.config/baton/backlog');
		assert.deepEqual(plain.cursor, {
			mcpServers: { baton: { command: process.execPath, args: ['/opt/baton/dist/baton.js', 'mcp'] } },
		});
	});
});
