/**
 * `baton mcp` through the real MCP SDK Client over stdio: claim+complete round trip (stdio → MCP
 * server → hub → store and back), start to first tool result with the hub already up and with no hub
 * (the MCP server spawns it), the size of tools/list, and create/list side by side with backlog.md's
 * own MCP server (`backlog mcp start` in a temp git repo). Standalone:
 * `npm run build && node --import tsx test/bench/mcp.ts [--quick]`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { cardBatches } from './dataset';
import { connect, cpuMsOf, type HubHandle, requireBuild, rssOf, startHub } from './hubProcess';
import { batonSession, call, openSession } from './mcpSession';
import { median, percentile, Reporter, round, row } from './report';

const quick = process.argv.includes('--quick');
const cards = quick ? 1_000 : 5_000;
const pairs = quick ? 100 : 500;
const startRepeats = quick ? 2 : 5;
const noHubRepeats = quick ? 1 : 3;
const compareCreates = quick ? 30 : 100;
const compareLists = quick ? 10 : 30;
/**
 * backlog.md is installed on demand, outside package.json: it lists per-platform binaries as optional
 * dependencies that the registry here does not serve, which would break `npm ci` on a clean machine.
 */
const backlogMdVersion = '1.52.0';
const backlogMdPrefix = join(__dirname, '..', '..', '.bench', `backlog.md-${backlogMdVersion}`);
const backlogMdBin = join(backlogMdPrefix, 'node_modules', 'backlog.md', 'cli.js');

function ensureBacklogMd(): boolean {
	if (!existsSync(backlogMdBin)) {
		const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
		const r = spawnSync(
			npm,
			[
				'install',
				'--no-save',
				'--no-package-lock',
				'--no-audit',
				'--no-fund',
				'--prefix',
				backlogMdPrefix,
				`backlog.md@${backlogMdVersion}`,
			],
			{ stdio: ['ignore', 'ignore', 'inherit'] },
		);
		if (r.status !== 0) {
			console.error(`could not install backlog.md ${backlogMdVersion} (npm exited ${String(r.status)})`);
		}
	}
	return existsSync(backlogMdBin);
}

/**
 * Time from spawning `baton mcp` to the first tool result (stats), in a fresh process each time, and
 * the CPU that `baton mcp` process had used by then.
 */
async function startToFirstResult(dataDir: string, agent: string): Promise<{ ms: number; cpuMs: number }> {
	const t0 = performance.now();
	const session = await batonSession(dataDir, agent);
	await call(session, 'stats', {});
	const ms = performance.now() - t0;
	const cpuMs = session.pid === null ? Number.NaN : cpuMsOf(session.pid);
	await session.close();
	return { ms, cpuMs };
}

/** A live process's resident set and the private (anonymous) part of it, in MB (Linux /proc). */
function memoryOf(pid: number): { rss: number; privateMb: number } {
	const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
	const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN);
	return { rss: rssOf(pid).currentMb, privateMb: kb('Anonymous') / 1024 };
}

/** Stops a hub this bench caused to be spawned (by `baton mcp`), through its own protocol. */
async function stopSpawnedHub(dataDir: string): Promise<void> {
	const client = await connect(dataDir);
	try {
		await client.request('hub/stop', {});
	} catch {
		// The hub closes the socket as it stops; the request may lose its answer. Checked below.
	} finally {
		client.close();
	}
	for (let i = 0; i < 200; i++) {
		try {
			(await connect(dataDir)).close();
		} catch {
			return;
		}
		await new Promise(r => setTimeout(r, 50));
	}
	throw new Error(`the hub of ${dataDir} did not stop after hub/stop`);
}

