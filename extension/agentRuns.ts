/**
 * Starts `baton run` (the supervisor) for "Baton: Start Agents…", with the same data dir and
 * database as this window's hub: in a terminal (its live table; Ctrl-C drains) or in the background as a
 * child process (its `--json` lines in the "Baton Agents" output channel). Background runs are asked to
 * drain (SIGINT) when the window closes, so running agents finish their cards. It starts processes and
 * nothing else: stopping a run from VS Code goes through the hub (`run/stop`), which reaches any run.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { BatonError } from '../core/errors';
import type { BatonConfig } from './config';

export interface RunRequest {
	/** A built-in agent, or undefined with `command`. */
	agent?: string;
	/** A command template (`{mcpConfig}`, `{promptFile}`, `{prompt}`, `{cardId}`, `{workspace}`). */
	command?: string;
	seats: number;
	/** A project id, or '*' for every project; undefined: the checkout's (baton run's default). */
	project?: string;
	/** Only cards of this phase. */
	phase?: string;
	name?: string;
	where: 'terminal' | 'background';
	/** The folder it runs in (the repository root, where agents work when workspaces are off). */
	cwd: string | undefined;
}

/** `baton run`'s arguments for a request. */
export function runArgs(r: RunRequest): string[] {
	const args = ['run', '--seats', String(r.seats)];
	if (r.command !== undefined) {
		args.push('--command', r.command);
	} else if (r.agent !== undefined) {
		args.push('--agent', r.agent);
	}
	if (r.project !== undefined) {
		args.push('--project', r.project);
	}
	if (r.phase !== undefined) {
		args.push('--phase', r.phase);
	}
	if (r.name !== undefined) {
		args.push('--name', r.name);
	}
	return r.where === 'background' ? [...args, '--json'] : args;
}

/** A run started in the background: its process and how it ended (undefined while it runs). */
export interface BackgroundRun {
	process: ChildProcess;
	exit: Promise<{ code: number | null; stderr: string }>;
}

export class AgentRuns implements vscode.Disposable {
	private readonly children = new Set<ChildProcess>();
	private channel: vscode.OutputChannel | undefined;

	constructor(
		private readonly extensionPath: string,
		private readonly config: () => BatonConfig,
	) {}

	private env(): Record<string, string> {
		const c = this.config();
		return {
			// VS Code's own runtime runs baton as plain Node, as it does the hub (hubLaunch.ts).
			ELECTRON_RUN_AS_NODE: '1',
			BATON_DATA_DIR: c.dataDir,
			...(c.databaseUrl === undefined ? {} : { DATABASE_URL: c.databaseUrl }),
		};
	}

	/** Starts the supervisor; a background run resolves with its process, a terminal run with undefined. */
	start(r: RunRequest): BackgroundRun | undefined {
		const baton = join(this.extensionPath, 'dist', 'baton.js');
		const args = [baton, ...runArgs(r)];
		if (r.where === 'terminal') {
			const terminal = vscode.window.createTerminal({
				name: `Baton Agents${r.name === undefined ? '' : ` (${r.name})`}`,
				shellPath: process.execPath,
				shellArgs: args,
				env: this.env(),
				...(r.cwd === undefined ? {} : { cwd: r.cwd }),
				iconPath: new vscode.ThemeIcon('server-process'),
				isTransient: true,
			});
			terminal.show(true);
			return undefined;
		}
		const channel = (this.channel ??= vscode.window.createOutputChannel('Baton Agents'));
		channel.appendLine(`$ baton ${args.slice(1).join(' ')}`);
		const child = spawn(process.execPath, args, {
			cwd: r.cwd,
			env: { ...process.env, ...this.env() },
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		this.children.add(child);
		let stderr = '';
		child.stdout.setEncoding('utf8').on('data', (s: string) => channel.append(s));
		child.stderr.setEncoding('utf8').on('data', (s: string) => {
			stderr = (stderr + s).slice(-4096);
			channel.append(s);
		});
		const exit = new Promise<{ code: number | null; stderr: string }>(resolve => {
			child.on('error', e => {
				stderr += e.message;
			});
			child.on('close', code => {
				this.children.delete(child);
				channel.appendLine(`baton run exited with code ${code ?? 'null'}`);
				resolve({ code, stderr });
			});
		});
		return { process: child, exit };
	}

	/** Fails with the supervisor's own words when a background run exits before `ready` settles. */
	static async started(run: BackgroundRun, ready: Promise<unknown>): Promise<void> {
		const ended = await Promise.race([ready.then(() => undefined), run.exit]);
		if (ended !== undefined) {
			// `baton: <what is wrong>` comes first; the usage text after it says nothing new.
			const lines = ended.stderr.split('\n').map(l => l.trim());
			const why = lines.find(l => l.startsWith('baton: '))?.slice(7) ?? lines.find(l => l !== '');
			throw new BatonError('invalid_input', why ?? `baton run exited with code ${ended.code}`);
		}
	}

	/** Background runs drain: their agents finish their cards, then they exit. */
	dispose(): void {
		for (const child of this.children) {
			child.kill('SIGINT');
		}
		this.channel?.dispose();
	}
}
