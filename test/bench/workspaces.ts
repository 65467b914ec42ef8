/**
 * What workspaces cost ("Performance"): on a real repository of 10,000 files (1,000 with
 * --quick), the time to make a card's worktree (ensureWorktree: branch, mark, `worktree add`, checkout
 * of every file; target p50 ≤ 1.5 s), twenty made at once (issue: no claim slower than 3 s), a WIP
 * snapshot of a worktree with 200 changed files (100 edited, 100 new; ≤ 500 ms), and landing a 50-file
 * branch with squash, merge and rebase while the user's checkout is on main (≤ 1 s; includes updating
 * that checkout and removing the worktree and branch); and a whole claim with its worktree (the backlog's
 * claim and the hub's claimWorkspace step) against a claim of a project without workspaces.
 * Standalone: `node --import tsx test/bench/workspaces.ts [--quick]`. Prints human lines, then BENCH_JSON.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { Backlog } from '../../core/backlog';
import { ClaimWorkspaces } from '../../mcp-server/hub/claimWorkspace';
import { land, type LandMode } from '../../mcp-server/workspaces/land';
import { commitAll } from '../../mcp-server/workspaces/review';
import { snapshotWip } from '../../mcp-server/workspaces/wip';
import { ensureWorktree, removeWorktree } from '../../mcp-server/workspaces/worktree';
import { type BenchRow, median, percentile, Reporter, row, since } from './report';

process.env.GIT_AUTHOR_NAME = 'Bench';
process.env.GIT_AUTHOR_EMAIL = 'bench@example.com';
process.env.GIT_COMMITTER_NAME = 'Bench';
process.env.GIT_COMMITTER_EMAIL = 'bench@example.com';
process.env.GIT_CONFIG_GLOBAL = '/dev/null';

const quick = process.argv.includes('--quick');
const fileCount = quick ? 1_000 : 10_000;
const worktreeRounds = quick ? 3 : 9;
const concurrent = quick ? 5 : 20;
const snapshotRounds = quick ? 3 : 9;
const landRounds = quick ? 2 : 4;

function gitRun(dir: string, ...args: string[]): string {
	return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trim();
}

/** `count` source-like files of ~400 bytes in 100 folders, committed on main. */
function makeRepo(parent: string, count: number): string {
	const root = path.join(parent, 'repo');
	mkdirSync(root);
	gitRun(root, 'init', '-q', '-b', 'main');
	for (let i = 0; i < count; i++) {
		const dir = path.join(root, 'src', `pkg${i % 100}`);
		if (i < 100) {
			mkdirSync(dir, { recursive: true });
		}
		writeFileSync(path.join(dir, `file${i}.ts`), `export const value${i} = ${i};\n`.repeat(12));
	}
	gitRun(root, 'add', '-A');
	gitRun(root, 'commit', '-q', '-m', `${count} files`);
	return root;
}

/** Changes `n` tracked files (starting at `offset`) in `dir` with a `tag`. */
function editFiles(dir: string, n: number, offset: number, tag: string): void {
	for (let i = offset; i < offset + n; i++) {
		writeFileSync(path.join(dir, 'src', `pkg${i % 100}`, `file${i}.ts`), `export const value${i} = '${tag}';\n`);
	}
}

/**
 * A whole claim as the hub answers it: the backlog's claim (in-memory PGlite) and then
 * ClaimWorkspaces.afterClaim, which makes the worktree for a project with workspaces on; and the same
 * claim of a project with workspaces off (settings cached: no git, no query), against the plain claim.
 */