async function measureBacklogMd(
	report: Reporter,
	temp: string,
): Promise<{ create: number; list: number; toolsBytes: number }> {
	const repo = join(temp, 'backlogmd');
	execFileSync('mkdir', ['-p', repo]);
	execFileSync('git', ['init', '-q'], { cwd: repo });
	execFileSync(
		process.execPath,
		[backlogMdBin, 'init', 'bench', '--defaults', '--integration-mode', 'none', '--auto-open-browser', 'false'],
		{
			cwd: repo,
			stdio: 'ignore',
		},
	);
	const t0 = performance.now();
	const session = await openSession(process.execPath, [backlogMdBin, 'mcp', 'start', '--cwd', repo], repo);
	const firstList = await session.client.callTool({ name: 'task_list', arguments: {} });
	if (firstList.isError === true) {
		throw new Error(`backlog.md task_list failed: ${JSON.stringify(firstList.content)}`);
	}
	report.add(row('backlog.md: mcp start → first tool result', performance.now() - t0, 'ms', undefined, 'context'));
	try {
		const toolsBytes = Buffer.byteLength(JSON.stringify(await session.client.listTools()));
		const createMs: number[] = [];
		for (let i = 0; i < compareCreates; i++) {
			const t = performance.now();
			const r = await session.client.callTool({
				name: 'task_create',
				arguments: { title: `Compare task ${i}`, description: 'Side-by-side bench' },
			});
			createMs.push(performance.now() - t);
			if (r.isError === true) {
				throw new Error(`backlog.md task_create failed: ${JSON.stringify(r.content)}`);
			}
		}
		const listMs: number[] = [];
		for (let i = 0; i < compareLists; i++) {
			const t = performance.now();
			const r = await session.client.callTool({ name: 'task_list', arguments: {} });
			listMs.push(performance.now() - t);
			if (r.isError === true) {
				throw new Error(`backlog.md task_list failed: ${JSON.stringify(r.content)}`);
			}
		}
		return { create: median(createMs), list: median(listMs), toolsBytes };
	} finally {
		await session.close();
	}
}

interface BatonCompare {
	create: number;
	list: number;
	page50: number;
	/** CPU (user + system) per single create and per page of 50, of `baton mcp` and of the hub, in ms. */
	cpu: { create: { mcp: number; hub: number }; page50: { mcp: number; hub: number } };
}

async function measureBatonCompare(temp: string): Promise<BatonCompare> {
	const dataDir = join(temp, 'compare');
	const hub = await startHub(dataDir);
	try {
		const session = await batonSession(dataDir, 'bench-compare');
		const cpuNow = (): { mcp: number; hub: number } => ({
			mcp: session.pid === null ? Number.NaN : cpuMsOf(session.pid),
			hub: cpuMsOf(hub.pid),
		});
		const perCall = (from: { mcp: number; hub: number }, n: number): { mcp: number; hub: number } => {
			const to = cpuNow();
			return { mcp: (to.mcp - from.mcp) / n, hub: (to.hub - from.hub) / n };
		};
		try {
			const createMs: number[] = [];
			const createCpu = cpuNow();
			for (let i = 0; i < compareCreates; i++) {
				const t = performance.now();
				await call(session, 'create', { title: `Compare task ${i}`, body: 'Side-by-side bench' });
				createMs.push(performance.now() - t);
			}
			const create = perCall(createCpu, compareCreates);
			const listMs: number[] = [];
			for (let i = 0; i < compareLists; i++) {
				const t = performance.now();
				const out = await call(session, 'list', { limit: compareCreates });
				listMs.push(performance.now() - t);
				if ((out.cards as unknown[]).length !== compareCreates) {
					throw new Error(`Baton list returned ${(out.cards as unknown[]).length} cards, expected ${compareCreates}`);
				}
			}
			// A page of 50, the list's default and what an agent reads: the case the target is set for.
			const pageMs: number[] = [];
			const pageCpu = cpuNow();
			for (let i = 0; i < compareLists * 3; i++) {
				const t = performance.now();
				const out = await call(session, 'list', { limit: 50 });
				pageMs.push(performance.now() - t);
				if ((out.cards as unknown[]).length !== 50) {
					throw new Error(`Baton list returned ${(out.cards as unknown[]).length} cards, expected 50`);
				}
			}
			return {
				create: median(createMs),
				list: median(listMs),
				page50: median(pageMs),
				cpu: { create, page50: perCall(pageCpu, compareLists * 3) },
			};
		} finally {
			await session.close();
		}
	} finally {
		await hub.stop();
	}
}

