/**
 * Test helpers for the `baton` program as users run it: the built dist/baton.js, a short temp data
 * dir (Unix socket paths stay under 107 bytes), the real MCP SDK client over stdio, the CLI as a child
 * process, and a clean hub shutdown. Build first: `node esbuild.mjs`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { agentEnvMarkers } from '../../mcp-server/cli/insideAgent';
import { batonJs } from './build';
import { testV8Flags } from './v8Flags';
import { waitFor } from './waitFor';

export { batonJs, ensureBuilt, repoRoot } from './build';
export { waitFor } from './waitFor';

/**
 * Where children run unless a test says: outside any git repository, so no test's cards or claims
 * depend on the checkout's folder name or remote (the project inference).
 */
export const neutralCwd = tmpdir();

export function tempDataDir(): string {
	return mkdtempSync('/tmp/bt-');
}

/**
 * The environment of a child: this data dir, PGlite (no DATABASE_URL), the tests' V8 flags (v8Flags.ts),
 * no inherited agent or project, and none of the markers of a coding agent (insideAgent.ts), which a test run started from inside one
 * would otherwise hand to every `baton approve` it runs.
 */
export function childEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
	const env: Record<string, string> = {};
	for (const [k, v] of Object.entries(process.env)) {
		if (
			v !== undefined &&
			k !== 'DATABASE_URL' &&
			k !== 'BATON_AGENT' &&
			k !== 'BATON_CAPABILITIES' &&
			k !== 'BATON_PROJECT' &&
			!agentEnvMarkers.includes(k)
		) {
			env[k] = v;
		}
	}
	return { ...env, BATON_DATA_DIR: dataDir, BATON_V8_FLAGS: testV8Flags, ...extra };
}

export interface Agent {
	client: Client;
	transport: StdioClientTransport;
	/** pid of this agent's `baton mcp` process. */
	pid: number;
	/** The raw tool result. */
	call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
	/** structuredContent of a successful call; throws with the error text on isError. */
	json<T = Record<string, unknown>>(name: string, args?: Record<string, unknown>): Promise<T>;
	stderr(): string;
	close(): Promise<void>;
}

export function textOf(result: CallToolResult): string {
	const first = result.content[0];
	return first?.type === 'text' ? first.text : '';
}

