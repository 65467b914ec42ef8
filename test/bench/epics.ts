/**
 * What parents cost (targets): (a) "the claim with parents in play stays within 10 % of
 * today's claim at 100k cards (30 % of them children of 1,000 epics)" and (b) "`show` of an epic with
 * 1,000 children ≤ 20 ms".
 *
 * (a) Two PGlite backlogs in process: the benchmark data set (dataset.ts) as it is, and the same cards
 * (ids, priorities, dependencies) where 30 % are children of 1,000 epics (`withParents` below: per
 * batch of 1,000 cards, the last card is a top epic, the nine before it are its sub-epics, and 291 of
 * the others are children of a sub-epic, so a child's ancestors are two deep; an epic keeps the data
 * set's dependencies, so about half the children start held back by a waiting ancestor and the claim
 * index holds them among the claimable cards). One agent claims and completes, round after round,
 * alternating the two backlogs (A B B A) so both see the same machine load. Reported: claim,
 * complete and claim+complete p50 (and mean) of each, and their ratios; the judged rows are the
 * ratios with parents ÷ without.
 *
 * (b) An epic with 1,000 children (300 done, 100 claimed) added to the backlog with parents: card/get
 * (what `show` and the MCP `show` tool call) in process, through a real hub from an outside RpcClient,
 * through `baton mcp` (the SDK client's `show` tool call), and `baton show` as a whole CLI process.
 *
 * Standalone: `npm run build && node --import tsx test/bench/epics.ts [--quick]`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { Backlog } from '../../core/backlog';
import type { CreateCardInput } from '../../core/protocol';
import type { Db } from '../../core/store/db';
import type { RpcClient } from '../../core/protocol/rpc';
import { prng } from '../helpers/prng';
import { buildBatch, cardBatches, childrenPerBatch, subEpicsPerBatch, withParents } from './dataset';
import { batonJs, connect, requireBuild, startHub } from './hubProcess';
import { batonSession, call } from './mcpSession';
import { median, Reporter, row, timedP50 } from './report';

const quick = process.argv.includes('--quick');
const size = quick ? 10_000 : 100_000;
const rounds = quick ? 200 : 1_000;
const warmRounds = quick ? 50 : 200;
const reads = quick ? 30 : 200;
const bigEpic = 'epicbig';
const bigChildren = 1_000;
const scale = `${size.toLocaleString('en')} cards`;
const ctx = { actor: 'bench-agent' };

async function build(dir: string, parents: boolean): Promise<{ backlog: Backlog; seconds: number }> {
	const t0 = performance.now();
	const backlog = await Backlog.open({ pgliteDir: dir });
	const random = prng(31);
	let from = 0;
	for (const batch of cardBatches(size)) {
		await backlog.create({ actor: 'bench' }, { cards: parents ? withParents(batch, from, random) : batch });
		from += batch.length;
	}
	await backlog.maintenance();
	return { backlog, seconds: (performance.now() - t0) / 1000 };
}

type Which = 'plain' | 'parents';

interface Samples {
	claim: number[];
	complete: number[];
	pair: number[];
	children: number;
	/** Transactions opened by the rounds: a complete on the general path opens one, the hot statements none. */
	transactions: { n: number };
}

/** Counts the transactions a backlog opens (its unit of work's store, wrapped; every call goes through). */
function countTransactions(b: Backlog): { n: number } {
	const uow = (b as unknown as { uow: { db: Db } }).uow;
	const db = uow.db;
	const counter = { n: 0 };
	uow.db = new Proxy(db, {
		get(t, prop) {
			const value: unknown = Reflect.get(t, prop, t);
			if (prop === 'transaction') {
				counter.n++;
			}
			return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
		},
	});
	return counter;
}

