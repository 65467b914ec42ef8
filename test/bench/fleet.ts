/**
 * Fleet scale: many `baton mcp` processes, each driven by a real MCP SDK client, each making
 * about one call a second. (1) PGlite: one hub, 20,000 cards, 64 agents looping claim → 3 heartbeats →
 * complete {next} → 3 heartbeats → complete; call latencies from the clients, CPU per tool call of the
 * `baton mcp` processes and of the hub from /proc, the hub's peak RSS, errors, and no double hold (the
 * event log and the leases the clients got). (2) Team mode: 3 hubs on one PostgreSQL schema, 48 agents
 * spread over them, the same loop; waiting claims on hubs B and C woken by cards created through hub A
 * (create sent → the waiting claim's answer), and no double claim.
 * Standalone: `npm run build && node --import tsx test/bench/fleet.ts [--quick] [--only pglite|team]`.
 * BATON_FLEET_CPU_PROF=DIR writes V8 CPU profiles of the first 4 `baton mcp` processes and the PGlite hub
 * to DIR (profiling all 64 would swamp the machine). BATON_FLEET_JS=path/to/baton.js runs another build
 * (the before of a before/after; docs/benchmarks.md "Fleet scale").
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import pg from 'pg';

import type { RpcClient } from '../../core/protocol/rpc';
import { cardBatches } from './dataset';
import { checkHolds, cpuMsOfAll, FleetRecord, runAgent } from './fleetAgents';
import { batonJs, connect, type HubHandle, memoryOf, requireBuild, rssOf, startHub } from './hubProcess';
import { batonSession, type Session } from './mcpSession';
import { median, percentile, Reporter, round, row } from './report';

const quick = process.argv.includes('--quick');
const onlyArg = process.argv.indexOf('--only');
const only = onlyArg > 0 ? process.argv[onlyArg + 1] : undefined;
const databaseUrl = process.env.DATABASE_URL_TEST ?? 'postgres://postgres@127.0.0.1:5432/test';
const profDir = process.env.BATON_FLEET_CPU_PROF;
const script = process.env.BATON_FLEET_JS ?? batonJs;

const pauseMs = 1_000;
/**
 * The first seconds of a run are left out of the CPU window and the latencies: every agent makes its
 * first claim then, and each process compiles that path on first use.
 */
const warmMs = 3_000;
/**
 * CPU per tool call is also read from this far into a run on: an agent calls about once a second, so
 * each process compiles its paths (to bytecode in lite mode, mcp-server/bin.ts; before it, optimised
 * code too) over its first ~20 calls, not its first three; measured from 3 s that start-up was a
 * third of `baton mcp`'s figure (a quarter in lite mode) and moved it between runs
 * (docs/benchmarks.md, "Fleet scale"). An agent's session lasts thousands of calls: the steady
 * figure is the target's, the one from 3 s is kept beside it.
 */
const steadyMs = 20_000;
const pglite = { agents: 64, cards: quick ? 5_000 : 20_000, runMs: quick ? 12_000 : 60_000 };
const team = { hubs: 3, agents: 48, cards: quick ? 2_000 : 5_000, runMs: quick ? 10_000 : 40_000, waiters: 8 };
/** A wake card is created through hub A this often while the waiters wait on hubs B and C. */
const wakeEveryMs = 250;

const sleep = (ms: number): Promise<void> => new Promise(r => setTimeout(r, ms));

