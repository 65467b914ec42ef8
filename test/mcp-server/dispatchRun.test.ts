/**
 * `baton run` end to end: a real hub, the real `baton run` in a child process, real agent
 * processes (test/fixtures/runAgent.mjs talking MCP to a real `baton mcp`). Proves the seat cap, the
 * failure of a card whose agent exits without completing, the --max-seconds budget (TERM, then KILL),
 * the rate-limit release and cool-down, the failure streak pausing the kind, restart adoption after
 * kill -9, pause --stop, the drain on SIGHUP, and that bad input starts nothing.
 *
 * @first: the longest file of the suite (real agents waited out); the others fill the other core beside it.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { BacklogEvent, Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { type HubProcess, alive, client, removeDataDir, startHub, tempDataDir, waitFor } from '../helpers/hub';
import { ensureBuilt, runBaton } from '../helpers/mcp';
import { fakeCommand, maxConcurrent, runAgent, startRun } from '../helpers/runSupervisor';

const printPrompt = join(import.meta.dirname, '..', 'fixtures', 'printPrompt.mjs');

interface World {
	dataDir: string;
	hub: HubProcess;
	api: RpcClient;
}

async function world(): Promise<World> {
	const dataDir = tempDataDir();
	const hub = await startHub({ dataDir });
	const api = await client(dataDir, { agent: { id: 'tester' } });
	return { dataDir, hub, api };
}

async function endWorld(w: World): Promise<void> {
	w.api.close();
	await w.hub.stop();
	removeDataDir(w.dataDir);
}

async function create(api: RpcClient, titles: string[], extra: Record<string, unknown> = {}): Promise<Card[]> {
	const { cards } = await api.request('card/create', {
		cards: titles.map(title => ({ title, maxAttempts: 1, ...extra })),
	});
	return cards;
}

async function card(api: RpcClient, id: string): Promise<Card> {
	return (await api.request('card/get', { cardId: id })).card;
}

async function allEvents(api: RpcClient): Promise<BacklogEvent[]> {
	const out: BacklogEvent[] = [];
	let after = 0;
	for (;;) {
		const { events } = await api.request('events/list', { afterSeq: after, limit: 500 });
		out.push(...events);
		if (events.length < 500) {
			return out;
		}
		after = events.at(-1)?.seq ?? after;
	}
}

/** The most dispatched claims held at once, from the backlog's own event log. */
function maxHeldFromLog(events: readonly BacklogEvent[]): number {
	const held = new Set<string>();
	let max = 0;
	for (const e of events) {
		if (e.type === 'claimed' && e.data.card?.dispatch != null) {
			held.add(e.cardId);
			max = Math.max(max, held.size);
		} else if (
			['completed', 'failed', 'released', 'reclaimed', 'review_requested', 'blocked', 'deleted'].includes(e.type)
		) {
			held.delete(e.cardId);
		}
	}
	return max;
}

