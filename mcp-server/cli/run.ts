/**
 * `baton <command>`: finds the subcommand, parses its flags with node:util parseArgs, runs it with a
 * lazily opened hub connection and maps the outcome to the exit code: 0 success, 1 a refused
 * operation (the error as JSON on stdout under --json), 2 a usage error.
 */
import { hostname, userInfo } from 'node:os';
import { type ParseArgsConfig, parseArgs } from 'node:util';

import packageJson from '../../package.json';
import { type GitRepo, findGitRepo } from '../../core/client/gitRepo';
import { BatonError } from '../../core/errors';
import { createLogger } from '../../core/log';
import { AgentId, type AgentInfo } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { adminCommands } from './adminCommands';
import { cardCommands } from './cardCommands';
import { dataCommands } from './dataCommands';
import { dispatchCommands } from './dispatchCommands';
import type { Command, CommandContext, OptionSpec } from './command';
import { demoCommand } from './demo';
import { diffCommand } from './diffCommand';
import { commitGuardCommand } from './commitGuard';
import { cliFlags } from './flags';
import { gcCommand } from './gcCommand';
import { hookCommands } from './hookCommands';
import { openHub } from './hubClient';
import { insideAgent } from './insideAgent';
import { initCommand } from './init';
import { logsCommand } from './logsCommand';
import { policyCommands } from './policyCommands';
import { queueCommand } from './queueCommand';
import { runCommand } from './runCommand';
import { type ProjectChoice, explicitProject, workingProject } from './project';
import { steeringCommands } from './steeringCommands';
import { type Output, UsageError, printJson, processOutput } from './output';
import { upCommand } from './up';

const log = createLogger('cli');

export const commands: readonly Command[] = [
	...cardCommands,
	...steeringCommands,
	diffCommand,
	logsCommand,
	queueCommand,
	...policyCommands,
	...dispatchCommands,
	...adminCommands,
	...dataCommands,
	...hookCommands,
	upCommand,
	initCommand,
	demoCommand,
	gcCommand,
	commitGuardCommand,
	runCommand,
];

const globalFlags = cliFlags({
	json: { type: 'boolean', description: 'Machine-readable JSON on stdout' },
	agent: { type: 'string', value: 'NAME', description: 'Act as this agent (default: BATON_AGENT, else cli:<user>)' },
	dataDir: {
		type: 'string',
		value: 'DIR',
		description: 'Backlog data dir (default: BATON_DATA_DIR, else ~/.config/baton/backlog)',
	},
	help: { type: 'boolean', short: 'h', description: 'Show help' },
});

function optionLines(options: Record<string, OptionSpec>): string[] {
	const rows = Object.entries(options).map(([name, o]) => {
		const left = `${o.short === undefined ? '    ' : `-${o.short}, `}--${name}${o.value === undefined ? '' : ` ${o.value}`}`;
		return [left, o.description] as const;
	});
	const width = Math.max(...rows.map(([l]) => l.length));
	return rows.map(([l, d]) => `  ${l.padEnd(width)}  ${d}`);
}

export function commandHelp(command: Command): string {
	const lines = [
		`Usage: baton ${command.name}${command.args === '' ? '' : ` ${command.args}`} [options]`,
		'',
		command.summary,
		'',
		'Options:',
		...optionLines({ ...command.options, ...globalFlags.options }),
	];
	if (command.notes !== undefined) {
		lines.push('', command.notes);
	}
	return lines.join('\n');
}

export function mainHelp(): string {
	const width = Math.max(...commands.map(c => c.name.length), 'mcp'.length, 'hub'.length);
	const row = (name: string, summary: string): string => `  ${name.padEnd(width)}  ${summary}`;
	return [
		`baton ${packageJson.version}: a shared backlog for AI coding agents and humans`,
		'',
		'Usage: baton <command> [options]        baton <command> --help for its options',
		'',
		'Commands:',
		...commands.map(c => row(c.name, c.summary)),
		row('mcp', 'Serve the MCP tools over stdio for one agent (see baton mcp --help)'),
		row('hub', 'Run the hub in the foreground (normally started on demand)'),
		'',
		'Every command takes --json (machine output), --agent NAME and --data-dir DIR.',
		'Exit codes: 0 success, 1 refused by the backlog, 2 usage error.',
	].join('\n');
}

function findCommand(argv: readonly string[]): { command: Command; rest: string[] } | undefined {
	const [first, second] = argv;
	const two = commands.find(c => c.name === `${first} ${second}`);
	if (two !== undefined) {
		return { command: two, rest: argv.slice(2) };
	}
	const one = commands.find(c => c.name === first);
	return one === undefined ? undefined : { command: one, rest: argv.slice(1) };
}

