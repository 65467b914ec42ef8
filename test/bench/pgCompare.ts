/**
 * Baton on real PostgreSQL against graphile-worker 0.17 and pg-boss 10: the same server, the same run,
 * the same number of queued items, 1 / 4 / 16 workers each on its own connection, each worker looping
 * take one → finish it. Reports items/s and the ratios Baton / graphile-worker and Baton / pg-boss.
 * Every system gets its own freshly created schema for every measurement, all dropped at the end.
 * Standalone: `node --import tsx test/bench/pgCompare.ts [--quick]`.
 */
import { EventEmitter } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';

import { Logger, makeWorkerUtils, run, type Runner, type WorkerEvents } from 'graphile-worker';
import pg from 'pg';
import PgBoss from 'pg-boss';

import { Backlog } from '../../core/backlog';
import { parseFastPaths } from '../../core/backlog/fastPaths';
import { Reporter, row } from './report';

const quick = process.argv.includes('--quick');
const databaseUrl = process.env.DATABASE_URL_TEST ?? 'postgres://postgres@127.0.0.1:5432/test';
const items = quick ? 1_000 : 10_000;
const workerCounts = [1, 4, 16];
/** Each system is measured this many times per worker count (interleaved); the best run is reported. */
const repeats = quick ? 1 : 2;
/**
 * A drain stops taking new items after this long and its rate is items done / time. pg-boss 10 sorts
 * the whole queue on every fetch (~80 items/s at 10k queued here), so draining 10k would take minutes
 * per cell; the queue stays deep while capped, so the rate is still "at ~10k queued".
 */
const drainCapMs = quick ? 5_000 : 10_000;
const runId = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
/** BATON_FAST_PATHS=-hot,… drains with latency mechanisms off (core/backlog/fastPaths.ts); all on by default. */
const fastPaths = parseFastPaths(process.env.BATON_FAST_PATHS);

interface Measurement {
	seconds: number;
	/** Items taken and finished before the clock stopped (all of them unless the cap was hit). */
	done: number;
	/** Items handed to two workers at once (must be 0). */
	duplicates: number;
}

interface System {
	name: string;
	/** What exactly one worker iteration does, for the docs. */
	describe: string;
	/** Fresh schema with `items` queued; untimed. */
	prepare(schema: string): Promise<void>;
	/** Runs `workers` loops until the queue is empty or the cap; timed from the first take to the last finish. */
	drain(schema: string, workers: number): Promise<Measurement>;
}

const admin = new pg.Pool({ connectionString: databaseUrl, max: 2 });

/** The drain connections of a system, tagged so the wait sampler sees only them. */
function drainUrl(system: string): string {
	const url = new URL(databaseUrl);
	url.searchParams.set('application_name', appName(system));
	return url.toString();
}

function appName(system: string): string {
	return `bench_${system.replace(/\W/g, '')}_${runId}`;
}

/**
 * Samples what a system's drain connections wait on (pg_stat_activity, every 100 ms) while `run`
 * goes, so the docs can say why a system does or does not scale with workers.
 */
async function sampleWaits<T>(
	system: string,
	run: () => Promise<T>,
): Promise<{ value: T; waits: Map<string, number> }> {
	const waits = new Map<string, number>();
	let running = true;
	const sampler = (async () => {
		while (running) {
			const { rows } = await admin.query<{ w: string; n: string }>(
				`SELECT coalesce(wait_event_type, 'CPU') || ':' || coalesce(wait_event, 'running') AS w, count(*) AS n
				 FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' GROUP BY 1`,
				[appName(system)],
			);
			for (const r of rows) {
				waits.set(r.w, (waits.get(r.w) ?? 0) + Number(r.n));
			}
			await new Promise(r => setTimeout(r, 100));
		}
	})();
	try {
		return { value: await run(), waits };
	} finally {
		running = false;
		await sampler;
	}
}

