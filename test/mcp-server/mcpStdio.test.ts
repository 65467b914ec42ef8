/**
 * `baton mcp` end to end, as an agent's client runs it: the real MCP SDK Client over
 * StdioClientTransport spawning the built dist/baton.js against a temp data dir with a real hub.
 * Every tool's happy path; every class of bad input refused with isError naming the field and
 * changing nothing (stats and the event log compared); leases fenced by epoch; claims released when
 * an agent's stdin closes; liveness pings; no listening socket (RELIABILITY 25-27, 29).
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { connectHub } from '../../core/client/connectHub';
import { collectExport } from '../../core/formats/export';
import type { RpcClient } from '../../core/protocol/rpc';
import {
	type Agent,
	cleanupDataDir,
	ensureBuilt,
	listeningSockets,
	runBaton,
	startAgent,
	tempDataDir,
	textOf,
	waitFor,
} from '../helpers/mcp';

interface CardJson {
	id: string;
	title: string;
	status: string;
	dependsOn?: string[];
	unmetDeps?: number;
	claimOwner?: string;
	claimEpoch?: number;
	progress?: number;
	progressNote?: string;
	result?: string;
	attempts?: number;
	requires?: string[];
}
interface LeaseJson {
	cardId: string;
	epoch: number;
	expiresAt: string;
}
interface ClaimJson {
	card: CardJson | null;
	lease: LeaseJson | null;
	reason?: string;
}
interface StatsJson {
	counts: Record<string, number>;
	total: number;
	claimable: number;
	waiting: number;
	lastSeq: number;
}

let dataDir: string;
let alpha: Agent;
let observer: RpcClient | undefined;
/** lastSeenAt of the `idle` agent right after it connected (ms). */
let idleSeenAt = 0;
const agents: Agent[] = [];

async function agent(args: string[], clientName?: string): Promise<Agent> {
	const a = await startAgent(dataDir, { args, ...(clientName === undefined ? {} : { clientName }) });
	agents.push(a);
	return a;
}

/**
 * What "changes nothing" compares: every card as stored (the lossless export) plus the event log's
 * last seq, read over a plain hub connection of its own.
 */
async function snapshot(): Promise<{ cards: unknown; lastSeq: number }> {
	const hub = observer!;
	const cards = await collectExport(cursor => hub.request('data/export', cursor === undefined ? {} : { cursor }));
	const { lastSeq } = await hub.request('events/list', { limit: 1 });
	return {
		// The liveness pings renew leases in the background; the lease clock is not a change.
		cards: cards.map(({ leaseExpiresAt: _l, ...rest }) => rest).sort((a, b) => a.id.localeCompare(b.id)),
		lastSeq,
	};
}

before(async () => {
	ensureBuilt();
	dataDir = tempDataDir();
	alpha = await agent(['--agent', 'alpha']);
	// The first tool call brings the hub up (the MCP server spawns it); then the observer attaches.
	await alpha.json('stats');
	observer = await connectHub({ dataDir, client: 'test', spawnHub: false });
	// An agent that never calls a tool: only its liveness pings can move its lastSeenAt.
	await agent(['--agent', 'idle']);
	await waitFor(
		async () => {
			const { agents: list } = await observer!.request('agent/list', {});
			const idle = list.find(a => a.id === 'idle');
			idleSeenAt = idle === undefined ? 0 : Date.parse(idle.lastSeenAt);
			return idleSeenAt > 0;
		},
		10_000,
		'the idle agent to register',
	);
});

after(async () => {
	observer?.close();
	await Promise.all(agents.map(a => a.close().catch(() => undefined)));
	await cleanupDataDir(dataDir);
});

