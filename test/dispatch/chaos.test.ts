/**
 * The dispatch chaos proof: 200 cards of one repository (worktrees on) on 8 seats of
 * `baton run`, started as users start it, with the fake agent CLI (test/fixtures/fakeAgent.mjs: a real
 * MCP SDK client to the `baton mcp` of {mcpConfig}) acting by its card's title: most complete, some
 * crash, hang past --max-seconds, exit without completing, fail, or are rate-limited once. Meanwhile a
 * seeded chaos loop pauses and resumes (all, the project, a card, the kind), and kills the supervisor
 * with SIGKILL and starts it again. Then, from the hub's event log alone: the seats were never exceeded,
 * no claim was granted while a pause covering it was in effect (pause/set returned = its event
 * committed), no card was held twice, every card ended done or failed with a reason, and every crash's
 * edits are in a WIP snapshot of the card. Seed: BATON_CHAOS_SEED (printed).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { findGitRepo } from '../../core/client/gitRepo';
import type { BacklogEvent, Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { type HubProcess, client, sleep, startHub } from '../helpers/hub';
import { type BatonRun, endBatonRun, killReportedAgents, startBatonRun } from '../helpers/batonRun';
import { cleanupDataDir, ensureBuilt } from '../helpers/mcp';
import { prng } from '../helpers/prng';
import { gitOut, makeRepo, type TestRepo } from '../helpers/workspaceRepo';

/** BATON_CHAOS_CARDS and BATON_CHAOS_CALM=1 (no kills, no pauses) are for looking into a failure. */
const cards = Number(process.env.BATON_CHAOS_CARDS ?? 200);
const calm = process.env.BATON_CHAOS_CALM === '1';
const seats = 8;
const maxSeconds = 15;
const seed = Number(process.env.BATON_CHAOS_SEED ?? 30_2026);
const fakeAgent = path.resolve(import.meta.dirname, '..', 'fixtures', 'fakeAgent.mjs');
// Run: npm run build && npm run test:chaos (not part of `npm test`: its wall time is minutes of waited-out
// budgets and leases, docs/decisions/0126-dispatch-tests.md).

/** The title words the fake agent acts on, and how many cards get each (the rest complete). */
const mix: [string, number][] = [
	['crash', 20],
	['hang', 4],
	['noexit', 12],
	['fail', 10],
	['ratelimit-once', 12],
];
const failing = new Set(['crash', 'hang', 'noexit', 'fail']);

let base: string;
let dataDir: string;
let repo: TestRepo;
let admin: RpcClient;
let hub: HubProcess;
let project: string;

function startSupervisor(): BatonRun {
	return startBatonRun({
		dataDir,
		cwd: repo.root,
		env: { FAKE_AGENT_STATE_DIR: base, FAKE_AGENT_WORK_MS: '100' },
		args: [
			'--kind',
			'fake',
			'--command',
			`${process.execPath} ${fakeAgent} {mcpConfig}`,
			'--seats',
			String(seats),
			'--project',
			project,
			'--max-seconds',
			String(maxSeconds),
			'--cooldown-seconds',
			'1',
			'--stop-grace-seconds',
			'1',
		],
	});
}

async function allEvents(): Promise<BacklogEvent[]> {
	const events: BacklogEvent[] = [];
	let afterSeq = 0;
	for (;;) {
		const page = await admin.request('events/list', { afterSeq, limit: 1000 });
		events.push(...page.events);
		if (page.events.length === 0 || page.lastSeq <= afterSeq) {
			return events;
		}
		afterSeq = page.events[page.events.length - 1]?.seq ?? page.lastSeq;
		if (afterSeq >= page.lastSeq) {
			return events;
		}
	}
}

async function projectCards(): Promise<Card[]> {
	const r = await admin.request('card/list', { project, limit: 1000 });
	return r.cards;
}

function ended(c: Card): boolean {
	return c.status === 'done' || (c.status === 'blocked' && c.failed === true);
}

