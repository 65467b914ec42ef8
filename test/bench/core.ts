/**
 * The core `Backlog` on PGlite, in-process: claim+complete and the first ready page at 1,000 and
 * 100,000 cards (and how they grow), create throughput, cold open of a 100k data dir, first start on
 * an empty one, peak RSS, and the EXPLAIN plans of the claim and the ready page.
 * Every phase that is about start-up or memory runs in a fresh child process of this same script
 * (`--phase <name>`), so no warm cache or heap of the parent flatters it; the parent only orchestrates.
 * Standalone: `node --import tsx test/bench/core.ts [--quick]`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';

import { Backlog } from '../../core/backlog';
import { parseFastPaths } from '../../core/backlog/fastPaths';
import type { Db, Queryable } from '../../core/store/db';
import { buildBatch, cardBatches } from './dataset';
import { median, peakRssMb, percentile, Reporter, row, since } from './report';

const quick = process.argv.includes('--quick');
const smallSize = 1_000;
const largeSize = quick ? 10_000 : 100_000;
const batch = buildBatch;
const ctx = { actor: 'bench' };
/** BATON_FAST_PATHS=-wire,… measures with latency mechanisms off (core/backlog/fastPaths.ts); all on by default. */
const fastPaths = parseFastPaths(process.env.BATON_FAST_PATHS);

// ---------------------------------------------------------------------------------------------------
// EXPLAIN of the statements the Backlog really sends (no copy of its SQL here to drift out of date).

interface Statement {
	text: string;
	params: readonly unknown[];
}

/**
 * Records every statement the Backlog sends to its database while `fn` runs, by wrapping its Db (a
 * private field, reached on purpose: the bench must explain the real SQL, not a copy). The calls
 * still go through unchanged.
 */
async function recordStatements(backlog: Backlog, fn: () => Promise<unknown>): Promise<Statement[]> {
	const holder = backlog as unknown as { db: Db };
	const db = holder.db;
	const seen: Statement[] = [];
	const spy = <T extends object>(target: T): T =>
		new Proxy(target, {
			get(t, prop) {
				const value: unknown = Reflect.get(t, prop, t);
				if (typeof value !== 'function') {
					return value;
				}
				const method = value as (...args: unknown[]) => unknown;
				if (prop === 'transaction') {
					return (body: (tx: Queryable) => Promise<unknown>) => method.call(t, (tx: Queryable) => body(spy(tx)));
				}
				return (...args: unknown[]) => {
					const params = Array.isArray(args[1]) ? (args[1] as unknown[]) : [];
					if (typeof args[0] === 'string') {
						seen.push({ text: args[0], params });
					}
					return method.apply(t, args);
				};
			},
		});
	holder.db = spy(db);
	try {
		await fn();
	} finally {
		holder.db = db;
	}
	return seen;
}

class Rollback extends Error {}

/** EXPLAIN (ANALYZE, BUFFERS) of one recorded statement inside a transaction that is rolled back. */
async function explain(backlog: Backlog, statement: Statement): Promise<string> {
	const db = (backlog as unknown as { db: Db }).db;
	let plan: string[] = [];
	try {
		await db.transaction(async tx => {
			const rows = await tx.query<Record<string, string>>(
				`EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`,
				statement.params,
			);
			plan = rows.map(r => Object.values(r).join(''));
			throw new Rollback();
		});
	} catch (e) {
		if (!(e instanceof Rollback)) {
			throw e;
		}
	}
	return `${statement.text.replace(/\s+/g, ' ').trim()}\n\n${plan.join('\n')}`;
}

interface HotPaths {
	claimPlan: string;
	pagePlan: string;
	/** Statements one claim+complete sends, in order (first 100 characters each). */
	pairStatements: string;
	pairStatementCount: number;
}

