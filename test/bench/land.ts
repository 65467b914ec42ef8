/**
 * What the landing queue costs (core/backlog/landingQueue.ts, mcp-server/hub/landingLine.ts), measured
 * through a real hub on PostgreSQL (a schema of its own in DATABASE_URL_TEST, dropped afterwards) and
 * real git: a repository of 10,000 files (1,000 with --quick) made by one `git fast-import`, with main
 * checked out as a user's checkout; cards in review whose branches each change 1–3 files; a person's
 * approvals (`card/review {approve: true}`) over the hub's websocket. Rows: one approval at a time
 * (request sent → answer, p50/p95; target ≤ 1 s per landing), `land()` alone in process on the same
 * repository interleaved with them (approval − land() is the hub's, the store's and the queue's part),
 * the queue's own store round trips (join → turn → leave, uncontended), 20 approvals sent at once
 * without a check (target: all landed ≤ 20 s), then 5 at once with the trivial check `true` (the check
 * path: a detached checkout of the merged commit per landing) and that checkout alone.
 * The cards' workspaces are recorded on them (a branch each, no worktree: 40 worktrees of 10,000 files
 * would take minutes to make); removing a card's worktree at landing is the workspaces bench's row.
 * Standalone: `node --import tsx test/bench/land.ts [--quick]` (needs `npm run build`). Prints human
 * lines, then BENCH_JSON. Must not: leave its hub, schema or folders behind.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

import pg from 'pg';

import { Backlog, type OpContext } from '../../core/backlog';
import { connectHub } from '../../core/client/connectHub';
import type { RpcClient } from '../../core/protocol/rpc';
import { LandingLine } from '../../mcp-server/hub/landingLine';
import { checkCommit } from '../../mcp-server/workspaces/checkCommit';
import { land } from '../../mcp-server/workspaces/land';
import { type HubHandle, startHub } from './hubProcess';
import { median, percentile, Reporter, row, since } from './report';

process.env.GIT_AUTHOR_NAME = 'Bench';
process.env.GIT_AUTHOR_EMAIL = 'bench@example.com';
process.env.GIT_COMMITTER_NAME = 'Bench';
process.env.GIT_COMMITTER_EMAIL = 'bench@example.com';
process.env.GIT_CONFIG_GLOBAL = '/dev/null';

const quick = process.argv.includes('--quick');
const fileCount = quick ? 1_000 : 10_000;
/** Approvals one at a time, each followed by one land() in process. */
const oneByOne = quick ? 4 : 15;
/** Approvals sent at once without a check. */
const atOnce = quick ? 5 : 20;
/**
 * Approvals sent at once with the check `true`: fewer, as each landing checks out all the files (2–9 s
 * of kernel time per checkout of 10,000 files on the shared 2-core machine) and the bench keeps to ~2 min.
 */
const checkedAtOnce = quick ? 3 : 5;
const queueRounds = quick ? 10 : 40;
const databaseUrl = process.env.DATABASE_URL_TEST ?? 'postgres://postgres@127.0.0.1:5432/test';
const project = 'github.com/bench/land';
const agent: OpContext = { actor: 'bench-agent' };

function git(dir: string, args: readonly string[], input?: string): string {
	return execFileSync('git', ['-C', dir, ...args], {
		encoding: 'utf8',
		maxBuffer: 256 * 1024 * 1024,
		...(input === undefined ? {} : { input }),
	}).trim();
}

function fileOf(i: number): string {
	return `src/pkg${i % 100}/file${i}.ts`;
}

function inline(file: string, content: string): string {
	return `M 100644 inline ${file}\ndata ${Buffer.byteLength(content)}\n${content}\n`;
}

/**
 * The repository: main with `fileCount` source-like files (~400 bytes, 100 folders) and one branch per
 * name in `branches`, each off main changing 1–3 files of its own (the third a new file), all in one
 * `git fast-import` stream; then main checked out, as a user's checkout of the base.
 */
