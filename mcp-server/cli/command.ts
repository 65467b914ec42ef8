/**
 * The shape of a CLI subcommand and the helpers they share. A command declares its flags (for
 * node:util parseArgs and for its --help; flags.ts derives them from the protocol's schemas and reads
 * them typed) and gets a context with parsed values, the output streams and a lazily opened hub
 * connection. Value errors are UsageErrors (exit 2).
 */
import type { AgentInfo } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { type Output, UsageError, printJson } from './output';
import type { ProjectChoice } from './project';

export interface OptionSpec {
	type: 'string' | 'boolean';
	short?: string;
	multiple?: boolean;
	/** Placeholder shown in help, e.g. "N" or "ID". */
	value?: string;
	description: string;
}

export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface CommandContext {
	values: OptionValues;
	positionals: string[];
	json: boolean;
	output: Output;
	/** --data-dir, if given (else the client resolves BATON_DATA_DIR / the default). */
	dataDir: string | undefined;
	/** Who this CLI acts as: --agent, BATON_AGENT, else cli:<user>. */
	agent: AgentInfo;
	/**
	 * What says this command runs inside a coding agent (insideAgent.ts), or undefined: such a command
	 * approves nothing and its hello tells the hub so.
	 */
	insideAgent: () => string | undefined;
	/**
	 * The project this command works in when its flags name none: BATON_PROJECT, else the
	 * git repository of the working directory, else null. Asked once, on first use.
	 */
	workingProject: () => Promise<ProjectChoice>;
	/** The git checkout of the working directory (its root), or undefined outside one. Asked once. */
	workingRoot: () => Promise<string | undefined>;
	/** Connects on first use; `spawn: false` refuses to start a hub (hub status / stop). */
	hub(options?: { spawn?: boolean }): Promise<RpcClient>;
	/** Resolves when the user presses Ctrl-C (SIGINT) or SIGTERM arrives; for long-running commands. */
	interrupted(): Promise<void>;
}

export interface Command {
	/** 'create', or two words for grouped commands ('hub status'). */
	name: string;
	summary: string;
	/** Positional part of the usage line, e.g. "ID [DEP...]". */
	args: string;
	minArgs: number;
	/** Infinity for "any number". */
	maxArgs: number;
	options: Record<string, OptionSpec>;
	/** Extra help text after the options. */
	notes?: string;
	/** Returns the exit code (0 when omitted). */
	run(ctx: CommandContext): Promise<number | undefined>;
}

export function arg(ctx: CommandContext, index: number): string {
	const v = ctx.positionals[index];
	if (v === undefined) {
		throw new UsageError('Missing argument.');
	}
	return v;
}

/** Prints a command's result: `json` under --json, else the human text. */
export function show(ctx: CommandContext, json: unknown, human: () => string): void {
	if (ctx.json) {
		printJson(ctx.output, json);
	} else {
		ctx.output.out(human());
	}
}