/** One recorded claim, complete and ready page: their statements, and the plans of the hot ones. */
async function explainHotPaths(backlog: Backlog): Promise<HotPaths> {
	let lease: { cardId: string; epoch: number } | null = null;
	const claimStatements = await recordStatements(backlog, async () => {
		lease = (await backlog.claim(ctx, {})).lease;
	});
	const claimed = lease as { cardId: string; epoch: number } | null;
	if (claimed === null) {
		throw new Error('nothing left to claim for the EXPLAIN');
	}
	const completeStatements = await recordStatements(backlog, () =>
		backlog.complete(ctx, { cardId: claimed.cardId, epoch: claimed.epoch }),
	);
	const pageStatements = await recordStatements(backlog, () => backlog.list(ctx, { readyOnly: true, limit: 50 }));
	const claimSql = claimStatements.find(s => /WITH pick AS|EXECUTE\s+\w*claim/i.test(s.text));
	const pageSql = pageStatements.find(s => /\bFROM\s+cards\b/i.test(s.text));
	const head = (st: Statement): string => st.text.replace(/\s+/g, ' ').trim().slice(0, 100);
	return {
		claimPlan: claimSql
			? await explain(backlog, claimSql)
			: `claim statement not found among: ${claimStatements.map(head).join(' | ')}`,
		pagePlan: pageSql
			? await explain(backlog, pageSql)
			: `ready-page statement not found among: ${pageStatements.map(head).join(' | ')}`,
		pairStatements: [
			'claim:',
			...claimStatements.map(st => `  ${head(st)}`),
			'complete:',
			...completeStatements.map(st => `  ${head(st)}`),
		].join('\n'),
		pairStatementCount: claimStatements.length + completeStatements.length,
	};
}

// ---------------------------------------------------------------------------------------------------
// Child phases: each prints one `PHASE_JSON {…}` line for the parent.

type PhaseResult = Record<string, number | string | undefined>;

/** User + system CPU of a process.cpuUsage() delta, in ms. */
function cpuMs(usage: NodeJS.CpuUsage): number {
	return (usage.user + usage.system) / 1000;
}

/** Peak RSS before the phase opened anything: node, tsx and the loaded modules. */
let importRssMb = 0;

function emit(result: PhaseResult): void {
	console.log(`PHASE_JSON ${JSON.stringify({ ...result, importRssMb, peakRssMb: peakRssMb() })}`);
}

/** Open an empty (nonexistent) data dir: creates and migrates the database. */
async function phaseFirstStart(dir: string): Promise<void> {
	const cpu = process.cpuUsage();
	const t0 = performance.now();
	const backlog = await Backlog.open({ pgliteDir: dir, fastPaths });
	const openMs = since(t0);
	const t1 = performance.now();
	await backlog.stats(ctx, {});
	const firstQueryMs = since(t1);
	const startCpuMs = cpuMs(process.cpuUsage(cpu));
	await backlog.close();
	emit({ openMs, firstQueryMs, totalMs: openMs + firstQueryMs, startCpuMs });
}

/** Build `cards` cards with batched creates; reports batched create throughput. */
async function phaseBuild(dir: string, cards: number): Promise<void> {
	const backlog = await Backlog.open({ pgliteDir: dir, fastPaths });
	const t0 = performance.now();
	for (const cardsOfBatch of cardBatches(cards)) {
		await backlog.create(ctx, { cards: cardsOfBatch });
	}
	const seconds = since(t0) / 1000;
	await backlog.close();
	emit({ cardsPerSecond: cards / seconds, seconds });
}

/** Reopen an existing data dir in a fresh process: open, then the first ready page and first claim. */
async function phaseColdOpen(dir: string): Promise<void> {
	const cpu = process.cpuUsage();
	const t0 = performance.now();
	const backlog = await Backlog.open({ pgliteDir: dir, fastPaths });
	const openMs = since(t0);
	const openCpuMs = cpuMs(process.cpuUsage(cpu));
	const t1 = performance.now();
	await backlog.list(ctx, { readyOnly: true, limit: 50 });
	const firstPageMs = since(t1);
	await backlog.close();
	emit({ openMs, firstPageMs, openCpuMs });
}

