/**
 * Dispatch's faces in VS Code, driven through the protocol the way `baton run` drives it:
 * a run registers (`run/register`), a seat connection claims a card with the hidden `dispatch` param
 * and records the agent's log (`dispatch/update`). The seats item of the status bar counts it (and the
 * workbench draws it), a seat's output channel tails the log as it grows, the tree shows the seat, the
 * pauses and the assignee, and the commands (Pause, Resume, Assign Card, Stop Agents) change the store,
 * checked over a separate connection.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { connectHub } from '../../../core/client/connectHub';
import type { RpcClient } from '../../../core/protocol/rpc';
import { after, before, describe, it } from './harness';
import { agentClient, api, env, storeCard, uniqueId, uiCheck, waitFor } from './helpers';

describe('dispatch faces', () => {
	let observer: RpcClient | undefined;
	let seat: RpcClient | undefined;
	const run = 'vt';
	const card = uniqueId('dsp');
	const ready = uniqueId('rdy');
	let epoch = 0;
	const logDir = mkdtempSync(join(tmpdir(), 'bt-log-'));
	const log = join(logDir, 'seat-1.log');

	before(async () => {
		const baton = await api();
		await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
		observer = await agentClient(uniqueId('observer'));
		await observer.request('card/create', {
			cards: [
				{ id: card, title: 'Port the tokenizer', priority: 5 },
				{ id: ready, title: 'Rename the config loader', priority: 1 },
			],
		});
		seat = await connectHub({
			dataDir: env('BATON_TEST_DATA_DIR'),
			client: 'test',
			agent: { id: `claude-${run}-s1-k3f9`, name: `claude-${run}-s1-k3f9`, client: 'test', kind: 'claude' },
			spawnHub: false,
			reconnect: false,
		});
	});

	after(async () => {
		await observer?.request('pause/clear', { all: true }).catch(() => undefined);
		await observer?.request('run/end', { name: run }).catch(() => undefined);
		seat?.close();
		observer?.close();
		rmSync(logDir, { recursive: true, force: true });
	});

	it('hides the seats item while no run is registered', async () => {
		const baton = await api();
		await baton.dispatch.refresh();
		assert.equal(baton.seatBar.summary, undefined);
	});

	it('shows "1/4 seats" once a run registers and a seat takes a card, drawn in the status bar', async () => {
		assert.ok(observer && seat);
		const baton = await api();
		await observer.request('run/register', {
			name: run,
			host: hostname(),
			pid: process.pid,
			seats: 4,
			kinds: ['claude'],
			project: null,
		});
		const claimed = await seat.request('card/claim', { cardId: card, dispatch: { run, seat: 1, kind: 'claude' } });
		epoch = claimed.lease?.epoch ?? 0;
		writeFileSync(log, 'Reading src/tokenizer.ts\n');
		await seat.request('dispatch/update', { cardId: card, epoch, log, output: ['Reading src/tokenizer.ts'] });
		const s = await waitFor('1/4 seats', () =>
			baton.seatBar.summary?.text.endsWith('1/4 seats') ? baton.seatBar.summary : undefined,
		);
		assert.match(s.tooltip, new RegExp(`Run ${run} on `));
		assert.match(s.tooltip, new RegExp(`seat 1 · under a minute — ${card} Port the tokenizer \\(claude\\)`));
		assert.match(s.tooltip, /seat 4 — free/);
		const ui = await uiCheck({ rows: [], statusBarItem: '1/4 seats' });
		console.log(`status bar items: ${JSON.stringify(ui.statusBarItems)}`);
		assert.ok(
			ui.statusBarItems.some(t => t.includes('1/4 seats')),
			'the workbench draws the seats item',
		);
	});

	it('opens a seat’s output from the status bar, and it tails the agent’s log as it grows', async () => {
		const baton = await api();
		// The user's way: click "1/4 seats", choose the seat in the quick pick.
		const ui = await uiCheck({ rows: [], statusBarPick: { item: '1/4 seats', pick: `Seat 1 (${run})` } });
		console.log(`seat quick pick item: ${ui.pickedItem ?? ''}`);
		assert.match(
			ui.pickedItem ?? '',
			new RegExp(`Seat 1 \\(${run}\\).*seat 1 · under a minute · claude.*${card} Port the tokenizer`),
		);
		await waitFor('the log in the seat’s channel', () =>
			baton.seatOutputs.recent(run, 1)?.includes('Reading src/tokenizer.ts'),
		);
		assert.match(baton.seatOutputs.recent(run, 1) ?? '', new RegExp(`── ${card} Port the tokenizer · claude`));
		const r = await vscode.commands.executeCommand<{ channel: string }>('baton.showSeatOutput', run, 1);
		assert.equal(r.channel, `Baton seat 1 (${run})`);
		const t0 = Date.now();
		appendFileSync(log, 'Editing src/tokenizer.ts: 3 hunks\n');
		await waitFor('the appended line', () => baton.seatOutputs.recent(run, 1)?.includes('3 hunks'));
		console.log(`a line appended to the log reached the seat's channel in ${Date.now() - t0} ms`);
	});

	it('shows the seat on the card’s tree row', async () => {
		const baton = await api();
		const node = baton.backlog.nodeFor(card);
		assert.ok(node);
		const item = baton.backlog.getTreeItem(node);
		assert.match(String(item.description), /claude · seat 1 · under a minute/);
	});

	it('pauses everything from the command, shows it in the tree, and resumes it', async () => {
		assert.ok(observer);
		const baton = await api();
		await vscode.commands.executeCommand('baton.pause', { scope: 'all', reason: 'deploy freeze', stop: false });
		const [p] = (await observer.request('pause/list', {})).pauses;
		assert.equal(p?.scope, 'all');
		assert.equal(p.by, baton.hub.me);
		const pauseRow = await waitFor('the pause row on top of the tree', () =>
			baton.backlog.getChildren().find(n => n.kind === 'pause'),
		);
		assert.equal(baton.backlog.getTreeItem(pauseRow).label, 'Paused: everything');
		const readyNode = baton.backlog.nodeFor(ready);
		assert.ok(readyNode);
		assert.match(String(baton.backlog.getTreeItem(readyNode).description), /paused by .*: deploy freeze/);
		// The hub refuses a claim of it in the words the tree shows.
		await assert.rejects(observer.request('card/claim', { cardId: ready }), /paused by vscode:.*: deploy freeze/);
		await vscode.commands.executeCommand('baton.resume', pauseRow);
		assert.deepEqual((await observer.request('pause/list', {})).pauses, []);
		await waitFor('the pause row gone', () => !baton.backlog.getChildren().some(n => n.kind === 'pause'));
	});

	it('assigns a card to a kind, and the tree names the assignee', async () => {
		assert.ok(observer);
		const baton = await api();
		await vscode.commands.executeCommand('baton.assignCard', ready, { assignee: 'kind:codex' });
		assert.equal((await storeCard(observer, ready)).assignee, 'kind:codex');
		await waitFor('the assignee in the cache', () => baton.hub.cards.get(ready)?.assignee === 'kind:codex');
		const node = baton.backlog.nodeFor(ready);
		assert.ok(node);
		assert.match(String(baton.backlog.getTreeItem(node).description), /assigned to kind:codex/);
		await vscode.commands.executeCommand('baton.assignCard', ready, { assignee: null });
		assert.equal((await storeCard(observer, ready)).assignee ?? null, null);
	});

	it('Stop Agents asks the run to drain', async () => {
		assert.ok(observer);
		const baton = await api();
		await vscode.commands.executeCommand('baton.stopAgents', { name: run, stop: false });
		const listed = (await observer.request('run/list', {})).runs.find(r => r.name === run);
		assert.equal(listed?.stopping, 'drain');
		await waitFor('the draining run in the tooltip', () => baton.seatBar.summary?.tooltip.includes('draining'));
		assert.equal(baton.seatBar.summary?.level, 'warning');
	});
});

/**
 * Start Agents end to end: the command starts the real `baton run` in the
 * background with the fake agent (test/fixtures/fakeAgent.mjs, a real MCP client of `baton mcp`), the
 * seats item counts both seats busy, a seat's output channel shows the agent's own lines, and Stop
 * Agents drains: both agents finish their cards (done), nothing new starts, and the run goes away.
 */
