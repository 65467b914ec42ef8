/**
 * The agent command lines of `baton run`: the built-in lines for `--agent claude|codex|gemini`,
 * each written from that CLI's own `--help` and docs (the reasons are in docs/guide.md, "Which command
 * line each agent gets"), and `--command 'TEMPLATE'` for any other program. `resolveAgentCommand` checks
 * the choice before anything starts (one clear invalid_input error); `buildLaunch` turns it into the
 * spawn of one card's agent: program, argv (no shell: card text is always inside one element), working
 * folder and environment. Every line runs the CLI headless, gives it Baton's MCP server and lets it edit
 * files in its folder and call Baton's tools without asking, and nothing wider.
 * Must not: spawn, write files or talk to the hub (the supervisor does, mcp-server/dispatch/).
 */
import { readFileSync } from 'node:fs';

import { hubSocketVar, seatTokenVar } from '../../core/client/seatHub';
import { BatonError } from '../../core/errors';
import type { McpLaunch } from '../../core/formats/mcpConfig';
import type { Card } from '../../core/protocol';
import { agentEnvMarkers } from '../cli/insideAgent';
import { type PromptInput, agentPrompt } from './prompt';
import {
	type CommandTemplate,
	type PlaceholderValues,
	expandArgs,
	parseTemplate,
	resolveProgram,
	splitWords,
} from './template';

export { placeholders } from './template';
export { writeMcpConfig } from './mcpConfigFile';

export const builtInAgents = ['claude', 'codex', 'gemini'] as const;
export type BuiltInAgent = (typeof builtInAgents)[number];

export function isBuiltInAgent(name: string): name is BuiltInAgent {
	return (builtInAgents as readonly string[]).includes(name);
}

/** What one card's agent gets, as the supervisor knows it when it starts the agent. */
export interface LaunchContext {
	cardId: string;
	/** Its working folder: the card's worktree, else the repository root. */
	workspace: string;
	/** The `{mcpConfig}` file (mcpConfigFile.ts), already written. */
	mcpConfigPath: string;
	/** The `{promptFile}` file, already written (a template that does not use it may leave it unwritten). */
	promptFile: string;
	prompt: string;
	/** The `baton` MCP server entry written to mcpConfigPath (Codex takes it as -c overrides instead). */
	mcpServer: McpLaunch;
}

interface BuiltInSpec {
	program: string;
	/** How to get the program, ending the "not on PATH" error. */
	install: string;
	/** The argv after the program, and extra environment. */
	line(ctx: LaunchContext): { args: string[]; env?: Record<string, string> };
}

/** A TOML basic string; JSON's escapes (\" \\ \n \uXXXX) are TOML's too. */
function toml(value: string): string {
	return JSON.stringify(value);
}

function tomlInlineTable(record: Record<string, string>): string {
	return `{${Object.entries(record)
		.map(([k, v]) => `${/^[A-Za-z0-9_-]+$/.test(k) ? k : toml(k)}=${toml(v)}`)
		.join(',')}}`;
}

/** The variables that never go on a command line: the seat credential, and the socket it is for. */
const secretVars: readonly string[] = [seatTokenVar, hubSocketVar];

function splitSecrets(env: Record<string, string>): {
	plain: Record<string, string>;
	secret: Record<string, string>;
} {
	const plain: Record<string, string> = {};
	const secret: Record<string, string> = {};
	for (const [k, v] of Object.entries(env)) {
		(secretVars.includes(k) ? secret : plain)[k] = v;
	}
	return { plain, secret };
}