describe('baton run', { timeout: 600_000 }, () => {
	before(() => ensureBuilt());

	it('refuses bad input with one clear error, exit 2, and starts nothing', async () => {
		const dataDir = tempDataDir();
		try {
			const cases: [string[], RegExp][] = [
				[['--seats', '0', '--command', fakeCommand], /--seats must be a whole number of at least 1/],
				[['--command', `${fakeCommand} {bogus}`], /unknown placeholder \{bogus\}.*\{mcpConfig\}/],
				[['--command', 'no-such-agent-program-xyz {prompt}'], /no-such-agent-program-xyz is not on PATH/],
				[['--agent', 'nope'], /Unknown agent "nope"/],
				[[], /Say which agent to start/],
			];
			for (const [args, message] of cases) {
				const r = await runBaton(['run', ...args], { dataDir });
				assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
				assert.match(r.stderr, message);
				assert.equal(r.stdout, '');
			}
			// Nothing started: no hub ever made the data dir.
			assert.equal(existsSync(join(dataDir, 'hub.json')), false);
		} finally {
			removeDataDir(join(dataDir, 'x'));
		}
	});

	describe('with a hub', () => {
		let w: World;
		before(async () => {
			w = await world();
		});
		after(async () => {
			await endWorld(w);
		});

		it('never holds more cards than seats, completes through the agents and drains on Ctrl-C', async () => {
			const cards = await create(
				w.api,
				['complete 1000ms a', 'complete 1000ms b', 'complete 1000ms c', 'complete 1000ms d', 'complete 1000ms e'],
				{
					phase: 'seats',
				},
			);
			const run = startRun(w.dataDir, ['--seats', '2', '--phase', 'seats', '--name', 'seats']);
			for (const c of cards) {
				await run.waitFor(e => e.event === 'exited' && e.cardId === c.id, 60_000, `${c.id} to end`);
			}
			run.proc.kill('SIGINT');
			assert.deepEqual(await run.exited, { code: 0, signal: null });
			for (const c of cards) {
				assert.equal((await card(w.api, c.id)).status, 'done', c.id);
			}
			assert.ok(run.events.filter(e => e.event === 'exited').every(e => e.reason === 'completed'));
			assert.equal(maxConcurrent(run.events), 2);
			const log = (await allEvents(w.api)).filter(e => cards.some(c => c.id === e.cardId));
			assert.equal(maxHeldFromLog(log), 2);
		});

		it('drains on SIGHUP (its terminal closed), writing to its closed output', async () => {
			const [busy, waiting] = await create(w.api, ['complete 4000ms busy', 'complete waiting'], { phase: 'hup' });
			assert.ok(busy && waiting);
			await w.api.request('card/update', { cardId: waiting.id, priority: -1 });
			const run = startRun(w.dataDir, ['--phase', 'hup', '--name', 'hup', '--seats', '1']);
			await run.waitFor(e => e.event === 'started' && e.cardId === busy.id, 30_000, 'the start');
			await waitFor(async () => (await card(w.api, busy.id)).progressNote === 'halfway', 20_000, 'the agent working');
			// The reader of its output goes with the terminal, so its writes from the hangup on fail
			// (EPIPE; EIO on a terminal): they are dropped, and the run drains to its end.
			run.proc.stdout?.destroy();
			run.proc.kill('SIGHUP');
			assert.deepEqual(await run.exited, { code: 0, signal: null }, run.stderr());
			assert.doesNotMatch(run.stderr(), /EPIPE|EIO/);
			assert.equal((await card(w.api, busy.id)).status, 'done', 'it waited for the running agent');
			assert.equal((await card(w.api, waiting.id)).status, 'ready');
			const claims = (await allEvents(w.api)).filter(e => e.type === 'claimed' && e.cardId === waiting.id);
			assert.deepEqual(claims, [], 'no claim after the hangup');
			assert.equal(
				(await w.api.request('run/list', {})).runs.find(r => r.name === 'hup'),
				undefined,
				'it ended as a drained run does (run/end)',
			);
			await w.api.request('card/delete', { cardId: waiting.id });
		});

		it('fails a card whose agent exits before completing, with the exit code and the last lines', async () => {
			const [c] = await create(w.api, ['crash now'], { phase: 'crash' });
			assert.ok(c);
			const run = startRun(w.dataDir, ['--phase', 'crash', '--name', 'crash']);
			const exited = await run.waitFor(e => e.event === 'exited' && e.cardId === c.id, 60_000, 'the crash');
			assert.equal(exited.reason, 'exited');
			assert.equal(exited.code, 3);
			const after = await card(w.api, c.id);
			assert.equal(after.status, 'blocked');
			assert.match(after.blockedReason ?? '', /agent exited with code 3 before completing/);
			assert.match(after.blockedReason ?? '', /fake-agent: crashing now \(exit 3\)/);
			assert.equal(after.dispatch ?? null, null);
			// Ctrl-C with no agent running ends the run at once (a timer armed by the supervisor's own
			// fail of the card kept it alive for 30 s).
			const interrupted = Date.now();
			run.proc.kill('SIGINT');
			assert.equal((await run.exited).code, 0);
			const tookMs = Date.now() - interrupted;
			assert.ok(tookMs < 10_000, `baton run took ${tookMs} ms to end after Ctrl-C with nothing running`);
		});

		it('gives the agent a prompt with the card and its messages', async () => {
			const [c] = await create(w.api, ['Port the tokenizer'], { phase: 'prompt', body: 'Use the v2 grammar.' });
			assert.ok(c);
			await w.api.request('card/comment', { cardId: c.id, text: 'Keep the old API as a shim, please.' });
			const run = startRun(w.dataDir, ['--phase', 'prompt', '--name', 'prompt'], {}, printPrompt);
			await run.waitFor(e => e.event === 'exited' && e.cardId === c.id, 60_000, 'the agent');
			run.proc.kill('SIGINT');
			assert.equal((await run.exited).code, 0);
			const log = readFileSync(join(w.dataDir, 'runs', 'prompt', `${c.id}.log`), 'utf8');
			assert.match(log, /Port the tokenizer/);
			assert.match(log, /Use the v2 grammar\./);
			assert.match(log, /Keep the old API as a shim, please\./);
		});

		it('stops an agent past --max-seconds with TERM then KILL and fails the card naming the budget', async () => {
			const [c] = await create(w.api, ['hang forever'], { phase: 'hang' });
			assert.ok(c);
			const run = startRun(
				w.dataDir,
				// Long enough for the agent to open its MCP session and claim in its sandbox on a busy machine
				// (only then does it ignore TERM).
				['--phase', 'hang', '--name', 'hang', '--max-seconds', '6', '--stop-grace-seconds', '1'],
				{},
				runAgent,
			);
			const started = await run.waitFor(e => e.event === 'started' && e.cardId === c.id, 30_000, 'the start');
			const exited = await run.waitFor(e => e.event === 'exited' && e.cardId === c.id, 30_000, 'the budget');
			assert.equal(exited.reason, 'timeout');
			assert.equal(exited.code, null, 'killed by a signal: it ignored TERM');
			assert.equal(alive(started.pid as number), false);
			const after = await card(w.api, c.id);
			assert.match(after.blockedReason ?? '', /agent stopped after \d+ s: the --max-seconds 6 budget/);
			assert.match(after.blockedReason ?? '', /got SIGTERM, ignoring it/);
			run.proc.kill('SIGINT');
			assert.equal((await run.exited).code, 0);
		});

		it('stops an agent silent for --idle-seconds as hung and fails its card', async () => {
			const [c] = await create(w.api, ['hang silently'], { phase: 'silent' });
			assert.ok(c);
			const run = startRun(
				w.dataDir,
				['--phase', 'silent', '--name', 'silent', '--idle-seconds', '3', '--stop-grace-seconds', '1'],
				{},
				runAgent,
			);
			const started = await run.waitFor(e => e.event === 'started' && e.cardId === c.id, 30_000, 'the start');
			const exited = await run.waitFor(e => e.event === 'exited' && e.cardId === c.id, 30_000, 'the silence');
			assert.equal(exited.reason, 'hung');
			assert.equal(alive(started.pid as number), false);
			const after = await card(w.api, c.id);
			assert.match(after.blockedReason ?? '', /agent stopped as hung: no output and no heartbeat for 3 s/);
			run.proc.kill('SIGINT');
			assert.equal((await run.exited).code, 0);
		});

		it('keeps a quiet agent that heartbeats: a heartbeat that changes nothing still counts', async () => {
			// fakeAgent's `hang` prints nothing after "hanging" and heartbeats every 2 s with the same note,
			// which makes no event: only the card's progressAt moves. It ends by the budget, not as hung.
			const [c] = await create(w.api, ['hang but heartbeat'], { phase: 'quiet' });
			assert.ok(c);
			const run = startRun(w.dataDir, [
				'--phase',
				'quiet',
				'--name',
				'quiet',
				'--idle-seconds',
				'8',
				'--max-seconds',
				'20',
				'--stop-grace-seconds',
				'1',
			]);
			const exited = await run.waitFor(e => e.event === 'exited' && e.cardId === c.id, 60_000, 'the budget');
			assert.equal(exited.reason, 'timeout', (await card(w.api, c.id)).blockedReason ?? '');
			run.proc.kill('SIGINT');
			assert.equal((await run.exited).code, 0);
		});

		it('releases a rate-limited card without using an attempt and cools the kind down', async () => {
			const [limited, next] = await create(w.api, ['ratelimit now', 'complete after the cool-down'], {
				phase: 'rate',
				maxAttempts: 3,
			});
			assert.ok(limited && next);
			// The second card is lower priority: it is claimed only after the first, once the kind has cooled.
			await w.api.request('card/update', { cardId: next.id, priority: -1 });
			const run = startRun(w.dataDir, ['--phase', 'rate', '--name', 'rate', '--seats', '1', '--cooldown-seconds', '4']);
			const exited = await run.waitFor(e => e.event === 'exited' && e.cardId === limited.id, 30_000, 'the rate limit');
			assert.equal(exited.reason, 'rate_limited');
			const cooldown = await run.waitFor(e => e.event === 'cooldown', 10_000, 'the cool-down');
			const after = await card(w.api, limited.id);
			assert.equal(after.status, 'ready');
			assert.equal(after.attempts, 0, 'the rate-limited start used no attempt');
			// Nothing starts while the kind cools down, then the line moves again.
			const restarted = await run.waitFor(
				e => e.event === 'started' && Date.parse(e.at) > Date.parse(cooldown.at),
				30_000,
				'a start after the cool-down',
			);
			assert.ok(Date.parse(restarted.at) - Date.parse(cooldown.at) >= 3500, 'no start within the cool-down');
			// Drain, then stop (apart: the kernel merges a signal that is still pending).
			run.proc.kill('SIGINT');
			await new Promise(resolve => setTimeout(resolve, 300));
			run.proc.kill('SIGINT');
			assert.equal((await run.exited).code, 0);
		});

		it('keeps an agent whose work output says "429", "quota" and "rate limit" (only its signal counts)', async () => {
			const [noisy] = await create(w.api, ['noisy tests'], { phase: 'noisy' });
			assert.ok(noisy);
			const run = startRun(w.dataDir, ['--phase', 'noisy', '--name', 'noisy', '--seats', '1']);
			const exited = await run.waitFor(e => e.event === 'exited' && e.cardId === noisy.id, 30_000, 'the noisy agent');
			assert.equal(exited.reason, 'completed', (await card(w.api, noisy.id)).blockedReason ?? '');
			assert.equal(run.events.filter(e => e.event === 'stopping' || e.event === 'cooldown').length, 0);
			run.proc.kill('SIGINT');
			assert.equal((await run.exited).code, 0);
		});

		it('pauses the kind after three failures in a row', async () => {
			const crashes = await create(w.api, ['crash 1', 'crash 2', 'crash 3'], { phase: 'streak' });
			const [spare] = await create(w.api, ['complete spare'], { phase: 'streak', priority: -5 });
			assert.ok(spare);
			const run = startRun(w.dataDir, ['--phase', 'streak', '--name', 'streak', '--kind', 'streaky', '--seats', '1']);
			const paused = await run.waitFor(e => e.event === 'paused', 60_000, 'the kind paused');
			assert.equal(paused.target, 'streaky');
			assert.match(String(paused.reason), /3 streaky agents failed in a row/);
			const { pauses } = await w.api.request('pause/list', {});
			const pause = pauses.find(p => p.scope === 'kind' && p.target === 'streaky');
			assert.ok(pause);
			for (const c of crashes) {
				assert.equal((await card(w.api, c.id)).status, 'blocked');
			}
			await new Promise(resolve => setTimeout(resolve, 1500));
			assert.equal((await card(w.api, spare.id)).status, 'ready', 'nothing more of the paused kind started');
			run.proc.kill('SIGINT');
			assert.equal((await run.exited).code, 0);
			await w.api.request('pause/clear', { scope: 'kind', target: 'streaky' });
			await w.api.request('card/delete', { cardId: spare.id });
		});

		it('after kill -9 and a restart adopts the running agents and starts no second agent for their cards', async () => {
			// In the agents' folder: a sandboxed agent writes nowhere else.
			const agentLog = join(w.dataDir, '..', 'work', 'agents.log');
			const busy = await create(w.api, ['busy one', 'busy two'], { phase: 'adopt' });
			const [kept, dying] = busy;
			assert.ok(kept && dying);
			// `dying`'s agent never gets to open its MCP session, so its card stays claimed when it dies
			// (an agent whose session was open would have its claim released by the hub at once).
			const env = { FAKE_AGENT_LOG: agentLog, FAKE_AGENT_LATE: dying.id };
			const args = ['--phase', 'adopt', '--name', 'adopt', '--seats', '2'];
			const first = startRun(w.dataDir, args, env, runAgent);
			const pids = new Map<string, number>();
			for (const c of busy) {
				const started = await first.waitFor(e => e.event === 'started' && e.cardId === c.id, 30_000, `${c.id} started`);
				pids.set(c.id, started.pid as number);
			}
			await waitFor(
				async () => (await Promise.all(busy.map(c => card(w.api, c.id)))).every(c => c.dispatch?.pid !== undefined),
				10_000,
				'the pids recorded',
			);
			await waitFor(
				async () => (await card(w.api, kept.id)).progressNote === 'step 1',
				20_000,
				'the kept agent working',
			);
			first.proc.kill('SIGKILL');
			await first.exited;
			const dyingPid = pids.get(dying.id) ?? 0;
			process.kill(-dyingPid, 'SIGKILL');
			await waitFor(() => !alive(dyingPid), 10_000, 'the agent gone');
			assert.equal((await card(w.api, dying.id)).status, 'claimed');
			const second = startRun(w.dataDir, args, env, runAgent);
			const adopted = await second.waitFor(e => e.event === 'adopted', 30_000, 'the adoption');
			assert.equal(adopted.cardId, kept.id);
			assert.equal(adopted.pid, pids.get(kept.id));
			const failed = await second.waitFor(
				e => e.event === 'exited' && e.cardId === dying.id,
				30_000,
				'the dead one failed',
			);
			assert.match(String(failed.cardReason), /exited while its supervisor was down/);
			assert.match((await card(w.api, dying.id)).blockedReason ?? '', /exited while its supervisor was down/);
			const running = await card(w.api, kept.id);
			assert.equal(running.status, 'claimed');
			assert.equal(running.claimOwner, adopted.agent);
			// Each card's agent was started once, by the first run.
			const starts = readFileSync(agentLog, 'utf8').trim().split('\n');
			assert.deepEqual(starts.map(l => l.split(' ')[1]).sort(), busy.map(c => c.id).sort());
			assert.equal(second.events.filter(e => e.event === 'started').length, 0);
			for (const c of busy) {
				const log = readFileSync(join(w.dataDir, 'runs', 'adopt', `${c.id}.log`), 'utf8');
				assert.equal(log.split('\n').filter(l => l.startsWith('--- ')).length, 1, `${c.id}: one attempt in its log`);
			}
			// The adopted agent's exit (not our child: code unknown) still fails its card.
			process.kill(-(pids.get(kept.id) ?? 0), 'SIGKILL');
			const ended = await second.waitFor(e => e.event === 'exited' && e.cardId === kept.id, 30_000, 'the adopted exit');
			assert.equal(ended.reason, 'exited');
			assert.match((await card(w.api, kept.id)).blockedReason ?? '', /adopted after a supervisor restart/);
			second.proc.kill('SIGINT');
			assert.equal((await second.exited).code, 0);
		});

		it('registers the run and obeys run/stop: drain lets agents finish, stop stops them', async () => {
			const cards = await create(w.api, ['hang a', 'hang b'], { phase: 'runstop', maxAttempts: 3 });
			const run = startRun(w.dataDir, ['--phase', 'runstop', '--name', 'runstop', '--stop-grace-seconds', '2']);
			for (const c of cards) {
				await run.waitFor(e => e.event === 'started' && e.cardId === c.id, 30_000, `${c.id} started`);
			}
			const listed = (await w.api.request('run/list', {})).runs.find(r => r.name === 'runstop');
			assert.ok(listed);
			assert.equal(listed.seats, 2);
			assert.equal(listed.inUse, 2);
			assert.deepEqual(listed.kinds, ['fake']);
			await w.api.request('run/stop', { name: 'runstop' });
			await run.waitFor(e => e.event === 'draining', 10_000, 'the drain');
			await new Promise(resolve => setTimeout(resolve, 1000));
			for (const c of cards) {
				assert.equal((await card(w.api, c.id)).status, 'claimed', 'a drain lets running agents go on');
			}
			await w.api.request('run/stop', { name: 'runstop', stop: true });
			for (const c of cards) {
				const exited = await run.waitFor(e => e.event === 'exited' && e.cardId === c.id, 30_000, `${c.id} stopped`);
				assert.equal(exited.reason, 'stopped');
				const after = await card(w.api, c.id);
				assert.equal(after.status, 'ready');
				assert.equal(after.attempts, 0);
			}
			assert.deepEqual(await run.exited, { code: 0, signal: null });
			assert.equal(
				(await w.api.request('run/list', {})).runs.find(r => r.name === 'runstop'),
				undefined,
			);
			for (const c of cards) {
				await w.api.request('card/delete', { cardId: c.id });
			}
		});

		it('pause --stop stops the covered agents and releases their cards without using an attempt', async () => {
			const [c] = await create(w.api, ['hang until paused'], { phase: 'stop', maxAttempts: 3 });
			assert.ok(c);
			const run = startRun(w.dataDir, ['--phase', 'stop', '--name', 'stop', '--stop-grace-seconds', '2']);
			const started = await run.waitFor(e => e.event === 'started' && e.cardId === c.id, 30_000, 'the start');
			const { cards: covered } = await w.api.request('pause/set', {
				scope: 'phase',
				target: 'stop',
				stop: true,
				reason: 'hold the line',
			});
			assert.deepEqual(covered, [c.id]);
			const exited = await run.waitFor(e => e.event === 'exited' && e.cardId === c.id, 30_000, 'the stop');
			assert.equal(exited.reason, 'stopped');
			assert.equal(alive(started.pid as number), false);
			const after = await card(w.api, c.id);
			assert.equal(after.status, 'ready');
			assert.equal(after.attempts, 0);
			// Paused: not started again.
			await new Promise(resolve => setTimeout(resolve, 1500));
			assert.equal(run.events.filter(e => e.event === 'started').length, 1);
			run.proc.kill('SIGINT');
			assert.equal((await run.exited).code, 0);
			await w.api.request('pause/clear', { scope: 'phase', target: 'stop' });
		});

		it('a pause --stop set while the supervisor was down stops the agents it adopts', async () => {
			const [c] = await create(w.api, ['busy while down'], { phase: 'downstop', maxAttempts: 3 });
			assert.ok(c);
			const args = ['--phase', 'downstop', '--name', 'downstop', '--stop-grace-seconds', '2'];
			const first = startRun(w.dataDir, args, {}, runAgent);
			const started = await first.waitFor(e => e.event === 'started' && e.cardId === c.id, 30_000, 'the start');
			await waitFor(async () => (await card(w.api, c.id)).progressNote === 'step 1', 20_000, 'the agent working');
			first.proc.kill('SIGKILL');
			await first.exited;
			const { cards: covered } = await w.api.request('pause/set', { scope: 'phase', target: 'downstop', stop: true });
			assert.deepEqual(covered, [c.id]);
			assert.equal(alive(started.pid as number), true, 'nobody stopped it yet: its supervisor is down');
			const second = startRun(w.dataDir, args, {}, runAgent);
			await second.waitFor(e => e.event === 'adopted' && e.cardId === c.id, 30_000, 'the adoption');
			const exited = await second.waitFor(e => e.event === 'exited' && e.cardId === c.id, 30_000, 'the stop');
			assert.equal(exited.reason, 'stopped');
			await waitFor(() => !alive(started.pid as number), 10_000, 'the agent gone');
			const after = await card(w.api, c.id);
			assert.equal(after.status, 'ready');
			assert.equal(after.attempts, 0);
			second.proc.kill('SIGINT');
			assert.equal((await second.exited).code, 0);
			await w.api.request('pause/clear', { scope: 'phase', target: 'downstop' });
		});
	});
});