/** --agent, else BATON_AGENT, else cli:<user>. */
export function cliAgent(flagValue: string | undefined, env: NodeJS.ProcessEnv): AgentInfo {
	let id = flagValue ?? (env.BATON_AGENT === '' ? undefined : env.BATON_AGENT);
	if (id === undefined) {
		let user = env.USER ?? env.USERNAME;
		try {
			user ??= userInfo().username;
		} catch {
			user ??= 'user';
		}
		id = `cli:${user}`;
	}
	if (!AgentId.safeParse(id).success) {
		throw new UsageError(`Agent id "${id}" is not valid: use no spaces or control characters, at most 128 characters.`);
	}
	return { id, name: id, client: 'cli', host: hostname(), pid: process.pid };
}

function parse(command: Command, argv: string[]): ReturnType<typeof parseArgs> {
	const options: NonNullable<ParseArgsConfig['options']> = {};
	for (const [name, o] of Object.entries({ ...command.options, ...globalFlags.options })) {
		options[name] = {
			type: o.type,
			...(o.short === undefined ? {} : { short: o.short }),
			...(o.multiple === true ? { multiple: true } : {}),
		};
	}
	try {
		return parseArgs({ args: argv, options, strict: true, allowPositionals: true });
	} catch (e) {
		// parseArgs throws TypeErrors with ERR_PARSE_ARGS_* codes for unknown or malformed flags.
		throw new UsageError(e instanceof Error ? e.message : String(e));
	}
}

function waitForInterrupt(): Promise<void> {
	return new Promise(resolve => {
		const done = (): void => {
			process.off('SIGINT', done);
			process.off('SIGTERM', done);
			resolve();
		};
		process.on('SIGINT', done);
		process.on('SIGTERM', done);
	});
}

function reportUsage(output: Output, json: boolean, message: string, help: string | undefined): number {
	if (json) {
		printJson(output, { error: { code: 'usage', message } });
	}
	output.err(`baton: ${message}${help === undefined ? '' : `\n\n${help}`}`);
	return 2;
}

export async function runCli(
	argv: string[],
	output: Output = processOutput,
	env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
	const jsonWanted = argv.includes('--json');
	if (argv.length === 0) {
		output.err(mainHelp());
		return 2;
	}
	if (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
		output.out(mainHelp());
		return 0;
	}
	if (argv[0] === '--version' || argv[0] === '-v') {
		output.out(packageJson.version);
		return 0;
	}
	const found = findCommand(argv);
	if (found === undefined) {
		const name = argv[0] === 'hub' ? `hub ${argv[1] ?? ''}`.trim() : (argv[0] ?? '');
		return reportUsage(output, jsonWanted, `Unknown command "${name}". Run "baton --help" for the list.`, undefined);
	}
	const { command, rest } = found;
	let hub: RpcClient | undefined;
	try {
		const { values, positionals } = parse(command, rest);
		const global = globalFlags.read(values);
		if (global.help) {
			output.out(commandHelp(command));
			return 0;
		}
		if (positionals.length < command.minArgs || positionals.length > command.maxArgs) {
			throw new UsageError(
				positionals.length < command.minArgs
					? `Missing argument: baton ${command.name} ${command.args}`
					: `Too many arguments: baton ${command.name} ${command.args}`.trimEnd(),
			);
		}
		const { dataDir } = global;
		const agent = cliAgent(global.agent, env);
		let inside: { why: string | undefined } | undefined;
		const insideAgentNow = (): string | undefined => (inside ??= { why: insideAgent({ env }) }).why;
		let hubPromise: Promise<RpcClient> | undefined;
		let projectPromise: Promise<ProjectChoice> | undefined;
		let repoPromise: Promise<GitRepo | undefined> | undefined;
		const workingRepo = (): Promise<GitRepo | undefined> => (repoPromise ??= findGitRepo(process.cwd()));
		const ctx: CommandContext = {
			values,
			positionals,
			json: global.json,
			output,
			dataDir,
			agent,
			insideAgent: insideAgentNow,
			workingProject: () => {
				projectPromise ??= (async () => workingProject(process.cwd(), explicitProject(undefined, env), workingRepo))();
				return projectPromise;
			},
			workingRoot: async () => (await workingRepo())?.root,
			hub: (options = {}) => {
				const why = insideAgentNow();
				hubPromise ??= openHub({
					dataDir,
					client: 'cli',
					agent,
					...(why === undefined ? {} : { insideAgent: why }),
					...(options.spawn === false ? { spawn: false } : {}),
				}).then(client => {
					hub = client;
					return client;
				});
				return hubPromise;
			},
			interrupted: waitForInterrupt,
		};
		return (await command.run(ctx)) ?? 0;
	} catch (error) {
		if (error instanceof UsageError) {
			return reportUsage(output, jsonWanted, error.message, commandHelp(command));
		}
		const baton = BatonError.is(error)
			? error
			: new BatonError('internal', `Unexpected error: ${error instanceof Error ? error.message : String(error)}`);
		if (!BatonError.is(error)) {
			// A bug, not a refusal: the stack is for whoever reports it; the user gets the line below.
			log.error(`baton ${command.name} failed unexpectedly`, error);
		}
		if (jsonWanted) {
			printJson(output, { error: baton.toBody() });
		}
		output.err(`baton ${command.name}: ${baton.message}`);
		return 1;
	} finally {
		hub?.close();
	}
}
