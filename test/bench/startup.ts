/**
 * Start-up: the hub from spawn to its first answer (a client's hello) on a new and on an
 * existing data dir, and the first CLI command on a new data dir (`baton stats`, which spawns the hub),
 * each the median of several cold runs with the hub's CPU beside the wall time. Then where the time
 * goes, each part in its own cold child process: Node and the bundle, the WASM compile, the template
 * unpack, PGlite's open, the migrations check, and the maintenance the hub used to run before its first
 * answer. Standalone: `npm run build && node --import tsx test/bench/startup.ts [--quick]`; the child
 * mode (`--part NAME DIR`) is this file's own.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { Backlog } from '../../core/backlog';
import { loadMigrations, migrate } from '../../core/store/migrate';
import { openPglite, templatePath } from '../../core/store/pglite';
import { unpackTemplate } from '../../core/store/templateUnpack';
import { batonJs, requireBuild, startHub } from './hubProcess';
import { median, Reporter, row } from './report';

const quick = process.argv.includes('--quick');
const runs = quick ? 2 : 5;
const assetsDir = join(__dirname, '..', '..', 'dist', 'pglite');
const parts = ['compile', 'unpack', 'open', 'migrate', 'maintenance'] as const;
type Part = (typeof parts)[number];

/** Child mode: times one part of the store's open in a fresh process; prints `PART_MS <ms>`. */
async function runPart(part: Part, dataDir: string): Promise<void> {
	const wasm = (globalThis as unknown as { WebAssembly: { compile(b: Uint8Array): Promise<unknown> } }).WebAssembly;
	let ms: number;
	if (part === 'compile') {
		const t = performance.now();
		await wasm.compile(readFileSync(join(assetsDir, 'pglite.wasm')));
		ms = performance.now() - t;
	} else if (part === 'unpack') {
		mkdirSync(dataDir, { recursive: true });
		const t = performance.now();
		await unpackTemplate(templatePath(assetsDir), dataDir);
		ms = performance.now() - t;
	} else if (part === 'open') {
		const t = performance.now();
		const opened = await openPglite({ dataDir, assetsDir });
		ms = performance.now() - t;
		await opened.db.close();
	} else if (part === 'migrate') {
		const opened = await openPglite({ dataDir, assetsDir });
		const t = performance.now();
		await migrate(opened.db, loadMigrations(join(assetsDir, 'migrations')));
		ms = performance.now() - t;
		await opened.db.close();
	} else {
		const backlog = await Backlog.open({ pgliteDir: dataDir, assetsDir });
		const t = performance.now();
		await backlog.maintenance();
		ms = performance.now() - t;
		await backlog.close();
	}
	console.log(`PART_MS ${ms}`);
}

function part(name: Part, dataDir: string): number {
	const out = execFileSync(process.execPath, ['--import', 'tsx', __filename, '--part', name, dataDir], {
		encoding: 'utf8',
	});
	const m = /PART_MS (\S+)/.exec(out);
	if (m?.[1] === undefined) {
		throw new Error(`part ${name} printed no time:\n${out}`);
	}
	return Number(m[1]);
}

/** Wall time of one `node …` run, in ms. */
function nodeRun(args: string[]): number {
	const t = performance.now();
	const r = spawnSync(process.execPath, args, { encoding: 'utf8', env: process.env });
	const wallMs = performance.now() - t;
	if (r.status !== 0) {
		throw new Error(`node ${args.join(' ')} exited ${String(r.status)}: ${r.stderr}`);
	}
	return wallMs;
}

const tempDir = (): string => mkdtempSync('/tmp/bt-start-');