describe('baton mcp over stdio: happy paths', () => {
	it('create: one card from its fields, compact (no null or empty fields)', async () => {
		const r = await alpha.json<{ cards: CardJson[] }>('create', {
			id: 'A1',
			title: 'First card',
			phase: 'p1',
			priority: 5,
		});
		assert.equal(r.cards.length, 1);
		const card = r.cards[0]!;
		assert.equal(card.id, 'A1');
		assert.equal(card.status, 'ready');
		for (const [k, v] of Object.entries(card)) {
			assert.ok(v !== null && v !== '' && !(Array.isArray(v) && v.length === 0), `${k} is compacted away`);
		}
		assert.equal('claimOwner' in card, false);
	});

	it('create: a plan with {cards}, dependencies on earlier ids', async () => {
		const r = await alpha.json<{ cards: CardJson[] }>('create', {
			cards: [
				{ id: 'B1', title: 'Base', phase: 'p2' },
				{ id: 'B2', title: 'On top', phase: 'p2', dependsOn: ['B1'] },
			],
		});
		assert.deepEqual(
			r.cards.map(c => c.id),
			['B1', 'B2'],
		);
		assert.deepEqual(r.cards[1]!.dependsOn, ['B1']);
		assert.equal(r.cards[1]!.unmetDeps, 1);
	});

	it('list: by status, readyOnly, and page by page', async () => {
		const ready = await alpha.json<{ cards: CardJson[] }>('list', { status: 'ready' });
		assert.deepEqual(ready.cards.map(c => c.id).sort(), ['A1', 'B1', 'B2']);
		const claimable = await alpha.json<{ cards: CardJson[] }>('list', { readyOnly: true });
		assert.deepEqual(claimable.cards.map(c => c.id).sort(), ['A1', 'B1']);
		const phase = await alpha.json<{ cards: CardJson[] }>('list', { phase: 'p2' });
		assert.deepEqual(phase.cards.map(c => c.id).sort(), ['B1', 'B2']);
		const seen: string[] = [];
		let cursor: string | undefined;
		do {
			const page: { cards: CardJson[]; nextCursor?: string } = await alpha.json('list', {
				limit: 2,
				...(cursor === undefined ? {} : { cursor }),
			});
			assert.ok(page.cards.length <= 2);
			seen.push(...page.cards.map(c => c.id));
			cursor = page.nextCursor;
		} while (cursor !== undefined);
		assert.deepEqual(seen.sort(), ['A1', 'B1', 'B2']);
	});

	it('list: each card is its light row, compact; show has the whole card', async () => {
		await alpha.json('create', {
			id: 'R1',
			title: 'Row card',
			body: 'A body agents read with show, not with list.',
			acceptance: ['It works'],
			phase: 'p3',
			priority: 7,
			labels: ['ui'],
			dependsOn: ['B2'],
			requires: ['browser'],
		});
		try {
			const page = await alpha.json<{ cards: Record<string, unknown>[]; waitsOn?: Record<string, string[]> }>('list', {
				phase: 'p3',
			});
			assert.deepEqual(page.cards, [
				{
					id: 'R1',
					title: 'Row card',
					status: 'ready',
					state: 'waiting',
					priority: 7,
					phase: 'p3',
					requires: ['browser'],
					dependsOn: ['B2'],
					labels: ['ui'],
				},
			]);
			assert.deepEqual(page.waitsOn, { R1: ['B2'] });
			const shown = await alpha.json<{ card: Record<string, unknown> }>('show', { cardId: 'R1' });
			assert.equal(shown.card.body, 'A body agents read with show, not with list.');
			assert.deepEqual(shown.card.acceptance, ['It works']);
		} finally {
			await observer!.request('card/delete', { cardId: 'R1' });
		}
	});

	it('list: text finds cards by a phrase of the title or the body, in any case', async () => {
		await alpha.json('create', {
			cards: [
				{ id: 'T1', title: 'Fix the Login redirect', body: 'After sign-in the user lands on /home.' },
				{ id: 'T2', title: 'Session cookie', body: 'The OAuth callback drops the state parameter.' },
			],
		});
		try {
			const byTitle = await alpha.json<{ cards: CardJson[] }>('list', { text: 'login REDIRECT' });
			assert.deepEqual(
				byTitle.cards.map(c => c.id),
				['T1'],
			);
			const byBody = await alpha.json<{ cards: CardJson[] }>('list', { text: 'oauth callback' });
			assert.deepEqual(
				byBody.cards.map(c => c.id),
				['T2'],
			);
			const none = await alpha.json<{ cards: CardJson[] }>('list', { text: 'no card says this' });
			assert.deepEqual(none.cards, []);
		} finally {
			// The later cases count the ready cards.
			for (const cardId of ['T1', 'T2']) {
				await observer!.request('card/delete', { cardId });
			}
		}
	});

	it('link and unlink: dependency edges', async () => {
		const linked = await alpha.json<{ card: CardJson }>('link', { cardId: 'A1', dependsOn: 'B1' });
		assert.deepEqual(linked.card.dependsOn, ['B1']);
		const unlinked = await alpha.json<{ card: CardJson }>('unlink', { cardId: 'A1', dependsOn: ['B1'] });
		assert.equal(unlinked.card.dependsOn, undefined, 'an empty dependsOn is compacted away');
	});

	it('stats: counts', async () => {
		const s = await alpha.json<StatsJson>('stats');
		assert.equal(s.counts.ready, 3);
		assert.equal(s.total, 3);
		assert.equal(s.claimable, 2);
		assert.equal(s.waiting, 1);
	});

	it('claim -> heartbeat -> show -> complete, with the epoch remembered by the session', async () => {
		const c = await alpha.json<ClaimJson>('claim', { cardId: 'A1' });
		assert.equal(c.card?.id, 'A1');
		assert.equal(c.card.claimOwner, 'alpha');
		assert.equal(c.lease?.cardId, 'A1');
		const hb = await alpha.json<{ lease: LeaseJson }>('heartbeat', { cardId: 'A1', progress: 40, note: 'half way' });
		assert.equal(hb.lease.epoch, c.lease.epoch);
		const shown = await alpha.json<{
			card: CardJson;
			dependencies: unknown[];
			dependents: unknown[];
			history: { type: string; card?: unknown }[];
			attempts: unknown[];
		}>('show', { cardId: 'A1' });
		assert.equal(shown.card.progress, 40);
		assert.equal(shown.card.progressNote, 'half way');
		assert.deepEqual(
			shown.history.map(h => h.type),
			['created', 'linked', 'unlinked', 'claimed', 'heartbeat'],
		);
		assert.ok(
			shown.history.every(h => !('card' in h)),
			'history omits the card snapshots',
		);
		const done = await alpha.json<{ card: CardJson; unblocked: string[] }>('complete', {
			cardId: 'A1',
			result: 'shipped in abc123',
		});
		assert.equal(done.card.status, 'done');
		assert.equal(done.card.result, 'shipped in abc123');
		assert.deepEqual(done.unblocked, []);
	});

	it('claim picks the best ready card; release and fail hand it back', async () => {
		const c = await alpha.json<ClaimJson>('claim', {});
		assert.equal(c.card?.id, 'B1', 'B2 waits on B1');
		const released = await alpha.json<{ card: CardJson }>('release', { cardId: 'B1', reason: 'later' });
		assert.equal(released.card.status, 'ready');
		await alpha.json<ClaimJson>('claim', { cardId: 'B1' });
		const failed = await alpha.json<{ card: CardJson }>('fail', {
			cardId: 'B1',
			reason: 'tests broke',
			backoffSeconds: 0,
		});
		assert.equal(failed.card.status, 'ready');
		assert.equal(failed.card.attempts, 1, 'the release gave its attempt back; the failure used one');
		const again = await alpha.json<ClaimJson>('claim', { cardId: 'B1' });
		const done = await alpha.json<{ unblocked: string[] }>('complete', { cardId: 'B1' });
		assert.deepEqual(done.unblocked, ['B2']);
		assert.ok(again.lease !== null);
	});

	it('claim with nothing claimable returns card null and a reason', async () => {
		const c = await alpha.json<ClaimJson>('claim', { phase: 'nowhere' });
		assert.equal(c.card, null);
		assert.equal(c.lease, null);
		assert.equal(typeof c.reason, 'string');
	});

	it('claim waitSeconds is woken by a new card, not by the timeout', async () => {
		const waiter = await agent(['--agent', 'waiter']);
		const t0 = Date.now();
		const pending = waiter.json<ClaimJson>('claim', { phase: 'later', waitSeconds: 20 });
		await new Promise(r => setTimeout(r, 300));
		await alpha.json('create', { id: 'L1', title: 'Arrives later', phase: 'later' });
		const c = await pending;
		const waited = Date.now() - t0;
		console.log(`claim waitSeconds woke after ${waited} ms`);
		assert.equal(c.card?.id, 'L1');
		assert.ok(waited < 5_000, `woke after ${waited} ms`);
		await waiter.json('complete', { cardId: 'L1' });
	});

	it('a waiting claim the client cancels leaves no card held', async () => {
		const canceller = await agent(['--agent', 'canceller']);
		const controller = new AbortController();
		const pending = canceller.client
			.callTool({ name: 'claim', arguments: { phase: 'cancel', waitSeconds: 20 } }, undefined, {
				signal: controller.signal,
			})
			.catch((e: unknown) => e);
		await new Promise(r => setTimeout(r, 500));
		controller.abort('user pressed Esc');
		assert.ok((await pending) instanceof Error, 'the client sees its own cancellation');
		await alpha.json('create', { id: 'X1', title: 'Nobody asked for this yet', phase: 'cancel' });
		await waitFor(
			async () => {
				const { card } = await alpha.json<{ card: CardJson }>('show', { cardId: 'X1' });
				return card.status === 'ready' && card.claimOwner === undefined;
			},
			5_000,
			'X1 to be ready and unowned',
		);
		const history = await alpha.json<{ history: { type: string; reason?: string }[] }>('show', { cardId: 'X1' });
		console.log(`X1 history after the cancelled claim: ${history.history.map(h => h.type).join(', ')}`);
		await alpha.json('claim', { cardId: 'X1' });
		await alpha.json('complete', { cardId: 'X1' });
	});

	it('advertises capabilities from --capabilities on claim', async () => {
		await alpha.json('create', { id: 'T1', title: 'Needs TypeScript', phase: 'caps', requires: ['lang:ts'] });
		const plain = await alpha.json<ClaimJson>('claim', { phase: 'caps' });
		assert.equal(plain.card, null, 'alpha has no lang:ts');
		const ts = await agent(['--agent', 'ts-agent', '--capabilities', 'lang:ts,repo:web']);
		const c = await ts.json<ClaimJson>('claim', { phase: 'caps' });
		assert.equal(c.card?.id, 'T1');
		await ts.json('complete', { cardId: 'T1' });
	});

	it('names the agent after the MCP client plus a session id when no --agent is given', async () => {
		const anon = await agent([], 'Test Client');
		await alpha.json('create', { id: 'N1', title: 'Anonymous work', phase: 'anon' });
		const c = await anon.json<ClaimJson>('claim', { phase: 'anon' });
		assert.match(c.card?.claimOwner ?? '', /^test-client-[0-9a-f]{6}$/);
		await anon.json('complete', { cardId: 'N1' });
	});

	it('releases the claims of an agent whose stdin closes, at once', async () => {
		const quitter = await agent(['--agent', 'quitter']);
		await alpha.json('create', { id: 'Q1', title: 'Dropped', phase: 'quit' });
		const c = await quitter.json<ClaimJson>('claim', { cardId: 'Q1' });
		assert.equal(c.card?.status, 'claimed');
		const t0 = Date.now();
		await quitter.close();
		await waitFor(
			async () => (await alpha.json<{ card: CardJson }>('show', { cardId: 'Q1' })).card.status === 'ready',
			2_000,
			'Q1 back to ready',
		);
		console.log(`stdin closed -> card ready in ${Date.now() - t0} ms`);
	});

	it('opens no listening socket (RELIABILITY 29)', () => {
		assert.deepEqual(listeningSockets(alpha.pid), []);
	});
});

