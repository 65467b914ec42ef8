/**
 * `baton run`: the supervisor in the foreground. Checks every flag (seats, the agent or the
 * template and its program, the run's name, budgets) before it connects, so bad input is one clear
 * usage error with nothing started; then runs mcp-server/dispatch/supervisor.ts until it drains or
 * stops. Ctrl-C (or SIGTERM) drains: no new agents, the running ones finish; a second one stops them
 * and releases their cards. SIGHUP (the terminal closed) drains too, and writes nothing more to the
 * terminal. Must not: start anything before the input is checked.
 */
import { basename } from 'node:path';
import { hostname } from 'node:os';

import { hubSocketVar, seatTokenVar } from '../../core/client/seatHub';
import { BatonError } from '../../core/errors';
import { resolveDataDir } from '../../core/paths';
import { Capability, Phase } from '../../core/protocol';
import { agentTemplate, builtInAgents, checkTemplate, splitTemplate } from '../dispatch/agents';
import { Display } from '../dispatch/liveTable';
import { chooseSandbox } from '../dispatch/sandbox';
import { batonMcpCommand } from '../dispatch/mcpConfigFile';
import { Supervisor } from '../dispatch/supervisor';
import type { Command, CommandContext } from './command';
import { cliFlags } from './flags';
import { openHub } from './hubClient';
import { UsageError, outputHungUp, whenTerminalGone } from './output';
import { explicitProject, workingProject } from './project';

const runFlags = cliFlags({
	seats: { type: 'string', value: 'N', description: 'Agents holding cards at once (default 2)' },
	command: {
		type: 'string',
		value: 'TEMPLATE',
		description: 'Run this program instead of a built-in agent; {mcpConfig} {promptFile} {prompt} {cardId} {workspace}',
	},
	kind: { type: 'string', value: 'K', description: 'Agent kind for --command (default: the program name)' },
	project: {
		type: 'string',
		value: 'ID',
		description: 'Claim cards of this project ("*": any; default: this checkout)',
	},
	phase: { type: 'string', value: 'X', description: 'Only cards in this phase' },
	capabilities: { type: 'string', value: 'a,b', description: 'Capabilities the agents have' },
	maxSeconds: { type: 'string', value: 'N', description: 'Stop an agent after N s and fail its card' },
	maxCostUsd: {
		type: 'string',
		value: 'USD',
		description: 'Stop an agent whose reported cost passes this many dollars and fail its card',
	},
	runBudgetUsd: {
		type: 'string',
		value: 'USD',
		description: 'Claim no new card once the run has spent this many dollars',
	},
	maxInReview: {
		type: 'string',
		value: 'N',
		description: "Claim no new card while N or more of the run's cards wait for review",
	},
	idleSeconds: {
		type: 'string',
		value: 'N',
		description: 'Stop an agent silent for N s (no output, no heartbeat) and fail its card (default 900; 0: never)',
	},
	cooldownSeconds: { type: 'string', value: 'N', description: 'Pause a rate-limited kind this long (default 300)' },
	stopGraceSeconds: {
		type: 'string',
		value: 'N',
		description: 'Between TERM and KILL when stopping an agent (default 10)',
	},
	logMaxMb: {
		type: 'string',
		value: 'N',
		description: "Cut each card's output log back to its tail past N MB (default 4; 0: never)",
	},
	name: { type: 'string', value: 'RUN', description: 'Name of this run (default "default")' },
	noSandbox: {
		type: 'boolean',
		description: 'Start agents without the bubblewrap sandbox (they get your full rights; the gate is advisory)',
	},
});

/**
 * An agent that prints nothing and makes no call on its card for this long is taken for hung. Claude
 * Code's `-p` prints only its final answer, so output alone cannot tell: the prompt asks every agent to
 * heartbeat at least every few minutes, and 15 minutes of neither is well past that.
 */
const defaultIdleSeconds = 900;

const runNamePattern = /^[a-z0-9][a-z0-9._-]{0,39}$/;
const kindPattern = /^[a-z][a-z0-9_-]{0,31}$/;

function count(flag: string, value: string | undefined, fallback: number | undefined, min: number): number | undefined {
	if (value === undefined) {
		return fallback;
	}
	const n = Number(value);
	if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min) {
		throw new UsageError(`--${flag} must be a whole number of at least ${min}; got "${value}".`);
	}
	return n;
}

