/**
 * What the inbox costs an MCP call (target: "the inbox check adds ≤ 0.2 ms to an MCP call p50").
 * 1. The check itself, in process: `Inbox.deliver` on an empty inbox, which every tool result passes
 *    through (mcp-server/mcp/inbox.ts).
 * 2. Through `baton mcp` (MCP SDK client over stdio → hub → PGlite), interleaved call by call: `show`
 *    of a card with an empty inbox, and the same `show` carrying one message a board client posted on
 *    the agent's held card just before (push, `inbox` in the result, the ack after it).
 * 3. Only with BATON_BENCH_BASELINE_JS = the dist/baton.js of a build without the inbox (commit 2bd5351;
 *    docs/benchmarks.md says how to build it): `show` and claim+complete on that build and this one,
 *    each with its own hub on its own copy of the same backlog, in rounds that alternate A B B A; the
 *    difference is the median of the per-round differences (neighbouring rounds share the machine's
 *    load), with the CPU per claim+complete of both processes beside it.
 * Standalone: `npm run build && node --import tsx test/bench/inbox.ts [--quick]`.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { Inbox } from '../../mcp-server/mcp/inbox';
import { toolSuccess } from '../../mcp-server/mcp/toolResult';
import { cardBatches } from './dataset';
import { batonJs, connect, cpuMsOf, type HubHandle, requireBuild, startHub } from './hubProcess';
import { batonSession, call, type Session } from './mcpSession';
import { median, Reporter, row } from './report';

const quick = process.argv.includes('--quick');
const cards = quick ? 500 : 2_000;
const checks = quick ? 100_000 : 1_000_000;
const calls = quick ? 40 : 300;
const rounds = quick ? 2 : 8;
const perRound = quick ? 30 : 200;
const baseline = process.env.BATON_BENCH_BASELINE_JS;

const sleep = (ms: number): Promise<void> => new Promise(r => setTimeout(r, ms));

/** µs per `deliver` of a stats-sized result with nothing waiting. */
function checkCost(): number {
	const inbox = new Inbox(() => Promise.resolve());
	const result = toolSuccess({ counts: { ready: 1950, claimed: 1, review: 0, blocked: 0, done: 49 }, total: 2000 });
	let kept = 0;
	for (let i = 0; i < checks / 10; i++) {
		kept += inbox.deliver(result) === result ? 1 : 0;
	}
	const t = performance.now();
	for (let i = 0; i < checks; i++) {
		kept += inbox.deliver(result) === result ? 1 : 0;
	}
	const us = ((performance.now() - t) * 1000) / checks;
	if (kept !== checks + checks / 10) {
		throw new Error('an empty inbox changed a result');
	}
	return us;
}

async function filledHub(dataDir: string, script: string): Promise<HubHandle> {
	const hub = await startHub(dataDir, 60_000, {}, script);
	const rpc = await connect(dataDir);
	try {
		for (const batch of cardBatches(cards)) {
			await rpc.request('card/create', { cards: batch }, { timeoutMs: 120_000 });
		}
		await rpc.request('card/create', { cards: [{ id: 'held', title: 'The agent holds this one', priority: 0 }] });
	} finally {
		rpc.close();
	}
	return hub;
}

/** Part 2: one session, `show` with an empty inbox and with one message, alternating. */
async function emptyVersusOne(report: Reporter, dataDir: string): Promise<void> {
	const board = await connect(dataDir, 'board');
	const session = await batonSession(dataDir, 'bench-inbox');
	try {
		await call(session, 'claim', { cardId: 'held' });
		const empty: number[] = [];
		const one: number[] = [];
		let missed = 0;
		for (let i = 0; i < calls * 2; i++) {
			const withMessage = i % 2 === 1;
			if (withMessage) {
				await board.request('card/comment', { cardId: 'held', text: `Message ${i}: keep going.` });
			}
			// Lets the push land and the previous ack commit, so neither is timed inside the call.
			await sleep(15);
			const t = performance.now();
			const out = await call(session, 'show', { cardId: 'c1' });
			const ms = performance.now() - t;
			if (withMessage) {
				if ((out.inbox as unknown[] | undefined)?.length === 1) {
					one.push(ms);
				} else {
					missed++;
				}
			} else {
				empty.push(ms);
			}
		}
		report.add(row('MCP show p50, empty inbox', median(empty), 'ms', undefined, `${empty.length} calls`));
		report.add(
			row(
				'MCP show p50 carrying one message (inbox in the result, ack after it)',
				median(one),
				'ms',
				undefined,
				`${one.length} calls, interleaved with the above${missed > 0 ? `; ${missed} had no message yet` : ''}`,
			),
		);
	} finally {
		await session.close();
		board.close();
	}
}

