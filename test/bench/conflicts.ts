/**
 * Conflicts in a realistic overlap: 100 cards from 8 script agents under `baton run` (review none, so
 * each lands at complete through the landing queue) on a repository of 30 files, each card appending a
 * line to 1–3 files drawn with a skew toward a few hot files (a fixed seed: the same plan every run).
 * Three runs of the same plan: no card declares its files as its scope, half do, all do (a scoped claim
 * waits while another live card holds an overlapping scope). Reported: landings that came back for a
 * conflict per 100 landed cards, and a person's touches per card (cards that ended blocked and need one). The agent resolves the markers Baton's merge leaves (keeps both sides), as an
 * agent with file tools would. Standalone: `npm run build && node --import tsx test/bench/conflicts.ts`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { BacklogEvent, Card } from '../../core/protocol';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { onJsonLines } from '../helpers/jsonLines';
import { gitOut, makeRepo } from '../helpers/workspaceRepo';
import { batonJs, connect, startHub } from './hubProcess';
import { Reporter, row } from './report';

const quick = process.argv.includes('--quick');
const cardCount = quick ? 30 : 100;
const fileCount = 30;
const seats = 8;
const project = 'github.com/acme/overlap';
const agent = join(__dirname, '..', 'fixtures', 'overlapAgent.mjs');

/** mulberry32: a small seeded generator, so every run draws the same plan. */
function seeded(seed: number): () => number {
	let a = seed;
	return () => {
		a = (a + 0x6d2b79f5) | 0;
		let t = Math.imul(a ^ (a >>> 15), 1 | a);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

const fileName = (i: number): string => `src/f${String(i).padStart(2, '0')}.txt`;

/** The whole event log, a page of 1,000 at a time. */
async function allEvents(api: Awaited<ReturnType<typeof connect>>): Promise<BacklogEvent[]> {
	const out: BacklogEvent[] = [];
	for (let afterSeq = 0; ;) {
		const { events } = await api.request('events/list', { afterSeq, limit: 1000 });
		out.push(...events);
		if (events.length < 1000) {
			return out;
		}
		afterSeq = events.at(-1)?.seq ?? afterSeq;
	}
}

interface Outcome {
	landed: number;
	blocked: number;
	seconds: number;
	/** Landings that came back, and landed cards, of the scoped cards and of the rest. */
	scoped: { back: number; landed: number };
	unscoped: { back: number; landed: number };
}

/** The seeded plan: each card's 1-3 files, skewed toward the first ones (the same every run). */
function makePlan(): Record<string, string[]> {
	const random = seeded(42);
	const plan: Record<string, string[]> = {};
	for (let i = 0; i < cardCount; i++) {
		const n = 1 + Math.floor(random() * 3);
		const files = new Set<string>();
		while (files.size < n) {
			files.add(fileName(Math.floor(fileCount * random() ** 2)));
		}
		plan[`OV${i}`] = [...files].sort();
	}
	return plan;
}

/** One run of the plan with every `every`-th card scoped (1: all, 2: half, 0: none), on a fresh store and repository. */
async function workload(plan: Record<string, string[]>, every: number): Promise<Outcome> {
	const isScoped = (i: number): boolean => every > 0 && i % every === 0;
	const root = mkdtempSync('/tmp/bt-bench-overlap-');
	const dataDir = join(root, 'd');
	const schema = uniqueSchema();
	const repo = makeRepo(Object.fromEntries(Array.from({ length: fileCount }, (_, i) => [fileName(i), 'first line\n'])));
	gitOut(repo.root, 'remote', 'add', 'origin', `https://${project}.git`);
	const planFile = join(root, 'plan.json');
	writeFileSync(planFile, JSON.stringify(plan));
	const hub = await startHub(dataDir, 60_000, { DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema });
	const api = await connect(dataDir, 'test', { id: 'vscode:bench', name: 'bench', client: 'test' });
	try {
		await api.request('project/settings/update', {
			project,
			worktrees: true,
			roots: { [(await import('node:os')).hostname()]: repo.root },
		});
		await api.request('settings/update', { review: 'none' });
		await api.request('card/create', {
			cards: Object.entries(plan).map(([id, files], i) => ({
				id,
				title: `Edit ${files.join(', ')}`,
				project,
				maxAttempts: 5,
				...(isScoped(i) ? { scope: files } : {}),
			})),
		});
		const started = performance.now();
		const command = `${process.execPath} ${agent}`;
		const run = spawn(
			process.execPath,
			[
				batonJs,
				'run',
				'--json',
				'--no-sandbox',
				'--seats',
				String(seats),
				'--kind',
				'overlap',
				'--project',
				project,
				'--command',
				command,
			],
			{
				cwd: repo.root,
				env: { ...process.env, BATON_DATA_DIR: dataDir, BENCH_PLAN: planFile, BENCH_BATON_JS: batonJs },
				stdio: ['ignore', 'pipe', 'pipe'],
			},
		);
		const runEvents: { event: string; reason?: string; cardId?: string }[] = [];
		onJsonLines(run.stdout, e => runEvents.push(e as { event: string }));
		let runErr = '';
		run.stderr.setEncoding('utf8');
		run.stderr.on('data', (c: string) => (runErr = (runErr + c).slice(-2000)));
		let cards: Card[] = [];
		for (;;) {
			const { cards: rows } = await api.request('card/listRows', { project, limit: 500 });
			const ended = rows.filter(r => r.status === 'done' || r.status === 'blocked').length;
			if (process.env.BENCH_DEBUG !== undefined) {
				console.log(
					`${ended} ended; run events ${runEvents.length}: ${runEvents
						.slice(-3)
						.map(e => `${e.event}:${e.cardId ?? ''}:${e.reason ?? ''}`)
						.join(' ')}; ${runErr.slice(-300)}`,
				);
			}
			if (ended === cardCount || performance.now() - started > 600_000 || run.exitCode !== null) {
				cards = await Promise.all(rows.map(async r => (await api.request('card/get', { cardId: r.id })).card));
				break;
			}
			await new Promise(r => setTimeout(r, 500));
		}
		const seconds = (performance.now() - started) / 1000;
		if (run.exitCode !== null) {
			throw new Error(`baton run ended early (exit ${run.exitCode}):\n${runErr}`);
		}
		const exited = new Promise(r => run.once('exit', r));
		run.kill('SIGINT');
		await new Promise(r => setTimeout(r, 300));
		run.kill('SIGINT');
		await exited;
		const events = await allEvents(api);
		const cameBack = events.filter(e => e.type === 'land_conflicted');
		const scopedIds = new Set(Object.keys(plan).filter((_, i) => isScoped(i)));
		const landed = cards.filter(c => c.status === 'done');
		const scopedLanded = landed.filter(c => scopedIds.has(c.id)).length;
		const scopedBack = cameBack.filter(e => scopedIds.has(e.cardId)).length;
		return {
			landed: landed.length,
			blocked: cards.filter(c => c.status === 'blocked').length,
			seconds,
			scoped: { back: scopedBack, landed: scopedLanded },
			unscoped: { back: cameBack.length - scopedBack, landed: landed.length - scopedLanded },
		};
	} finally {
		api.close();
		await hub.stop();
		await dropSchema(schema);
		repo.cleanup();
		rmSync(root, { recursive: true, force: true });
	}
}

async function main(): Promise<void> {
	const reporter = new Reporter('conflicts');
	const plan = makePlan();
	const per100 = (n: number, of: number): number => (of === 0 ? 0 : (n * 100) / of);
	const none = await workload(plan, 0);
	const half = await workload(plan, 2);
	const all = await workload(plan, 1);
	const total = (o: Outcome) => ({ back: o.scoped.back + o.unscoped.back, landed: o.landed });
	reporter.add(
		row(
			'conflicts per 100 landed, no card scoped',
			per100(total(none).back, none.landed),
			'per 100',
			undefined,
			`${total(none).back} came back, ${none.landed} landed; 27.7 in studies of agents' pull requests`,
		),
	);
	reporter.add(
		row(
			'conflicts per 100 landed, half scoped: the scoped half',
			per100(half.scoped.back, half.scoped.landed),
			'per 100',
			undefined,
			`${half.scoped.back} came back, ${half.scoped.landed} landed (the unscoped half: ${half.unscoped.back} of ${half.unscoped.landed})`,
		),
	);
	reporter.add(
		row(
			'conflicts per 100 landed, every card scoped',
			per100(total(all).back, all.landed),
			'per 100',
			{ max: 2 },
			`${total(all).back} came back, ${all.landed} landed`,
		),
	);
	for (const [name, o] of [
		['none', none],
		['half', half],
		['all', all],
	] as const) {
		reporter.add(
			row(
				`a person's touches per card, ${name} scoped`,
				o.blocked / cardCount,
				'per card',
				undefined,
				`${o.blocked} blocked of ${cardCount}; review none: no approvals`,
			),
		);
		reporter.add(
			row(
				`wall time, ${name} scoped`,
				o.seconds,
				's',
				undefined,
				`${cardCount} cards, ${seats} seats, ${o.landed} landed`,
			),
		);
	}
	reporter.note(
		`plan seed 42: ${cardCount} cards, ${fileCount} files, 1-3 files per card skewed toward the first ones; each landing appends a line to its files`,
	);
	reporter.finish();
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
