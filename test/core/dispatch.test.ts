/**
 * Dispatch's rules in core, on real PGlite and PostgreSQL: a pause keeps its cards from every claim
 * path (the hot claim, the general path, a claim by id, complete {next}) until it is cleared, and says
 * who paused it and why; an assignment lets only its agent or kind claim; max-held refuses a claim
 * beyond N held cards; aging orders ready cards by effective priority; a project's seat limits refuse a
 * dispatched claim beyond them; a session claiming the card it holds resumes it (no event, same
 * epoch); a dispatched claim records its seat on the card, and every end of the claim clears it.
 */
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { beforeEach, describe, it } from 'node:test';

import { Backlog, type OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import type { BacklogEvent, Card } from '../../core/protocol';
import { readDump } from '../../core/store/dump';
import type { Db } from '../../core/store/db';
import { backlogForSuite, openTestBacklog, storeKinds, type TestBacklog } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const human: OpContext = { actor: 'cli:alice' };
const agent: OpContext = { actor: 'worker-1', session: 'session-worker-1-000000' };
const claude: OpContext = { actor: 'claude-default-s1-ab12', session: 'session-claude-s1-0000', kind: 'claude' };
const codex: OpContext = { actor: 'codex-default-s2-cd34', session: 'session-codex-s2-00000', kind: 'codex' };
const seat = (n: number, kind = 'claude') => ({ run: 'default', seat: n, kind });

let counter = 0;

for (const store of storeKinds) {
	describe(`dispatch rules on ${store}`, () => {
		let b: Backlog;
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');
		let suite: TestBacklog;
		backlogForSuite(store, { clock }, t => {
			b = t.backlog;
			suite = t;
		});
		const get = async (id: string): Promise<Card> => (await b.get(human, { cardId: id })).card;
		/** Cards with fresh ids and the highest priorities so far (the first given is claimed first). */
		async function cards(n: number, extra: Record<string, unknown> = {}): Promise<string[]> {
			const ids = Array.from({ length: n }, () => `d${++counter}`);
			const top = 100_000 + counter * 10;
			await b.create(human, {
				cards: ids.map((id, i) => ({ id, title: `Card ${id}`, priority: top - i, ...extra })),
			});
			return ids;
		}
		/** Leaves nothing claimable but what a test makes: every ready card is blocked. */
		async function clearBoard(): Promise<void> {
			await b.pauses.clear(human, { all: true });
			await b.updateSettings(human, { maxHeld: null, agingHours: null });
			for (const c of (await b.list(human, { status: 'ready', limit: 1000 })).cards) {
				await b.block(human, { cardId: c.id, reason: 'out of the way' });
			}
			for (const c of (await b.list(human, { status: 'claimed', limit: 1000 })).cards) {
				await b.release(human, { cardId: c.id, force: true });
				await b.block(human, { cardId: c.id, reason: 'out of the way' });
			}
		}
		function recording(): { events: BacklogEvent[]; stop: () => void } {
			const events: BacklogEvent[] = [];
			const stop = b.onCommitted(e => events.push(...e));
			return { events, stop };
		}
		beforeEach(clearBoard);

		it('a pause keeps its cards from the hot claim, the general path and a claim by id, and says who and why', async () => {
			const [a = '', c = ''] = await cards(2, { project: 'web' });
			const paused = await b.pauses.set(human, { scope: 'project', target: 'web', reason: 'release freeze' });
			assert.deepEqual(paused.pause, {
				scope: 'project',
				target: 'web',
				reason: 'release freeze',
				by: 'cli:alice',
				at: clock.now().toISOString(),
				stop: false,
			});
			const none = await b.claim(agent, {});
			assert.equal(none.card, null);
			assert.match(
				none.reason ?? '',
				/2 claimable cards are paused \(project web paused by cli:alice: release freeze\)/,
			);
			assert.equal((await b.claim(agent, { labels: ['x'] })).card, null, 'the general path too');
			await refused(b.claim(agent, { cardId: a }), 'invalid_transition', /paused by cli:alice: release freeze/);
			assert.equal((await get(a)).status, 'ready', 'nothing changed');
			// Another project's card is not paused.
			const [other = ''] = await cards(1, { project: 'api' });
			assert.equal((await b.claim(agent, {})).card?.id, other);
			await b.release(agent, { cardId: other });
			await b.block(human, { cardId: other, reason: 'out of the way' });

			const cleared = await b.pauses.clear(human, { scope: 'project', target: 'web' });
			assert.equal(cleared.cleared.length, 1);
			assert.deepEqual((await b.pauses.list()).pauses, []);
			assert.equal((await b.claim(agent, {})).card?.id, a);
			assert.equal((await b.claim(agent, { cardId: c })).card?.id, c);
		});

		it('pauses of everything, a phase, a card and a kind each keep exactly their cards', async () => {
			const [p1 = ''] = await cards(1, { phase: 'build' });
			const [p2 = ''] = await cards(1);
			await b.pauses.set(human, { scope: 'phase', target: 'build' });
			await b.pauses.set(human, { scope: 'card', target: p2, reason: 'needs a decision' });
			assert.equal((await b.claim(agent, {})).card, null);
			await refused(
				b.claim(agent, { cardId: p2 }),
				'invalid_transition',
				/card .* paused by cli:alice: needs a decision/,
			);
			await b.pauses.clear(human, { scope: 'card', target: p2 });
			await b.pauses.set(human, { scope: 'kind', target: 'claude', reason: '3 failures in a row' });
			assert.equal((await b.claim(claude, {})).card, null, 'a kind pause stops that kind');
			assert.equal((await b.claim(agent, {})).card?.id, p2, 'an agent of no kind is not that kind');
			await b.pauses.set(human, { scope: 'all' });
			assert.equal((await b.claim(codex, {})).card, null);
			await b.pauses.clear(human, { all: true });
			assert.equal((await b.claim(codex, {})).card?.id, p1);
		});

		it('complete {next} takes no paused card, on its one-call hand-over and on the follow-up claim', async () => {
			const [held = '', next = ''] = await cards(2, { project: 'web' });
			const claimed = await b.claim(agent, {});
			assert.equal(claimed.card?.id, held);
			await b.pauses.set(human, { scope: 'project', target: 'web', reason: 'stop' });
			const done = await b.complete(agent, { cardId: held, next: {} });
			assert.equal(done.card.status, 'done', 'a paused card still completes (drain)');
			assert.equal(done.next?.card ?? null, null);
			assert.match(done.next?.reason ?? '', /paused \(project web paused by cli:alice: stop\)/);
			assert.equal((await get(next)).status, 'ready');
		});

		it('refuses a pause of a project or card that does not exist, and a kind or target that is not one', async () => {
			await refused(
				b.pauses.set(human, { scope: 'project', target: 'nosuch' }),
				'not_found',
				/Project nosuch does not exist/,
			);
			await refused(b.pauses.set(human, { scope: 'card', target: 'NOPE-1' }), 'not_found', /NOPE-1/);
			await refused(
				b.pauses.set(human, { scope: 'kind', target: 'Claude Code' }),
				'invalid_input',
				/not an agent kind/,
			);
			await refused(b.pauses.set(human, { scope: 'phase' }), 'invalid_input', /names its phase/);
			assert.deepEqual((await b.pauses.list()).pauses, [], 'nothing changed');
		});

		it('an assigned card is claimed only by its agent or kind', async () => {
			const [mine = '', kinds = ''] = await cards(2);
			const assigned = await b.dispatch.assign(human, { cardId: mine, assignee: 'worker-1' });
			assert.equal(assigned.card.assignee, 'worker-1');
			await b.dispatch.assign(human, { cardId: kinds, assignee: 'kind:codex' });
			assert.equal((await b.claim(claude, {})).card, null);
			await refused(b.claim(claude, { cardId: mine }), 'invalid_transition', /assigned to worker-1/);
			await refused(b.claim(claude, { cardId: kinds }), 'invalid_transition', /assigned to kind:codex/);
			assert.equal((await b.claim(codex, {})).card?.id, kinds);
			assert.equal((await b.claim(agent, {})).card?.id, mine);
			await b.release(agent, { cardId: mine });
			const cleared = await b.dispatch.assign(human, { cardId: mine, assignee: null });
			assert.equal(cleared.card.assignee, null);
			assert.equal((await b.claim(claude, {})).card?.id, mine);
		});

		it('max-held refuses a claim beyond N held cards, with the reason', async () => {
			const [one = '', two = ''] = await cards(2);
			await b.updateSettings(human, { maxHeld: 1 });
			assert.equal((await b.settings()).maxHeld, 1);
			assert.equal((await b.claim(agent, {})).card?.id, one);
			const second = await b.claim(agent, {});
			assert.equal(second.card, null);
			assert.match(second.reason ?? '', /agent worker-1 already holds 1 card \(max-held 1\)/);
			await refused(b.claim(agent, { cardId: two }), 'invalid_transition', /already holds 1 card \(max-held 1\)/);
			assert.equal((await b.claim(codex, {})).card?.id, two, 'another agent may');
			await b.updateSettings(human, { maxHeld: null });
		});

		if (store === 'postgres') {
			it('max-held holds when one agent claims through two hubs at the same moment', async () => {
				await cards(16);
				await b.updateSettings(human, { maxHeld: 1 });
				const other = await Backlog.open(suite.options);
				try {
					for (let round = 0; round < 8; round++) {
						const got = await Promise.all([b.claim(agent, {}), other.claim(agent, {})]);
						const held = (await b.list(human, { status: 'claimed', limit: 1000 })).cards.filter(
							c => c.claimOwner === agent.actor,
						);
						assert.equal(held.length, 1, `round ${round}: ${held.length} cards held under max-held 1`);
						assert.equal(got.filter(r => r.card !== null).length, 1);
						assert.match(got.find(r => r.card === null)?.reason ?? '', /already holds 1 card \(max-held 1\)/);
						await b.release(human, { cardId: held[0]?.id ?? '', force: true });
					}
				} finally {
					await other.close();
					await b.updateSettings(human, { maxHeld: null });
				}
			});
		}

		it('aging orders ready cards by effective priority, shown on card/get', async () => {
			const [old = ''] = await cards(1, { priority: 1 });
			clock.advance(5 * 3600);
			const [fresh = ''] = await cards(1, { priority: 3 });
			assert.equal((await b.get(human, { cardId: old })).effectivePriority, undefined, 'off by default');
			await b.updateSettings(human, { agingHours: 1 });
			assert.equal((await b.get(human, { cardId: old })).effectivePriority, 6);
			assert.equal((await b.get(human, { cardId: fresh })).effectivePriority, 3);
			assert.equal((await b.claim(agent, {})).card?.id, old, 'waited 5 h: 1 + 5 beats 3');
			const held = await b.claim(agent, { cardId: fresh });
			await b.complete(agent, { cardId: old, result: 'ok', next: {} });
			assert.equal(held.card?.id, fresh);
			await b.updateSettings(human, { agingHours: null });
			assert.equal((await b.claim(codex, {})).card, null);
		});

		it("a dispatched claim records its seat, keeps the project's seat limits and is cleared when the claim ends", async () => {
			const [c0 = '', c1 = '', c2 = ''] = await cards(4, { project: 'seats' });
			await b.updateProjectSettings(human, { project: 'seats', seats: 2, kindSeats: { codex: 1 } });
			const { events, stop } = recording();
			const first = await b.claim({ ...claude, host: 'box' }, { dispatch: seat(1) });
			stop();
			assert.equal(first.card?.id, c0);
			assert.deepEqual(first.card.dispatch, {
				run: 'default',
				seat: 1,
				kind: 'claude',
				host: 'box',
				startedAt: clock.now().toISOString(),
			});
			const claimedEvent = events.find(e => e.type === 'claimed');
			assert.equal(claimedEvent?.data.card?.dispatch?.seat, 1, 'the claimed event carries the record');
			const second = await b.claim(codex, { dispatch: seat(2, 'codex') });
			assert.equal(second.card?.id, c1);
			const third = await b.claim(
				{ ...codex, actor: 'codex-2', session: 'session-codex-2-000000' },
				{
					dispatch: seat(3, 'codex'),
				},
			);
			assert.equal(third.card, null);
			assert.match(third.reason ?? '', /project seats has 2 of 2 seats in use/);
			await refused(
				b.claim({ ...codex, actor: 'codex-3' }, { cardId: c2, dispatch: seat(3, 'codex') }),
				'invalid_transition',
				/project seats has 2 of 2 seats in use/,
			);
			// Ending a claim frees its seat and clears the record.
			const released = await b.release(codex, { cardId: c1, refundAttempt: true });
			assert.equal(released.card.dispatch, null);
			assert.equal(released.card.attempts, 0, 'the attempt is given back');
			const kindFull = await b.updateProjectSettings(human, { project: 'seats', kindSeats: { codex: 0 } });
			assert.deepEqual(kindFull.kindSeats, { codex: 0 });
			const refusedKind = await b.claim(codex, { dispatch: seat(2, 'codex') });
			assert.match(refusedKind.reason ?? '', /project seats has 0 of 0 codex seats in use/);
			const done = await b.complete(claude, { cardId: c0, result: 'ok' });
			assert.equal(done.card.dispatch, null);
			const failed = await b.claim(claude, { dispatch: seat(1) });
			assert.ok(failed.card?.dispatch);
			const afterFail = await b.fail(claude, {
				cardId: failed.card.id,
				reason: 'agent exited with code 1 before completing',
			});
			assert.equal(afterFail.card.dispatch, null);
		});

		it('the session that holds a card resumes it by claiming it: same card and lease, no event', async () => {
			const [id = ''] = await cards(1);
			const first = await b.claim(claude, { dispatch: seat(1) });
			assert.equal(first.card?.id, id);
			const { events, stop } = recording();
			const again = await b.claim({ actor: claude.actor, session: claude.session }, { cardId: id });
			stop();
			assert.deepEqual(events, []);
			assert.equal(again.card?.claimEpoch, first.card.claimEpoch);
			assert.deepEqual(again.lease, first.lease);
			assert.equal(again.card.dispatch?.seat, 1);
			await refused(
				b.claim({ actor: claude.actor, session: 'session-elsewhere-0000' }, { cardId: id }),
				'conflict',
				/already hold/,
			);
			const updated = await b.dispatch.update(claude, {
				cardId: id,
				epoch: first.card.claimEpoch,
				pid: 4242,
				output: ['hello'],
			});
			assert.equal(updated.card.dispatch?.pid, 4242);
			assert.deepEqual(updated.card.dispatch.output, ['hello']);
			await refused(b.dispatch.update(codex, { cardId: id, epoch: 1, pid: 1 }), 'lease_lost');
			const seen = recording();
			await b.dispatch.exited(claude, {
				cardId: id,
				run: 'default',
				seat: 1,
				kind: 'claude',
				reason: 'exited',
				code: 1,
			});
			seen.stop();
			assert.equal(seen.events[0]?.type, 'agent_exited');
			assert.equal(seen.events[0].data.card?.id, id, 'the card as it is, not a deletion');
			// A lease that runs out clears the record too.
			clock.advance(400);
			await b.reclaim(human, {});
			assert.equal((await get(id)).dispatch, null);
		});

		it('an export keeps the assignee and an import restores it; a dump keeps the pauses', async () => {
			const [id = ''] = await cards(1);
			await b.dispatch.assign(human, { cardId: id, assignee: 'kind:codex' });
			const exported = (await b.exportCards({})).cards.filter(c => c.id === id);
			assert.equal(exported[0]?.assignee, 'kind:codex');
			const other = await openTestBacklog(store);
			try {
				await other.backlog.importCards(human, { cards: exported });
				assert.equal((await other.backlog.get(human, { cardId: id })).card.assignee, 'kind:codex');
			} finally {
				await other.cleanup();
			}
			await b.pauses.set(human, { scope: 'phase', target: 'later', reason: 'kept' });
			const rows = await readDump((b as unknown as { db: Db }).db);
			assert.equal(rows.pauses.length, 1);
			assert.match(rows.pauses[0] ?? '', /"reason":"kept"/);
		});

		it('runs register, list with seats in use, stop and end', async () => {
			const reg = await b.dispatch.register(human, {
				name: 'default',
				host: 'box',
				pid: 99,
				seats: 4,
				kinds: ['claude'],
				project: null,
			});
			assert.equal(reg.run.inUse, 0);
			assert.equal(reg.run.gone, false);
			await cards(1);
			await b.claim(claude, { dispatch: seat(1) });
			assert.equal((await b.dispatch.list()).runs[0]?.inUse, 1);
			const stopped = await b.dispatch.stop(human, { name: 'default', stop: true });
			assert.equal(stopped.runs[0]?.stopping, 'stop');
			await refused(b.dispatch.stop(human, { name: 'other' }), 'not_found', /No run is named other/);
			clock.advance(31);
			assert.equal((await b.dispatch.list()).runs[0]?.gone, true);
			await b.dispatch.end(human, { name: 'default' });
			assert.deepEqual((await b.dispatch.list()).runs, []);
		});

		it("a second live supervisor under a run's name is refused with who holds it; a gone one is replaced", async () => {
			const run = { name: 'twin', seats: 1, kinds: ['claude'], project: null };
			await b.dispatch.register(human, { ...run, host: 'box', pid: 10 });
			const before = await suite.backlog.listEvents({ limit: 1 });
			await refused(
				b.dispatch.register(human, { ...run, host: 'box', pid: 11 }),
				'conflict',
				/A supervisor named twin is running: pid 10 on box, seen 0 s ago\. Stop it first/,
			);
			await refused(b.dispatch.register(human, { ...run, host: 'other', pid: 10 }), 'conflict', /pid 10 on box/);
			assert.equal((await b.dispatch.list()).runs.find(r => r.name === 'twin')?.pid, 10);
			assert.equal((await suite.backlog.listEvents({ limit: 1 })).lastSeq, before.lastSeq);
			// Its own re-registration goes on; once not seen for 30 s, another takes the name.
			await b.dispatch.register(human, { ...run, host: 'box', pid: 10 });
			clock.advance(31);
			const taken = await b.dispatch.register(human, { ...run, host: 'box', pid: 11 });
			assert.equal(taken.run.pid, 11);
			// On the hub's own host a dead pid is gone at once (a supervisor killed and restarted adopts).
			await b.dispatch.end(human, { name: 'twin' });
			const here = { ...run, host: hostname() };
			await b.dispatch.register(human, { ...here, pid: 20 });
			await refused(
				b.dispatch.register(human, { ...here, pid: 21 }, () => true),
				'conflict',
				/pid 20 on/,
			);
			const restarted = await b.dispatch.register(human, { ...here, pid: 21 }, pid => pid !== 20);
			assert.equal(restarted.run.pid, 21);
			await b.dispatch.end(human, { name: 'twin' });
		});
	});
}
