/**
 * What each latency mechanism buys (docs/benchmarks.md, "Fast paths, side by side"): the figures users
 * feel, measured with every mechanism on and with one off (core/backlog/fastPaths.ts), in interleaved
 * rounds so a busy machine slows both sides alike. The figures:
 * - `mcp`: one agent's claim+complete through `baton mcp` (MCP SDK client → stdio → hub → PGlite), p50;
 * - `agents`: the hub's throughput with 16 `baton mcp` agents, each looping complete {next: true};
 * - `pg`: pgCompare's hand-over on PostgreSQL (one Backlog per worker, complete {next} per card),
 *   items/s at 1, 4 and 16 workers.
 * The hub gets its switches from BATON_FAST_PATHS, the PostgreSQL backlogs from BacklogOptions.
 * Standalone: `npm run build && node --import tsx test/bench/fastPaths.ts [--quick] [--rounds N]`;
 * `npm run bench -- --only fastPaths` (on demand only: it is not part of a full run).
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';

import pg from 'pg';

import { Backlog } from '../../core/backlog';
import { type FastPaths, fastPathsSpec, parseFastPaths } from '../../core/backlog/fastPaths';
import { cardBatches } from './dataset';
import { connect, cpuMsOf, startHub } from './hubProcess';
import { batonSession, call, type Session } from './mcpSession';
import { median, Reporter, round, row } from './report';

const quick = process.argv.includes('--quick');
const roundsArg = process.argv.indexOf('--rounds');
const rounds = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : quick ? 1 : 4;
const databaseUrl = process.env.DATABASE_URL_TEST ?? 'postgres://postgres@127.0.0.1:5432/test';

const hubCards = quick ? 8_000 : 15_000;
const mcpPairs = quick ? 100 : 300;
const agentCount = 16;
const agentWarmMs = 1_000;
const agentRunMs = quick ? 3_000 : 6_000;
const pgItems = quick ? 1_000 : 4_000;
const pgCapMs = quick ? 2_000 : 4_000;
const pgWorkerCounts = [1, 4, 16];

/** Each config is "all on" or one mechanism off (fastPaths.ts). */
const pgliteConfigs = ['all', '-wire', '-hot', '-handOver'];
/** The wire path is PGlite's: on PostgreSQL it changes nothing. */
const pgConfigs = ['all', '-hot', '-handOver'];

type Samples = Map<string, number[]>;

function add(samples: Samples, key: string, value: number): void {
	const list = samples.get(key) ?? [];
	list.push(value);
	samples.set(key, list);
}

/** A hub on a copy of the prepared PGlite store, with `config`'s switches. */
async function withHub<T>(
	template: string,
	temp: string,
	config: string,
	fn: (dataDir: string, hubPid: number) => Promise<T>,
): Promise<T> {
	const dataDir = mkdtempSync(join(temp, 'h-'));
	cpSync(template, join(dataDir, 'pgdata'), { recursive: true });
	const hub = await startHub(dataDir, 60_000, { BATON_FAST_PATHS: config });
	try {
		return await fn(dataDir, hub.pid);
	} finally {
		await hub.stop();
		rmSync(dataDir, { recursive: true, force: true });
	}
}

/** One agent: claim then complete, `mcpPairs` times after a warm-up; p50 of the pair in ms, hub CPU per pair. */
async function mcpPair(dataDir: string, hubPid: number): Promise<{ p50: number; hubCpu: number }> {
	const session = await batonSession(dataDir, 'ab-mcp');
	try {
		const times: number[] = [];
		const warm = Math.floor(mcpPairs / 5);
		let cpu0 = 0;
		for (let i = 0; i < warm + mcpPairs; i++) {
			if (i === warm) {
				cpu0 = cpuMsOf(hubPid);
			}
			const t = performance.now();
			const { lease } = (await call(session, 'claim', {})) as { lease: { cardId: string; epoch: number } | null };
			if (lease === null) {
				throw new Error(`nothing to claim after ${i} claims`);
			}
			await call(session, 'complete', { cardId: lease.cardId, epoch: lease.epoch });
			if (i >= warm) {
				times.push(performance.now() - t);
			}
		}
		return { p50: median(times), hubCpu: (cpuMsOf(hubPid) - cpu0) / mcpPairs };
	} finally {
		await session.close();
	}
}