before(async () => {
	ensureBuilt();
	base = mkdtempSync('/tmp/bt-chaos-');
	dataDir = path.join(base, 'd');
	repo = makeRepo({ 'README.md': '# chaos\n' });
	// PGlite (one writer: the event log's order is the commit order).
	hub = await startHub({ dataDir });
	admin = await client(dataDir, { agent: { id: 'chaos' }, requestTimeoutMs: 60_000 });
	project = (await findGitRepo(repo.root))?.project ?? '';
	await admin.request('project/settings/update', { project, worktrees: true });
	const rand = prng(seed);
	const words: string[] = [];
	for (const [word, n] of mix) {
		words.push(...Array.from({ length: Math.round((n * cards) / 200) }, () => word));
	}
	while (words.length < cards) {
		words.push('complete');
	}
	// Shuffled, so every kind of agent runs all through the chaos.
	for (let i = words.length - 1; i > 0; i--) {
		const j = Math.floor(rand() * (i + 1));
		[words[i], words[j]] = [words[j]!, words[i]!];
	}
	await admin.request('card/create', {
		cards: words.map((w, i) => ({
			title: `Chaos ${i + 1} ${w} ${20 + Math.floor(rand() * 300)}ms`,
			project,
			backoffSeconds: 0,
			...(failing.has(w) ? { maxAttempts: 1 } : {}),
		})),
	});
});

after(async () => {
	killReportedAgents();
	admin.close();
	await hub.stop();
	await cleanupDataDir(dataDir);
	repo.cleanup();
	rmSync(base, { recursive: true, force: true });
});