function makeRepo(parent: string, branches: readonly string[]): string {
	const root = path.join(parent, 'repo');
	mkdirSync(root);
	git(root, ['init', '-q', '-b', 'main']);
	const at = `${Math.floor(Date.now() / 1000)} +0000`;
	const parts = [`commit refs/heads/main\nmark :1\ncommitter Bench <bench@example.com> ${at}\ndata 5\nmain\n`];
	for (let i = 0; i < fileCount; i++) {
		parts.push(inline(fileOf(i), `export const value${i} = ${i};\n`.repeat(12)));
	}
	branches.forEach((branch, k) => {
		parts.push(`\ncommit refs/heads/${branch}\ncommitter Bench <bench@example.com> ${at}\ndata ${branch.length}\n`);
		parts.push(`${branch}\nfrom :1\n`);
		const count = 1 + (k % 3);
		for (let j = 0; j < count; j++) {
			const file = j < 2 ? fileOf(k * 2 + j) : `src/pkg${k % 100}/new${k}.ts`;
			parts.push(inline(file, `export const changedBy = '${branch}';\n`));
		}
	});
	git(root, ['fast-import', '--quiet'], `${parts.join('')}\n`);
	git(root, ['checkout', '-q', '-f', 'main']);
	return root;
}

/** Cards in review (created, claimed and completed in process), each with its branch recorded as its workspace. */
async function makeCards(backlog: Backlog, root: string, ids: readonly string[]): Promise<void> {
	await backlog.create(agent, { cards: ids.map(id => ({ id, title: `Work ${id}`, project, review: 'human' })) });
	for (const id of ids) {
		const claimed = await backlog.claim(agent, { cardId: id });
		const epoch = claimed.lease?.epoch;
		if (epoch === undefined) {
			throw new Error(`${id} was not claimed: ${JSON.stringify(claimed)}`);
		}
		await backlog.complete(agent, { cardId: id, epoch, result: `did ${id}` });
		const branch = `baton/${id}`;
		await backlog.setWorkspace(agent, id, {
			root,
			path: path.join(root, '.baton', 'worktrees', id),
			branch,
			base: 'main',
			host: hostname(),
			head: git(root, ['rev-parse', branch]),
		});
	}
}

/** Sends the approvals of `ids` at once; returns the wall time and each answer's time since the start. */
async function approveAtOnce(person: RpcClient, ids: readonly string[]): Promise<{ wall: number; answers: number[] }> {
	const t = performance.now();
	const answers = await Promise.all(
		ids.map(async cardId => {
			await person.request('card/review', { cardId, approve: true });
			return since(t);
		}),
	);
	return { wall: since(t), answers: answers.sort((a, b) => a - b) };
}

const clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * CPU (user + system) used so far by process `pid` and its ended children (the git commands it ran),
 * in ms, from /proc/<pid>/stat: steadier on the shared machine than wall time.
 */
function cpuWithGitMs(pid: number): number {
	const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
	const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
	const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
	return (ticks / clockTicks) * 1000;
}

/** The median gap between consecutive answers: how often the line lets one land when it is full. */
function medianGap(answers: readonly number[]): number {
	return median(answers.slice(1).map((a, i) => a - (answers[i] ?? 0)));
}