async function claimRows(root: string): Promise<BenchRow[]> {
	const backlog = await Backlog.open({});
	try {
		const workspaces = new ClaimWorkspaces(backlog);
		const agent = { actor: 'bench-agent' };
		await backlog.updateProjectSettings(agent, { project: 'on', worktrees: true });
		await backlog.updateProjectSettings(agent, { project: 'off', worktrees: false });
		const rounds = worktreeRounds;
		// Claims without workspaces are quick: many more rounds, alternated with the plain claim.
		const quickRounds = 60;
		const ids = (p: string, n = rounds) => Array.from({ length: n + 1 }, (_, i) => `${p}${i}`);
		await backlog.create(agent, {
			cards: [
				...ids('K').map(id => ({ id, title: id, project: 'on' })),
				...ids('F', quickRounds).map(id => ({ id, title: id, project: 'off' })),
				...ids('B', quickRounds).map(id => ({ id, title: id, project: 'off' })),
			],
		});
		const claimOf = async (cardId: string, project: string, wrap: boolean): Promise<number> => {
			const started = performance.now();
			const params = { cardId, project, root };
			const result = await backlog.claim(agent, params);
			if (wrap) {
				await workspaces.afterClaim(agent, params, result);
			}
			return since(started);
		};
		// One of each first: caches, prepared statements, the settings read.
		await claimOf('K0', 'on', true);
		await claimOf('B0', 'off', false);
		const withTimes: number[] = [];
		const offTimes: number[] = [];
		const plainTimes: number[] = [];
		for (let i = 1; i <= rounds; i++) {
			withTimes.push(await claimOf(`K${i}`, 'on', true));
			await removeWorktree({ repo: root, cardId: `K${i}`, force: true });
		}
		await claimOf('F0', 'off', true); // the settings cache (10 s) ran out during the worktree rounds
		for (let i = 1; i <= quickRounds; i++) {
			offTimes.push(await claimOf(`F${i}`, 'off', true));
			plainTimes.push(await claimOf(`B${i}`, 'off', false));
		}
		await removeWorktree({ repo: root, cardId: 'K0', force: true });
		return [
			row('claim including worktree creation p50', median(withTimes), 'ms', { max: 1500 }, `${fileCount} files`),
			row(
				'claim without workspaces p50',
				median(offTimes),
				'ms',
				undefined,
				`project with worktrees off, ${quickRounds} rounds`,
			),
			row(
				'plain backlog claim p50 (reference)',
				median(plainTimes),
				'ms',
				undefined,
				'no workspace step, alternated with the above',
			),
		];
	} finally {
		await backlog.close();
	}
}

