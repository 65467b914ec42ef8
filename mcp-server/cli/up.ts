/**
 * `baton up` (what `npm start` runs): attach to or start the hub on the data dir, print ready-to-paste
 * MCP configuration for Claude Code, Cursor, VS Code and any stdio client, print the board link, then
 * stream live activity until Ctrl-C. Plain lines, no terminal control codes, so it works in CI logs.
 */
import { resolveDataDir } from '../../core/paths';
import { plural } from '../../core/plural';
import type { Agent } from '../../core/protocol';
import type { Command } from './command';
import { cliFlags } from './flags';
import { detectLaunch, launchCommand, runningBaton } from './launch';
import { eventLine, printJson } from './output';

export interface McpConfigs {
	command: string;
	args: string[];
	env: Record<string, string>;
	claudeCode: string;
	claudeCodeJson: unknown;
	cursor: unknown;
	vscode: unknown;
}

/**
 * The MCP server launch line every client needs, in each client's own format: `launch` is
 * cli/launch.ts's, the one `baton init` writes.
 */
export function mcpConfigs(
	launch: { command: string; args: string[] },
	dataDir: string,
	defaultDataDir: string,
): McpConfigs {
	const { command, args } = launch;
	// Only pin the data dir when it is not the one `baton mcp` would find by itself.
	const env: Record<string, string> = dataDir === defaultDataDir ? {} : { BATON_DATA_DIR: dataDir };
	const envFlags = Object.entries(env)
		.map(([k, v]) => `-e ${k}=${shellQuote(v)} `)
		.join('');
	const withEnv = Object.keys(env).length > 0 ? { env } : {};
	return {
		command,
		args,
		env,
		claudeCode: `claude mcp add baton ${envFlags}-- ${[command, ...args].map(shellQuote).join(' ')}`,
		claudeCodeJson: { mcpServers: { baton: { command, args, ...withEnv } } },
		cursor: { mcpServers: { baton: { command, args, ...withEnv } } },
		vscode: { servers: { baton: { type: 'stdio', command, args, ...withEnv } } },
	};
}

function shellQuote(s: string): string {
	return /^[A-Za-z0-9_./:=@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

const onceFlag = cliFlags({
	once: { type: 'boolean', description: 'Print the setup and exit instead of following activity' },
});

export const upCommand: Command = {
	name: 'up',
	summary: 'Start or attach to the hub, print MCP setup for your agents and the board link, then show live activity',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: onceFlag.options,
	notes: 'With --json, prints the setup as one JSON object, then (unless --once) one JSON event per line.',
	async run(ctx) {
		const dataDir = ctx.dataDir ?? resolveDataDir(process.env);
		const hub = await ctx.hub();
		const [status, stats, ticket] = await Promise.all([
			hub.request('hub/status', {}),
			hub.request('card/stats', {}),
			hub.request('hub/boardTicket', {}).catch(() => undefined),
		]);
		const run = runningBaton();
		const detected = detectLaunch(run);
		const configs = mcpConfigs(
			launchCommand(detected.kind, run),
			status.dataDir,
			resolveDataDir({ HOME: process.env.HOME }),
		);
		if (ctx.json) {
			printJson(ctx.output, {
				hub: status,
				stats,
				boardUrl: ticket?.url ?? null,
				mcp: { ...configs, launch: detected.kind, launchWhy: detected.why },
			});
		} else {
			const j = (v: unknown): string => JSON.stringify(v, null, 2).replace(/\n/g, '\n  ');
			ctx.output.out(
				[
					`Baton hub ready: pid ${status.pid}, ${status.mode} store, data dir ${dataDir}`,
					`Backlog: ${plural(stats.total, 'card')} (${stats.counts.ready} ready, ${stats.counts.claimed} claimed, ${stats.counts.blocked} blocked, ${stats.counts.done} done)`,
					'',
					'Connect your agents: each MCP client starts its own "baton mcp" over stdio',
					`(${detected.why}; "baton init" writes the same into a repository).`,
					'',
					'Claude Code:',
					`  ${configs.claudeCode}`,
					'  or in .mcp.json:',
					`  ${j(configs.claudeCodeJson)}`,
					'',
					'Cursor (~/.cursor/mcp.json):',
					`  ${j(configs.cursor)}`,
					'',
					'VS Code (.vscode/mcp.json):',
					`  ${j(configs.vscode)}`,
					'',
					'Any stdio MCP client:',
					`  command: ${configs.command}`,
					`  args:    ${configs.args.join(' ')}`,
					...(Object.keys(configs.env).length > 0
						? [
								`  env:     ${Object.entries(configs.env)
									.map(([k, v]) => `${k}=${v}`)
									.join(' ')}`,
							]
						: []),
					'',
					ticket === undefined
						? 'Board: not available from this hub (run "baton board" to retry).'
						: `Board: ${ticket.url}\n  (one-time link valid 60 s; "baton board" prints a fresh one)`,
				].join('\n'),
			);
		}
		if (onceFlag.read(ctx.values).once) {
			return 0;
		}
		if (!ctx.json) {
			ctx.output.out('\nLive activity (Ctrl-C to stop; the hub keeps running):');
		}
		let connected = new Set<string>();
		const onAgents = (agents: Agent[]): void => {
			const now = new Set(agents.filter(a => a.connected && a.id !== ctx.agent.id).map(a => a.id));
			for (const id of now) {
				if (!connected.has(id) && !ctx.json) {
					ctx.output.out(`${new Date().toISOString().slice(11, 19)}  agent ${id} connected`);
				}
			}
			for (const id of connected) {
				if (!now.has(id) && !ctx.json) {
					ctx.output.out(`${new Date().toISOString().slice(11, 19)}  agent ${id} disconnected`);
				}
			}
			connected = now;
		};
		hub.onAgents(onAgents);
		hub.onEvent(e => ctx.output.out(ctx.json ? JSON.stringify(e) : eventLine(e)));
		const initial = await hub.request('agent/list', {});
		connected = new Set(initial.agents.filter(a => a.connected && a.id !== ctx.agent.id).map(a => a.id));
		await hub.subscribe(status.lastSeq);
		await ctx.interrupted();
		if (!ctx.json) {
			ctx.output.out('Stopped watching. The hub keeps running; "baton hub stop" stops it.');
		}
		return 0;
	},
};
