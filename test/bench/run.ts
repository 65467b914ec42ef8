/**
 * `npm run bench`: runs each bench script in test/bench/ as its own child process, one after another
 * (the machine has 2 cores; parallel benches would measure each other), collects the BENCH_JSON line
 * each prints last, prints a summary and rewrites the results section of docs/benchmarks.md.
 * Flags: --quick (small sizes, a smoke run; the docs are left alone unless --write-docs),
 * --only <name>[,<name>] (run only these; the docs keep the other benches' last results; fastPaths runs
 * only when named here),
 * --no-docs, --timeout <seconds per bench>.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import * as prettier from 'prettier';
import { z } from 'zod';

import type { BenchReport } from './report';

/** Every bench we know of, in run order (cheap and independent first). Missing files are skipped. */
const benchNames = [
	'heldFiles',
	'core',
	'pgCompare',
	'hub',
	'startup',
	'mcp',
	'inbox',
	'scopes',
	'epics',
	'workspaces',
	'land',
	'conflicts',
	'eventLog',
	'ecosystem',
	'fleet',
	'dispatch',
	'size',
	'board',
	'activation',
	'fastPaths',
] as const;
/** Benches that run only when --only names them: the fast-path A/B repeats what the others measure. */
const onDemand: readonly string[] = ['fastPaths'];

const root = join(__dirname, '..', '..');
const docsPath = join(root, 'docs', 'benchmarks.md');
const resultsStart = '<!-- bench:results:start -->';
const resultsEnd = '<!-- bench:results:end -->';
/** Shown until the first run writes results. */
const placeholder = 'No full run recorded yet.\n';

const BenchReportSchema = z.object({
	name: z.string(),
	rows: z.array(
		z.object({
			metric: z.string(),
			value: z.number().nullable(),
			unit: z.string(),
			target: z.string().optional(),
			ok: z.boolean().optional(),
			note: z.string().optional(),
		}),
	),
	notes: z.array(z.string()).optional(),
	sections: z.array(z.object({ title: z.string(), text: z.string() })).optional(),
});

interface Options {
	quick: boolean;
	only: string[] | undefined;
	docs: boolean;
	timeoutSeconds: number;
}

interface Outcome {
	name: string;
	command: string;
	seconds: number;
	/** When the bench started (ISO, seconds precision). */
	startedAt: string;
	/** 1-minute load average when the bench finished: how busy the shared machine was meanwhile. */
	loadAfter: number;
	report: BenchReport | undefined;
	/** Why there is no report (exit code, timeout, no BENCH_JSON line). */
	failure: string | undefined;
}

function parseArgs(argv: string[]): Options {
	const options: Options = { quick: false, only: undefined, docs: true, timeoutSeconds: 900 };
	let writeDocs = false;
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === '--quick') {
			options.quick = true;
		} else if (arg === '--only') {
			const value = argv[++i];
			if (value === undefined) {
				throw new Error('--only needs a bench name, e.g. --only core');
			}
			options.only = value.split(',').map(s => s.trim());
		} else if (arg?.startsWith('--only=')) {
			options.only = arg.slice('--only='.length).split(',');
		} else if (arg === '--no-docs') {
			options.docs = false;
		} else if (arg === '--write-docs') {
			writeDocs = true;
		} else if (arg === '--timeout') {
			options.timeoutSeconds = Number(argv[++i]);
			if (!Number.isFinite(options.timeoutSeconds) || options.timeoutSeconds <= 0) {
				throw new Error('--timeout needs a positive number of seconds');
			}
		} else {
			throw new Error(
				`Unknown argument ${String(arg)}. Use --quick, --only <name>, --no-docs, --write-docs, --timeout <s>.`,
			);
		}
	}
	if (options.quick && !writeDocs) {
		options.docs = false;
	}
	for (const name of options.only ?? []) {
		if (!(benchNames as readonly string[]).includes(name)) {
			throw new Error(`No bench named "${name}". Known: ${benchNames.join(', ')}.`);
		}
	}
	return options;
}

function benchFile(name: string): string {
	return join(root, 'test', 'bench', `${name}.ts`);
}