/** A dollar amount: a positive number (0.5, 12). */
function dollarsFlag(flag: string, value: string | undefined): number | undefined {
	if (value === undefined) {
		return undefined;
	}
	const n = Number(value);
	if (value.trim() === '' || !Number.isFinite(n) || n <= 0) {
		throw new UsageError(`--${flag} must be a positive number of dollars, e.g. 2.50; got "${value}".`);
	}
	return n;
}

/** The kind of a --command run: --kind, else the program's name when it is a valid kind, else custom. */
function commandKind(template: string): string {
	const program = splitTemplate(template)[0] ?? '';
	const name = basename(program)
		.toLowerCase()
		.replace(/\.[a-z]+$/, '')
		.replace(/[^a-z0-9_-]/g, '');
	return kindPattern.test(name) ? name : 'custom';
}

export interface CheckedRun {
	seats: number;
	agent: string | undefined;
	command: string | undefined;
	kind: string;
	name: string;
	maxSeconds: number | undefined;
	maxCostUsd: number | undefined;
	runBudgetUsd: number | undefined;
	maxInReview: number | undefined;
	idleSeconds: number;
	cooldownSeconds: number;
	stopGraceSeconds: number;
	logMaxMb: number;
	phase: string | undefined;
	capabilities: string[];
	project: string | undefined;
	noSandbox: boolean;
}

/** Every flag checked; a UsageError (exit 2) names the first wrong one. */
export function checkRunFlags(ctx: Pick<CommandContext, 'values'>, env: NodeJS.ProcessEnv = process.env): CheckedRun {
	const flags = runFlags.read(ctx.values);
	// --agent is the CLI's global "act as" flag; for run it names the agent CLI to start.
	const agentFlag = typeof ctx.values.agent === 'string' ? ctx.values.agent : undefined;
	const seats = count('seats', flags.seats, 2, 1) ?? 2;
	if (agentFlag !== undefined && flags.command !== undefined) {
		throw new UsageError('Use --agent or --command, not both.');
	}
	if (agentFlag === undefined && flags.command === undefined) {
		throw new UsageError(`Say which agent to start: --agent ${builtInAgents.join('|')}, or --command 'TEMPLATE'.`);
	}
	if (agentFlag !== undefined && !(builtInAgents as readonly string[]).includes(agentFlag)) {
		throw new UsageError(`Unknown agent "${agentFlag}": use ${builtInAgents.join(', ')}, or --command 'TEMPLATE'.`);
	}
	try {
		checkTemplate(agentTemplate(agentFlag, flags.command), env);
	} catch (e) {
		throw BatonError.is(e) ? new UsageError(e.message) : e;
	}
	const kind = flags.kind ?? agentFlag ?? commandKind(flags.command ?? '');
	if (!kindPattern.test(kind)) {
		throw new UsageError(`--kind "${kind}" is not an agent kind: lowercase letters, digits, - and _, at most 32.`);
	}
	const name = flags.name ?? 'default';
	if (!runNamePattern.test(name)) {
		throw new UsageError(`--name "${name}" is not a run name: lowercase letters, digits, . - _, at most 40.`);
	}
	const phase = flags.phase === undefined ? undefined : Phase.safeParse(flags.phase);
	if (phase?.success === false) {
		throw new UsageError(`--phase "${flags.phase ?? ''}" is not a phase.`);
	}
	const capabilities = (flags.capabilities ?? '')
		.split(',')
		.map(c => c.trim())
		.filter(c => c !== '');
	for (const c of capabilities) {
		if (!Capability.safeParse(c).success) {
			throw new UsageError(`--capabilities: "${c}" is not a capability.`);
		}
	}
	let project: string | undefined;
	try {
		project = explicitProject(flags.project, env);
	} catch (e) {
		throw BatonError.is(e) ? new UsageError(e.message) : e;
	}
	return {
		seats,
		agent: agentFlag,
		command: flags.command,
		kind,
		name,
		maxSeconds: count('max-seconds', flags.maxSeconds, undefined, 1),
		maxCostUsd: dollarsFlag('max-cost-usd', flags.maxCostUsd),
		runBudgetUsd: dollarsFlag('run-budget-usd', flags.runBudgetUsd),
		maxInReview: count('max-in-review', flags.maxInReview, undefined, 1),
		idleSeconds: count('idle-seconds', flags.idleSeconds, defaultIdleSeconds, 0) ?? defaultIdleSeconds,
		cooldownSeconds: count('cooldown-seconds', flags.cooldownSeconds, 300, 0) ?? 300,
		stopGraceSeconds: count('stop-grace-seconds', flags.stopGraceSeconds, 10, 0) ?? 10,
		logMaxMb: count('log-max-mb', flags.logMaxMb, 4, 0) ?? 4,
		phase: phase?.data,
		capabilities,
		project,
		noSandbox: flags.noSandbox,
	};
}

