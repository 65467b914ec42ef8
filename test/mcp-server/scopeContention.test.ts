/**
 * Scope contention proof: 16 agents, each its own process (test/helpers/scopeAgent.ts),
 * drain 500 cards of two projects (and some of none) with random, partly overlapping scopes, and
 * sometimes reserve one more path mid-work. On PGlite through one hub; on PostgreSQL through two hubs
 * on one schema (8 agents each), so the advisory lock is what keeps them apart. Checked from the event
 * log afterwards: at no event do two live claims of one project overlap (decided by core/scope.ts's
 * plain pairwise scopesOverlap, not the pruned index the hub uses), claimed and its end alternate per
 * card (0 double claims), and every card ends done.
 * @first 16 agent processes on each store: among the longest files of the MCP suite.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, describe, it } from 'node:test';

import type { BacklogEvent, CreateCardInput } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { checkScope } from '../../core/scope/check';
import type { Scope } from '../../core/scope/read';
import { scopesOverlap } from '../../core/scope/conflicts';
import { uniqueSchema } from '../helpers/backlog';
import {
	type HubProcess,
	client,
	ensureBuilt,
	removeDataDir,
	repoRoot,
	startHub,
	startSharedHubs,
	tempDataDir,
} from '../helpers/hub';
import { prng } from '../helpers/prng';

const cardCount = 500;
const agentCount = 16;
const projects = ['github.com/acme/web', 'github.com/acme/api'];

/** A scope pool where some entries overlap others: folders, files inside them, wide globs, locks. */
const pool = [
	...Array.from({ length: 10 }, (_, i) => `src/m${i}/**`),
	...Array.from({ length: 10 }, (_, i) => `src/m${i}/index.ts`),
	'src/**/*.test.ts',
	'**/*.json',
	'package.json',
	'docs/**',
	'docs/guide.md',
	'src/{m1,m2}/*.ts',
	'lock:db-migrations',
	'lock:release',
];

function plan(seed: number): CreateCardInput[] {
	const random = prng(seed);
	return Array.from({ length: cardCount }, (_, i) => {
		const scope = new Set<string>();
		if (random() < 0.85) {
			const n = 1 + Math.floor(random() * 3);
			for (let k = 0; k < n; k++) {
				scope.add(pool[Math.floor(random() * pool.length)] ?? 'package.json');
			}
		}
		const which = random();
		return {
			id: `s${i}`,
			title: `scoped ${i}`,
			priority: Math.floor(random() * 5),
			...(which < 0.9 ? { project: projects[which < 0.45 ? 0 : 1] } : {}),
			...(scope.size > 0 ? { scope: [...scope] } : {}),
		};
	});
}

function runAgent(dataDir: string, id: string, project: string, seed: number): Promise<Record<string, number>> {
	const child: ChildProcess = spawn(
		process.execPath,
		['--import', 'tsx', 'test/helpers/scopeAgent.ts', dataDir, id, project, String(seed)],
		{ cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
	);
	let out = '';
	let err = '';
	child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
	child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
	return new Promise((resolve, reject) => {
		child.on('exit', code => {
			if (code === 0) {
				resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Record<string, number>);
			} else {
				reject(new Error(`agent ${id} exited ${code}: ${err.slice(-2000)}`));
			}
		});
	});
}

async function allEvents(c: RpcClient): Promise<BacklogEvent[]> {
	const events: BacklogEvent[] = [];
	let afterSeq = 0;
	for (;;) {
		const page = await c.request('events/list', { afterSeq, limit: 1000 });
		events.push(...page.events);
		const last = page.events.at(-1);
		if (last === undefined || last.seq >= page.lastSeq) {
			return events;
		}
		afterSeq = last.seq;
	}
}