/** 16 agents, each: claim, then complete {next: true} until the window closes; cards done per second. */
async function agentThroughput(dataDir: string): Promise<number> {
	const sessions: Session[] = await Promise.all(
		Array.from({ length: agentCount }, (_, i) => batonSession(dataDir, `ab-agent-${i}`)),
	);
	try {
		// Each baton mcp connects to the hub on its first call: done before the clock starts.
		await Promise.all(sessions.map(s => call(s, 'stats', {})));
		const start = performance.now();
		const from = start + agentWarmMs;
		const until = from + agentRunMs;
		let done = 0;
		await Promise.all(
			sessions.map(async session => {
				let { lease } = (await call(session, 'claim', {})) as { lease: { cardId: string; epoch: number } | null };
				while (lease !== null && performance.now() < until) {
					const out = (await call(session, 'complete', { cardId: lease.cardId, epoch: lease.epoch, next: true })) as {
						next?: { lease: { cardId: string; epoch: number } | null };
					};
					const at = performance.now();
					if (at >= from && at < until) {
						done++;
					}
					lease = out.next?.lease ?? null;
				}
				if (lease === null) {
					throw new Error('an agent ran out of cards: raise hubCards');
				}
			}),
		);
		return done / (agentRunMs / 1000);
	} finally {
		await Promise.all(sessions.map(s => s.close()));
	}
}

const admin = new pg.Pool({ connectionString: databaseUrl, max: 1 });
const runId = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
let schemas = 0;

/** pgCompare's Baton hand-over: `workers` backlogs, one claim each, then complete {next} per card. */
async function pgHandOver(fastPaths: FastPaths, workers: number): Promise<number> {
	const schema = `bench_ab_${runId}_${schemas++}`;
	try {
		const setup = await Backlog.open({ databaseUrl, schema });
		try {
			for (let i = 0; i < pgItems; i += 1000) {
				const cards = Array.from({ length: Math.min(1000, pgItems - i) }, (_, j) => ({
					id: `c${i + j}`,
					title: `item ${i + j}`,
				}));
				await setup.create({ actor: 'bench' }, { cards });
			}
		} finally {
			await setup.close();
		}
		const backlogs = await Promise.all(
			Array.from({ length: workers }, () => Backlog.open({ databaseUrl, schema, poolSize: 1, fastPaths })),
		);
		try {
			const started = performance.now();
			const deadline = started + pgCapMs;
			let done = 0;
			await Promise.all(
				backlogs.map(async (backlog, w) => {
					const ctx = { actor: `worker-${w}` };
					let { lease } = await backlog.claim(ctx, {});
					while (lease !== null) {
						const last = performance.now() >= deadline;
						const out = await backlog.complete(ctx, {
							cardId: lease.cardId,
							epoch: lease.epoch,
							...(last ? {} : { next: {} }),
						});
						done++;
						if (last) {
							return;
						}
						lease = out.next?.lease ?? null;
					}
				}),
			);
			return done / ((performance.now() - started) / 1000);
		} finally {
			await Promise.all(backlogs.map(b => b.close()));
		}
	} finally {
		await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
	}
}

/** Rounds alternate direction (A B C, C B A, …) so a drift in the machine's load hits every config alike. */
function order<T>(list: readonly T[], round: number): T[] {
	return round % 2 === 0 ? [...list] : [...list].reverse();
}