function topWaits(waits: Map<string, number>): string {
	const total = [...waits.values()].reduce((a, b) => a + b, 0);
	if (total === 0) {
		return 'no active samples';
	}
	return [...waits.entries()]
		.sort((a, b) => b[1] - a[1])
		.slice(0, 3)
		.map(([w, n]) => `${w} ${Math.round((100 * n) / total)} %`)
		.join(', ');
}

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces), from field 3 on. */
function procStat(pid: number): number[] | undefined {
	try {
		const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
		return text
			.slice(text.lastIndexOf(')') + 2)
			.split(' ')
			.map(Number);
	} catch {
		return undefined;
	}
}

/** The postmaster's pid: null until looked up, undefined when it cannot be seen from here. */
let postmasterPid: number | undefined | null = null;

/**
 * CPU time (ms) the PostgreSQL server has used so far, from /proc: the postmaster's own and its reaped
 * children's (backends that have exited) plus its live children's. Undefined when the server is not on
 * this machine or /proc cannot be read. Linux's /proc reports clock ticks of 10 ms (USER_HZ = 100).
 */
async function serverCpuMs(): Promise<number | undefined> {
	if (postmasterPid === null) {
		const { rows } = await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
		const backend = procStat(rows[0]?.pid ?? -1);
		postmasterPid = backend?.[1];
	}
	if (postmasterPid === undefined) {
		return undefined;
	}
	const own = procStat(postmasterPid);
	if (own === undefined) {
		return undefined;
	}
	// utime, stime, cutime, cstime are fields 14-17, at 11-14 here.
	let ticks = own[11]! + own[12]! + own[13]! + own[14]!;
	for (const entry of readdirSync('/proc')) {
		const pid = Number(entry);
		if (Number.isInteger(pid) && pid !== postmasterPid) {
			const child = procStat(pid);
			if (child?.[1] === postmasterPid) {
				ticks += child[11]! + child[12]!;
			}
		}
	}
	return ticks * 10;
}

/** Client (this process) and server CPU spent while `run` goes, in ms. */
async function measureCpu<T>(run: () => Promise<T>): Promise<{ value: T; clientMs: number; serverMs?: number }> {
	const server0 = await serverCpuMs();
	const client0 = process.cpuUsage();
	const value = await run();
	const client = process.cpuUsage(client0);
	// Let the drain's backends exit and be reaped, so their CPU moves into the postmaster's cutime.
	await new Promise(r => setTimeout(r, 300));
	const server1 = await serverCpuMs();
	return {
		value,
		clientMs: (client.user + client.system) / 1000,
		...(server0 !== undefined && server1 !== undefined ? { serverMs: server1 - server0 } : {}),
	};
}

const createdSchemas = new Set<string>();

async function freshSchema(prefix: string): Promise<string> {
	const schema = `bench_${prefix}_${runId}_${createdSchemas.size}`.toLowerCase();
	await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
	createdSchemas.add(schema);
	return schema;
}

async function dropSchemas(): Promise<void> {
	for (const schema of createdSchemas) {
		await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
	}
}

/**
 * Baton: N Backlog instances on PostgreSQL. The plain loop is claim → complete on one connection per
 * worker; the hand-over loop claims once, then each `complete {next}` finishes one card and claims the
 * next in the same statement (how an agent using next: true works). The pipelined loop is the plain
 * one shaped like graphile-worker's runner, which fetches the next job without waiting for the last
 * one's completion: each worker has two connections and claims the next card while its complete of
 * the last one commits (at most one complete in flight).
 */
type BatonLoop = 'plain' | 'handOver' | 'pipelined';

const batonNames: Record<BatonLoop, string> = {
	plain: 'Baton',
	handOver: 'Baton (complete with next)',
	pipelined: 'Baton (pipelined)',
};

const batonLoops: Record<BatonLoop, string> = {
	plain: 'Backlog.claim (prepared, FOR UPDATE SKIP LOCKED) then Backlog.complete with the lease epoch',
	handOver:
		'one Backlog.claim, then Backlog.complete with the lease epoch and next: {} (finish one, claim the next: one statement) until none is left',
	pipelined:
		"Backlog.claim, then Backlog.complete without waiting for it before the next claim (as graphile-worker's runner does), two connections per worker, at most one complete in flight",
};

