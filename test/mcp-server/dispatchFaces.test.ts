/**
 * Dispatch through the real faces against one real hub: the CLI's `pause` / `resume` / `assign` and
 * the settings flags (max-held, aging, a project's seats), each bad input one clear error that changes
 * nothing; a dispatched card held by a seat connection (agent A, session S) is claimed by `baton mcp`
 * started with BATON_AGENT=A, BATON_SESSION=S, BATON_CARD_ID (the MCP SDK client's `claim {}` returns
 * it, same epoch, no new claimed event) and completed by that session; /metrics shows the seats in use
 * and the agents' exits by reason.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { connectHub } from '../../core/client/connectHub';
import type { RpcClient } from '../../core/protocol/rpc';
import { type CliResult, cleanupDataDir, ensureBuilt, runCliHere, startAgent, tempDataDir } from '../helpers/mcp';

let dataDir: string;
/** The card of project web the first test creates. */
let webCard = '';

function baton(args: string[]): Promise<CliResult> {
	return runCliHere(args, { dataDir, env: { BATON_AGENT: 'cli:alice' } });
}

async function json<T>(args: string[]): Promise<T> {
	const r = await baton([...args, '--json']);
	assert.equal(r.code, 0, `baton ${args.join(' ')} exited ${r.code}: ${r.stdout} ${r.stderr}`);
	return JSON.parse(r.stdout) as T;
}

before(() => {
	ensureBuilt();
	dataDir = tempDataDir();
});

after(async () => {
	await cleanupDataDir(dataDir);
});

describe('dispatch on the command line', () => {
	it('pauses and resumes a project, and claims say who paused it and why', async () => {
		const made = await json<{ cards: { id: string }[] }>([
			'create',
			'Ship the page',
			'--project',
			'web',
			'--priority',
			'5',
		]);
		webCard = made.cards[0]?.id ?? '';
		const paused = await baton(['pause', '--project', 'web', '--reason', 'release freeze']);
		assert.equal(paused.code, 0, paused.stderr);
		assert.match(paused.stdout, /Paused project web\./);
		const list = await baton(['pause', '--list']);
		assert.match(list.stdout, /project web paused by cli:alice at .*: release freeze/);
		const claim = await json<{ card: unknown; reason?: string }>(['claim', '--project', 'web']);
		assert.equal(claim.card, null);
		assert.match(claim.reason ?? '', /paused by cli:alice: release freeze/);
		const resumed = await baton(['resume', '--project', 'web']);
		assert.match(resumed.stdout, /Resumed project web\./);
		assert.match((await baton(['pause', '--list'])).stdout, /Nothing is paused\./);
	});

	it('refuses bad input with one clear error and changes nothing', async () => {
		const unknown = await baton(['pause', '--project', 'nosuch']);
		assert.equal(unknown.code, 1);
		assert.match(unknown.stderr + unknown.stdout, /Project nosuch does not exist/);
		const none = await baton(['pause']);
		assert.equal(none.code, 2);
		assert.match(none.stderr, /exactly one of --all, --project, --phase, --card or --kind/);
		const two = await baton(['pause', '--all', '--project', 'web']);
		assert.equal(two.code, 2);
		const spaced = await baton(['assign', webCard, 'my agent']);
		assert.equal(spaced.code, 1);
		assert.match(spaced.stderr + spaced.stdout, /"my agent" is not an agent id or kind: agent ids have no spaces/);
		const badSeats = await baton(['settings', '--project', 'web', '--kind-seats', 'claude=two']);
		assert.equal(badSeats.code, 2);
		assert.match(badSeats.stderr, /--kind-seats "claude=two": use kind=N/);
		assert.match((await baton(['pause', '--list'])).stdout, /Nothing is paused\./);
		const card = await json<{ card: { assignee?: string | null } }>(['show', webCard]);
		assert.equal(card.card.assignee ?? null, null);
	});

	it('assigns a card, sets max-held, aging and seats, and shows them', async () => {
		const assigned = await baton(['assign', webCard, 'kind:claude']);
		assert.match(assigned.stdout, new RegExp(`${webCard} may be claimed only by kind:claude`));
		const refused = await baton(['claim', webCard, '--project', 'web']);
		assert.equal(refused.code, 1);
		assert.match(refused.stderr + refused.stdout, /assigned to kind:claude/);
		assert.match((await baton(['show', webCard])).stdout, /assigned to\s+kind:claude/);
		assert.match((await baton(['assign', webCard, '--clear'])).stdout, /may be claimed by anyone/);

		const settings = await baton(['settings', '--max-held', '2', '--aging-hours', '24']);
		assert.equal(settings.code, 0, settings.stderr);
		assert.match(settings.stdout, /max held\s+2 cards per agent/);
		assert.match(settings.stdout, /aging\s+priority \+1 per 24 h/);
		const seats = await json<{ seats?: number; kindSeats?: Record<string, number> }>([
			'settings',
			'--project',
			'web',
			'--seats',
			'2',
			'--kind-seats',
			'claude=2,codex=1',
		]);
		assert.equal(seats.seats, 2);
		assert.deepEqual(seats.kindSeats, { claude: 2, codex: 1 });
		assert.match(
			(await baton(['settings', '--project', 'web'])).stdout,
			/seats\s+2 dispatched agents for web; per kind: claude 2, codex 1/,
		);
		const off = await json<{ maxHeld: number | null; agingHours: number | null }>([
			'settings',
			'--max-held',
			'off',
			'--aging-hours',
			'off',
		]);
		assert.deepEqual([off.maxHeld, off.agingHours], [null, null]);
	});
});