async function main(): Promise<void> {
	const reporter = new Reporter('land');
	const parent = mkdtempSync('/tmp/bt-bench-land-');
	const schema = `bt_land_${String(process.pid)}_${Date.now().toString(36)}`;
	const seqIds = Array.from({ length: oneByOne }, (_, i) => `S${i + 1}`);
	const bulkIds = Array.from({ length: atOnce }, (_, i) => `B${i + 1}`);
	const checkIds = Array.from({ length: checkedAtOnce }, (_, i) => `C${i + 1}`);
	const directs = Array.from({ length: oneByOne }, (_, i) => `bench/direct${i + 1}`);
	let hub: HubHandle | undefined;
	let backlog: Backlog | undefined;
	let person: RpcClient | undefined;
	try {
		let t = performance.now();
		const root = makeRepo(parent, [...[...seqIds, ...bulkIds, ...checkIds].map(id => `baton/${id}`), ...directs]);
		reporter.note(
			`repository of ${fileCount} files and ${oneByOne * 2 + atOnce + checkedAtOnce} branches made and checked out in ${Math.round(since(t))} ms (one git fast-import; git ${git(root, ['version']).replace('git version ', '')})`,
		);

		const dataDir = path.join(parent, 'hub');
		hub = await startHub(dataDir, 120_000, { DATABASE_URL: databaseUrl, BATON_PG_SCHEMA: schema });
		backlog = await Backlog.open({ databaseUrl, schema });
		t = performance.now();
		await makeCards(backlog, root, [...seqIds, ...bulkIds, ...checkIds]);
		reporter.note(
			`hub on PostgreSQL (schema ${schema}) up in ${Math.round(hub.startMs)} ms; ${seqIds.length + bulkIds.length + checkIds.length} cards put in review in ${Math.round(since(t))} ms`,
		);
		person = await connectHub({
			dataDir,
			client: 'test',
			agent: { id: 'vscode:alice' },
			spawnHub: false,
			reconnect: false,
			requestTimeoutMs: 300_000,
		});
		const alice = person;

		// 1. One approval at a time, each paired with land() of a like branch in this process (which goes
		// first alternates, so a machine getting busier or quieter weighs on both alike).
		const approvals: number[] = [];
		const direct: number[] = [];
		const approve = async (cardId: string): Promise<void> => {
			const t0 = performance.now();
			const answer = await alice.request('card/review', { cardId, approve: true });
			approvals.push(since(t0));
			if (answer.card.status !== 'done' || answer.card.workspace?.landed === undefined) {
				throw new Error(`${cardId} did not land: ${JSON.stringify(answer.card)}`);
			}
		};
		let directCpu = 0;
		const landDirect = async (branch: string): Promise<void> => {
			const t0 = performance.now();
			const c0 = cpuWithGitMs(process.pid);
			const landed = await land({ repo: root, branch, base: 'main', mode: 'squash' });
			direct.push(since(t0));
			directCpu += cpuWithGitMs(process.pid) - c0;
			if (landed.outcome !== 'landed') {
				throw new Error(`${branch} did not land: ${JSON.stringify(landed)}`);
			}
		};
		let cpu = cpuWithGitMs(hub.pid);
		for (let i = 0; i < oneByOne; i++) {
			if (i % 2 === 0) {
				await approve(seqIds[i] ?? '');
				await landDirect(directs[i] ?? '');
			} else {
				await landDirect(directs[i] ?? '');
				await approve(seqIds[i] ?? '');
			}
		}
		const oneCpu = (cpuWithGitMs(hub.pid) - cpu) / oneByOne;
		const note = `${fileCount} files, 1–3 changed, squash`;
		const landP50 = median(direct);
		reporter.add(
			row(
				'approval → answer p50, one at a time',
				median(approvals),
				'ms',
				{ max: 1000 },
				`${note}, ${oneByOne} rounds`,
			),
		);
		reporter.add(row('approval → answer p95, one at a time', percentile(approvals, 95), 'ms', { max: 1000 }));
		reporter.add(row('land() alone in process p50', landP50, 'ms', undefined, 'paired with the approvals'));
		reporter.add(row('land() alone in process p95', percentile(direct, 95), 'ms'));
		reporter.add(
			row(
				'approval − land(), median of the pairs: the hub, the store and the queue',
				median(approvals.map((a, i) => a - (direct[i] ?? 0))),
				'ms',
			),
		);
		reporter.add(row('hub CPU per approval, one at a time, its git commands included', oneCpu, 'ms'));
		reporter.add(row('land() in process: CPU per landing, its git commands included', directCpu / oneByOne, 'ms'));

		// The queue's own part, uncontended: join → take (turn) → leave, as the hub runs it, on the same store
		// (the entries name the landed cards, the table's foreign key wants a card).
		const line = new LandingLine(backlog.landingQueue);
		const turns: number[] = [];
		for (let i = 0; i < queueRounds + 3; i++) {
			t = performance.now();
			await line.turn({ cardId: seqIds[i % oneByOne] ?? '', project, base: 'main', actor: 'bench' }, () =>
				Promise.resolve(),
			);
			if (i >= 3) {
				turns.push(since(t));
			}
		}
		reporter.add(
			row(
				"the queue's store round trips p50: join → turn → leave",
				median(turns),
				'ms',
				undefined,
				`PostgreSQL, empty line, ${queueRounds} rounds`,
			),
		);

		// 2. All at once, no check.
		cpu = cpuWithGitMs(hub.pid);
		const bulk = await approveAtOnce(alice, bulkIds);
		const bulkCpu = (cpuWithGitMs(hub.pid) - cpu) / atOnce;
		reporter.add(
			row(`${atOnce} approvals at once, no check: all landed`, bulk.wall, 'ms', { max: atOnce * 1000 }, note),
		);
		const gap = medianGap(bulk.answers);
		reporter.add(row(`${atOnce} at once: per landing (wall ÷ ${atOnce})`, bulk.wall / atOnce, 'ms'));
		reporter.add(
			row(
				`${atOnce} at once: median gap between consecutive answers`,
				gap,
				'ms',
				undefined,
				'one landing plus the hand-over to the next in line',
			),
		);
		reporter.add(row('the hand-over in a full line: median gap − land() p50', gap - landP50, 'ms'));
		reporter.add(row(`hub CPU per approval, ${atOnce} at once, its git commands included`, bulkCpu, 'ms'));

		// 3. All at once with the trivial check `true`: each landing checks its merged commit out first.
		await alice.request('project/settings/update', { project, check: 'true' });
		const checked = await approveAtOnce(alice, checkIds);
		reporter.add(
			row(
				`${checkedAtOnce} approvals at once, check \`true\`: all landed`,
				checked.wall,
				'ms',
				undefined,
				'each landing runs the check in a detached checkout of its merged commit',
			),
		);
		reporter.add(row(`${checkedAtOnce} at once with the check: per landing`, checked.wall / checkedAtOnce, 'ms'));
		reporter.add(
			row(
				'the check path per landing: with the check − without, per landing',
				checked.wall / checkedAtOnce - bulk.wall / atOnce,
				'ms',
			),
		);
		const checks: number[] = [];
		const head = git(root, ['rev-parse', 'main']);
		for (let i = 0; i < 3; i++) {
			t = performance.now();
			const ran = await checkCommit(root, head, 'true', 60_000);
			checks.push(since(t));
			if (ran.outcome.exitCode !== 0) {
				throw new Error(`the check did not pass: ${ran.output}`);
			}
		}
		reporter.add(
			row(
				'checkCommit(`true`) alone in process p50',
				median(checks),
				'ms',
				undefined,
				`worktree add of ${fileCount} files, the check, its removal; 3 rounds`,
			),
		);
		const gained = Number(git(root, ['rev-list', '--count', '--first-parent', 'main'])) - 1;
		const expected = oneByOne * 2 + atOnce + checkedAtOnce;
		if (gained !== expected) {
			throw new Error(`main gained ${gained} commits, not ${expected}: a landing was lost or doubled`);
		}
		reporter.note(`main gained ${gained} commits: every approval and land() landed once`);
	} finally {
		person?.close();
		await backlog?.close();
		await hub?.stop();
		const admin = new pg.Client({ connectionString: databaseUrl });
		await admin.connect();
		await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
		await admin.end();
		rmSync(parent, { recursive: true, force: true });
	}
	reporter.finish();
}

void main();