interface BuildRun {
	name: string;
	session: Session;
	hubPid: number;
	show: number[];
	pair: number[];
	/** CPU ms per claim+complete of the hub and of `baton mcp` together, per round. */
	cpu: number[];
}

/** One round on one build: `perRound` shows, then `perRound` claim+complete pairs; p50 of each. */
async function round(run: BuildRun): Promise<void> {
	const show: number[] = [];
	const pair: number[] = [];
	for (let i = 0; i < perRound; i++) {
		const t = performance.now();
		await call(run.session, 'show', { cardId: 'c1' });
		show.push(performance.now() - t);
	}
	const cpuOf = (): number => cpuMsOf(run.hubPid) + (run.session.pid === null ? 0 : cpuMsOf(run.session.pid));
	const cpuStart = cpuOf();
	for (let i = 0; i < perRound; i++) {
		const t = performance.now();
		const claimed = await call(run.session, 'claim', {});
		const lease = claimed.lease as { cardId: string; epoch: number } | null;
		if (lease === null) {
			throw new Error(`${run.name}: nothing left to claim`);
		}
		await call(run.session, 'complete', { cardId: lease.cardId, epoch: lease.epoch });
		pair.push(performance.now() - t);
	}
	run.cpu.push((cpuOf() - cpuStart) / perRound);
	run.show.push(median(show));
	run.pair.push(median(pair));
}

/** Part 3: this build against the baseline build, alternating rounds. */
async function againstBaseline(report: Reporter, temp: string, script: string): Promise<void> {
	const builds = [
		{ name: 'this build', script: batonJs },
		{ name: 'baseline', script },
	];
	const hubs: HubHandle[] = [];
	const runs: BuildRun[] = [];
	try {
		for (const [i, b] of builds.entries()) {
			const dataDir = join(temp, `ab${i}`);
			const hub = await filledHub(dataDir, b.script);
			hubs.push(hub);
			const session = await batonSession(dataDir, `bench-ab${i}`, b.script);
			runs.push({ name: b.name, session, hubPid: hub.pid, show: [], pair: [], cpu: [] });
		}
		const [current, base] = runs as [BuildRun, BuildRun];
		for (let r = 0; r < rounds; r++) {
			const order = r % 2 === 0 ? [current, base] : [base, current];
			for (const run of order) {
				await round(run);
			}
		}
		const fmt = (xs: number[]): string => xs.map(x => x.toFixed(2)).join(' / ');
		for (const [metric, pick, bounded] of [
			['show p50', (run: BuildRun) => run.show, true],
			['claim+complete p50', (run: BuildRun) => run.pair, true],
			['claim+complete CPU (hub + baton mcp)', (run: BuildRun) => run.cpu, false],
		] as const) {
			const ours = pick(current);
			const theirs = pick(base);
			report.add(row(`MCP ${metric}, this build`, median(ours), 'ms', undefined, `rounds ${fmt(ours)}`));
			report.add(
				row(`MCP ${metric}, baseline without the inbox`, median(theirs), 'ms', undefined, `rounds ${fmt(theirs)}`),
			);
			report.add(
				row(
					`MCP ${metric}: this build − baseline`,
					median(ours.map((x, i) => x - (theirs[i] ?? Number.NaN))),
					'ms',
					bounded ? { max: 0.2 } : undefined,
					`median of the differences of ${rounds} alternating rounds of ${perRound}`,
				),
			);
		}
	} finally {
		for (const run of runs) {
			await run.session.close();
		}
		for (const hub of hubs) {
			await hub.stop();
		}
	}
}

async function main(): Promise<void> {
	requireBuild();
	const report = new Reporter('inbox');
	const temp = mkdtempSync('/tmp/bt-');
	let hub: HubHandle | undefined;
	try {
		report.add(
			row(
				'inbox check per MCP tool result, empty inbox (in process)',
				checkCost(),
				'µs',
				{ max: 200 },
				`Inbox.deliver, ${checks.toLocaleString('en')} calls`,
			),
		);
		const dataDir = join(temp, 'd');
		hub = await filledHub(dataDir, batonJs);
		await emptyVersusOne(report, dataDir);
		await hub.stop();
		hub = undefined;
		if (baseline === undefined) {
			report.note('no BATON_BENCH_BASELINE_JS: the side by side with a build without the inbox was skipped.');
		} else if (!existsSync(baseline)) {
			throw new Error(`BATON_BENCH_BASELINE_JS=${baseline} does not exist`);
		} else {
			await againstBaseline(report, temp, baseline);
		}
	} finally {
		await hub?.stop();
		rmSync(temp, { recursive: true, force: true });
	}
	report.finish();
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