async function main(): Promise<void> {
	requireBuild();
	const report = new Reporter('startup');
	console.log(`startup: dist/baton.js hub, ${runs} cold runs each`);
	const dirs: string[] = [];
	try {
		const fresh: { wall: number; cpu: number; store: number }[] = [];
		const existing: { wall: number; cpu: number; store: number }[] = [];
		for (let i = 0; i < runs; i++) {
			const dir = tempDir();
			dirs.push(dir);
			const a = await startHub(dir);
			fresh.push({ wall: a.startMs, cpu: a.startCpuMs, store: a.storeOpenMs ?? Number.NaN });
			await a.stop();
			const b = await startHub(dir);
			existing.push({ wall: b.startMs, cpu: b.startCpuMs, store: b.storeOpenMs ?? Number.NaN });
			await b.stop();
		}
		const med = (xs: { wall: number; cpu: number; store: number }[], k: 'wall' | 'cpu' | 'store'): number =>
			median(xs.map(x => x[k]));
		report.add(
			row(
				'hub start to first answer, existing data dir (spawn → hello answered)',
				med(existing, 'wall'),
				'ms',
				{
					max: 1000,
				},
				`median of ${runs}; includes node start-up`,
			),
		);
		report.add(row('CPU of the hub for that start (user+system)', med(existing, 'cpu'), 'ms'));
		report.add(row('of which opening its store (its own log)', med(existing, 'store'), 'ms'));
		report.add(
			row(
				'hub start to first answer, new data dir (spawn → hello answered)',
				med(fresh, 'wall'),
				'ms',
				{
					max: 1500,
				},
				`median of ${runs}`,
			),
		);
		report.add(row('CPU of the hub for that start (user+system)', med(fresh, 'cpu'), 'ms'));
		report.add(row('of which opening its store (its own log)', med(fresh, 'store'), 'ms'));

		// The first command a new user runs: the CLI starts, finds no hub, spawns one and asks it.
		const cli: number[] = [];
		for (let i = 0; i < runs; i++) {
			const dir = tempDir();
			dirs.push(dir);
			cli.push(nodeRun([batonJs, 'stats', '--data-dir', dir]));
			execFileSync(process.execPath, [batonJs, 'hub', 'stop', '--data-dir', dir], { stdio: 'ignore' });
		}
		report.add(row('first CLI command on a new data dir (`baton stats`, spawns the hub)', median(cli), 'ms'));

		// Where the time goes: each part cold, in its own process.
		const node = median(Array.from({ length: runs }, () => nodeRun(['-e', '0'])));
		const bundle = median(Array.from({ length: runs }, () => nodeRun([batonJs, '--version'])));
		report.add(row('part: node itself (`node -e 0`)', node, 'ms'));
		report.add(row('part: node + loading the 3 MB bundle (`baton --version`)', bundle, 'ms'));
		const timed = (name: Part, dir: () => string): number =>
			median(Array.from({ length: runs }, () => part(name, dir())));
		const newDir = (): string => {
			const d = tempDir();
			dirs.push(d);
			return join(d, 'pgdata');
		};
		const ready = newDir();
		part('open', ready);
		report.add(
			row(
				'part: compiling pglite.wasm (9 MB)',
				timed('compile', () => ready),
				'ms',
			),
		);
		report.add(row('part: unpacking the template into a new data dir', timed('unpack', newDir), 'ms'));
		report.add(row('part: PGlite open, new data dir (unpack included)', timed('open', newDir), 'ms'));
		report.add(
			row(
				'part: PGlite open, existing data dir',
				timed('open', () => ready),
				'ms',
			),
		);
		report.add(
			row(
				'part: migrations check (all applied)',
				timed('migrate', () => ready),
				'ms',
			),
		);
		report.add(
			row(
				'part: the first maintenance (VACUUM), now 10 s after start',
				timed('maintenance', () => ready),
				'ms',
			),
		);
		report.note(
			'Wall times move 2–5× with the shared machine’s load; the hub’s CPU rows are the steadier guide (docs/benchmarks.md, Method).',
		);
	} finally {
		for (const d of dirs) {
			rmSync(d, { recursive: true, force: true });
		}
	}
	report.finish();
}

const partAt = process.argv.indexOf('--part');
if (partAt >= 0) {
	const name = parts.find(p => p === process.argv[partAt + 1]);
	const dir = process.argv[partAt + 2];
	if (name === undefined || dir === undefined) {
		throw new Error('usage: startup.ts --part <compile|unpack|open|migrate|maintenance> <data dir>');
	}
	void runPart(name, dir);
} else {
	main().catch((e: unknown) => {
		console.error(e);
		process.exit(1);
	});
}
