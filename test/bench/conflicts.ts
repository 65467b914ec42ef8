/**
 * Conflicts in a realistic overlap: 100 cards from 8 script agents under `baton run` (review none, so
 * each lands at complete through the landing queue) on a repository of 30 files, each card appending a
 * line to 1–3 files drawn with a skew toward a few hot files (a fixed seed: the same plan every run).
 * Half the cards declare their files as their scope (a scoped claim waits while another live card holds
 * an overlapping scope), half declare nothing. Reported: landings that came back for a conflict per 100
 * landed cards, for the scoped and the unscoped half, and a person's touches per card (cards that ended
 * blocked and need one). The agent resolves the markers Baton's merge leaves (keeps both sides), as an
 * agent with file tools would. Standalone: `npm run build && node --import tsx test/bench/conflicts.ts`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Card } from '../../core/protocol';
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

async function main(): Promise<void> {
	const reporter = new Reporter('conflicts');
	const random = seeded(42);
	const plan: Record<string, string[]> = {};
	for (let i = 0; i < cardCount; i++) {
		const n = 1 + Math.floor(random() * 3);
		const files = new Set<string>();
		while (files.size < n) {
			files.add(fileName(Math.floor(fileCount * random() ** 2))); // skewed toward the first files
		}
		plan[`OV${i}`] = [...files].sort();
	}
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
				...(i % 2 === 0 ? { scope: files } : {}),
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
		run.kill('SIGINT');
		await new Promise(r => setTimeout(r, 300));
		run.kill('SIGINT');
		await new Promise(r => run.once('exit', r));
		const { events } = await api.request('events/list', { limit: 10_000 });
		const cameBack = events.filter(e => e.type === 'land_conflicted');
		const scoped = new Set(Object.keys(plan).filter((_, i) => i % 2 === 0));
		const landed = cards.filter(c => c.status === 'done');
		const per100 = (n: number, of: number): number => (of === 0 ? 0 : (n * 100) / of);
		const landedScoped = landed.filter(c => scoped.has(c.id)).length;
		const landedUnscoped = landed.length - landedScoped;
		const backScoped = cameBack.filter(e => scoped.has(e.cardId)).length;
		const backUnscoped = cameBack.length - backScoped;
		const blocked = cards.filter(c => c.status === 'blocked').length;
		reporter.add(
			row(
				'conflicts per 100 landed cards, scoped half',
				per100(backScoped, landedScoped),
				'per 100',
				{ max: 2 },
				`${backScoped} came back, ${landedScoped} landed`,
			),
		);
		reporter.add(
			row(
				'conflicts per 100 landed cards, unscoped half',
				per100(backUnscoped, landedUnscoped),
				'per 100',
				undefined,
				`${backUnscoped} came back, ${landedUnscoped} landed`,
			),
		);
		reporter.add(
			row(
				'conflicts per 100 landed cards, all',
				per100(cameBack.length, landed.length),
				'per 100',
				undefined,
				`27.7 in studies of agents' pull requests`,
			),
		);
		reporter.add(
			row(
				"a person's touches per card",
				blocked / cardCount,
				'per card',
				undefined,
				`${blocked} blocked of ${cardCount}; review none: no approvals`,
			),
		);
		reporter.add(row('wall time for the workload', seconds, 's', undefined, `${cardCount} cards, ${seats} seats`));
		const onMain = gitOut(repo.root, 'rev-list', '--count', '--first-parent', 'main');
		reporter.note(
			`${landed.length} of ${cardCount} landed; main has ${onMain} first-parent commits (1 initial); plan seed 42, ${fileCount} files, 1–3 files per card, skewed to the first ones`,
		);
	} finally {
		api.close();
		await hub.stop();
		await dropSchema(schema);
		repo.cleanup();
		rmSync(root, { recursive: true, force: true });
	}
	reporter.finish();
}

void main();