/** Warm measurements on an existing data dir. Drains at most a third of the small backlog. */
async function phaseMeasure(dir: string, cards: number): Promise<void> {
	const backlog = await Backlog.open({ pgliteDir: dir, fastPaths });
	const ops = Math.min(2_000, Math.floor(cards / 3));
	const warm = Math.min(200, Math.floor(ops / 4));
	const pages = 200;
	// Warm-up: PGlite runs the first queries of a process 2–3× slower (WASM JIT).
	// Claims drain the small backlog, so they warm less there; pages read only, so every size gets 200.
	for (let i = 0; i < warm; i++) {
		const { card, lease } = await backlog.claim(ctx, {});
		if (card && lease) {
			await backlog.complete(ctx, { cardId: card.id, epoch: lease.epoch });
		}
	}
	for (let i = 0; i < pages; i++) {
		await backlog.list(ctx, { readyOnly: true, limit: 50 });
	}
	// A hub serving VS Code has listed every card: the extension pages through all of them on connect
	// (extension/hubConnection.ts). Without that, the first touch of each page is a read through
	// PGlite's JS file system, which a running hub no longer pays.
	let cursor: string | undefined;
	do {
		const listed = await backlog.list(ctx, cursor === undefined ? { limit: 1000 } : { limit: 1000, cursor });
		cursor = listed.nextCursor;
	} while (cursor !== undefined);
	const pageMs: number[] = [];
	const pageCpu = process.cpuUsage();
	for (let i = 0; i < pages; i++) {
		const t = performance.now();
		const { cards: page } = await backlog.list(ctx, { readyOnly: true, limit: 50 });
		pageMs.push(since(t));
		if (page.length !== 50) {
			throw new Error(`ready page had ${page.length} cards, expected 50`);
		}
	}
	const pageCpuMs = cpuMs(process.cpuUsage(pageCpu)) / pages;
	const claimMs: number[] = [];
	const completeMs: number[] = [];
	const pairMs: number[] = [];
	const pairCpu = process.cpuUsage();
	for (let i = 0; i < ops; i++) {
		const t = performance.now();
		const { card, lease } = await backlog.claim(ctx, {});
		const claimed = performance.now();
		if (!card || !lease) {
			throw new Error(`nothing to claim after ${i} claims of ${cards} cards`);
		}
		await backlog.complete(ctx, { cardId: card.id, epoch: lease.epoch });
		const done = performance.now();
		claimMs.push(claimed - t);
		completeMs.push(done - claimed);
		pairMs.push(done - t);
	}
	const pairCpuMs = cpuMs(process.cpuUsage(pairCpu)) / ops;
	// The hand-over loop: each complete {next} finishes one card and claims the next in one statement.
	const handOverMs: number[] = [];
	let held = await backlog.claim(ctx, {});
	for (let i = 0; i < ops / 2 && held.card !== null && held.lease !== null; i++) {
		const t = performance.now();
		const done = await backlog.complete(ctx, { cardId: held.card.id, epoch: held.lease.epoch, next: {} });
		handOverMs.push(since(t));
		held = done.next ?? { card: null, lease: null };
	}
	if (held.card !== null && held.lease !== null) {
		await backlog.complete(ctx, { cardId: held.card.id, epoch: held.lease.epoch });
	}
	const t0 = performance.now();
	const singles = Math.min(1_000, Math.floor(cards / 2));
	const createMs: number[] = [];
	for (let i = 0; i < singles; i++) {
		const t = performance.now();
		await backlog.create(ctx, { cards: [{ id: `s${i}`, title: `Single create ${i}`, priority: 1 }] });
		createMs.push(since(t));
	}
	const singleCreatePerSecond = singles / (since(t0) / 1000);
	const { claimPlan, pagePlan, pairStatements, pairStatementCount } = await explainHotPaths(backlog);
	await backlog.close();
	emit({
		ops,
		pairP50: median(pairMs),
		pairP99: percentile(pairMs, 99),
		claimP50: median(claimMs),
		handOverP50: median(handOverMs),
		handOverOps: handOverMs.length,
		completeP50: median(completeMs),
		pageP50: median(pageMs),
		pageP99: percentile(pageMs, 99),
		pairCpuMs,
		pageCpuMs,
		singleCreatePerSecond,
		singleCreateP50: median(createMs),
		claimPlan,
		pagePlan,
		pairStatements,
		pairStatementCount,
	});
}