async function main(): Promise<void> {
	const report = new Reporter('fastPaths');
	const temp = mkdtempSync('/tmp/bt-');
	const loads: number[] = [loadavg()[0] ?? 0];
	const samples: Samples = new Map();
	try {
		console.log(`fastPaths: ${rounds} interleaved round(s); hub with ${hubCards} cards; PostgreSQL ${pgItems} items`);
		// One PGlite store, built once and copied for every hub, so every config starts from the same cards.
		const built = join(temp, 'built');
		const hub = await startHub(built);
		try {
			const client = await connect(built);
			for (const batch of cardBatches(hubCards)) {
				await client.request('card/create', { cards: batch }, { timeoutMs: 120_000 });
			}
			client.close();
		} finally {
			await hub.stop();
		}
		for (let r = 0; r < rounds; r++) {
			for (const config of order(pgliteConfigs, r)) {
				await withHub(join(built, 'pgdata'), temp, config, async (dataDir, hubPid) => {
					const pair = await mcpPair(dataDir, hubPid);
					add(samples, `mcp ${config}`, pair.p50);
					add(samples, `mcp cpu ${config}`, pair.hubCpu);
					const rate = await agentThroughput(dataDir);
					add(samples, `agents ${config}`, rate);
					console.log(
						`  round ${r + 1} ${config}: MCP pair p50 ${round(pair.p50)} ms (hub CPU ${round(pair.hubCpu)} ms), 16 agents ${round(rate)} cards/s`,
					);
				});
			}
			for (const config of order(pgConfigs, r)) {
				const rates: string[] = [];
				for (const workers of pgWorkerCounts) {
					const rate = await pgHandOver(parseFastPaths(config), workers);
					add(samples, `pg${workers} ${config}`, rate);
					rates.push(`×${workers} ${round(rate)}`);
				}
				console.log(`  round ${r + 1} ${config}: PostgreSQL hand-over items/s ${rates.join(', ')}`);
			}
			loads.push(loadavg()[0] ?? 0);
		}
		const med = (key: string): number => median(samples.get(key) ?? []);
		/** How much faster all-on is than `config` on a figure: > 0 means the mechanism helps. */
		const gain = (figure: string, config: string, lowerIsBetter: boolean): string => {
			const on = med(`${figure} all`);
			const off = med(`${figure} ${config}`);
			return `${Math.round(100 * (lowerIsBetter ? off / on - 1 : on / off - 1))} %`;
		};
		for (const config of pgliteConfigs) {
			report.add(
				row(
					`MCP claim+complete p50, ${config}`,
					med(`mcp ${config}`),
					'ms',
					undefined,
					config === 'all' ? `median of ${rounds} rounds` : `all on is ${gain('mcp', config, true)} faster`,
				),
			);
			report.add(row(`hub CPU per MCP claim+complete, ${config}`, med(`mcp cpu ${config}`), 'ms'));
			report.add(
				row(
					`16 MCP agents (complete next: true), ${config}`,
					med(`agents ${config}`),
					'cards/s',
					undefined,
					config === 'all' ? undefined : `all on is ${gain('agents', config, false)} faster`,
				),
			);
		}
		for (const config of pgConfigs) {
			for (const workers of pgWorkerCounts) {
				report.add(
					row(
						`PostgreSQL hand-over, ${workers} worker(s), ${config}`,
						med(`pg${workers} ${config}`),
						'items/s',
						undefined,
						config === 'all' ? undefined : `all on is ${gain(`pg${workers}`, config, false)} faster`,
					),
				);
			}
		}
		report.note(
			`Configs: ${[...new Set([...pgliteConfigs, ...pgConfigs])].map(c => `${c} = ${fastPathsSpec(parseFastPaths(c))}`).join('; ')}.`,
		);
		report.note(`1-minute load average at the start and after each round: ${loads.map(l => l.toFixed(1)).join(', ')}.`);
		report.note(
			`All samples: ${[...samples.entries()].map(([k, v]) => `${k}: ${v.map(x => round(x)).join(' / ')}`).join('; ')}.`,
		);
	} finally {
		await admin.end();
		rmSync(temp, { recursive: true, force: true });
	}
	report.finish();
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