describe('a dispatched agent session', () => {
	let seat: RpcClient | undefined;
	after(() => seat?.close());

	it("resumes the card its supervisor's seat claimed, and completes it as its own", async () => {
		const created = await json<{ cards: { id: string }[] }>(['create', 'Dispatched work', '--priority', '100']);
		const cardId = created.cards[0]?.id ?? '';
		const agentId = 'fake-default-s1-k3f9';
		const session = 'seat-session-0123456789abcdef';
		seat = await connectHub({
			dataDir,
			client: 'test',
			agent: { id: agentId, kind: 'fake' },
			session,
			spawnHub: false,
		});
		const claimed = await seat.request('card/claim', { cardId, dispatch: { run: 'default', seat: 1, kind: 'fake' } });
		assert.equal(claimed.card?.dispatch?.seat, 1);
		const epoch = claimed.lease?.epoch;

		const agent = await startAgent(dataDir, {
			env: { BATON_AGENT: agentId, BATON_SESSION: session, BATON_CARD_ID: cardId, BATON_AGENT_KIND: 'fake' },
		});
		try {
			const mine = await agent.json<{ card: { id: string }; lease: { epoch: number } }>('claim', {});
			assert.equal(mine.card.id, cardId);
			assert.equal(mine.lease.epoch, epoch, 'the same lease: resumed, not claimed again');
			await agent.json('heartbeat', { cardId, progress: 50 });
			// Another card is ready, yet a dispatched agent's complete {next} takes none: its seat does.
			await json(['create', 'Next in line', '--priority', '90']);
			const done = await agent.json<{ next?: { card: unknown; reason?: string } }>('complete', {
				cardId,
				result: 'done by the agent',
				next: true,
			});
			assert.equal(done.next?.card, null);
			assert.match(done.next.reason ?? '', /supervisor dispatches the next/);
		} finally {
			await agent.close();
		}
		const events = await seat.request('events/list', { cardId });
		assert.deepEqual(
			events.events.map(e => e.type).filter(t => t === 'claimed' || t === 'completed'),
			['claimed', 'completed'],
			'one claim, completed by the session that held it',
		);
		const done = await seat.request('card/get', { cardId });
		assert.equal(done.card.status, 'done');
		assert.equal(done.card.dispatch, null, 'the seat is free again');
		await seat.request('dispatch/exited', {
			cardId,
			run: 'default',
			seat: 1,
			kind: 'fake',
			reason: 'completed',
			code: 0,
		});

		const status = await seat.request('hub/status', {});
		const url = status.metrics?.url;
		assert.ok(url !== null && url !== undefined);
		const token = readFileSync(status.metrics?.tokenFile ?? '', 'utf8').trim();
		const text = await (await fetch(url, { headers: { Authorization: `Bearer ${token}` } })).text();
		assert.match(text, /baton_agent_exits_total\{reason="completed"\} 1/);
		assert.match(text, /baton_agent_exits_total\{reason="rate_limited"\} 0/);
		assert.match(text, /baton_seats_in_use\{kind=""\} 0/);
	});
});