async function runPhase(argv: string[]): Promise<void> {
	const [, phase, dir, size] = argv;
	if (dir === undefined) {
		throw new Error('usage: core.ts --phase <first-start|build|cold-open|measure> <dir> [cards]');
	}
	const cards = Number(size ?? 0);
	importRssMb = peakRssMb();
	switch (phase) {
		case 'first-start':
			return phaseFirstStart(dir);
		case 'build':
			return phaseBuild(dir, cards);
		case 'cold-open':
			return phaseColdOpen(dir);
		case 'measure':
			return phaseMeasure(dir, cards);
		default:
			throw new Error(`unknown phase ${String(phase)}`);
	}
}

// ---------------------------------------------------------------------------------------------------
// Parent: orchestration and the report.

type PhaseOut = Record<string, number | string | undefined>;

function num(out: PhaseOut, key: string): number {
	const v = out[key];
	if (typeof v !== 'number') {
		throw new Error(`phase output has no number "${key}": ${JSON.stringify(out).slice(0, 300)}`);
	}
	return v;
}

/** Runs one phase in a fresh node process and returns its PHASE_JSON. */
function child(phase: string, dir: string, cards?: number): Promise<PhaseOut> {
	const args = ['--import', 'tsx', __filename, '--phase', phase, dir];
	if (cards !== undefined) {
		args.push(String(cards));
	}
	return new Promise((resolve, reject) => {
		const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
		let out = '';
		proc.stdout.setEncoding('utf8');
		proc.stdout.on('data', (chunk: string) => (out += chunk));
		proc.on('close', code => {
			const line = out.split('\n').find(l => l.startsWith('PHASE_JSON '));
			if (code !== 0 || line === undefined) {
				reject(new Error(`phase ${phase} on ${dir} failed (exit ${String(code)}):\n${out}`));
				return;
			}
			resolve(JSON.parse(line.slice('PHASE_JSON '.length)) as PhaseOut);
		});
	});
}

