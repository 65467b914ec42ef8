/**
 * Dispatch: `baton run` with the fake agent of the tests. (1) From a card becoming
 * claimable to its agent process started, with a free seat: the clock starts before the bench sends
 * `card/create` and stops at the supervisor's `started` event (stamped right after the spawn), so the
 * create's own round trip is counted too. (2) The supervisor's own CPU with 8 busy seats (agents that
 * print a line a second and heartbeat), from /proc over a steady window. Standalone:
 * `npm run build && node --import tsx test/bench/dispatch.ts [--quick]`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';

import type { RpcClient } from '../../core/protocol/rpc';
import { batonJs, connect, cpuMsOf, requireBuild, startHub } from './hubProcess';
import { Reporter, median, percentile, row } from './report';
import { onJsonLines } from '../helpers/jsonLines';

const quick = process.argv.includes('--quick');
const samples = quick ? 5 : 20;
const cpuWindowMs = quick ? 10_000 : 30_000;
const busySeats = 8;
/** helper `agents`'s fake agent (completes after ~50 ms) and the supervisor's own (`busy`: a line a second). */
const fakeAgent = join(__dirname, '..', 'fixtures', 'fakeAgent.mjs');
const runAgent = join(__dirname, '..', 'fixtures', 'runAgent.mjs');

interface RunEvent {
	event: string;
	at: string;
	cardId?: string;
	[k: string]: unknown;
}

function startRun(dataDir: string, args: string[], agent: string) {
	const command = `${process.execPath} ${agent} {mcpConfig}`;
	const proc = spawn(process.execPath, [batonJs, 'run', '--json', '--kind', 'fake', '--command', command, ...args], {
		env: { ...process.env, BATON_DATA_DIR: dataDir },
		cwd: join(dataDir, '..'),
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const events: RunEvent[] = [];
	let stderr = '';
	onJsonLines(proc.stdout, e => events.push(e as RunEvent));
	proc.stderr.setEncoding('utf8');
	proc.stderr.on('data', (c: string) => (stderr = (stderr + c).slice(-4000)));
	const waitFor = async (match: (e: RunEvent) => boolean, timeoutMs: number, what: string): Promise<RunEvent> => {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const found = events.find(match);
			if (found) {
				return found;
			}
			if (Date.now() > deadline || proc.exitCode !== null) {
				throw new Error(`no ${what}:\n${stderr}`);
			}
			await new Promise(r => setTimeout(r, 5));
		}
	};
	return { proc, events, waitFor };
}

async function create(api: RpcClient, title: string, phase: string): Promise<string> {
	const { cards } = await api.request('card/create', { cards: [{ title, phase, maxAttempts: 1 }] });
	const id = cards[0]?.id;
	if (id === undefined) {
		throw new Error('create returned no card');
	}
	return id;
}

async function main(): Promise<void> {
	requireBuild();
	const reporter = new Reporter('dispatch');
	const root = mkdtempSync('/tmp/bt-bench-');
	const dataDir = join(root, 'd');
	const hub = await startHub(dataDir);
	const api = await connect(dataDir);
	try {
		// (1) claimable → agent process started, one free seat, one card at a time.
		const latency = startRun(dataDir, ['--seats', '1', '--phase', 'latency', '--name', 'latency'], fakeAgent);
		await latency.waitFor(e => e.event === 'running', 30_000, 'the run');
		const ms: number[] = [];
		for (let i = 0; i < samples; i++) {
			const t0 = Date.now();
			const id = await create(api, `complete ${i}`, 'latency');
			const started = await latency.waitFor(e => e.event === 'started' && e.cardId === id, 30_000, `${id} started`);
			ms.push(Date.parse(started.at) - t0);
			await latency.waitFor(e => e.event === 'exited' && e.cardId === id, 60_000, `${id} done`);
			// The seat's next connection is opened when a job ends: give it the moment a real backlog would.
			await new Promise(r => setTimeout(r, 200));
		}
		latency.proc.kill('SIGINT');
		await new Promise(r => latency.proc.once('exit', r));
		reporter.add(
			row('claimable → agent process started, p50', median(ms), 'ms', { max: 300 }, `${samples} cards, 1 free seat`),
		);
		reporter.add(
			row('claimable → agent process started, p95', percentile(ms, 95), 'ms', undefined, `${samples} cards`),
		);

		// (2) the supervisor's CPU with 8 busy seats.
		const busy = startRun(dataDir, ['--seats', String(busySeats), '--phase', 'busy', '--name', 'busy'], runAgent);
		await busy.waitFor(e => e.event === 'running', 30_000, 'the run');
		for (let i = 0; i < busySeats; i++) {
			await create(api, `busy ${i}`, 'busy');
		}
		for (let n = 0; n < 600 && busy.events.filter(e => e.event === 'started').length < busySeats; n++) {
			await new Promise(r => setTimeout(r, 100));
		}
		const pid = busy.proc.pid ?? 0;
		// Let the agents' start-up settle (their MCP sessions, first heartbeats).
		await new Promise(r => setTimeout(r, 5_000));
		const cpu0 = cpuMsOf(pid);
		const t0 = performance.now();
		await new Promise(r => setTimeout(r, cpuWindowMs));
		const cpu = cpuMsOf(pid) - cpu0;
		const wall = performance.now() - t0;
		const running = busy.events.filter(e => e.event === 'started').length;
		reporter.add(
			row(
				'supervisor CPU with 8 busy seats',
				(cpu / wall) * 100,
				'% of a core',
				{ max: 2 },
				`${running} agents printing 1 line/s, ${Math.round(wall / 1000)} s window`,
			),
		);
		// Two Ctrl-Cs: drain, then stop (apart: the kernel merges a signal that is still pending).
		busy.proc.kill('SIGINT');
		await new Promise(r => setTimeout(r, 300));
		busy.proc.kill('SIGINT');
		await new Promise(r => busy.proc.once('exit', r));
		reporter.note(`load average (1 min) at the end: ${loadavg()[0]?.toFixed(2) ?? '?'} on a shared 2-core machine`);
	} finally {
		api.close();
		await hub.stop();
		rmSync(root, { recursive: true, force: true });
	}
	reporter.finish();
}

void main().catch((e: unknown) => {
	console.error(e);
	process.exitCode = 1;
});