function commandFor(name: string, quick: boolean): string {
	return `node --import tsx test/bench/${name}.ts${quick ? ' --quick' : ''}`;
}

/** Runs one bench, echoing its output live, and returns its parsed BENCH_JSON line. */
function runBench(name: string, options: Options): Promise<Outcome> {
	const args = ['--import', 'tsx', relative(root, benchFile(name))];
	if (options.quick) {
		args.push('--quick');
	}
	const command = commandFor(name, options.quick);
	const started = performance.now();
	const startedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
	return new Promise(resolve => {
		const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
		let buffered = '';
		let lastJson: string | undefined;
		child.stdout.setEncoding('utf8');
		child.stdout.on('data', (chunk: string) => {
			process.stdout.write(chunk);
			buffered += chunk;
			const lines = buffered.split('\n');
			buffered = lines.pop() ?? '';
			for (const line of lines) {
				if (line.startsWith('BENCH_JSON ')) {
					lastJson = line.slice('BENCH_JSON '.length);
				}
			}
		});
		let timedOut = false;
		const timer = setTimeout(() => {
			timedOut = true;
			// The bench runs its own children (hubs, workers): signal the whole tree via the group is not
			// possible without detaching, so ask politely first and then insist.
			child.kill('SIGTERM');
			setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
		}, options.timeoutSeconds * 1000);
		child.on('close', code => {
			clearTimeout(timer);
			if (buffered.startsWith('BENCH_JSON ')) {
				lastJson = buffered.slice('BENCH_JSON '.length);
			}
			const seconds = (performance.now() - started) / 1000;
			let report: BenchReport | undefined;
			let failure: string | undefined;
			if (lastJson !== undefined) {
				try {
					const parsed = BenchReportSchema.safeParse(JSON.parse(lastJson));
					if (parsed.success) {
						report = parsed.data as BenchReport;
					} else {
						failure = `BENCH_JSON line does not match the format: ${parsed.error.message}`;
					}
				} catch (e) {
					failure = `BENCH_JSON line is not JSON: ${e instanceof Error ? e.message : String(e)}`;
				}
			}
			if (timedOut) {
				failure = `timed out after ${options.timeoutSeconds} s`;
			} else if (code !== 0) {
				failure = `exited with code ${String(code)}${report ? ' (partial results kept)' : ''}`;
			} else if (report === undefined) {
				failure ??= 'printed no BENCH_JSON line';
			}
			resolve({ name, command, seconds, startedAt, loadAfter: loadavg()[0] ?? 0, report, failure });
		});
	});
}

function fmt(value: number | null): string {
	return value === null ? 'n/a' : String(value);
}

function printSummary(outcomes: Outcome[]): void {
	console.log('\n=== bench summary ===');
	for (const o of outcomes) {
		console.log(`${o.name} (${o.seconds.toFixed(0)} s)${o.failure ? `: FAILED ${o.failure}` : ''}`);
		for (const r of o.report?.rows ?? []) {
			const verdict = r.ok === undefined ? '' : r.ok ? ' ok' : ' MISSED';
			console.log(`  ${r.metric}: ${fmt(r.value)} ${r.unit}${r.target ? ` (target ${r.target})` : ''}${verdict}`);
		}
	}
	const missed = outcomes.flatMap(o =>
		(o.report?.rows ?? []).filter(r => r.ok === false).map(r => `${o.name}: ${r.metric}`),
	);
	if (outcomes.length === 0) {
		console.log('no bench ran');
		return;
	}
	console.log(missed.length === 0 ? 'all targets met' : `targets missed (${missed.length}):\n  ${missed.join('\n  ')}`);
}

function machineLine(): string {
	const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
	const load = loadavg()
		.map(l => l.toFixed(2))
		.join(' / ');
	return (
		`${availableParallelism()} cores (\`nproc\`), ${cpu}; ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM ` +
		`(${(freemem() / 2 ** 30).toFixed(1)} GiB free when the run began); Node ${process.version}; load average ${load} when the run began`
	);
}