/** Starts `node dist/baton.js mcp [args]` with the real SDK client, as an agent's MCP client does. */
export async function startAgent(
	dataDir: string,
	/** cwd: the working directory of `baton mcp` (its project is that folder's git repository); default neutralCwd. */
	options: { args?: string[]; env?: Record<string, string>; clientName?: string; cwd?: string } = {},
): Promise<Agent> {
	const transport = new StdioClientTransport({
		command: process.execPath,
		args: [batonJs, 'mcp', ...(options.args ?? [])],
		env: childEnv(dataDir, options.env),
		stderr: 'pipe',
		cwd: options.cwd ?? neutralCwd,
	});
	let stderr = '';
	transport.stderr?.on('data', (chunk: Buffer) => {
		stderr += chunk.toString('utf8');
	});
	const client = new Client({ name: options.clientName ?? 'baton-test', version: '1.0.0' });
	await client.connect(transport);
	const pid = transport.pid;
	if (pid === null) {
		throw new Error('baton mcp did not start');
	}
	const call = async (name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> =>
		(await client.callTool({ name, arguments: args })) as CallToolResult;
	return {
		client,
		transport,
		pid,
		call,
		async json<T>(name: string, args: Record<string, unknown> = {}): Promise<T> {
			const r = await call(name, args);
			if (r.isError === true) {
				throw new Error(`${name} failed: ${textOf(r)}`);
			}
			return r.structuredContent as T;
		},
		stderr: () => stderr,
		close: () => client.close(),
	};
}

export interface CliResult {
	code: number | null;
	stdout: string;
	stderr: string;
}

/** Runs `node dist/baton.js ...args` to completion. */
export function runBaton(
	args: string[],
	options: { dataDir: string; input?: string; env?: Record<string, string>; timeoutMs?: number; cwd?: string },
): Promise<CliResult> {
	return new Promise((resolvePromise, reject) => {
		const child = spawn(process.execPath, [batonJs, ...args], {
			env: childEnv(options.dataDir, options.env),
			cwd: options.cwd ?? neutralCwd,
			stdio: ['pipe', 'pipe', 'pipe'],
		});
		let stdout = '';
		let stderr = '';
		child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
		child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
		const timer = setTimeout(() => {
			child.kill('SIGKILL');
			reject(new Error(`baton ${args.join(' ')} did not finish in time\n${stderr}`));
		}, options.timeoutMs ?? 30_000);
		child.on('error', reject);
		child.on('close', code => {
			clearTimeout(timer);
			resolvePromise({ code, stdout, stderr });
		});
		child.stdin.end(options.input ?? '');
	});
}

/**
 * Runs `baton ...args` in this process (runCli) as runBaton runs it in a child, for the CLI's own part
 * (arguments, words, exit codes) without starting the 3 MB bundle per command: the child's environment
 * (childEnv), data dir, working directory and output, and a hub it starts is the bundle's. Commands
 * that read stdin or write to process.stdout themselves (export, backup to stdout) stay with
 * runBaton. For the call, process.env is the child's environment (childEnv with `env`), so what reads
 * process.env rather than runCli's env (restore's DATABASE_URL and BATON_PG_SCHEMA, the environment
 * of a hub the command starts) sees what the child would; it borrows the process's cwd, argv[1] and
 * environment, and gives them back after: one call at a time, so calls made side by side (tests of a
 * concurrent describe) take turns.
 */
export function runCliHere(
	args: string[],
	options: { dataDir: string; env?: Record<string, string>; cwd?: string },
): Promise<CliResult> {
	const run = cliHereTurn.then(() => runCliHereNow(args, options));
	cliHereTurn = run.catch(() => undefined);
	return run;
}

/** The runCliHere call in progress (or the last one): the next waits for it. */
let cliHereTurn: Promise<unknown> = Promise.resolve();

async function runCliHereNow(
	args: string[],
	options: { dataDir: string; env?: Record<string, string>; cwd?: string },
): Promise<CliResult> {
	const { runCli } = await import('../../mcp-server/cli/run');
	let stdout = '';
	let stderr = '';
	const output = {
		out: (text: string) => (stdout += text.endsWith('\n') ? text : `${text}\n`),
		err: (text: string) => (stderr += text.endsWith('\n') ? text : `${text}\n`),
	};
	const cwd = process.cwd();
	const script = process.argv[1];
	const ownEnv = { ...process.env };
	const env = childEnv(options.dataDir, options.env);
	setProcessEnv(env);
	process.chdir(options.cwd ?? neutralCwd);
	process.argv[1] = batonJs;
	try {
		const code = await runCli(args, output, env);
		return { code, stdout, stderr };
	} finally {
		process.chdir(cwd);
		if (script !== undefined) {
			process.argv[1] = script;
		}
		setProcessEnv(ownEnv);
	}
}

/** Makes process.env hold exactly `env` (in place: process.env is a special object). */
function setProcessEnv(env: NodeJS.ProcessEnv): void {
	for (const key of Object.keys(process.env)) {
		if (env[key] === undefined) {
			Reflect.deleteProperty(process.env, key);
		}
	}
	for (const [key, value] of Object.entries(env)) {
		if (value !== undefined) {
			process.env[key] = value;
		}
	}
}

/** The live hub's pid from hub.json, if any. */
export function hubPid(dataDir: string): number | undefined {
	try {
		const info = JSON.parse(readFileSync(join(dataDir, 'hub.json'), 'utf8')) as { pid?: unknown };
		return typeof info.pid === 'number' ? info.pid : undefined;
	} catch {
		return undefined;
	}
}

export function isAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

/** Whether `pid` is a `baton hub --data-dir dataDir` (its command line, from /proc), not a reused pid. */
function isHubOf(pid: number, dataDir: string): boolean {
	try {
		const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
		const at = args.indexOf('--data-dir');
		return args.includes('hub') && at !== -1 && resolve(args[at + 1] ?? '') === resolve(dataDir);
	} catch {
		return false;
	}
}

/**
 * Stops the data dir's hub (if one runs), waits for it to exit, and removes the dir. A hub this data
 * dir's hub.json names, whose command line says so, gets SIGTERM (the hub's own clean stop, as
 * helpers/hub.ts's stop sends) instead of a `baton hub stop` child: one bundle start less per data dir.
 * Any other hub (none in hub.json, another command line) is asked by `baton hub stop`, as before.
 */
export async function cleanupDataDir(dataDir: string): Promise<void> {
	const pid = hubPid(dataDir);
	if (pid !== undefined && isHubOf(pid, dataDir)) {
		try {
			process.kill(pid, 'SIGTERM');
		} catch {
			// It ended between the look and the signal.
		}
	} else {
		await runBaton(['hub', 'stop', '--json'], { dataDir, timeoutMs: 15_000 }).catch(() => undefined);
	}
	if (pid !== undefined) {
		await waitFor(() => !isAlive(pid), 10_000, `hub ${pid} to exit`).catch(() => {
			process.kill(pid, 'SIGKILL');
		});
	}
	rmSync(dataDir, { recursive: true, force: true });
}

/**
 * Sockets a process listens on, from /proc: its socket fds matched against the kernel's TCP/TCP6
 * tables (state 0A = LISTEN) and the Unix table (flag 00010000 = accepting connections).
 */
export function listeningSockets(pid: number): string[] {
	const inodes = new Set<string>();
	for (const fd of readdirSync(`/proc/${pid}/fd`)) {
		try {
			const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
			if (m?.[1] !== undefined) {
				inodes.add(m[1]);
			}
		} catch {
			// The fd closed between readdir and readlink.
		}
	}
	const found: string[] = [];
	for (const table of ['tcp', 'tcp6']) {
		const lines = readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1);
		for (const line of lines) {
			const cols = line.trim().split(/\s+/);
			if (cols[3] === '0A' && cols[9] !== undefined && inodes.has(cols[9])) {
				found.push(`${table} ${cols[1] ?? ''}`);
			}
		}
	}
	const unix = readFileSync(`/proc/${pid}/net/unix`, 'utf8').split('\n').slice(1);
	for (const line of unix) {
		const cols = line.trim().split(/\s+/);
		if (cols[3] === '00010000' && cols[6] !== undefined && inodes.has(cols[6])) {
			found.push(`unix ${cols[7] ?? ''}`);
		}
	}
	return found;
}
