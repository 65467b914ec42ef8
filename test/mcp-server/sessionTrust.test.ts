/**
 * Sessions and who may act on a lease, through the real hub and the real faces: sessions opened and closed leave the
 * agents list and the health counts (`--all` still shows them); a second `baton mcp` session under the
 * same agent id cannot heartbeat, complete, release or fail the first one's card (the real MCP SDK
 * client over stdio); `baton approve` / `reject` run inside a coding agent (an environment marker, or
 * a parent process named like an agent CLI) are refused with exit 1 and change nothing, while the same
 * command from a person's terminal works; the hub itself treats a connection that says it runs inside
 * an agent as no human (no approval of a human's review, no force).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { BatonError } from '../../core/errors';
import type { Agent as AgentRow, Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { client, waitFor } from '../helpers/hub';
import {
	type Agent,
	batonJs,
	childEnv,
	cleanupDataDir,
	ensureBuilt,
	neutralCwd,
	runCliHere,
	startAgent,
	tempDataDir,
	textOf,
} from '../helpers/mcp';

let dataDir: string;
const agents: Agent[] = [];

/** The CLI in process (runCliHere); the one run under a parent named like an agent CLI is a real child. */
function baton(args: string[], env: Record<string, string> = {}): ReturnType<typeof runCliHere> {
	return runCliHere(args, { dataDir, env: { BATON_AGENT: 'vscode:alice', ...env } });
}

async function json<T>(args: string[]): Promise<T> {
	const r = await baton([...args, '--json']);
	assert.equal(r.code, 0, `baton ${args.join(' ')} exited ${r.code}: ${r.stdout} ${r.stderr}`);
	return JSON.parse(r.stdout) as T;
}

const show = async (id: string): Promise<Card> => (await json<{ card: Card }>(['show', id])).card;

async function agent(id: string): Promise<Agent> {
	const a = await startAgent(dataDir, { env: { BATON_AGENT: id } });
	agents.push(a);
	return a;
}

/** A card with `review` that agent `by` claimed and completed into review. */
async function inReview(id: string, review: 'human' | 'agent', by: Agent): Promise<void> {
	await json(['create', `Review ${id}`, '--id', id, '--review', review]);
	const claimed = await by.json<{ card: Card }>('claim', { cardId: id });
	assert.equal(claimed.card.id, id);
	const done = await by.json<{ card: Card }>('complete', { cardId: id, result: 'commit abc' });
	assert.equal(done.card.status, 'review');
}

before(async () => {
	ensureBuilt();
	dataDir = tempDataDir();
	await json(['list']); // starts the hub
});

after(async () => {
	await Promise.all(agents.map(a => a.close().catch(() => undefined)));
	await cleanupDataDir(dataDir);
});

describe('ended sessions leave the agents list', () => {
	it('50 MCP and board sessions opened and closed: not listed, not counted; --all shows them', async () => {
		const ids: string[] = [];
		for (let i = 0; i < 50; i++) {
			const kind = i % 2 === 0 ? 'mcp' : 'board';
			const id = `${kind}-${String(i).padStart(2, '0')}`;
			ids.push(id);
			const c: RpcClient = await client(dataDir, { client: kind, agent: { id, client: kind } });
			c.close();
		}
		const listedIds = async (all: boolean): Promise<string[]> =>
			(await json<{ agents: AgentRow[] }>(['agents', ...(all ? ['--all'] : [])])).agents.map(a => a.id);
		await waitFor(async () => !(await listedIds(false)).some(id => ids.includes(id)), 15_000, 'the sessions to end');
		const stats = await json<{ agents: Record<string, number> }>(['stats']);
		const counted = Object.values(stats.agents).reduce((s, n) => s + n, 0);
		// Only the CLI's own connection(s) at the time of each call can be listed; none of the 50.
		assert.ok(counted <= 2, `counted ${counted} agents with nobody connected`);
		const all = await json<{ agents: AgentRow[] }>(['agents', '--all']);
		const ended = all.agents.filter(a => ids.includes(a.id));
		assert.equal(ended.length, 50);
		assert.ok(ended.every(a => typeof a.endedAt === 'string' && !a.connected));
		const table = await baton(['agents', '--all']);
		assert.match(table.stdout, /mcp-00 .*ended/);
	});

	it('baton settings --agent-days sets how long ended agents are kept', async () => {
		const set = await json<{ agentRetentionDays: number }>(['settings', '--agent-days', '3']);
		assert.equal(set.agentRetentionDays, 3);
		const text = await baton(['settings']);
		assert.match(text.stdout, /ended agents +forgotten after 3 days/);
		const bad = await baton(['settings', '--agent-days', '0']);
		assert.equal(bad.code, 1);
		assert.equal((await json<{ agentRetentionDays: number }>(['settings'])).agentRetentionDays, 3);
	});
});