const builtIns: Record<BuiltInAgent, BuiltInSpec> = {
	// claude --help (2.1.x): -p/--print is the non-interactive mode ("Print response and exit"; it skips
	// the workspace trust dialog), [prompt] the positional argument. --mcp-config loads MCP servers from
	// a JSON file; --strict-mcp-config ignores the user's and the project's other MCP configurations (a
	// project .mcp.json with its own `baton` entry would otherwise start a second, card-less Baton).
	// --permission-mode acceptEdits accepts file edits in the working folder without asking;
	// --allowedTools mcp__baton allows every tool of the `baton` server (Claude Code's permission rule
	// syntax: mcp__<server>). Shell commands are not allowed: complete commits the work. --output-format
	// text prints the final answer, and the CLI's own errors ("Not logged in · Please run /login"), as
	// plain lines the supervisor keeps for the card. The prompt comes right after -p: --mcp-config and
	// --allowedTools take several values and would swallow a positional argument after them.
	claude: {
		program: 'claude',
		install: 'Install Claude Code (npm install -g @anthropic-ai/claude-code) or use --command.',
		line: ctx => ({
			args: [
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
			],
		}),
	},
	// codex exec --help (0.17x): `exec` runs Codex non-interactively. Codex has no MCP config file flag;
	// -c key=value overrides ~/.codex/config.toml for this run only (value parsed as TOML), so the
	// `baton` server is given as mcp_servers.baton.{command,args,env,env_vars}: the seat credential and
	// its socket are not in `env` (argv is readable by every local user, /proc/<pid>/cmdline) but in
	// Codex's own environment, and env_vars names them for Codex to forward to the server; and
	// default_tools_approval_mode="approve" lets its tools run without the approval prompt exec cannot
	// show (without it exec cancels MCP calls: "user cancelled MCP tool call", openai/codex#16685).
	// --sandbox workspace-write: commands may write the working folder (and temp dirs) only;
	// approval_policy="never": never stop to ask, failures go back to the model. --skip-git-repo-check:
	// a card without a worktree may run outside a repository. --color never: plain output lines.
	codex: {
		program: 'codex',
		install: 'Install Codex (npm install -g @openai/codex) or use --command.',
		line: ctx => {
			const { plain, secret } = splitSecrets(ctx.mcpServer.env);
			const names = Object.keys(secret);
			return {
				args: [
					'exec',
					'--sandbox',
					'workspace-write',
					'--skip-git-repo-check',
					'--color',
					'never',
					'-c',
					'approval_policy="never"',
					'-c',
					`mcp_servers.baton.command=${toml(ctx.mcpServer.command)}`,
					'-c',
					`mcp_servers.baton.args=[${ctx.mcpServer.args.map(toml).join(',')}]`,
					'-c',
					`mcp_servers.baton.env=${tomlInlineTable(plain)}`,
					...(names.length === 0 ? [] : ['-c', `mcp_servers.baton.env_vars=[${names.map(toml).join(',')}]`]),
					'-c',
					'mcp_servers.baton.default_tools_approval_mode="approve"',
					ctx.prompt,
				],
				env: secret,
			};
		},
	},
	// gemini --help (0.6x): -p/--prompt runs headless. Gemini reads MCP servers only from settings files
	// (settings.json "mcpServers"); GEMINI_CLI_SYSTEM_SETTINGS_PATH points its system settings file (the
	// one that overrides the others) at the {mcpConfig} file, which has that shape, so `baton` is the
	// card's Baton even when the user's settings have their own. Its "trust": true skips confirmations
	// for Baton's tools only; --approval-mode auto_edit auto-approves the edit tools. --skip-trust trusts
	// the working folder for this session (headless, an untrusted folder is a fatal error).
	// --output-format text: plain lines.
	gemini: {
		program: 'gemini',
		install: 'Install Gemini CLI (npm install -g @google/gemini-cli) or use --command.',
		line: ctx => ({
			args: ['--prompt', ctx.prompt, '--approval-mode', 'auto_edit', '--skip-trust', '--output-format', 'text'],
			env: { GEMINI_CLI_SYSTEM_SETTINGS_PATH: ctx.mcpConfigPath },
		}),
	},
};

/** A checked choice of agent: a built-in or a template, with its program's absolute path. */
export type AgentCommand =
	| { kind: 'builtin'; agent: BuiltInAgent; program: string }
	| { kind: 'template'; template: CommandTemplate; program: string };

/**
 * Checks `--agent` / `--command` before anything starts: exactly one, a known built-in, a template
 * with known placeholders, and a program that exists. `cwd` and `pathVar` are the supervisor's.
 */
export function resolveAgentCommand(options: {
	agent?: string | undefined;
	command?: string | undefined;
	cwd: string;
	pathVar: string | undefined;
}): AgentCommand {
	const { agent, command } = options;
	if (agent !== undefined && command !== undefined) {
		throw new BatonError('invalid_input', 'Give --agent or --command, not both.');
	}
	if (command !== undefined) {
		const template = parseTemplate(command);
		return { kind: 'template', template, program: resolveProgram(template.program, options) };
	}
	const name = agent ?? 'claude';
	if (!isBuiltInAgent(name)) {
		throw new BatonError(
			'invalid_input',
			`Unknown agent "${name}": the built-in ones are ${builtInAgents.join(', ')}; run any other program with --command 'TEMPLATE'.`,
		);
	}
	const spec = builtIns[name];
	return { kind: 'builtin', agent: name, program: resolveProgram(spec.program, { ...options, hint: spec.install }) };
}

/** What the supervisor spawns for one card. */
export interface Launch {
	command: string;
	args: string[];
	cwd: string;
	env: Record<string, string>;
}

/** Variables of the supervisor's environment that must not reach an agent (they name another card or agent). */
const notInherited = new Set([
	'BATON_CARD_ID',
	'BATON_AGENT',
	'BATON_SESSION',
	'BATON_AGENT_KIND',
	'BATON_PROJECT',
	'BATON_CAPABILITIES',
	...agentEnvMarkers,
]);

/**
 * The spawn of one card's agent: `baseEnv` (the supervisor's environment) without another agent's
 * identity, plus the card's BATON_* variables (the same the MCP server gets) and the built-in's own.
 */