/** Replays the log: live claims per project must never overlap; claims and ends alternate per card. */
function checkLog(events: readonly BacklogEvent[]): { claims: number; checks: number; reserves: number } {
	const live = new Map<string, { project: string | null; scope: Scope; epoch: number }>();
	let claims = 0;
	let checks = 0;
	let reserves = 0;
	const parse = (entries: readonly string[]): Scope => checkScope(entries);
	for (const e of events) {
		const card = e.data.card;
		if (card === null) {
			continue;
		}
		const wasLive = live.get(e.cardId);
		if (e.type === 'claimed') {
			assert.equal(wasLive, undefined, `seq ${e.seq}: ${e.cardId} claimed while already held (double claim)`);
			claims++;
		}
		if (card.status !== 'claimed') {
			live.delete(e.cardId);
			continue;
		}
		if (e.type === 'reserved') {
			reserves++;
		}
		if (e.type !== 'claimed' && e.type !== 'reserved') {
			continue;
		}
		const mine = parse([...(card.scope ?? []), ...(card.reserved ?? [])]);
		for (const [other, held] of live) {
			if (other === e.cardId || held.project !== (card.project ?? null)) {
				continue;
			}
			checks++;
			const overlap = scopesOverlap(mine, held.scope);
			assert.equal(
				overlap,
				undefined,
				`seq ${e.seq}: ${e.cardId} (${e.type}) overlaps live ${other} in ${card.project}: ${JSON.stringify(overlap)}`,
			);
		}
		live.set(e.cardId, { project: card.project ?? null, scope: mine, epoch: card.claimEpoch });
	}
	return { claims, checks, reserves };
}

async function drainAndCheck(dirs: readonly string[], label: string): Promise<void> {
	const c = await client(dirs[0] ?? '');
	try {
		const cards = plan(20261125);
		for (let i = 0; i < cards.length; i += 250) {
			await c.request('card/create', { cards: cards.slice(i, i + 250) });
		}
		const t0 = Date.now();
		const results = await Promise.all(
			Array.from({ length: agentCount }, (_, i) =>
				runAgent(dirs[i % dirs.length] ?? '', `agent-${i}`, projects[i % 2] ?? '', 1000 + i),
			),
		);
		const elapsed = Date.now() - t0;
		const events = await allEvents(c);
		const { claims, checks, reserves } = checkLog(events);
		const done = (await c.request('card/stats', {})).counts.done;
		const sum = (key: string): number => results.reduce((n, r) => n + (r[key] ?? 0), 0);
		console.log(
			`${label}: ${agentCount} agents drained ${done}/${cardCount} scoped cards in ${elapsed} ms; ${claims} claims, ` +
				`${checks} live-pair checks, ${reserves} reserves granted (${sum('reserveRefused')} paths refused), ` +
				`${sum('emptyClaims')} empty claims, ${sum('lost')} leases lost`,
		);
		assert.equal(done, cardCount, 'every card ends done');
		assert.equal(sum('completed') + sum('lost'), claims, 'each claim completed or lost its lease');
		assert.ok(checks > 1000, `the log had real concurrency to check (${checks} live pairs)`);
		assert.ok(reserves > 0, 'agents reserved paths mid-work');
	} finally {
		c.close();
	}
}

describe('16 agents (processes) drain 500 scoped cards', () => {
	const stops: (() => Promise<void>)[] = [];
	after(async () => {
		for (const stop of stops.reverse()) {
			await stop();
		}
	});

	it('on PGlite: no two live claims of a project ever overlap', { timeout: 240_000 }, async () => {
		ensureBuilt();
		const dataDir = tempDataDir();
		const hub: HubProcess = await startHub({ dataDir });
		stops.push(async () => {
			await hub.stop();
			removeDataDir(dataDir);
		});
		await drainAndCheck([dataDir], 'PGlite, 1 hub');
	});

	it('on PostgreSQL with two hubs: the same, across hubs', { timeout: 240_000 }, async () => {
		ensureBuilt();
		const shared = await startSharedHubs(2, uniqueSchema());
		stops.push(() => shared.stop());
		await drainAndCheck(shared.dirs, 'PostgreSQL, 2 hubs');
	});
});