/** Another agent's Baton identity and seat: never inherited by the agents of this run. */
const agentIdentityVars = [
	'BATON_AGENT',
	'BATON_SESSION',
	'BATON_CARD_ID',
	'BATON_AGENT_KIND',
	seatTokenVar,
	hubSocketVar,
];

/** The environment agents inherit: this one, without another agent's Baton identity. */
function agentBaseEnv(env: NodeJS.ProcessEnv): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [k, v] of Object.entries(env)) {
		if (v !== undefined && !agentIdentityVars.includes(k)) {
			out[k] = v;
		}
	}
	return out;
}

export const runCommand: Command = {
	name: 'run',
	summary: 'Start agents on claimable cards: N seats, each agent in its card’s workspace (Ctrl-C drains)',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: runFlags.options,
	notes: [
		'--agent claude|codex|gemini starts that CLI with its built-in command line (for run, --agent names',
		'the agent program, not who you act as). A card whose agent exits before completing is failed with',
		'the exit code and its last output lines; output saying 429, "rate limit", "quota" or "usage limit"',
		'releases the card without using an attempt and cools the kind down; three failures in a row within',
		'10 minutes pause the kind. Each card’s output: <data dir>/runs/<run>/<card>.log.',
	].join('\n'),
	async run(ctx) {
		const checked = checkRunFlags(ctx);
		const dataDir = ctx.dataDir ?? resolveDataDir(process.env);
		const project = await workingProject(process.cwd(), checked.project);
		const root = await ctx.workingRoot();
		const main = await openHub({
			dataDir,
			client: 'cli',
			agent: {
				id: `baton-run-${checked.name}`,
				name: `baton run ${checked.name}`,
				client: 'baton run',
				host: hostname(),
				pid: process.pid,
			},
		});
		const display = new Display(
			{
				write: text => process.stdout.write(text),
				// Read at each draw: the terminal may have been resized.
				get columns() {
					return process.stdout.columns;
				},
			},
			ctx.json ? 'json' : process.stdout.isTTY ? 'table' : 'lines',
		);
		const supervisor = new Supervisor(
			{
				dataDir,
				name: checked.name,
				seats: checked.seats,
				kind: checked.kind,
				agent: checked.agent,
				command: checked.command,
				project,
				phase: checked.phase,
				capabilities: checked.capabilities,
				maxSeconds: checked.maxSeconds,
				maxCostUsd: checked.maxCostUsd,
				runBudgetUsd: checked.runBudgetUsd,
				maxInReview: checked.maxInReview,
				idleSeconds: checked.idleSeconds,
				cooldownSeconds: checked.cooldownSeconds,
				stopGraceMs: checked.stopGraceSeconds * 1000,
				logMaxBytes: checked.logMaxMb * 1024 * 1024,
				root,
				cwd: process.cwd(),
				batonMcp: batonMcpCommand(),
				baseEnv: agentBaseEnv(process.env),
				sandbox: chooseSandbox({ off: checked.noSandbox, pathVar: process.env.PATH }),
			},
			main,
			(agent, session) => openHub({ dataDir, client: 'cli', agent, session, reconnect: true }),
			display,
		);
		let presses = 0;
		const interrupt = (): void => {
			presses++;
			if (presses === 1) {
				supervisor.drain();
			} else {
				supervisor.stop();
			}
		};
		// The terminal closed (SIGHUP, or a write to it failed with EIO): drain as on a first Ctrl-C (a later
		// one still stops). Nothing more is drawn on the terminal (output bound for a file or pipe goes on),
		// and a write to it that fails is dropped.
		const hangUp = (): void => {
			outputHungUp();
			if (process.stdout.isTTY) {
				display.hangUp();
			}
			presses = Math.max(presses, 1);
			supervisor.drain();
		};
		process.on('SIGINT', interrupt);
		process.on('SIGTERM', interrupt);
		process.on('SIGHUP', hangUp);
		whenTerminalGone(hangUp);
		try {
			try {
				await supervisor.start();
			} catch (e) {
				await supervisor.close();
				throw e;
			}
			await supervisor.ended;
		} finally {
			process.off('SIGINT', interrupt);
			process.off('SIGTERM', interrupt);
			process.off('SIGHUP', hangUp);
			whenTerminalGone(undefined);
			main.close();
		}
		return 0;
	},
};