/** node's flags for a CPU profile of each process of `kind` (NODE_OPTIONS refuses --cpu-prof). */
function profArgs(kind: string): string[] {
	if (profDir === undefined) {
		return [];
	}
	const dir = join(profDir, kind);
	mkdirSync(dir, { recursive: true });
	return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

interface Agent {
	name: string;
	session: Session;
}

/** Opens `count` `baton mcp` sessions, agent i on `dataDirs[i % n]`, a few at a time (start-up is CPU). */
async function openAgents(dataDirs: readonly string[], count: number, prefix: string): Promise<Agent[]> {
	const agents: Agent[] = [];
	const nodeArgs = profArgs('mcp');
	for (let i = 0; i < count; i += 8) {
		const batch = Array.from({ length: Math.min(8, count - i) }, (_, k) => i + k);
		agents.push(
			...(await Promise.all(
				batch.map(async n => {
					const name = `${prefix}-${String(n)}`;
					const session = await batonSession(dataDirs[n % dataDirs.length]!, name, script, n < 4 ? nodeArgs : []);
					// Connect to the hub before the clock starts.
					await session.client.callTool({ name: 'stats', arguments: {} });
					return { name, session };
				}),
			)),
		);
	}
	return agents;
}

function pidsOf(agents: readonly Agent[]): number[] {
	return agents.flatMap(a => (a.session.pid === null ? [] : [a.session.pid]));
}

async function lastSeq(rpc: RpcClient): Promise<number> {
	return (await rpc.request('events/list', { limit: 1 })).lastSeq;
}

/** Latency rows of every call kind; the claim's p99 is judged against `claimP99Max`. */
function latencyRows(report: Reporter, record: FleetRecord, label: string, claimP99Max?: number): void {
	for (const [kind, samples] of record.samples) {
		report.add(row(`${label}: ${kind} p50`, median(samples), 'ms', undefined, `${samples.length} calls`));
		const judged = kind === 'claim' && claimP99Max !== undefined ? { max: claimP99Max } : undefined;
		report.add(row(`${label}: ${kind} p99`, percentile(samples, 99), 'ms', judged));
	}
}

function holdRows(report: Reporter, record: FleetRecord, holds: Awaited<ReturnType<typeof checkHolds>>, label: string) {
	report.add(
		row(
			`${label}: double holds in the event log`,
			holds.doubleHolds.length + holds.epochRepeats.length,
			'count',
			{ max: 0 },
			`${holds.claims} claims in ${holds.events} events (${holds.seqHoles} seq holes); ${record.leases.size} leases seen by clients, ${record.clientDoubleHolds.length} given twice`,
		),
	);
	for (const problem of [...holds.doubleHolds, ...holds.epochRepeats, ...record.clientDoubleHolds].slice(0, 10)) {
		report.note(`${label}: ${problem}`);
	}
	report.add(row(`${label}: errors`, record.errors.length, 'count', { max: 0 }));
	for (const error of record.errors.slice(0, 5)) {
		report.note(`${label} error: ${error.slice(0, 300)}`);
	}
}

/** Runs the agents' loops from now for `runMs`, reading the CPU of `pids` over the measured window. */
async function runWindow(
	agents: readonly Agent[],
	record: FleetRecord,
	runMs: number,
	pids: { mcp: number[]; hubs: number[] },
	phase?: string,
): Promise<WindowCpu> {
	const t0 = performance.now();
	const until = t0 + runMs;
	record.windowStart = t0 + warmMs;
	record.windowEnd = until;
	const steady = runMs > steadyMs + 10_000;
	if (steady) {
		record.steadyStart = t0 + steadyMs;
	}
	const cpu = { mcp: 0, hub: 0, steadyMcp: 0, steadyHub: 0 };
	const startTimer = setTimeout(() => {
		cpu.mcp = -cpuMsOfAll(pids.mcp);
		cpu.hub = -cpuMsOfAll(pids.hubs);
	}, warmMs);
	const steadyTimer = setTimeout(() => {
		cpu.steadyMcp = -cpuMsOfAll(pids.mcp);
		cpu.steadyHub = -cpuMsOfAll(pids.hubs);
	}, steadyMs);
	const endTimer = setTimeout(() => {
		const mcp = cpuMsOfAll(pids.mcp);
		const hub = cpuMsOfAll(pids.hubs);
		cpu.mcp += mcp;
		cpu.hub += hub;
		cpu.steadyMcp += mcp;
		cpu.steadyHub += hub;
	}, runMs);
	try {
		await Promise.all(
			agents.map(a => runAgent(a.session, a.name, record, { until, pauseMs, ...(phase ? { phase } : {}) })),
		);
		// The last calls may end after the window; the CPU was read at its end.
		await sleep(Math.max(0, until - performance.now() + 10));
	} finally {
		clearTimeout(startTimer);
		clearTimeout(steadyTimer);
		clearTimeout(endTimer);
	}
	return {
		mcpCpuMs: cpu.mcp,
		hubCpuMs: cpu.hub,
		seconds: (runMs - warmMs) / 1000,
		...(steady ? { steady: { mcpCpuMs: cpu.steadyMcp, hubCpuMs: cpu.steadyHub } } : {}),
	};
}

interface WindowCpu {
	mcpCpuMs: number;
	hubCpuMs: number;
	seconds: number;
	/** From steadyMs on, when the run is long enough. */
	steady?: { mcpCpuMs: number; hubCpuMs: number };
}

async function runPglite(report: Reporter, temp: string): Promise<void> {
	const label = `PGlite, ${pglite.agents} agents`;
	console.log(`fleet: ${label}, ${pglite.cards} cards, ${pglite.runMs / 1000} s`);
	const dataDir = join(temp, 'pglite');
	const hub = await startHub(dataDir, 120_000, {}, script, profArgs('hub'));
	const rpc = await connect(dataDir);
	let agents: Agent[] = [];
	try {
		for (const batch of cardBatches(pglite.cards)) {
			await rpc.request('card/create', { cards: batch }, { timeoutMs: 120_000 });
		}
		const t = performance.now();
		agents = await openAgents([dataDir], pglite.agents, 'fleet');
		console.log(`  ${agents.length} baton mcp processes up in ${round((performance.now() - t) / 1000)} s`);
		const seq = await lastSeq(rpc);
		const record = new FleetRecord();
		const cpu = await runWindow(agents, record, pglite.runMs, { mcp: pidsOf(agents), hubs: [hub.pid] });
		const peakMb = rssOf(hub.pid).peakMb;
		const memory = pidsOf(agents).map(memoryOf);
		const holds = await checkHolds(rpc, seq);
		latencyRows(report, record, label, 50);
		const calls = record.callsInWindow;
		report.add(row(`${label}: tool calls per second`, calls / cpu.seconds, '/s', undefined, `${calls} calls`));
		// The target's figure is the steady one (steadyMs above); a --quick run has only the other.
		const target =
			cpu.steady === undefined
				? { mcpCpuMs: cpu.mcpCpuMs, hubCpuMs: cpu.hubCpuMs, calls, fromS: warmMs / 1000 }
				: { ...cpu.steady, calls: record.callsSteady, fromS: steadyMs / 1000 };
		report.add(
			row(
				`${label}: baton mcp CPU per tool call`,
				target.mcpCpuMs / target.calls,
				'ms',
				{ max: 2 },
				`user+system of all baton mcp processes ÷ the ${target.calls} tool calls ended from ${target.fromS} s into the run on`,
			),
		);
		report.add(
			row(
				`${label}: hub CPU per tool call`,
				target.hubCpuMs / target.calls,
				'ms',
				{ max: 1.5 },
				`from ${target.fromS} s on`,
			),
		);
		if (cpu.steady !== undefined) {
			report.add(
				row(
					`${label}: baton mcp CPU per tool call, from ${warmMs / 1000} s (each process's first calls too)`,
					cpu.mcpCpuMs / calls,
					'ms',
				),
			);
			report.add(row(`${label}: hub CPU per tool call, from ${warmMs / 1000} s`, cpu.hubCpuMs / calls, 'ms'));
		}
		report.add(
			row(`${label}: hub peak RSS`, peakMb, 'MB', { max: 400 }, `VmHWM, building ${pglite.cards} cards included`),
		);
		const mean = (mb: number[]): number => mb.reduce((a, b) => a + b, 0) / mb.length;
		report.add(
			row(
				`${label}: baton mcp memory per agent, PSS`,
				mean(memory.map(m => m.pssMb)),
				'MB',
				undefined,
				`mean over ${memory.length} processes after the run; RSS ${round(mean(memory.map(m => m.rssMb)))} MB, which counts the shared node binary in each`,
			),
		);
		holdRows(report, record, holds, label);
	} finally {
		await Promise.all(agents.map(a => a.session.close()));
		rpc.close();
		await hub.stop();
	}
}

/**
 * Waiters on hubs B and C loop claim {phase: 'wake', waitSeconds} → complete while hub A creates a
 * wake card every `wakeEveryMs`; each sample is create sent (on A) → the claim's answer (on B or C).
 */
async function wakeLoop(creator: RpcClient, waiters: readonly Agent[], until: number, record: FleetRecord) {
	const sentAt = new Map<string, number>();
	const latencies: number[] = [];
	const creating = (async () => {
		for (let n = 0; performance.now() < until; n++) {
			const id = `w${String(n)}`;
			sentAt.set(id, performance.now());
			await creator.request('card/create', { cards: [{ id, title: `Wake ${String(n)}`, phase: 'wake' }] });
			await sleep(wakeEveryMs);
		}
	})();
	const waiting = waiters.map(async w => {
		while (performance.now() < until) {
			const out = await w.session.client.callTool(
				{ name: 'claim', arguments: { phase: 'wake', waitSeconds: 5 } },
				undefined,
				{ timeout: 60_000 },
			);
			const answered = performance.now();
			if (out.isError === true) {
				record.errors.push(`${w.name} wake claim: ${JSON.stringify(out.content)}`);
				continue;
			}
			const lease = (out.structuredContent as { lease: { cardId: string; epoch: number } | null }).lease;
			if (lease === null) {
				continue;
			}
			record.lease(w.name, lease);
			const sent = sentAt.get(lease.cardId);
			if (sent !== undefined) {
				latencies.push(answered - sent);
			}
			const done = await w.session.client.callTool({ name: 'complete', arguments: { cardId: lease.cardId } });
			if (done.isError === true) {
				record.errors.push(`${w.name} wake complete: ${JSON.stringify(done.content)}`);
			}
		}
	});
	await Promise.all([creating, ...waiting]);
	return { latencies, created: sentAt.size };
}

async function runTeam(report: Reporter, temp: string): Promise<void> {
	const label = `PostgreSQL, ${team.hubs} hubs, ${team.agents} agents`;
	console.log(`fleet: ${label}, ${team.cards} cards, ${team.runMs / 1000} s`);
	const schema = `bt_fleet_${String(process.pid)}_${Date.now().toString(36)}`;
	const env = { DATABASE_URL: databaseUrl, BATON_PG_SCHEMA: schema };
	const hubs: HubHandle[] = [];
	const dirs: string[] = [];
	const admin = new pg.Client({ connectionString: databaseUrl });
	await admin.connect();
	let rpc: RpcClient | undefined;
	let agents: Agent[] = [];
	let waiters: Agent[] = [];
	try {
		for (let i = 0; i < team.hubs; i++) {
			dirs.push(join(temp, `team-${String(i)}`));
			// One after another: the first migrates the fresh schema.
			hubs.push(await startHub(dirs[i]!, 120_000, env, script));
		}
		rpc = await connect(dirs[0]!);
		for (const batch of cardBatches(team.cards)) {
			await rpc.request('card/create', { cards: batch.map(c => ({ ...c, phase: 'work' })) }, { timeoutMs: 120_000 });
		}
		agents = await openAgents(dirs, team.agents, 'team');
		waiters = await openAgents(dirs.slice(1), team.waiters, 'waiter');
		const seq = await lastSeq(rpc);
		const record = new FleetRecord();
		const until = performance.now() + team.runMs;
		const [cpu, wake] = await Promise.all([
			runWindow(agents, record, team.runMs, { mcp: pidsOf(agents), hubs: hubs.map(h => h.pid) }, 'work'),
			wakeLoop(rpc, waiters, until, record),
		]);
		const holds = await checkHolds(rpc, seq);
		latencyRows(report, record, label);
		report.add(
			row(
				`${label}: cross-hub wake p99 (create on A → waiting claim answered on B/C)`,
				percentile(wake.latencies, 99),
				'ms',
				{ max: 300 },
				`${wake.latencies.length} of ${wake.created} wake cards; p50 ${round(median(wake.latencies))} ms`,
			),
		);
		const calls = record.callsInWindow;
		report.add(row(`${label}: tool calls per second`, calls / cpu.seconds, '/s', undefined, `${calls} calls`));
		report.add(row(`${label}: baton mcp CPU per tool call`, cpu.mcpCpuMs / calls, 'ms'));
		report.add(row(`${label}: hubs' CPU per tool call`, cpu.hubCpuMs / calls, 'ms', undefined, 'all 3 hubs'));
		holdRows(report, record, holds, label);
	} finally {
		await Promise.all([...agents, ...waiters].map(a => a.session.close()));
		rpc?.close();
		for (const h of hubs) {
			await h.stop();
		}
		await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
		await admin.end();
	}
}

async function main(): Promise<void> {
	requireBuild();
	const report = new Reporter('fleet');
	const temp = mkdtempSync('/tmp/bt-');
	try {
		if (only === undefined || only === 'pglite') {
			await runPglite(report, temp);
		}
		if (only === undefined || only === 'team') {
			await runTeam(report, temp);
		}
		report.note(
			'A shared 2-core machine runs 64 agent processes, the hub and the bench client at once: latencies are noisy; CPU per call is the steadier figure.',
		);
	} finally {
		rmSync(temp, { recursive: true, force: true });
	}
	report.finish();
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