async function main(): Promise<void> {
	requireBuild();
	const report = new Reporter('mcp');
	const temp = mkdtempSync('/tmp/bt-');
	let hub: HubHandle | undefined;
	try {
		const dataDir = join(temp, 'd');
		console.log(
			`mcp: baton mcp over stdio via @modelcontextprotocol/sdk Client, ${cards} cards, ${pairs} claim+complete pairs`,
		);
		hub = await startHub(dataDir);
		const rpc = await connect(dataDir);
		for (const batch of cardBatches(cards)) {
			await rpc.request('card/create', { cards: batch }, { timeoutMs: 120_000 });
		}
		rpc.close();

		const session = await batonSession(dataDir, 'bench-mcp');
		try {
			// Resident memory of one agent's process (target: ≤ 50 MB), after its first call and below
			// after the claim+complete loop; private is its own memory (anonymous pages), the rest is the
			// node binary's pages, which every agent's process shares.
			await call(session, 'stats', {});
			const rssStart = session.pid === null ? undefined : memoryOf(session.pid);
			const tools = await session.client.listTools();
			const toolsBytes = Buffer.byteLength(JSON.stringify(tools));
			report.add(
				row(
					'tools/list size (JSON of the result)',
					toolsBytes / 1024,
					'KB',
					{ max: 7.5 },
					`${tools.tools.length} tools, ${toolsBytes} bytes`,
				),
			);
			report.section(
				'tools/list (name: description)',
				tools.tools.map(t => `${t.name}: ${t.description ?? ''}`).join('\n'),
			);
			const pairMs: number[] = [];
			const claimMs: number[] = [];
			const warm = Math.floor(pairs / 5);
			let cpuStart = { mcp: 0, hub: 0 };
			for (let i = 0; i < pairs + warm; i++) {
				if (i === warm) {
					cpuStart = { mcp: session.pid === null ? 0 : cpuMsOf(session.pid), hub: cpuMsOf(hub.pid) };
				}
				const t = performance.now();
				const claimed = await call(session, 'claim', {});
				const c = performance.now();
				const lease = claimed.lease as { cardId: string; epoch: number } | null;
				if (lease === null) {
					throw new Error(`nothing to claim after ${i} claims: ${JSON.stringify(claimed)}`);
				}
				await call(session, 'complete', { cardId: lease.cardId, epoch: lease.epoch });
				if (i >= warm) {
					pairMs.push(performance.now() - t);
					claimMs.push(c - t);
				}
			}
			report.add(
				row(
					'MCP claim+complete round trip p50 (stdio → mcp → hub → store)',
					median(pairMs),
					'ms',
					{ max: 3 },
					`${pairs} pairs after ${warm} warm-up`,
				),
			);
			report.add(row('MCP claim+complete round trip p99', percentile(pairMs, 99), 'ms'));
			report.add(row('MCP claim alone p50', median(claimMs), 'ms'));
			if (session.pid !== null) {
				report.add(
					row(
						'baton mcp process CPU per claim+complete',
						(cpuMsOf(session.pid) - cpuStart.mcp) / pairs,
						'ms',
						undefined,
						'user+system; steadier than wall time on a busy machine',
					),
				);
			}
			report.add(row('hub process CPU per MCP claim+complete', (cpuMsOf(hub.pid) - cpuStart.hub) / pairs, 'ms'));
			if (session.pid !== null && rssStart !== undefined) {
				const rssEnd = memoryOf(session.pid);
				report.add(
					row(
						'baton mcp resident memory after its first call',
						rssStart.rss,
						'MB',
						{ max: 50 },
						`${round(rssStart.privateMb)} MB of it private`,
					),
				);
				report.add(
					row(
						`baton mcp resident memory after ${pairs + warm} claim+complete pairs`,
						rssEnd.rss,
						'MB',
						{ max: 50 },
						`${round(rssEnd.privateMb)} MB of it private; peak ${round(rssOf(session.pid).peakMb)} MB`,
					),
				);
			}
		} finally {
			await session.close();
		}

		const warmStarts: { ms: number; cpuMs: number }[] = [];
		for (let i = 0; i < startRepeats; i++) {
			warmStarts.push(await startToFirstResult(dataDir, `bench-start-${i}`));
		}
		report.add(
			row(
				'baton mcp start → first tool result, hub already up',
				median(warmStarts.map(s => s.ms)),
				'ms',
				{ max: 300 },
				`median of ${startRepeats}; spawn, initialize, stats`,
			),
		);
		report.add(
			row(
				'CPU used by baton mcp until that first result',
				median(warmStarts.map(s => s.cpuMs)),
				'ms',
				undefined,
				'user+system of the baton mcp process, median',
			),
		);

		await hub.stop();
		hub = undefined;
		const coldStarts: { ms: number; cpuMs: number }[] = [];
		for (let i = 0; i < noHubRepeats; i++) {
			coldStarts.push(await startToFirstResult(dataDir, `bench-cold-${i}`));
			await stopSpawnedHub(dataDir);
		}
		report.add(
			row(
				`baton mcp start → first tool result, no hub (spawns it; ${cards}-card data dir)`,
				median(coldStarts.map(s => s.ms)),
				'ms',
				{ max: 1500 },
				`median of ${noHubRepeats}`,
			),
		);

		// Baton's own create and list rows are judged whether or not backlog.md is there.
		const ours = await measureBatonCompare(temp);
		report.add(row(`Baton MCP create p50 (${compareCreates} single creates)`, ours.create, 'ms', { max: 3 }));
		report.add(row(`Baton MCP list of ${compareCreates} p50`, ours.list, 'ms'));
		report.add(row('Baton MCP list, a page of 50 p50', ours.page50, 'ms', { max: 3 }, `${compareLists * 3} calls`));
		report.add(
			row(
				'CPU per MCP create: baton mcp / hub',
				ours.cpu.create.mcp,
				'ms',
				undefined,
				`hub ${round(ours.cpu.create.hub)} ms; user+system from /proc`,
			),
		);
		report.add(
			row(
				'CPU per MCP list page of 50: baton mcp / hub',
				ours.cpu.page50.mcp,
				'ms',
				undefined,
				`hub ${round(ours.cpu.page50.hub)} ms`,
			),
		);
		if (ensureBacklogMd()) {
			const theirs = await measureBacklogMd(report, temp);
			report.add(row(`backlog.md MCP task_create p50 (${compareCreates} single creates)`, theirs.create, 'ms'));
			report.add(
				row('create: backlog.md / Baton', theirs.create / ours.create, '×', undefined, 'higher means Baton is faster'),
			);
			report.add(row(`backlog.md MCP task_list of ${compareCreates} p50`, theirs.list, 'ms'));
			report.add(
				row('list: backlog.md / Baton', theirs.list / ours.list, '×', undefined, 'higher means Baton is faster'),
			);
			report.add(row('backlog.md tools/list size', theirs.toolsBytes / 1024, 'KB', undefined, 'context'));
			report.note(
				'backlog.md 1.52.0 runs `backlog mcp start` in a fresh git repo (markdown files on disk); its task_list returns a short text listing while Baton returns the cards as compact JSON (limit = all).',
			);
		} else {
			// backlog.md is not a dependency of Baton (npm ci could not install it everywhere): compare only
			// where someone installed it, and say so instead of failing the whole bench.
			report.note(`backlog.md side by side skipped: ${backlogMdBin} could not be installed from the npm registry.`);
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