describe('a lease belongs to the session that claimed it', () => {
	it("a second baton mcp --agent alpha cannot heartbeat, complete, release or fail the first one's card", async () => {
		const first = await agent('alpha');
		const second = await agent('alpha');
		await json(['create', 'Owned by the first session', '--id', 'S1']);
		const claimed = await first.json<{ card: Card; lease: { epoch: number } }>('claim', { cardId: 'S1' });
		const epoch = claimed.lease.epoch;
		const before = await show('S1');
		for (const [tool, args] of [
			['heartbeat', { cardId: 'S1', epoch, progress: 90 }],
			['complete', { cardId: 'S1', epoch, result: 'not mine' }],
			['release', { cardId: 'S1', epoch }],
			['fail', { cardId: 'S1', epoch, reason: 'not mine' }],
			['complete', { cardId: 'S1' }],
		] as const) {
			const r = await second.call(tool, args);
			assert.equal(r.isError, true, `${tool} from the second session was accepted`);
			assert.match(textOf(r), /lease_lost: .*in another session.*only the session that claimed a card/);
		}
		const after = await show('S1');
		assert.equal(after.status, 'claimed');
		assert.equal(after.version, before.version);
		assert.equal(after.progress, null);
		const done = await first.json<{ card: Card }>('complete', { cardId: 'S1', result: 'mine' });
		assert.equal(done.card.status, 'done');
	});

	it('a session that closes releases its claims at once, while another session of its agent stays', async () => {
		const first = await agent('delta');
		const second = await agent('delta');
		await json(['create', 'Released with its session', '--id', 'D1']);
		await first.json('claim', { cardId: 'D1' });
		await first.close();
		await waitFor(async () => (await show('D1')).status === 'ready', 15_000, 'D1 to be released');
		const events = await json<{ events: { type: string; data: { reason?: string } }[] }>(['events', '--card', 'D1']);
		assert.equal(events.events.at(-1)?.data.reason, 'agent session disconnected');
		const again = await second.json<{ card: Card }>('claim', { cardId: 'D1' });
		assert.equal(again.card.status, 'claimed');
	});

	it('an agent cannot force from its shell; a person can', async () => {
		const holder = await agent('beta');
		await json(['create', 'Forced', '--id', 'F1']);
		await holder.json('claim', { cardId: 'F1' });
		const fromAgent = await baton(['complete', 'F1', '--force'], { CLAUDECODE: '1', BATON_AGENT: 'beta' });
		assert.equal(fromAgent.code, 1);
		assert.match(fromAgent.stderr, /Only a person can complete card F1 with force/);
		assert.equal((await show('F1')).status, 'claimed');
		const reclaim = await baton(['reclaim', 'F1'], { GEMINI_CLI: '1' });
		assert.equal(reclaim.code, 1);
		assert.match(reclaim.stderr, /Only a person can reclaim card F1/);
		assert.equal((await show('F1')).claimOwner, 'beta');
		const fromPerson = await baton(['complete', 'F1', '--force']);
		assert.equal(fromPerson.code, 0, fromPerson.stderr);
		assert.equal((await show('F1')).status, 'done');
	});
});

describe('approvals come from a person', () => {
	let author: Agent;
	before(async () => {
		author = await agent('gamma');
	});

	it('baton approve with CLAUDECODE=1 is refused with exit 1 and the card stays in review', async () => {
		await inReview('H1', 'human', author);
		for (const [verb, extra] of [
			['approve', []],
			['reject', ['--note', 'redo']],
		] as const) {
			const r = await baton([verb, 'H1', ...extra], { CLAUDECODE: '1' });
			assert.equal(r.code, 1, r.stderr);
			assert.match(
				r.stderr,
				/inside a coding agent \(CLAUDECODE is set\).*your own terminal, or use VS Code or the board/,
			);
		}
		const codex = await baton(['approve', 'H1'], { CODEX_SANDBOX: 'seatbelt' });
		assert.equal(codex.code, 1);
		assert.equal((await show('H1')).status, 'review');
	});

	it('baton approve under a parent process named like an agent CLI is refused', async () => {
		await inReview('H2', 'human', author);
		const dir = mkdtempSync('/tmp/bt-agent-');
		try {
			// A program called `claude` (node under that name) that runs `baton approve H2` as its child.
			const fakeAgent = join(dir, 'claude');
			symlinkSync(process.execPath, fakeAgent);
			const script = `const r = require('node:child_process').spawnSync(process.argv[1], process.argv.slice(2), { stdio: 'inherit' }); process.exit(r.status ?? 99);`;
			const r = spawnSync(fakeAgent, ['-e', script, process.execPath, batonJs, 'approve', 'H2'], {
				env: childEnv(dataDir, { BATON_AGENT: 'vscode:alice' }),
				cwd: neutralCwd,
				encoding: 'utf8',
				timeout: 30_000,
			});
			assert.equal(r.status, 1, r.stderr);
			assert.match(r.stderr, /inside a coding agent \(it runs under claude \(pid \d+\)\)/);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
		assert.equal((await show('H2')).status, 'review');
	});

	it('the hub treats a connection that says it runs inside an agent as no human', async () => {
		await inReview('H3', 'human', author);
		const inside = await client(dataDir, {
			client: 'cli',
			agent: { id: 'cli:alice', client: 'cli' },
			insideAgent: 'CLAUDECODE is set',
		});
		try {
			await assert.rejects(
				inside.request('card/review', { cardId: 'H3', approve: true }),
				(e: unknown) => BatonError.is(e, 'invalid_transition') && e.message.includes("waits for a human's review"),
			);
		} finally {
			inside.close();
		}
		assert.equal((await show('H3')).status, 'review');
	});

	it("the same baton approve from a person's terminal works", async () => {
		const r = await baton(['approve', 'H1']);
		assert.equal(r.code, 0, r.stderr);
		assert.equal((await show('H1')).status, 'done');
		const rejected = await baton(['reject', 'H2', '--note', 'split it']);
		assert.equal(rejected.code, 0, rejected.stderr);
		assert.equal((await show('H2')).status, 'ready');
	});
});