async function claimRound(b: Backlog, s: Samples | undefined): Promise<void> {
	const t = performance.now();
	const { card, lease } = await b.claim(ctx, {});
	const claimed = performance.now();
	if (card === null || lease === null) {
		throw new Error('nothing claimable');
	}
	await b.complete(ctx, { cardId: card.id, epoch: lease.epoch });
	const done = performance.now();
	if (s !== undefined) {
		s.claim.push(claimed - t);
		s.complete.push(done - claimed);
		s.pair.push(done - t);
		s.children += card.parent == null ? 0 : 1;
	}
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Ready cards whose dependencies are done but a waiting ancestor holds back: what the pick steps over. */
async function heldChildren(b: Backlog): Promise<number> {
	const db = (b as unknown as { db: { query<T>(sql: string): Promise<T[]> } }).db;
	const rows = await db.query<{ n: unknown }>(
		`SELECT count(*) AS n FROM cards WHERE status = 'ready' AND unmet_deps = 0 AND open_children = 0
			AND parent IS NOT NULL AND baton_ancestor_waits(parent)`,
	);
	return Number(rows[0]?.n ?? 0);
}

async function claims(report: Reporter, plain: Backlog, parents: Backlog): Promise<void> {
	report.note(
		`with parents: ${(await heldChildren(parents)).toLocaleString('en')} ready children held back by a waiting ancestor when the rounds began`,
	);
	for (let i = 0; i < warmRounds; i++) {
		await claimRound(plain, undefined);
		await claimRound(parents, undefined);
	}
	const samples: Record<Which, Samples> = {
		plain: { claim: [], complete: [], pair: [], children: 0, transactions: countTransactions(plain) },
		parents: { claim: [], complete: [], pair: [], children: 0, transactions: countTransactions(parents) },
	};
	const cpu: Record<Which, number> = { plain: 0, parents: 0 };
	for (let i = 0; i < rounds; i++) {
		const order: Which[] = i % 2 === 0 ? ['plain', 'parents'] : ['parents', 'plain'];
		for (const which of order) {
			const c = process.cpuUsage();
			await claimRound(which === 'plain' ? plain : parents, samples[which]);
			const used = process.cpuUsage(c);
			cpu[which] += (used.user + used.system) / 1000;
		}
	}
	const { plain: a, parents: p } = samples;
	const n = `${rounds} rounds each, alternating, after ${warmRounds} warm-up rounds`;
	report.add(row(`claim+complete p50 without parents (${scale})`, median(a.pair), 'ms', undefined, n));
	report.add(
		row(
			`claim+complete p50 with parents (30 % children of 1,000 epics)`,
			median(p.pair),
			'ms',
			undefined,
			`${p.children} of ${rounds} claimed cards were children`,
		),
	);
	report.add(
		row(
			'claims and completes on the general path (a transaction), with parents',
			p.transactions.n,
			'transactions',
			undefined,
			`of ${rounds} claims and ${rounds} completes; without parents ${a.transactions.n}; the rest were one statement each`,
		),
	);
	report.add(row('claim p50 without parents', median(a.claim), 'ms'));
	report.add(row('claim p50 with parents', median(p.claim), 'ms'));
	report.add(row('complete p50 without parents', median(a.complete), 'ms'));
	report.add(row('complete p50 with parents', median(p.complete), 'ms'));
	report.add(
		row(
			'claim+complete p50 with parents ÷ without',
			median(p.pair) / median(a.pair),
			'×',
			{ max: 1.1 },
			'target: within 10 %',
		),
	);
	report.add(row('claim p50 with parents ÷ without', median(p.claim) / median(a.claim), '×', { max: 1.1 }));
	report.add(
		row(
			'claim+complete mean with parents ÷ without',
			mean(p.pair) / mean(a.pair),
			'×',
			undefined,
			`means ${mean(p.pair).toFixed(3)} / ${mean(a.pair).toFixed(3)} ms`,
		),
	);
	report.add(
		row(
			'CPU per claim+complete with parents ÷ without',
			cpu.parents / cpu.plain,
			'×',
			undefined,
			`${(cpu.parents / rounds).toFixed(3)} / ${(cpu.plain / rounds).toFixed(3)} ms of process CPU each`,
		),
	);
}

/** An epic of 1,000 children: 300 done, 100 claimed, 600 ready (some waiting on a dependency). */
async function addBigEpic(b: Backlog): Promise<void> {
	await b.create({ actor: 'bench' }, { cards: [{ id: bigEpic, title: 'An epic of a thousand children' }] });
	const random = prng(1000);
	const children: CreateCardInput[] = Array.from({ length: bigChildren }, (_, i) => ({
		id: `kid${i}`,
		title: `Child ${i} of the big epic: do a part`,
		body: 'A child of the big epic.',
		priority: Math.floor(random() * 4),
		parent: bigEpic,
		...(i % 10 === 9 ? { dependsOn: [`c${Math.floor(random() * size)}`] } : {}),
	}));
	await b.create({ actor: 'bench' }, { cards: children });
	for (let i = 0; i < 400; i++) {
		const worker = { actor: `kid-worker-${i % 8}` };
		const { card, lease } = await b.claim(worker, { cardId: `kid${i * 2}` });
		if (card === null || lease === null) {
			throw new Error(`kid${i * 2} was not claimable`);
		}
		if (i < 300) {
			await b.complete(worker, { cardId: card.id, epoch: lease.epoch });
		}
	}
}

/** p50 of `n` timed calls after up to 10 warm-up calls. */
function p50(n: number, fn: () => Promise<unknown>): Promise<number> {
	return timedP50(n, fn, Math.min(10, n));
}

async function showInProcess(report: Reporter, b: Backlog): Promise<void> {
	const got = await b.get(ctx, { cardId: bigEpic });
	const kids = got.children;
	if (kids?.total !== bigChildren || kids.cards.length !== bigChildren || kids.done !== 300 || kids.claimed !== 100) {
		throw new Error(`the big epic's roll-up is not the one built: ${JSON.stringify({ ...kids, cards: undefined })}`);
	}
	const bytes = Buffer.byteLength(JSON.stringify(got));
	report.add(
		row(
			'show (card/get) of an epic with 1,000 children, in process',
			await p50(reads, () => b.get(ctx, { cardId: bigEpic })),
			'ms',
			{ max: 20 },
			`p50 of ${reads}; the answer is ${(bytes / 1024).toFixed(0)} KiB`,
		),
	);
	report.add(
		row('card/get of a card without children, in process', await p50(reads, () => b.get(ctx, { cardId: 'c5' })), 'ms'),
	);
}

async function showThroughFaces(report: Reporter, dataDir: string): Promise<void> {
	const hub = await startHub(dataDir);
	let client: RpcClient | undefined;
	try {
		// The hub's start-up maintenance (VACUUM (ANALYZE)) runs just after it answers: measure after it.
		await new Promise(r => setTimeout(r, quick ? 1_000 : 5_000));
		client = await connect(dataDir);
		const c = client;
		report.add(
			row(
				'show (card/get) of an epic with 1,000 children, through the hub',
				await p50(reads, () => c.request('card/get', { cardId: bigEpic })),
				'ms',
				{ max: 20 },
				`an outside RpcClient over the socket, p50 of ${reads}`,
			),
		);
		const session = await batonSession(dataDir, 'bench-mcp');
		try {
			const out = await call(session, 'show', { cardId: bigEpic });
			const shown = (out.children as { cards?: unknown[] } | undefined)?.cards?.length;
			if (shown !== bigChildren) {
				throw new Error(`the MCP show listed ${String(shown)} children`);
			}
			report.add(
				row(
					'MCP show of that epic through baton mcp',
					await p50(Math.ceil(reads / 4), () => call(session, 'show', { cardId: bigEpic })),
					'ms',
					undefined,
					`the SDK client's tool call over stdio → baton mcp → hub, p50 of ${Math.ceil(reads / 4)}`,
				),
			);
		} finally {
			await session.close();
		}
		const cli: number[] = [];
		for (let i = 0; i < (quick ? 2 : 5); i++) {
			const t = performance.now();
			execFileSync(process.execPath, [batonJs, 'show', bigEpic, '--data-dir', dataDir], { stdio: 'ignore' });
			cli.push(performance.now() - t);
		}
		report.add(
			row(
				'baton show of that epic, the whole CLI process',
				median(cli),
				'ms',
				undefined,
				`spawn to exit (node start, connect, card/get, print), median of ${cli.length}`,
			),
		);
	} finally {
		client?.close();
		await hub.stop();
	}
}

async function main(): Promise<void> {
	requireBuild();
	const report = new Reporter('epics');
	const temp = mkdtempSync('/tmp/bt-epics-');
	const open: Backlog[] = [];
	try {
		const plain = await build(join(temp, 'plain'), false);
		open.push(plain.backlog);
		// A hub on data dir D keeps its PGlite store in D/pgdata (core/paths.ts).
		const parentsDir = join(temp, 'parents');
		const parents = await build(join(parentsDir, 'pgdata'), true);
		open.push(parents.backlog);
		report.add(
			row(`build ${scale} without parents`, plain.seconds, 's', undefined, 'creates of 1,000, then maintenance'),
		);
		report.add(
			row(`build ${scale} with parents`, parents.seconds, 's', undefined, 'each create checks its parents and cycles'),
		);
		await claims(report, plain.backlog, parents.backlog);
		await plain.backlog.close();
		open.shift();
		await addBigEpic(parents.backlog);
		await parents.backlog.maintenance();
		await showInProcess(report, parents.backlog);
		await parents.backlog.close();
		open.pop();
		await showThroughFaces(report, parentsDir);
		report.note(
			`Data set with parents: per batch of 1,000 cards, the last is a top epic, the nine before it its sub-epics, and ${childrenPerBatch} others children of a sub-epic (${size / buildBatch} top epics + ${(size / buildBatch) * subEpicsPerBatch} sub-epics; 30 % of the cards have a parent). Ids, priorities and dependencies are the plain data set's, so the two backlogs differ only by their parents.`,
		);
	} finally {
		for (const b of open) {
			await b.close();
		}
		rmSync(temp, { recursive: true, force: true });
	}
	report.finish();
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