describe(`${cards} cards on ${seats} seats with pauses, resumes and supervisor kill -9`, () => {
	it('never exceeds the seats, never claims under a pause, never holds a card twice, ends every card, keeps every crash', async () => {
		console.log(`# chaos seed ${seed} (BATON_CHAOS_SEED)`);
		const rand = prng(seed + 1);
		const started = performance.now();
		let supervisor = startSupervisor();
		let kills = 0;
		let pauses = 0;
		const deadline = Date.now() + 600_000;
		const cardIds = (await projectCards()).map(c => c.id);
		while (Date.now() < deadline) {
			const open = (await projectCards()).filter(c => !ended(c)).length;
			if (open === 0) {
				break;
			}
			await sleep(300 + Math.floor(rand() * 900));
			const roll = rand();
			if (calm) {
				// Only the supervisor's own pauses are cleared below.
			} else if (roll < 0.12 && kills < 6) {
				kills++;
				supervisor.proc.kill('SIGKILL');
				await supervisor.exited;
				await sleep(Math.floor(rand() * 800));
				supervisor = startSupervisor();
			} else if (roll < 0.4 && pauses < 25) {
				pauses++;
				const which = rand();
				const target =
					which < 0.25
						? { scope: 'all' as const }
						: which < 0.5
							? { scope: 'project' as const, target: project }
							: which < 0.75
								? { scope: 'kind' as const, target: 'fake' }
								: { scope: 'card' as const, target: cardIds[Math.floor(rand() * cardIds.length)] ?? '' };
				await admin.request('pause/set', { ...target, reason: 'chaos' });
				await sleep(100 + Math.floor(rand() * 600));
				await admin.request('pause/clear', target.scope === 'all' ? { scope: 'all' } : target);
			}
			// What the supervisor paused itself (three failures of the kind in a row, a rate limit) is
			// resumed as a person would, so the backlog drains.
			const { pauses: now } = await admin.request('pause/list', {});
			if (now.some(p => p.reason !== 'chaos')) {
				await admin.request('pause/clear', { all: true });
			}
		}
		await admin.request('pause/clear', { all: true });
		const wallSeconds = (performance.now() - started) / 1000;
		await endBatonRun(supervisor, 20_000);

		const final = await projectCards();
		const events = await allEvents();
		console.log(
			`# ${final.length} cards ended in ${wallSeconds.toFixed(1)} s; ${kills} supervisor kills, ${pauses} chaos pauses, ${events.length} events`,
		);

		// 1. Every card ended: done, or failed with a reason.
		const notEnded = final.filter(c => !ended(c));
		assert.deepEqual(
			notEnded.map(c => `${c.id} ${c.status}`),
			[],
			'every card ends done or failed',
		);
		for (const c of final.filter(x => x.status === 'blocked')) {
			assert.ok((c.blockedReason ?? '').trim() !== '', `${c.id} failed without a reason`);
		}
		const byWord = (w: string) => final.filter(c => c.title.includes(` ${w} `));
		const undone = (w: string) =>
			byWord(w)
				.filter(c => c.status !== 'done')
				.map(c => `${c.id} ${c.status}: ${c.blockedReason ?? ''}`);
		assert.deepEqual(undone('complete'), [], 'every complete card is done');
		assert.deepEqual(undone('ratelimit-once'), [], 'a rate-limited card is retried without using its attempt');

		// 2-4. Replay the log in commit order: holds, seats and pauses.
		const held = new Map<string, number>();
		const active = new Map<string, { scope: string; target: string | null }>();
		let maxHeld = 0;
		let peak: string[] = [];
		const claimedBy = new Map<string, string>();
		const ends = new Set(['completed', 'review_requested', 'failed', 'released', 'reclaimed', 'blocked', 'deleted']);
		const violations: string[] = [];
		for (const e of events) {
			const data = e.data as Record<string, unknown>;
			if (e.type === 'paused') {
				const p = data.pause as { scope: string; target: string | null };
				active.set(`${p.scope}:${p.target ?? ''}`, p);
			} else if (e.type === 'resumed') {
				for (const p of data.pauses as { scope: string; target: string | null }[]) {
					active.delete(`${p.scope}:${p.target ?? ''}`);
				}
			} else if (e.type === 'claimed') {
				const card = data.card as Card & { dispatch?: { kind: string; seat: number } | null };
				claimedBy.set(e.cardId, `${e.actor}, seat ${card.dispatch?.seat ?? 'none'}`);
				if (held.has(e.cardId)) {
					violations.push(`${e.cardId} claimed at seq ${e.seq} while held since seq ${held.get(e.cardId)}`);
				}
				held.set(e.cardId, e.seq);
				if (held.size > maxHeld) {
					maxHeld = held.size;
					peak = [...held].map(([id, seq]) => `${id} since seq ${seq} (${claimedBy.get(id) ?? '?'})`);
				}
				for (const p of active.values()) {
					const covers =
						p.scope === 'all' ||
						(p.scope === 'project' && p.target === card.project) ||
						(p.scope === 'card' && p.target === e.cardId) ||
						(p.scope === 'phase' && p.target === card.phase) ||
						(p.scope === 'kind' && p.target === card.dispatch?.kind);
					if (covers) {
						violations.push(`${e.cardId} claimed at seq ${e.seq} under the pause ${p.scope} ${p.target ?? ''}`);
					}
				}
			} else if (ends.has(e.type)) {
				held.delete(e.cardId);
			}
		}
		console.log(`# most cards held at once: ${maxHeld} of ${seats} seats`);
		assert.deepEqual(violations, [], 'no card held twice, no claim under a pause');
		assert.ok(maxHeld >= Math.min(seats, 4), `the seats were used (at most ${maxHeld} at once)`);

		// 5. Every crash's edits are recoverable: a WIP snapshot of its card holds the file it wrote.
		const crashed = byWord('crash');
		assert.equal(crashed.length, Math.round((20 * cards) / 200));
		const refs = gitOut(repo.root, 'for-each-ref', '--format=%(refname)', 'refs/baton/wip/')
			.split('\n')
			.filter(Boolean);
		// Only a crash that happened has edits to recover: the seat's log (every attempt's output) says
		// "crashing now" after the agent wrote its file; an attempt stopped before that (--max-seconds on a
		// slow start under load, a pause with stop) edited nothing.
		const reached = crashed.filter(c => {
			try {
				return readFileSync(path.join(dataDir, 'runs', 'default', `${c.id}.log`), 'utf8').includes('crashing now');
			} catch {
				return false;
			}
		});
		console.log(`# ${reached.length} of ${crashed.length} crash cards crashed after editing`);
		assert.ok(reached.length >= crashed.length / 2, `only ${reached.length} of ${crashed.length} crash cards crashed`);
		for (const c of reached) {
			const ofCard = refs.filter(r => r.startsWith(`refs/baton/wip/${c.id}/`));
			assert.ok(ofCard.length > 0, `no WIP snapshot of the crashed ${c.id}`);
			const kept = ofCard.some(r => {
				try {
					return gitOut(repo.root, 'show', `${r}:fake-${c.id}.txt`).includes(`work on ${c.id}`);
				} catch {
					return false;
				}
			});
			assert.ok(kept, `the WIP snapshot of ${c.id} lacks fake-${c.id}.txt`);
		}
		// Last, so a run reports every other check first.
		assert.ok(
			maxHeld <= seats,
			`${maxHeld} cards held at once on ${seats} seats:\n${peak.join('\n')}\nlast events of those cards:\n${events
				.filter(e => peak.some(p => p.startsWith(`${e.cardId} `)))
				.slice(-60)
				.map(e => `${e.seq} ${e.cardId} ${e.type} ${e.actor}`)
				.join('\n')}`,
		);
	});
});