export function launchFor(command: AgentCommand, ctx: LaunchContext, baseEnv: NodeJS.ProcessEnv): Launch {
	const env: Record<string, string> = {};
	for (const [k, v] of Object.entries(baseEnv)) {
		if (v !== undefined && !notInherited.has(k)) {
			env[k] = v;
		}
	}
	Object.assign(env, ctx.mcpServer.env);
	if (command.kind === 'builtin') {
		const line = builtIns[command.agent].line(ctx);
		return { command: command.program, args: line.args, cwd: ctx.workspace, env: { ...env, ...line.env } };
	}
	const values: PlaceholderValues = {
		mcpConfig: ctx.mcpConfigPath,
		promptFile: ctx.promptFile,
		prompt: ctx.prompt,
		cardId: ctx.cardId,
		workspace: ctx.workspace,
	};
	return { command: command.program, args: expandArgs(command.template.args, values), cwd: ctx.workspace, env };
}

// The supervisor's names (helper `run` wrote them first): the same checks and lines as above.

/** The words of a template, split like a shell splits a simple command (template.ts). */
export function splitTemplate(template: string): string[] {
	return splitWords(template);
}

/**
 * The command line of `--agent NAME` as a template (for the check and the run's table; a built-in's
 * launch adds what a template cannot say: Codex's -c overrides, Gemini's settings variable), or the
 * `--command` template itself.
 */
export function agentTemplate(agent: string | undefined, command: string | undefined): string {
	if (command !== undefined) {
		return command;
	}
	if (agent === undefined || !isBuiltInAgent(agent)) {
		throw new BatonError(
			'invalid_input',
			`Unknown agent "${agent ?? ''}": the built-in ones are ${builtInAgents.join(', ')}; run any other program with --command 'TEMPLATE'.`,
		);
	}
	const ctx: LaunchContext = {
		cardId: '{cardId}',
		workspace: '{workspace}',
		mcpConfigPath: '{mcpConfig}',
		promptFile: '{promptFile}',
		prompt: '{prompt}',
		mcpServer: { command: 'baton', args: ['mcp'], env: {} },
	};
	const quote = (w: string) => (/^[\w{}./:=@+,-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);
	return [builtIns[agent].program, ...builtIns[agent].line(ctx).args].map(quote).join(' ');
}

/**
 * Checks a template before anything starts: known placeholders only, and a program that exists (on
 * `env.PATH`, or a path from the working directory). A built-in's program missing from PATH says how to
 * install it. Throws invalid_input naming what is wrong.
 */
export function checkTemplate(template: string, env: NodeJS.ProcessEnv = process.env): void {
	const parsed = parseTemplate(template);
	const builtIn = isBuiltInAgent(parsed.program) ? builtIns[parsed.program] : undefined;
	resolveProgram(parsed.program, { cwd: process.cwd(), pathVar: env.PATH, hint: builtIn?.install });
}

export interface LaunchInput {
	/** A built-in agent (claude, codex, gemini); or */
	agent?: string | undefined;
	/** a `--command` template. */
	command?: string | undefined;
	card: Pick<Card, 'id'>;
	workspace: string;
	mcpConfigPath: string;
	promptFile: string;
	prompt: string;
	/** The agent's environment: the supervisor's, with the card's BATON_* variables set. */
	env: Record<string, string>;
	/** The `baton` server written to mcpConfigPath; read back from the file when absent (Codex needs it). */
	mcpServer?: McpLaunch;
}

function serverOf(input: LaunchInput): McpLaunch {
	if (input.mcpServer !== undefined) {
		return input.mcpServer;
	}
	const file = JSON.parse(readFileSync(input.mcpConfigPath, 'utf8')) as { mcpServers?: { baton?: Partial<McpLaunch> } };
	const baton = file.mcpServers?.baton;
	return { command: baton?.command ?? '', args: baton?.args ?? [], env: baton?.env ?? {} };
}

/** One card's spawn from the supervisor's input: the built-in line or the template, checked again. */
export function buildLaunch(input: LaunchInput): Launch {
	const command = resolveAgentCommand({
		...(input.command === undefined ? { agent: input.agent } : { command: input.command }),
		cwd: process.cwd(),
		pathVar: input.env.PATH ?? process.env.PATH,
	});
	const ctx: LaunchContext = {
		cardId: input.card.id,
		workspace: input.workspace,
		mcpConfigPath: input.mcpConfigPath,
		promptFile: input.promptFile,
		prompt: input.prompt,
		// The card's env as the config file has it: the agent gets the same variables as its `baton mcp`.
		mcpServer: serverOf(input),
	};
	return launchFor(command, ctx, input.env);
}

/** The prompt of a card (prompt.ts); `extra` adds what the supervisor has of the hand-over and history. */
export function promptText(
	card: PromptInput['card'],
	extra: {
		handoff?: string | undefined;
		workspace?: string;
		messages?: PromptInput['messages'];
		attempts?: PromptInput['attempts'];
	} = {},
): string {
	return agentPrompt({
		card: extra.handoff === undefined ? card : { ...card, handoff: extra.handoff },
		workspace: extra.workspace ?? 'your working folder (the current directory)',
		messages: extra.messages,
		attempts: extra.attempts,
	});
}
