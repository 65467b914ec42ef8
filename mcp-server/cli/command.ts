/**
 * The shape of a CLI subcommand and the argument helpers they share. A command declares its flags
 * (for node:util parseArgs and for its --help) and gets a context with parsed values, the output
 * streams and a lazily opened hub connection. Value errors are UsageErrors (exit 2).
 */
import type { AgentInfo } from '../../core/protocol';
import type { RpcClient } from '../../core/rpc';
import { type Output, UsageError, printJson } from './output';

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

export function stringOpt(ctx: CommandContext, name: string): string | undefined {
	const v = ctx.values[name];
	return typeof v === 'string' ? v : undefined;
}

export function flag(ctx: CommandContext, name: string): boolean {
	return ctx.values[name] === true;
}

/** Integer flag; "abc" or "1.5" is a usage error naming the flag. */
export function intOpt(ctx: CommandContext, name: string): number | undefined {
	const v = stringOpt(ctx, name);
	if (v === undefined) {
		return undefined;
	}
	if (!/^-?\d+$/.test(v.trim())) {
		throw new UsageError(`--${name} must be a whole number, got "${v}".`);
	}
	return Number.parseInt(v, 10);
}

/** Comma-separated and/or repeated flag -> list ("--requires a,b --requires c" -> [a, b, c]). */
export function listOpt(ctx: CommandContext, name: string): string[] | undefined {
	const v = ctx.values[name];
	if (v === undefined) {
		return undefined;
	}
	const raw = Array.isArray(v) ? v : [v];
	return raw
		.filter((x): x is string => typeof x === 'string')
		.flatMap(x => x.split(','))
		.map(x => x.trim())
		.filter(x => x !== '');
}

/** Repeated flag kept whole (acceptance criteria may contain commas). */
export function repeatedOpt(ctx: CommandContext, name: string): string[] | undefined {
	const v = ctx.values[name];
	if (v === undefined) {
		return undefined;
	}
	return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
}

export function arg(ctx: CommandContext, index: number): string {
	const v = ctx.positionals[index];
	if (v === undefined) {
		throw new UsageError('Missing argument.');
	}
	return v;
}

/** Adds `key: value` only when value is defined (exactOptionalPropertyTypes-friendly). */
export function defined<T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
	const out: Record<string, unknown> = {};
	for (const [k, v] of Object.entries(fields)) {
		if (v !== undefined) {
			out[k] = v;
		}
	}
	return out as { [K in keyof T]?: Exclude<T[K], undefined> };
}

export const epochOption: OptionSpec = {
	type: 'string',
	value: 'N',
	description: 'Lease epoch from claim (default: the lease this agent holds)',
};

/** Prints a command's result: `json` under --json, else the human text. */
export function show(ctx: CommandContext, json: unknown, human: () => string): void {
	if (ctx.json) {
		printJson(ctx.output, json);
	} else {
		ctx.output.out(human());
	}
}