async function main(): Promise<void> {
	const reporter = new Reporter('workspaces');
	const parent = mkdtempSync('/tmp/bt-bench-ws-');
	try {
		let t = performance.now();
		const root = makeRepo(parent, fileCount);
		reporter.note(
			`repository of ${fileCount} files made in ${Math.round(since(t))} ms (git ${gitRun(root, 'version').replace('git version ', '')})`,
		);

		const makeTimes: number[] = [];
		for (let i = 0; i < worktreeRounds; i++) {
			t = performance.now();
			await ensureWorktree({ repo: root, cardId: `W${i}` });
			makeTimes.push(since(t));
			await removeWorktree({ repo: root, cardId: `W${i}`, force: true });
		}
		reporter.add(
			row('ensureWorktree p50', median(makeTimes), 'ms', { max: 1500 }, `${fileCount} files, ${worktreeRounds} rounds`),
		);
		reporter.add(row('ensureWorktree max', Math.max(...makeTimes), 'ms'));
		// What git itself takes for the same worktree: the floor under ensureWorktree on this machine.
		const plainTimes: number[] = [];
		for (let i = 0; i < worktreeRounds; i++) {
			const dir = path.join(parent, `plain${i}`);
			t = performance.now();
			gitRun(root, 'worktree', 'add', '-q', '-b', `plain${i}`, dir, 'main');
			plainTimes.push(since(t));
			gitRun(root, 'worktree', 'remove', '--force', dir);
		}
		reporter.add(
			row(
				'plain `git worktree add` p50 (reference)',
				median(plainTimes),
				'ms',
				undefined,
				'same repository, same machine',
			),
		);

		for (const r of await claimRows(root)) {
			reporter.add(r);
		}

		t = performance.now();
		const each = await Promise.all(
			Array.from({ length: concurrent }, async (_, i) => {
				const start = performance.now();
				await ensureWorktree({ repo: root, cardId: `C${i}` });
				return since(start);
			}),
		);
		const wall = since(t);
		reporter.add(
			row(
				`${concurrent} ensureWorktree at once, slowest`,
				Math.max(...each),
				'ms',
				{ max: 3000 },
				`${fileCount} files each, 2-core box`,
			),
		);
		reporter.add(row(`${concurrent} ensureWorktree at once, p50`, median(each), 'ms'));
		reporter.add(row(`${concurrent} ensureWorktree at once, wall`, wall, 'ms'));
		for (let i = 0; i < concurrent; i++) {
			await removeWorktree({ repo: root, cardId: `C${i}`, force: true });
		}

		const ws = await ensureWorktree({ repo: root, cardId: 'SNAP' });
		const snapTimes: number[] = [];
		for (let r = 0; r < snapshotRounds; r++) {
			editFiles(ws.path, 100, 0, `round ${r}`);
			for (let i = 0; i < 100; i++) {
				writeFileSync(path.join(ws.path, 'src', `pkg${i}`, `new${i}.ts`), `export const fresh = ${r};\n`);
			}
			t = performance.now();
			const snap = await snapshotWip({ worktree: ws.path, cardId: 'SNAP', attempt: r });
			snapTimes.push(since(t));
			if (snap?.files.length !== 200) {
				throw new Error(`expected 200 files in the snapshot, got ${snap?.files.length ?? 0}`);
			}
		}
		reporter.add(
			row(
				'snapshotWip of 200 changed files p50',
				median(snapTimes),
				'ms',
				{ max: 500 },
				`worktree of ${fileCount} files`,
			),
		);
		reporter.add(row('snapshotWip p90', percentile(snapTimes, 90), 'ms'));

		const withRemoval: number[] = [];
		for (const mode of ['squash', 'merge', 'rebase'] as LandMode[]) {
			const times: number[] = [];
			for (let r = 0; r < landRounds; r++) {
				const card = `L-${mode}-${r}`;
				const lw = await ensureWorktree({ repo: root, cardId: card });
				editFiles(lw.path, 25, 200 + r * 100, card);
				await commitAll({ worktree: lw.path, message: `${card} part 1` });
				editFiles(lw.path, 25, 250 + r * 100, card);
				await commitAll({ worktree: lw.path, message: `${card} part 2` });
				// main moves on meanwhile, so squash and merge really merge and rebase really replays.
				editFiles(root, 1, fileCount - 1 - r, `main ${card}`);
				gitRun(root, 'commit', '-q', '-am', `main before ${card}`);
				// Odd rounds land with the card's worktree still there (removing its files is part of the
				// time); even rounds after it was removed, as once the review no longer needs it.
				const removeFirst = r % 2 === 0;
				if (removeFirst) {
					await removeWorktree({ repo: root, cardId: card });
				}
				t = performance.now();
				const result = await land({ repo: root, branch: lw.branch, base: 'main', mode });
				(removeFirst ? times : withRemoval).push(since(t));
				if (result.outcome !== 'landed' || result.files.length !== 50) {
					throw new Error(`landing ${card}: ${JSON.stringify(result)}`);
				}
			}
			reporter.add(
				row(
					`land a 50-file branch (${mode})`,
					median(times),
					'ms',
					{ max: 1000 },
					`2 commits, user's checkout on main updated, ${times.length} rounds`,
				),
			);
		}
		reporter.add(
			row(
				'land incl. removing the card worktree',
				median(withRemoval),
				'ms',
				undefined,
				`${fileCount} files deleted, ${withRemoval.length} rounds over the 3 modes`,
			),
		);
	} finally {
		rmSync(parent, { recursive: true, force: true });
	}
	reporter.finish();
}

void main();