describe('baton mcp over stdio: refusals change nothing', () => {
	before(async () => {
		await alpha.json('create', {
			cards: [
				{ id: 'R1', title: 'Refusal base', phase: 'refuse' },
				{ id: 'R2', title: 'Refusal top', phase: 'refuse', dependsOn: ['R1'] },
				{ id: 'R3', title: 'Held by alpha', phase: 'refuse-held' },
			],
		});
		await alpha.json('claim', { cardId: 'R3' });
	});

	const cases: [string, string, Record<string, unknown>, RegExp][] = [
		['missing', 'show', {}, /cardId/],
		['missing', 'fail', { cardId: 'R3' }, /reason/],
		['wrong type', 'claim', { waitSeconds: 'soon' }, /waitSeconds/],
		['wrong type', 'create', { title: 42 }, /title/],
		['enum', 'list', { status: 'doing' }, /status/],
		['unknown key', 'claim', { card_id: 'R1' }, /card_id/],
		['unknown key', 'create', { title: 'x', owner: 'me' }, /owner/],
		['too long', 'create', { title: 'x'.repeat(201) }, /title/],
		['too long', 'create', { cards: [{ title: 'ok' }, { title: 'b', body: 'x'.repeat(70_000) }] }, /cards\.1\.body/],
		['too long', 'heartbeat', { cardId: 'R3', note: 'n'.repeat(1001) }, /note/],
		['unknown id', 'show', { cardId: 'NOPE' }, /not_found: .*NOPE/],
		['unknown id', 'link', { cardId: 'R1', dependsOn: 'NOPE' }, /not_found: .*NOPE/],
		['unknown id', 'complete', { cardId: 'NOPE' }, /not_found: .*NOPE/],
		['unknown dependency in a plan', 'create', { cards: [{ id: 'R9', title: 'x', dependsOn: ['NOPE'] }] }, /NOPE/],
		['cycle', 'link', { cardId: 'R1', dependsOn: 'R2' }, /cycle: .*R1.*R2/],
		['wrong epoch', 'heartbeat', { cardId: 'R3', epoch: 999 }, /lease_lost: /],
		['wrong epoch', 'complete', { cardId: 'R3', epoch: 999 }, /lease_lost: /],
		['not the holder', 'complete', { cardId: 'R1' }, /R1/],
	];
	for (const [kind, tool, args, message] of cases) {
		it(`${kind}: ${tool} is refused with isError naming the problem, and nothing changes`, async () => {
			const beforeState = await snapshot();
			const result = await alpha.call(tool, args);
			assert.equal(result.isError, true, JSON.stringify(result));
			assert.equal(result.structuredContent, undefined);
			const text = textOf(result);
			assert.match(text, message);
			assert.doesNotMatch(text, /\/tmp\/|\/work\/|\bat \S+ \(|SELECT|INSERT|UPDATE /);
			assert.deepEqual(await snapshot(), beforeState);
		});
	}

	it('fences a reclaimed lease: the old holder gets lease_lost with a next step', async () => {
		const r = await runBaton(['reclaim', 'R3', '--reason', 'taking over', '--json'], { dataDir });
		assert.equal(r.code, 0, r.stderr);
		const beforeState = await snapshot();
		for (const tool of ['heartbeat', 'complete']) {
			const result = await alpha.call(tool, { cardId: 'R3' });
			assert.equal(result.isError, true);
			assert.match(textOf(result), /^lease_lost: .*claim/);
		}
		assert.deepEqual(await snapshot(), beforeState);
	});
});

describe('baton mcp liveness', () => {
	it('pings the hub about every 10 s while the session is open, with no tool calls', async () => {
		// `idle` connected in before() and has made no call since; by now the suite has run for a while.
		const lastSeen = async (): Promise<number> => {
			const { agents: list } = await observer!.request('agent/list', {});
			const idle = list.find(a => a.id === 'idle');
			return idle === undefined ? 0 : Date.parse(idle.lastSeenAt);
		};
		await waitFor(async () => (await lastSeen()) > idleSeenAt, 12_000, "idle's lastSeenAt to advance");
		console.log(`idle agent pinged ${((await lastSeen()) - idleSeenAt) / 1000} s after it connected`);
	});
});

describe('baton mcp over stdio: what agents never see', () => {
	it('a hub it cannot use is reported without paths (RELIABILITY 27)', async () => {
		const otherDir = tempDataDir();
		// A hub.json announcing another protocol: the client refuses before connecting, and its
		// message names the data dir, which must not reach the agent.
		writeFileSync(join(otherDir, 'hub.json'), JSON.stringify({ pid: 1, port: 1, protocol: 999 }));
		const stranded = await startAgent(otherDir, { args: ['--agent', 'stranded'] });
		try {
			const result = await stranded.call('stats');
			assert.equal(result.isError, true);
			const text = textOf(result);
			assert.match(text, /^protocol_mismatch: The running Baton hub is a different version/);
			assert.ok(!text.includes(otherDir), text);
			assert.match(stranded.stderr(), /protocol 999/, 'the details go to stderr for the user');
		} finally {
			await stranded.close();
			rmSync(otherDir, { recursive: true, force: true });
		}
	});

	it('an unknown tool is an isError result with SDK 1.32.2 (RELIABILITY 26)', async () => {
		const result = await alpha.call('deploy', {});
		assert.equal(result.isError, true);
		assert.match(textOf(result), /Tool deploy not found/);
	});
});