async function main(): Promise<void> {
	const report = new Reporter('core');
	const temp = mkdtempSync('/tmp/bt-');
	try {
		console.log(`core: PGlite in-process, ${smallSize} and ${largeSize} cards (30 % with 1–3 dependencies)`);

		const firsts: PhaseOut[] = [];
		for (let i = 0; i < 2; i++) {
			firsts.push(await child('first-start', `${temp}/empty${i}`));
		}
		const first = firsts.sort((a, b) => num(a, 'totalMs') - num(b, 'totalMs'))[0]!;
		report.add(
			row(
				'first start on an empty data dir (open + first query)',
				num(first, 'totalMs'),
				'ms',
				{ max: 1500 },
				`best of 2 fresh processes; open ${num(first, 'openMs').toFixed(0)} ms`,
			),
		);
		report.add(
			row(
				'CPU used by that first start',
				num(first, 'startCpuMs'),
				'ms',
				undefined,
				'user+system; V8 compiles WASM on background threads, so it can exceed wall time',
			),
		);
		report.add(
			row(
				'peak RSS, first start',
				num(first, 'peakRssMb'),
				'MB',
				undefined,
				`of which ${num(first, 'importRssMb').toFixed(0)} MB before opening (node + tsx + modules)`,
			),
		);

		const measured = new Map<number, PhaseOut>();
		for (const size of [smallSize, largeSize]) {
			const dir = `${temp}/d${size}`;
			const built = await child('build', dir, size);
			report.add(
				row(`create throughput, batches of ${batch}, building ${size} cards`, num(built, 'cardsPerSecond'), 'cards/s'),
			);
			if (size === largeSize) {
				report.add(row(`peak RSS while building ${size} cards`, num(built, 'peakRssMb'), 'MB'));
				const opens: PhaseOut[] = [];
				for (let i = 0; i < 3; i++) {
					opens.push(await child('cold-open', dir));
				}
				report.add(
					row(
						`cold open of a ${size}-card data dir`,
						median(opens.map(o => num(o, 'openMs'))),
						'ms',
						{ max: 1000 },
						'median of 3 fresh processes',
					),
				);
				report.add(
					row(
						'CPU used by that cold open',
						median(opens.map(o => num(o, 'openCpuMs'))),
						'ms',
						undefined,
						'user+system, median of 3',
					),
				);
				report.add(
					row(`first ready page after cold open, ${size} cards`, median(opens.map(o => num(o, 'firstPageMs'))), 'ms'),
				);
			}
			const m = await child('measure', dir, size);
			measured.set(size, m);
			const ops = `${num(m, 'ops')} ops`;
			report.add(row(`claim+complete p50, ${size} cards`, num(m, 'pairP50'), 'ms', { max: 1 }, ops));
			report.add(row(`claim+complete p99, ${size} cards`, num(m, 'pairP99'), 'ms', undefined, ops));
			report.add(
				row(
					`complete with next (finish one, claim the next) p50, ${size} cards`,
					num(m, 'handOverP50'),
					'ms',
					{ max: 1 },
					`${num(m, 'handOverOps')} ops; one call per card instead of claim+complete`,
				),
			);
			report.add(
				row(
					`claim p50, ${size} cards`,
					num(m, 'claimP50'),
					'ms',
					undefined,
					`complete p50 ${num(m, 'completeP50').toFixed(2)} ms`,
				),
			);
			report.add(
				row(
					`ready list first page of 50 p50, ${size} cards`,
					num(m, 'pageP50'),
					'ms',
					{ max: 5 },
					`200 pages; p99 ${num(m, 'pageP99').toFixed(2)} ms`,
				),
			);
			report.add(
				row(
					`CPU per claim+complete, ${size} cards`,
					num(m, 'pairCpuMs'),
					'ms',
					undefined,
					'user+system of the process; steadier than wall time on a busy machine',
				),
			);
			report.add(row(`CPU per ready page, ${size} cards`, num(m, 'pageCpuMs'), 'ms'));
			report.add(
				row(
					`single-card creates, ${size} cards`,
					num(m, 'singleCreatePerSecond'),
					'creates/s',
					undefined,
					`p50 ${num(m, 'singleCreateP50').toFixed(2)} ms`,
				),
			);
			if (size === largeSize) {
				report.add(
					row(
						`peak RSS, open + serve ${size} cards`,
						num(m, 'peakRssMb'),
						'MB',
						{ max: 400 },
						`of which ${num(m, 'importRssMb').toFixed(0)} MB before opening (node + tsx + modules)`,
					),
				);
				report.add(
					row(
						'statements per claim+complete',
						num(m, 'pairStatementCount'),
						'statements',
						undefined,
						'as sent by Backlog to its Db, transaction control not counted',
					),
				);
				report.section('Statements of one claim+complete', String(m.pairStatements));
				report.section(`EXPLAIN (ANALYZE, BUFFERS) of the claim, ${size} cards`, String(m.claimPlan));
				report.section(`EXPLAIN (ANALYZE, BUFFERS) of the ready page of 50, ${size} cards`, String(m.pagePlan));
			}
		}
		const small = measured.get(smallSize)!;
		const large = measured.get(largeSize)!;
		report.add(
			row(`claim+complete p50 growth ${smallSize} → ${largeSize}`, num(large, 'pairP50') / num(small, 'pairP50'), '×', {
				max: 1.5,
			}),
		);
		report.add(
			row(`ready page p50 growth ${smallSize} → ${largeSize}`, num(large, 'pageP50') / num(small, 'pageP50'), '×', {
				max: 1.5,
			}),
		);
		report.note(
			`Each phase runs in a fresh \`node --import tsx\` process; RSS includes that runtime (see "before opening").`,
		);
		report.note(
			`The ${smallSize}-card measurement drains at most a third of its backlog (${num(small, 'ops')} claim+complete pairs), the ${largeSize}-card one ${num(large, 'ops')} pairs; both after a warm-up, since PGlite runs the first queries of a process 2–3× slower.`,
		);
	} finally {
		rmSync(temp, { recursive: true, force: true });
	}
	report.finish();
}

if (process.argv[2] === '--phase') {
	runPhase(process.argv.slice(2)).catch((error: unknown) => {
		console.error(error);
		process.exitCode = 1;
	});
} else {
	main().catch((error: unknown) => {
		console.error(error);
		process.exitCode = 1;
	});
}