function batonSystem(loop: BatonLoop): System {
	const name = batonNames[loop];
	return {
		name,
		describe: batonLoops[loop],
		async prepare(schema) {
			const backlog = await Backlog.open({ databaseUrl, schema });
			try {
				for (let i = 0; i < items; i += 1000) {
					const cards = [];
					for (let j = i; j < Math.min(items, i + 1000); j++) {
						cards.push({ id: `c${j}`, title: `item ${j}` });
					}
					await backlog.create({ actor: 'bench' }, { cards });
				}
			} finally {
				await backlog.close();
			}
		},
		async drain(schema, workers) {
			const backlogs = await Promise.all(
				Array.from({ length: workers }, () =>
					Backlog.open({ databaseUrl: drainUrl(name), schema, poolSize: loop === 'pipelined' ? 2 : 1, fastPaths }),
				),
			);
			const seen = new Set<string>();
			let duplicates = 0;
			const took = (id: string): void => {
				if (seen.has(id)) {
					duplicates++;
				}
				seen.add(id);
			};
			try {
				const started = performance.now();
				const deadline = started + drainCapMs;
				await Promise.all(
					backlogs.map(async (backlog, w) => {
						const ctx = { actor: `worker-${w}` };
						let { card, lease } = await backlog.claim(ctx, {});
						// The complete in flight; its failure is kept, not left as an unhandled rejection.
						let completing: Promise<void> = Promise.resolve();
						let failed: Error | undefined;
						while (card !== null && lease !== null) {
							took(card.id);
							if (loop === 'pipelined') {
								await completing;
								completing = backlog.complete(ctx, { cardId: card.id, epoch: lease.epoch }).then(
									() => undefined,
									(e: unknown) => {
										failed ??= e instanceof Error ? e : new Error(`complete failed: ${JSON.stringify(e)}`);
									},
								);
								if (performance.now() >= deadline) {
									break;
								}
								({ card, lease } = await backlog.claim(ctx, {}));
								continue;
							}
							if (loop === 'plain') {
								await backlog.complete(ctx, { cardId: card.id, epoch: lease.epoch });
								if (performance.now() >= deadline) {
									return;
								}
								({ card, lease } = await backlog.claim(ctx, {}));
								continue;
							}
							const last = performance.now() >= deadline;
							const done = await backlog.complete(ctx, {
								cardId: card.id,
								epoch: lease.epoch,
								...(last ? {} : { next: {} }),
							});
							if (last || done.next === undefined) {
								return;
							}
							({ card, lease } = done.next);
						}
						await completing;
						if (failed !== undefined) {
							throw failed;
						}
					}),
				);
				return { seconds: (performance.now() - started) / 1000, done: seen.size, duplicates };
			} finally {
				await Promise.all(backlogs.map(b => b.close()));
			}
		},
	};
}
const baton = batonSystem('plain');
const batonNext = batonSystem('handOver');
const batonPipelined = batonSystem('pipelined');

const quietLogger = new Logger(() => () => undefined);

/**
 * graphile-worker: its own runner with a no-op task, `concurrency` = workers and a pool with one
 * connection per worker (plus its LISTEN connection). Each worker fetches one job, runs the no-op and
 * completes it (completeJobBatchDelay -1, the default: one statement per job, not batched).
 */