describe('start agents (baton run, fake agent)', () => {
	let observer: RpcClient | undefined;
	const name = 'vsc';
	const phase = uniqueId('fleet');
	const ids = [uniqueId('fa'), uniqueId('fb'), uniqueId('fc')];

	before(async () => {
		const baton = await api();
		await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
		observer = await agentClient(uniqueId('observer'));
		// Slow enough that both seats are busy while the test looks; the third card waits for a seat.
		await observer.request('card/create', {
			cards: ids.map((id, i) => ({ id, title: `Tidy module ${i} 6000ms`, phase, priority: 9 - i })),
		});
	});

	after(async () => {
		await observer?.request('run/stop', { name, stop: true }).catch(() => undefined);
		observer?.close();
	});

	it('starts two seats of the fake agent, shows them busy, opens a seat’s output, and drains', async () => {
		assert.ok(observer);
		const baton = await api();
		const fake = join(env('BATON_TEST_ROOT'), 'test', 'fixtures', 'fakeAgent.mjs');
		const t0 = Date.now();
		const started = await vscode.commands.executeCommand<{ name: string; pid: number } | undefined>(
			'baton.startAgents',
			{
				command: `${process.execPath} ${fake} {mcpConfig}`,
				seats: 2,
				project: null,
				phase,
				name,
				where: 'background',
			},
		);
		assert.equal(started?.name, name, 'the run registered (else the command showed its error)');
		const busy = await waitFor(
			'2/2 seats',
			() => (baton.seatBar.summary?.text.endsWith('2/2 seats') ? baton.seatBar.summary : undefined),
			20_000,
		);
		console.log(`Start Agents -> 2/2 seats in ${Date.now() - t0} ms`);
		assert.match(busy.tooltip, new RegExp(`Run ${name} on `));
		const inSeats = [...baton.hub.cards.values()].filter(c => c.dispatch?.run === name);
		assert.deepEqual(inSeats.map(c => c.id).sort(), ids.slice(0, 2).sort(), 'the two highest priority cards');

		await vscode.commands.executeCommand('baton.showSeatOutput', name, 1);
		const text = await waitFor(
			'the fake agent’s own lines in seat 1',
			() => {
				const t = baton.seatOutputs.recent(name, 1);
				return t?.includes('fake-agent:') ? t : undefined;
			},
			15_000,
		);
		console.log(`seat 1 output:\n${text.slice(-400)}`);

		await vscode.commands.executeCommand('baton.stopAgents', { name, stop: false });
		assert.equal((await observer.request('run/list', {})).runs.find(r => r.name === name)?.stopping, 'drain');
		// Drain: the two running agents complete their cards; the third is never started.
		for (const id of ids.slice(0, 2)) {
			await waitFor(`${id} done`, async () => (await storeCard(observer!, id)).status === 'done', 30_000);
		}
		// The seat's channel kept the agent's last words, then said the seat is free.
		const seat1 = inSeats.find(c => c.dispatch?.seat === 1)?.id;
		await waitFor(
			'the end of seat 1’s agent in its channel',
			() => {
				const t = baton.seatOutputs.recent(name, 1) ?? '';
				return t.includes(`fake-agent: completed ${seat1}`) && t.includes('seat 1 is free');
			},
			15_000,
		);
		await waitFor('the run gone from the status bar', () => baton.seatBar.summary === undefined, 30_000);
		const third = await storeCard(observer, ids[2]!);
		assert.equal(third.status, 'ready', 'no new agent starts while draining');
	}, 120_000);
	it('runs baton run in a terminal, and Stop Agents with "stop now" releases the card', async () => {
		assert.ok(observer);
		const baton = await api();
		const fake = join(env('BATON_TEST_ROOT'), 'test', 'fixtures', 'fakeAgent.mjs');
		const term = 'term';
		await vscode.commands.executeCommand('baton.startAgents', {
			command: `${process.execPath} ${fake} {mcpConfig}`,
			seats: 1,
			project: null,
			phase,
			name: term,
			where: 'terminal',
		});
		assert.ok(
			vscode.window.terminals.some(t => t.name === `Baton Agents (${term})`),
			'the terminal is open',
		);
		// The card the drain left behind is the only one ready in this phase.
		const last = ids[2]!;
		await waitFor('1/1 seats', () => baton.seatBar.summary?.text.endsWith('1/1 seats'), 20_000);
		await waitFor(`${last} in the seat`, () => baton.hub.cards.get(last)?.dispatch?.run === term, 10_000);
		const seatedAt = Date.now();
		await vscode.commands.executeCommand('baton.stopAgents', { name: term, stop: true, confirm: false });
		// The stop goes run/stop → the supervisor's event → TERM to the agent's group (KILL after the
		// 10 s grace) → card/release: seconds, but a loaded 2-core machine has taken over 30 s. On a
		// timeout the card's own events say which step did not happen.
		const released = await waitFor(
			'the card back in Ready',
			async () => {
				const c = await storeCard(observer!, last);
				return c.status === 'ready' ? c : undefined;
			},
			60_000,
		).catch(async (e: unknown) => {
			const { events } = await observer!.request('events/list', { cardId: last });
			const run = (await observer!.request('run/list', {})).runs.find(r => r.name === term);
			console.log(
				`card ${last} events: ${JSON.stringify(events.map(ev => [ev.type, ev.at, ev.actor, (ev.data as { reason?: unknown }).reason ?? null]))}`,
			);
			console.log(`run ${term}: ${JSON.stringify(run ?? null)}`);
			throw e;
		});
		console.log(`stop now → card back in Ready in ${Date.now() - seatedAt} ms`);
		assert.equal(released.dispatch ?? null, null, 'the dispatch record is cleared with the claim');
		await waitFor('the run gone from the status bar', () => baton.seatBar.summary === undefined, 30_000);
	}, 150_000);

	it('stops a run and starts it again under the same name, three times: each new run claims a new card', async () => {
		assert.ok(observer);
		const baton = await api();
		const fake = join(env('BATON_TEST_ROOT'), 'test', 'fixtures', 'fakeAgent.mjs');
		const again = 'again';
		const lap = uniqueId('lap');
		const laps = [0, 1, 2].map(i => `${lap}-${i}`);
		// Quick cards, one per lap: a stop request of an ended run must not carry over to the next one.
		await observer.request('card/create', {
			cards: laps.map((id, i) => ({ id, title: `Lap ${i} 100ms`, phase: lap, priority: 9 - i })),
		});
		for (const [i, id] of laps.entries()) {
			const started = await vscode.commands.executeCommand<{ name: string } | undefined>('baton.startAgents', {
				command: `${process.execPath} ${fake} {mcpConfig}`,
				seats: 1,
				project: null,
				phase: lap,
				name: again,
				where: 'background',
			});
			assert.equal(started?.name, again, `lap ${i}: the name is free again, so the start works`);
			await waitFor(
				`lap ${i}: ${id} done`,
				async () => (await storeCard(observer!, id)).status === 'done',
				30_000,
			).catch(async (e: unknown) => {
				const { events } = await observer!.request('events/list', { cardId: id });
				console.log(`lap ${i}: ${id} events ${JSON.stringify(events.map(ev => [ev.type, ev.at, ev.actor]))}`);
				console.log(`lap ${i}: runs ${JSON.stringify((await observer!.request('run/list', {})).runs)}`);
				console.log(`lap ${i}: card ${JSON.stringify(await storeCard(observer!, id))}`);
				throw e;
			});
			await vscode.commands.executeCommand('baton.stopAgents', { name: again, stop: i % 2 === 1, confirm: false });
			await waitFor(
				`lap ${i}: the run gone`,
				async () => (await observer!.request('run/list', {})).runs.every(r => r.name !== again),
				30_000,
			);
			await waitFor(`lap ${i}: the status bar clear`, () => baton.seatBar.summary === undefined, 30_000);
		}
	}, 150_000);

	it('refuses a template with an unknown placeholder in baton run’s words, starting nothing', async () => {
		assert.ok(observer);
		const r = await vscode.commands.executeCommand('baton.startAgents', {
			command: `${process.execPath} {bogus}`,
			seats: 1,
			project: null,
			name: 'bad',
			where: 'background',
		});
		assert.equal(r, undefined, 'the command failed (and said why)');
		const ui = await uiCheck({ rows: [], notification: '{bogus}' });
		console.log(`notifications: ${JSON.stringify(ui.notifications)}`);
		assert.ok(
			ui.notifications.some(n => n.includes('{bogus}')),
			'the error notification names the placeholder',
		);
		assert.equal(
			(await observer.request('run/list', {})).runs.find(x => x.name === 'bad'),
			undefined,
		);
	});
});