function escapeCell(text: string): string {
	return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function renderBench(o: Outcome, machine: string): string {
	const lines = [`<!-- bench:${o.name}:start -->`, `### ${o.name}`, ''];
	lines.push(
		`Run ${o.startedAt} on ${machine}. Took ${o.seconds.toFixed(0)} s; 1-minute load average ${o.loadAfter.toFixed(1)} when it ended.`,
		`Reproduce: \`npm run build && ${o.command}\`.`,
		'',
	);
	if (o.failure) {
		lines.push(`**This bench failed: ${o.failure}.**`, '');
	}
	if (o.report && o.report.rows.length > 0) {
		lines.push('| metric | value | target | met |', '|---|---:|---|---|');
		for (const r of o.report.rows) {
			const met = r.ok === undefined ? '' : r.ok ? 'yes' : '**no**';
			const note = r.note ? ` (${r.note})` : '';
			lines.push(
				`| ${escapeCell(r.metric + note)} | ${fmt(r.value)} ${escapeCell(r.unit)} | ${r.target ? `${escapeCell(r.target)} ${escapeCell(r.unit)}` : ''} | ${met} |`,
			);
		}
		lines.push('');
	}
	for (const note of o.report?.notes ?? []) {
		lines.push(`- ${note}`);
	}
	if (o.report?.notes?.length) {
		lines.push('');
	}
	for (const s of o.report?.sections ?? []) {
		lines.push(`<details><summary>${s.title}</summary>`, '', '```', s.text.trimEnd(), '```', '', '</details>', '');
	}
	lines.push(`<!-- bench:${o.name}:end -->`);
	return lines.join('\n');
}

/** Replaces each run bench's block inside the results section, keeping the blocks of benches not run. */
async function updateDocs(outcomes: Outcome[], machine: string): Promise<void> {
	if (!existsSync(docsPath)) {
		console.error(`docs: ${relative(root, docsPath)} is missing; results not written.`);
		return;
	}
	const doc = readFileSync(docsPath, 'utf8');
	const start = doc.indexOf(resultsStart);
	const end = doc.indexOf(resultsEnd);
	if (start < 0 || end < start) {
		console.error(
			`docs: ${relative(root, docsPath)} has no ${resultsStart} … ${resultsEnd} section; results not written.`,
		);
		return;
	}
	let section = doc.slice(start + resultsStart.length, end).replace(placeholder, '');
	for (const o of outcomes) {
		const block = renderBench(o, machine);
		const re = new RegExp(`<!-- bench:${o.name}:start -->[\\s\\S]*?<!-- bench:${o.name}:end -->`);
		section = re.test(section) ? section.replace(re, () => block) : `${section.trimEnd()}\n\n${block}\n`;
	}
	const text = `${doc.slice(0, start)}${resultsStart}${section.replace(/\s*$/, '\n\n')}${doc.slice(end)}`;
	// Formatted like the rest of the repo, so `npm run check` (prettier --check .) stays green.
	const config = (await prettier.resolveConfig(docsPath)) ?? {};
	writeFileSync(docsPath, await prettier.format(text, { ...config, filepath: docsPath }));
	console.log(`docs: results written to ${relative(root, docsPath)}`);
}

async function main(): Promise<number> {
	const options = parseArgs(process.argv.slice(2));
	const selected = benchNames.filter(n =>
		options.only === undefined ? !onDemand.includes(n) : options.only.includes(n),
	);
	const outcomes: Outcome[] = [];
	const machine = machineLine();
	console.log(`bench: ${machine}${options.quick ? ' — QUICK run (small sizes)' : ''}`);
	for (const name of selected) {
		if (!existsSync(benchFile(name))) {
			console.log(`\n=== ${name}: skipped (test/bench/${name}.ts does not exist yet) ===`);
			continue;
		}
		console.log(`\n=== ${name}: ${commandFor(name, options.quick)} ===`);
		outcomes.push(await runBench(name, options));
	}
	printSummary(outcomes);
	if (options.docs) {
		await updateDocs(outcomes, machine);
	} else {
		console.log('docs: not updated (quick run or --no-docs; pass --write-docs to force)');
	}
	return outcomes.some(o => o.failure !== undefined) ? 1 : 0;
}

main().then(
	code => {
		process.exitCode = code;
	},
	(error: unknown) => {
		console.error(error instanceof Error ? error.message : String(error));
		process.exitCode = 2;
	},
);