const graphile: System = {
	name: 'graphile-worker',
	describe:
		'graphile-worker 0.17.3 runner, no-op task, concurrency = workers, maxPoolSize = workers + 2, default (unbatched) fetch and complete',
	async prepare(schema) {
		const utils = await makeWorkerUtils({ connectionString: databaseUrl, schema, logger: quietLogger });
		try {
			await utils.migrate();
			for (let i = 0; i < items; i += 1000) {
				const specs = [];
				for (let j = i; j < Math.min(items, i + 1000); j++) {
					specs.push({ identifier: 'noop', payload: { i: j } });
				}
				await utils.addJobs(specs);
			}
		} finally {
			await utils.release();
		}
	},
	async drain(schema, workers) {
		process.env.NO_LOG_SUCCESS = '1';
		const events: WorkerEvents = new EventEmitter();
		const seen = new Set<string>();
		let duplicates = 0;
		let started = 0;
		let first = true;
		events.on('job:start', ({ job }) => {
			if (first) {
				first = false;
				started = performance.now();
			}
			if (seen.has(job.id)) {
				duplicates++;
			}
			seen.add(job.id);
		});
		let runner: Runner | undefined;
		try {
			runner = await run({
				connectionString: drainUrl('graphile-worker'),
				schema,
				concurrency: workers,
				maxPoolSize: workers + 2,
				noHandleSignals: true,
				pollInterval: 50,
				logger: quietLogger,
				events,
				taskList: { noop: () => Promise.resolve() },
			});
			// The runner emits job:complete before its (unawaited) completion statement finishes, so the
			// end is when the job table is really empty (or the cap has passed).
			const check = new pg.Client({ connectionString: databaseUrl });
			await check.connect();
			let remaining = items;
			try {
				while (remaining > 0 && (started === 0 || performance.now() < started + drainCapMs)) {
					await new Promise(r => setTimeout(r, 5));
					const { rows } = await check.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}._private_jobs`);
					remaining = Number(rows[0]?.n ?? items);
				}
			} finally {
				await check.end();
			}
			return { seconds: (performance.now() - started) / 1000, done: items - remaining, duplicates };
		} finally {
			await runner?.stop();
		}
	},
};

/** pg-boss: one PgBoss instance with a pool of `workers` connections, each worker fetch → complete. */
const pgBoss: System = {
	name: 'pg-boss',
	describe: 'pg-boss 10 boss.fetch(queue) (1 job) then boss.complete(queue, id); pool max = workers + 1',
	async prepare(schema) {
		const boss = new PgBoss({ connectionString: databaseUrl, schema, supervise: false, schedule: false, max: 2 });
		boss.on('error', e => console.error(`pg-boss: ${e.message}`));
		await boss.start();
		try {
			await boss.createQueue('bench');
			for (let i = 0; i < items; i += 1000) {
				const jobs = [];
				for (let j = i; j < Math.min(items, i + 1000); j++) {
					jobs.push({ name: 'bench', data: { i: j } });
				}
				await boss.insert(jobs);
			}
		} finally {
			await boss.stop({ graceful: false, wait: true });
		}
	},
	async drain(schema, workers) {
		const boss = new PgBoss({
			connectionString: drainUrl('pg-boss'),
			schema,
			supervise: false,
			schedule: false,
			migrate: false,
			max: workers + 1,
		});
		boss.on('error', e => console.error(`pg-boss: ${e.message}`));
		await boss.start();
		const seen = new Set<string>();
		let duplicates = 0;
		try {
			const started = performance.now();
			const deadline = started + drainCapMs;
			await Promise.all(
				Array.from({ length: workers }, async () => {
					while (performance.now() < deadline) {
						const [job] = await boss.fetch('bench');
						if (job === undefined) {
							return;
						}
						if (seen.has(job.id)) {
							duplicates++;
						}
						seen.add(job.id);
						await boss.complete('bench', job.id);
					}
				}),
			);
			return { seconds: (performance.now() - started) / 1000, done: seen.size, duplicates };
		} finally {
			await boss.stop({ graceful: false, wait: true });
		}
	},
};

async function main(): Promise<void> {
	const report = new Reporter('pgCompare');
	const only = process.env.BENCH_PG_SYSTEMS?.split(',');
	const systems = [baton, batonNext, batonPipelined, graphile, pgBoss].filter(
		s => only === undefined || only.includes(s.name),
	);
	const { rows } = await admin.query<{ server_version: string }>('SHOW server_version');
	console.log(
		`pgCompare: PostgreSQL ${rows[0]?.server_version ?? '?'} at ${new URL(databaseUrl).host}, ${items} queued items, workers ${workerCounts.join(' / ')}, ${repeats} run(s) each`,
	);
	const rates = new Map<string, number>();
	const cappedRuns = new Set<string>();
	const waitNotes: string[] = [];
	const allRuns: string[] = [];
	try {
		for (const workers of workerCounts) {
			const samples = new Map<string, number[]>();
			let duplicates = 0;
			for (let r = 0; r < repeats; r++) {
				// Interleave the systems so a noisy neighbour on the shared machine hurts them alike.
				for (const system of systems) {
					const schema = await freshSchema(system.name.replace(/\W/g, '').slice(0, 8));
					await system.prepare(schema);
					const cpu = await measureCpu(() => sampleWaits(system.name, () => system.drain(schema, workers)));
					const { value: m, waits } = cpu.value;
					if (workers === Math.max(...workerCounts) && r === 0) {
						waitNotes.push(`${system.name}: ${topWaits(waits)}`);
					}
					duplicates += m.duplicates;
					if (m.done < items && m.seconds * 1000 < drainCapMs) {
						throw new Error(`${system.name} stopped after ${m.done} of ${items} items, before the cap`);
					}
					const rate = m.done / m.seconds;
					const capped = m.done < items ? ` (capped at ${drainCapMs / 1000} s: ${m.done} of ${items} done)` : '';
					const perItem = (ms: number | undefined): string => (ms === undefined ? '?' : (ms / m.done).toFixed(3));
					const cpuText = `CPU per item: client ${perItem(cpu.clientMs)} ms, server ${perItem(cpu.serverMs)} ms`;
					console.log(
						`  ${system.name}, ${workers} worker(s), run ${r + 1}: ${rate.toFixed(0)} items/s${capped}; ${cpuText}`,
					);
					if (capped !== '') {
						cappedRuns.add(`${system.name} at ${workers} worker(s)`);
					}
					samples.set(system.name, [...(samples.get(system.name) ?? []), rate]);
					allRuns.push(
						`${system.name} ×${workers}: ${rate.toFixed(0)} (${perItem(cpu.clientMs)} + ${perItem(cpu.serverMs)} ms)`,
					);
					await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
				}
			}
			for (const system of systems) {
				const rate = Math.max(...(samples.get(system.name) ?? []));
				rates.set(`${system.name}/${workers}`, rate);
				report.add(row(`${system.name}, ${workers} worker(s)`, rate, 'items/s', undefined, `${items} queued`));
			}
			report.add(row(`duplicate takes, ${workers} worker(s), all systems`, duplicates, 'items', { max: 0 }));
		}
		for (const workers of workerCounts) {
			const g = rates.get(`graphile-worker/${workers}`);
			const p = rates.get(`pg-boss/${workers}`);
			for (const system of [baton, batonNext, batonPipelined]) {
				const b = rates.get(`${system.name}/${workers}`);
				if (b !== undefined && g !== undefined) {
					// The pipelined loop has no target: it is there to show what the plain loop's waits cost.
					const target = system === batonPipelined ? undefined : { min: 1 };
					report.add(row(`${system.name} / graphile-worker, ${workers} worker(s)`, b / g, '×', target));
				}
				if (b !== undefined && p !== undefined) {
					report.add(row(`${system.name} / pg-boss, ${workers} worker(s)`, b / p, '×'));
				}
			}
		}
		for (const system of systems) {
			report.note(`${system.name}: ${system.describe}.`);
		}
		report.note(
			`Each cell is the best of ${repeats} run(s) (a shared machine only ever makes a run slower); ${items} items queued before the clock starts; systems interleaved within one run on the same PostgreSQL server; every worker on its own connection.`,
		);
		if (cappedRuns.size > 0) {
			report.note(
				`Capped at ${drainCapMs / 1000} s (rate = items done / time, queue still deep): ${[...cappedRuns].join(', ')}.`,
			);
		}
		report.note(
			`All runs, items/s (CPU per item: this process, the bench's client side + the PostgreSQL server's processes, from /proc): ${allRuns.join('; ')}.`,
		);
		report.note(
			`What the drain connections were doing at ${Math.max(...workerCounts)} workers (pg_stat_activity samples every 100 ms; Lock:object on commit is the NOTIFY queue lock): ${waitNotes.join('; ')}.`,
		);
	} finally {
		await dropSchemas();
		await admin.end();
	}
	report.finish();
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
