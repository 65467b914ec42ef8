/**
 * The Backlog through its real interface on real PGlite and, in the same run, real PostgreSQL: every
 * operation, fencing, TTL and backoff on a fake clock (no sleeps), the dependency gate, cycles,
 * capabilities, idempotency, version conflicts, size limits and refusals that change nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import { createLogger } from '../../core/log';
import { type Card, type ErrorCode, CreateCardInput, UpdateParams, limits } from '../../core/protocol';
import type { Db, Queryable } from '../../core/store/db';
import { allCards, openTestBacklog, storeKinds, type TestBacklog } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const alice: OpContext = { actor: 'alice' };
const bob: OpContext = { actor: 'bob' };
const human: OpContext = { actor: 'vscode:human' };

/** Everything observable about the store: all cards, and the last event seq. */
async function snapshot(b: Backlog): Promise<{ cards: Card[]; lastSeq: number; stats: unknown }> {
	const cards = await allCards(b);
	const { agents: _agents, oldestReadyAgeSeconds: _age, ...stats } = await b.stats(human, {});
	return { cards, lastSeq: await b.lastSeq(), stats };
}

/** Asserts that `op` is refused with `code` and leaves the store exactly as it was. */
async function refusedWithoutChange(
	b: Backlog,
	op: () => Promise<unknown>,
	code: ErrorCode,
	text?: RegExp,
): Promise<void> {
	const beforeState = await snapshot(b);
	await refused(op(), code, text);
	assert.deepEqual(await snapshot(b), beforeState, 'a refused operation changed the store');
}

/** Runs `claim` with the backlog's store wrapped and counts the "nothing claimable" counting query it sent. */
async function explainingQueries<T>(b: Backlog, claim: () => Promise<T>): Promise<{ result: T; count: number }> {
	const holder = b as unknown as { db: Db };
	const db = holder.db;
	let count = 0;
	const recording = (tx: Queryable): Queryable => ({
		query: (text, params, name) => {
			if (text.includes('ready_total')) {
				count++;
			}
			return tx.query(text, params, name);
		},
	});
	holder.db = new Proxy(db, {
		get(target, prop) {
			if (prop === 'transaction') {
				return <R>(fn: (tx: Queryable) => Promise<R>) => target.transaction(tx => fn(recording(tx)));
			}
			const value: unknown = Reflect.get(target, prop, target);
			return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
		},
	});
	try {
		return { result: await claim(), count };
	} finally {
		holder.db = db;
	}
}

let counter = 0;
/** A unique id prefix per test, so tests sharing one backlog never touch each other's cards. */
const prefix = (): string => `t${++counter}-`;

for (const kind of storeKinds) {
	describe(`Backlog on ${kind}`, () => {
		let t: TestBacklog;
		let b: Backlog;
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');
		/** What the backlog logged (its diagnostics: a listener that threw). */
		const logged: string[] = [];
		const log = createLogger('backlog', { write: line => logged.push(line) });

		before(async () => {
			t = await openTestBacklog(kind, { clock, defaultTtlSeconds: 120, log });
			b = t.backlog;
		});
		after(async () => {
			await t.cleanup();
		});

		describe('create', () => {
			it('creates cards with supplied and generated ids, one created event each', async () => {
				const p = prefix();
				const seq = await b.lastSeq();
				const { cards } = await b.create(alice, {
					cards: [
						{
							id: `${p}a`,
							title: 'Write the parser',
							body: '**bold**',
							phase: 'p1',
							priority: 3,
							acceptance: ['parses'],
						},
						{ title: 'Generated id', requires: ['lang:ts', 'lang:ts'] },
					],
				});
				assert.equal(cards.length, 2);
				const [a, g] = cards as [Card, Card];
				assert.equal(a.id, `${p}a`);
				assert.equal(a.status, 'ready');
				assert.equal(a.priority, 3);
				assert.deepEqual(a.acceptance, ['parses']);
				assert.equal(a.version, 1);
				assert.match(g.id, /^CARD-\d+$/); // a readable id
				assert.deepEqual(g.requires, ['lang:ts']);
				const events = await b.eventsAfter(seq, 10);
				assert.deepEqual(
					events.map(e => [e.type, e.cardId, e.actor]),
					[
						['created', a.id, 'alice'],
						['created', g.id, 'alice'],
					],
				);
				assert.deepEqual(events[0]?.data.card, a);
			});

			it('accepts dependencies inside the batch in any order and counts unmet ones', async () => {
				const p = prefix();
				await b.create(alice, { cards: [{ id: `${p}done`, title: 'done dep' }] });
				await b.complete(human, { cardId: `${p}done`, force: true });
				const { cards } = await b.create(alice, {
					cards: [
						{ id: `${p}c`, title: 'C', dependsOn: [`${p}b`, `${p}done`] },
						{ id: `${p}b`, title: 'B' },
					],
				});
				assert.deepEqual(cards[0]?.dependsOn, [`${p}b`, `${p}done`]);
				assert.equal(cards[0].unmetDeps, 1);
			});

			it('refuses unknown dependencies, duplicate and existing ids, and batch cycles, changing nothing', async () => {
				const p = prefix();
				await b.create(alice, { cards: [{ id: `${p}x`, title: 'X' }] });
				await refusedWithoutChange(
					b,
					() => b.create(alice, { cards: [{ id: `${p}y`, title: 'Y', dependsOn: [`${p}nope`] }] }),
					'not_found',
					new RegExp(`Unknown dependency id: ${p}nope`),
				);
				await refusedWithoutChange(
					b,
					() =>
						b.create(alice, {
							cards: [
								{ id: `${p}y`, title: 'Y' },
								{ id: `${p}y`, title: 'Y again' },
							],
						}),
					'invalid_input',
					/appears twice/,
				);
				await refusedWithoutChange(
					b,
					() =>
						b.create(alice, {
							cards: [
								{ id: `${p}z`, title: 'Z' },
								{ id: `${p}x`, title: 'X again' },
							],
						}),
					'conflict',
					new RegExp(`Card ${p}x already exists`),
				);
				const e = await refused(
					b.create(alice, {
						cards: [
							{ id: `${p}1`, title: '1', dependsOn: [`${p}2`] },
							{ id: `${p}2`, title: '2', dependsOn: [`${p}1`] },
						],
					}),
					'cycle',
				);
				assert.match(e.message, / → /);
			});

			it('is idempotent by key: a repeat returns the existing card and logs nothing', async () => {
				const p = prefix();
				const first = await b.create(alice, { cards: [{ id: `${p}k`, title: 'Keyed', idempotencyKey: `${p}key` }] });
				const seq = await b.lastSeq();
				const again = await b.create(bob, {
					cards: [
						{ title: 'Keyed (re-sent)', idempotencyKey: `${p}key` },
						{ id: `${p}n`, title: 'new one', idempotencyKey: `${p}key2` },
						{ title: 'same key twice in a batch', idempotencyKey: `${p}key2` },
					],
				});
				assert.deepEqual(again.cards[0], first.cards[0]);
				assert.equal(again.cards[1]?.id, `${p}n`);
				assert.deepEqual(again.cards[2], again.cards[1]);
				assert.equal((await b.eventsAfter(seq, 10)).length, 1);
			});

			it('refuses oversized text both in the protocol schema and in core', async () => {
				const longTitle = 'x'.repeat(limits.titleLength + 1);
				const bigBody = 'é'.repeat(limits.bodyBytes / 2 + 1); // 2 bytes each in UTF-8
				assert.equal(CreateCardInput.safeParse({ title: longTitle }).success, false);
				assert.equal(CreateCardInput.safeParse({ title: 'x'.repeat(limits.titleLength) }).success, true);
				assert.equal(CreateCardInput.safeParse({ title: 'ok', body: bigBody }).success, false);
				assert.equal(CreateCardInput.safeParse({ title: 'ok', body: 'é'.repeat(limits.bodyBytes / 2) }).success, true);
				assert.equal(UpdateParams.safeParse({ cardId: 'A1', title: longTitle }).success, false);
				// What reaches core without the schema is refused there too.
				await refusedWithoutChange(
					b,
					() => b.create(alice, { cards: [{ title: longTitle }] }),
					'invalid_input',
					/title has 201/,
				);
				await refusedWithoutChange(
					b,
					() => b.create(alice, { cards: [{ title: 'ok', body: bigBody }] }),
					'invalid_input',
					/65538 bytes/,
				);
				const p = prefix();
				await b.create(alice, { cards: [{ id: `${p}s`, title: 'small' }] });
				await refusedWithoutChange(
					b,
					() => b.update(alice, { cardId: `${p}s`, body: bigBody }),
					'invalid_input',
					/64 KiB/,
				);
			});
		});

		describe('claim', () => {
			it('takes max priority, then oldest, and returns the lease', async () => {
				const p = prefix();
				const phase = `${p}phase`;
				await b.create(alice, { cards: [{ id: `${p}old`, title: 'old', phase }] });
				clock.advance(1);
				await b.create(alice, {
					cards: [
						{ id: `${p}new`, title: 'new', phase },
						{ id: `${p}hi`, title: 'hi', phase, priority: 5 },
					],
				});
				const order: string[] = [];
				for (let i = 0; i < 3; i++) {
					const r = await b.claim(bob, { phase });
					assert.ok(r.card !== null && r.lease !== null);
					assert.equal(r.card.status, 'claimed');
					assert.equal(r.card.claimOwner, 'bob');
					assert.equal(r.card.attempts, 1);
					assert.deepEqual(r.lease, { cardId: r.card.id, epoch: r.card.claimEpoch, expiresAt: r.card.leaseExpiresAt });
					assert.equal(Date.parse(r.lease.expiresAt) - clock.now().getTime(), 120_000);
					order.push(r.card.id);
				}
				assert.deepEqual(order, [`${p}hi`, `${p}old`, `${p}new`]);
				const none = await b.claim(bob, { phase });
				assert.equal(none.card, null);
				assert.equal(none.lease, null);
				assert.match(none.reason ?? '', /Nothing claimable/);
			});

			it('gates on dependencies: a card is claimable only once every dependency is done', async () => {
				const p = prefix();
				const phase = `${p}phase`;
				await b.create(alice, {
					cards: [
						{ id: `${p}a`, title: 'a', phase },
						{ id: `${p}b`, title: 'b', phase },
						{ id: `${p}c`, title: 'c', phase, dependsOn: [`${p}a`, `${p}b`], priority: 9 },
					],
				});
				await refused(
					b.claim(bob, { cardId: `${p}c` }),
					'invalid_transition',
					new RegExp(`waits on 2 unfinished dependencies \\(${p}a, ${p}b\\)`),
				);
				const first = await b.claim(bob, { phase });
				const second = await b.claim(alice, { phase });
				assert.deepEqual([first.card?.id, second.card?.id].sort(), [`${p}a`, `${p}b`]);
				const c1 = await b.complete(bob, { cardId: first.card?.id ?? '', epoch: first.lease?.epoch ?? -1 });
				assert.deepEqual(c1.unblocked, []);
				const readiness = (await b.eventsAfter((await b.lastSeq()) - 1, 1))[0]?.data.readiness;
				assert.deepEqual(readiness, [{ id: `${p}c`, unmetDeps: 1 }]);
				assert.equal((await b.claim(bob, { phase })).card, null);
				const c2 = await b.complete(alice, { cardId: second.card?.id ?? '', epoch: second.lease?.epoch ?? -1 });
				assert.deepEqual(c2.unblocked, [`${p}c`]);
				assert.equal((await b.claim(bob, { phase })).card?.id, `${p}c`);
			});

			it('matches capabilities: requires must be a subset of what the claimer advertises', async () => {
				const p = prefix();
				const phase = `${p}phase`;
				await b.create(alice, {
					cards: [{ id: `${p}rust`, title: 'rust', phase, requires: ['lang:rust', 'os:linux'] }],
				});
				const none = await b.claim(bob, { phase, capabilities: ['os:linux'] });
				assert.equal(none.card, null);
				assert.match(none.reason ?? '', /needs capabilities you lack \[lang:rust\]/);
				await refused(
					b.claim(bob, { cardId: `${p}rust`, capabilities: ['lang:ts'] }),
					'invalid_transition',
					/lack \[lang:rust, os:linux\]/,
				);
				const got = await b.claim(bob, { phase, capabilities: ['lang:rust', 'os:linux', 'lang:ts'] });
				assert.equal(got.card?.id, `${p}rust`);
			});

			it('explains "nothing claimable" only when asked: a waiting claim\'s retries skip the count', async () => {
				const p = prefix();
				const phase = `${p}phase`;
				await b.create(alice, {
					cards: [
						{ id: `${p}a`, title: 'a', phase: `${p}other` },
						{ id: `${p}b`, title: 'b', phase, dependsOn: [`${p}a`] },
					],
				});
				const retry = await explainingQueries(b, () => b.claim(bob, { phase }, { explain: false }));
				assert.deepEqual(retry.result, { card: null, lease: null });
				assert.equal(retry.count, 0, 'a retry runs no explaining query');
				const final = await explainingQueries(b, () => b.claim(bob, { phase }));
				assert.equal(final.result.card, null);
				assert.match(final.result.reason ?? '', /Nothing claimable/);
				assert.equal(final.count, 1, 'the final answer explains once');
				// Asked not to explain, a claim still takes a card when there is one.
				const got = await b.claim(bob, { phase: `${p}other` }, { explain: false });
				assert.equal(got.card?.id, `${p}a`);
			});

			it('claims a given card by id and refuses a card someone holds', async () => {
				const p = prefix();
				await b.create(alice, { cards: [{ id: `${p}a`, title: 'a' }] });
				const r = await b.claim(alice, { cardId: `${p}a`, ttlSeconds: 30 });
				assert.equal(r.lease?.epoch, 1);
				assert.equal(r.card?.leaseSeconds, 30);
				await refusedWithoutChange(
					b,
					() => b.claim(bob, { cardId: `${p}a` }),
					'conflict',
					/claimed by agent alice \(epoch 1/,
				);
				await refusedWithoutChange(b, () => b.claim(alice, { cardId: `${p}a` }), 'conflict', /You already hold/);
				await refusedWithoutChange(b, () => b.claim(bob, { cardId: `${p}missing` }), 'not_found');
			});
		});

		describe('complete with next', () => {
			it('completes and claims the next best card in one call, logging completed then claimed', async () => {
				const p = prefix();
				const phase = `${p}phase`;
				await b.create(alice, {
					cards: [
						{ id: `${p}first`, title: 'first', phase, priority: 9 },
						{ id: `${p}low`, title: 'low', phase, priority: 1 },
						{ id: `${p}high`, title: 'high', phase, priority: 5 },
						{ id: `${p}gpu`, title: 'needs a gpu', phase, priority: 7, requires: ['gpu'] },
					],
				});
				const first = await b.claim(bob, { phase });
				assert.equal(first.card?.id, `${p}first`);
				const seen: string[] = [];
				const off = b.onCommitted(events => seen.push(...events.map(e => `${e.seq}:${e.type}:${e.cardId}`)));
				const seq = await b.lastSeq();
				const r = await b.complete(bob, {
					cardId: `${p}first`,
					epoch: first.lease?.epoch,
					result: 'shipped',
					next: { phase, ttlSeconds: 60 },
				});
				off();
				assert.equal(r.card.status, 'done');
				assert.equal(r.card.result, 'shipped');
				// The gpu card outranks `high` but bob does not advertise gpu.
				const next = r.next;
				assert.ok(next?.card && next.lease, 'a next card was claimed');
				assert.equal(next.card.id, `${p}high`);
				assert.equal(next.card.claimOwner, 'bob');
				assert.equal(next.card.attempts, 1);
				assert.deepEqual(next.lease, {
					cardId: `${p}high`,
					epoch: next.card.claimEpoch,
					expiresAt: next.card.leaseExpiresAt,
				});
				assert.equal(Date.parse(next.lease.expiresAt) - clock.now().getTime(), 60_000);
				assert.deepEqual(seen, [`${seq + 1}:completed:${p}first`, `${seq + 2}:claimed:${p}high`]);
				const logged = await b.listEvents({ afterSeq: seq });
				assert.deepEqual(
					logged.events.map(e => `${e.seq}:${e.type}:${e.cardId}`),
					seen,
				);
				assert.equal(logged.events[1]?.data.card?.claimOwner, 'bob');
				// The lease it returned is a real one: heartbeat and complete with it.
				await b.heartbeat(bob, { cardId: `${p}high`, epoch: next.lease.epoch, progress: 50 });
				const withCaps = await b.complete(bob, {
					cardId: `${p}high`,
					epoch: next.lease.epoch,
					next: { phase, capabilities: ['gpu'] },
				});
				assert.equal(withCaps.next?.card?.id, `${p}gpu`);
			});

			it('claims a card this completion unblocked, and says why when nothing is claimable', async () => {
				const p = prefix();
				const phase = `${p}phase`;
				await b.create(alice, {
					cards: [
						{ id: `${p}a`, title: 'a', phase },
						{ id: `${p}b`, title: 'b', phase, dependsOn: [`${p}a`] },
					],
				});
				const a = await b.claim(bob, { phase });
				const r = await b.complete(bob, { cardId: `${p}a`, epoch: a.lease?.epoch, next: { phase } });
				assert.deepEqual(r.unblocked, [`${p}b`]);
				const freed = r.next?.lease;
				assert.equal(freed?.cardId, `${p}b`, 'the card freed by this completion is the next one');
				const last = await b.complete(bob, { cardId: `${p}b`, epoch: freed.epoch, next: { phase } });
				assert.equal(last.card.status, 'done');
				assert.deepEqual(last.next && { card: last.next.card, lease: last.next.lease }, { card: null, lease: null });
				assert.match(last.next?.reason ?? '', /Nothing claimable/);
			});

			it('claims nothing when the completion is refused, and changes nothing', async () => {
				const p = prefix();
				const phase = `${p}phase`;
				await b.create(alice, {
					cards: [
						{ id: `${p}held`, title: 'held', phase, priority: 3 },
						{ id: `${p}spare`, title: 'spare', phase },
					],
				});
				const held = await b.claim(bob, { phase });
				assert.equal(held.card?.id, `${p}held`);
				await b.reclaim(human, { cardId: `${p}held` });
				await refusedWithoutChange(
					b,
					() => b.complete(bob, { cardId: `${p}held`, epoch: held.lease?.epoch, next: { phase } }),
					'lease_lost',
				);
				await refusedWithoutChange(b, () => b.complete(alice, { cardId: `${p}nope`, next: { phase } }), 'not_found');
			});

			it('replays a keyed complete-with-next, next card included, instead of claiming again', async () => {
				const p = prefix();
				const phase = `${p}phase`;
				await b.create(alice, {
					cards: [
						{ id: `${p}a`, title: 'a', phase, priority: 2 },
						{ id: `${p}b`, title: 'b', phase, priority: 1 },
						{ id: `${p}c`, title: 'c', phase },
					],
				});
				const a = await b.claim(bob, { phase });
				const key = { actor: 'bob', requestKey: `${p}complete-1` };
				const params = { cardId: `${p}a`, epoch: a.lease?.epoch, next: { phase } };
				const first = await b.complete(key, params);
				assert.equal(first.next?.card?.id, `${p}b`);
				const seq = await b.lastSeq();
				assert.deepEqual(await b.complete(key, params), first);
				assert.equal(await b.lastSeq(), seq, 'the replay logged nothing');
				assert.equal((await b.get(human, { cardId: `${p}c` })).card.status, 'ready', 'no second card was taken');
			});
		});

		describe('leases', () => {
			it('fences the old holder after a forced reclaim: heartbeat, complete, release and fail are refused', async () => {
				const p = prefix();
				await b.create(alice, { cards: [{ id: `${p}a`, title: 'a' }] });
				const old = await b.claim(alice, { cardId: `${p}a` });
				const oldEpoch = old.lease?.epoch ?? -1;
				const [reclaimed] = (await b.reclaim(human, { cardId: `${p}a`, reason: 'stuck' })).cards;
				assert.equal(reclaimed?.status, 'ready');
				assert.equal(reclaimed.claimEpoch, oldEpoch + 1);
				const stale = { cardId: `${p}a`, epoch: oldEpoch };
				for (const op of [
					() => b.heartbeat(alice, { ...stale, progress: 10 }),
					() => b.complete(alice, stale),
					() => b.release(alice, stale),
					() => b.fail(alice, { ...stale, reason: 'x' }),
				]) {
					await refusedWithoutChange(b, op, 'lease_lost', /no longer leased.*your lease has epoch/);
				}
				// Someone else claims it: the old lease now meets a different holder, and still loses.
				const fresh = await b.claim(bob, { cardId: `${p}a` });
				assert.equal(fresh.lease?.epoch, oldEpoch + 2);
				for (const op of [
					() => b.heartbeat(alice, stale),
					() => b.complete(alice, stale),
					() => b.release(alice, stale),
					() => b.fail(alice, { ...stale, reason: 'x' }),
				]) {
					await refusedWithoutChange(
						b,
						op,
						'lease_lost',
						new RegExp(
							`Card ${p}a is leased to agent bob \\(epoch ${oldEpoch + 2}\\); your lease has epoch ${oldEpoch}`,
						),
					);
				}
				await b.complete(bob, { cardId: `${p}a`, epoch: fresh.lease.epoch, result: 'shipped' });
			});

			it('expires leases by TTL on the injected clock; reclaim returns them and bumps the epoch', async () => {
				const p = prefix();
				await b.create(alice, { cards: [{ id: `${p}a`, title: 'a' }] });
				const c = await b.claim(alice, { cardId: `${p}a`, ttlSeconds: 30 });
				assert.equal((await b.nextLeaseExpiry())?.toISOString() !== undefined, true);
				clock.advance(20);
				const hb = await b.heartbeat(alice, { cardId: `${p}a`, epoch: c.lease?.epoch ?? -1 });
				assert.equal(Date.parse(hb.lease.expiresAt) - clock.now().getTime(), 30_000, 'heartbeat renews by the TTL');
				clock.advance(29);
				assert.deepEqual(
					(await b.reclaim({ actor: 'hub' }, {})).cards.filter(x => x.id === `${p}a`),
					[],
				);
				clock.advance(2);
				await refusedWithoutChange(
					b,
					() => b.complete(alice, { cardId: `${p}a`, epoch: c.lease?.epoch ?? -1 }),
					'lease_lost',
					/expired at/,
				);
				const stats = await b.stats(human, {});
				assert.ok(stats.expiredClaims >= 1);
				const reaped = (await b.reclaim({ actor: 'hub' }, {})).cards.find(x => x.id === `${p}a`);
				assert.equal(reaped?.status, 'ready');
				assert.equal(reaped.claimEpoch, (c.lease?.epoch ?? -1) + 1);
				const event = (await b.listEvents({ cardId: `${p}a` })).events.at(-1);
				assert.equal(event?.type, 'reclaimed');
				assert.equal(event.actor, 'hub');
				assert.equal(event.data.previousOwner, 'alice');
				assert.equal(event.data.reason, 'lease expired');
			});

			it('heartbeats renew by the lease TTL and log an event only when progress or the note changes', async () => {
				const p = prefix();
				await b.create(alice, { cards: [{ id: `${p}a`, title: 'a' }] });
				const c = await b.claim(bob, { cardId: `${p}a`, ttlSeconds: 45 });
				const lease = { cardId: `${p}a`, epoch: c.lease?.epoch ?? -1 };
				const seq = await b.lastSeq();
				clock.advance(10);
				const renewed = await b.heartbeat(bob, lease);
				assert.equal(Date.parse(renewed.lease.expiresAt) - clock.now().getTime(), 45_000);
				assert.equal(renewed.card.version, c.card?.version);
				assert.equal(await b.lastSeq(), seq, 'a bare renewal is not logged');
				const moved = await b.heartbeat(bob, { ...lease, progress: 20, note: 'parsing' });
				assert.equal(moved.card.version, (c.card?.version ?? 0) + 1);
				assert.equal(await b.lastSeq(), seq + 1);
				const same = await b.heartbeat(bob, { ...lease, progress: 20, ttlSeconds: 90 });
				assert.equal(await b.lastSeq(), seq + 1, 'unchanged progress is not logged');
				assert.equal(same.card.progressAt, clock.now().toISOString(), 'reporting progress resets the stall clock');
				assert.equal(Date.parse(same.lease.expiresAt) - clock.now().getTime(), 90_000);
				const event = (await b.listEvents({ cardId: `${p}a` })).events.at(-1);
				assert.equal(event?.type, 'heartbeat');
				assert.equal(event.data.card?.progressNote, 'parsing');
				const key = { actor: 'bob', requestKey: `${p}hb` };
				const first = await b.heartbeat(key, { ...lease, progress: 60 });
				clock.advance(5);
				assert.deepEqual(await b.heartbeat(key, { ...lease, progress: 60 }), first, 'a keyed re-send replays');
				await refusedWithoutChange(b, () => b.heartbeat(alice, lease), 'lease_lost', /leased to agent bob/);
			});

			it('a liveness ping renews every live lease of the agent, unlogged', async () => {
				const p = prefix();
				await b.create(alice, {
					cards: [
						{ id: `${p}a`, title: 'a' },
						{ id: `${p}b`, title: 'b' },
					],
				});
				await b.claim({ actor: `${p}agent` }, { cardId: `${p}a`, ttlSeconds: 60 });
				await b.claim({ actor: `${p}agent` }, { cardId: `${p}b`, ttlSeconds: 100 });
				clock.advance(50);
				const seq = await b.lastSeq();
				assert.deepEqual(await b.ping({ actor: `${p}agent` }), { renewed: 2 });
				assert.equal(await b.lastSeq(), seq);
				const a = (await b.get(human, { cardId: `${p}a` })).card;
				const bb = (await b.get(human, { cardId: `${p}b` })).card;
				assert.equal(Date.parse(a.leaseExpiresAt ?? '') - clock.now().getTime(), 60_000);
				assert.equal(Date.parse(bb.leaseExpiresAt ?? '') - clock.now().getTime(), 100_000);
				await b.releaseAgent({ actor: 'hub' }, `${p}agent`, 'agent disconnected');
			});

			it('fail retries after a backoff on the clock, then parks in blocked at maxAttempts', async () => {
				const p = prefix();
				const phase = `${p}phase`;
				await b.create(alice, { cards: [{ id: `${p}f`, title: 'flaky', phase, maxAttempts: 2 }] });
				const one = await b.claim(bob, { phase });
				const failed = await b.fail(bob, {
					cardId: `${p}f`,
					epoch: one.lease?.epoch ?? -1,
					reason: 'tests red',
					backoffSeconds: 60,
				});
				assert.equal(failed.card.status, 'ready');
				assert.equal(failed.card.deferUntil, new Date(clock.now().getTime() + 60_000).toISOString());
				assert.equal((await b.nextDeferredAt())?.toISOString(), failed.card.deferUntil);
				const wait = await b.claim(bob, { phase });
				assert.equal(wait.card, null);
				assert.match(wait.reason ?? '', /deferred by retry backoff/);
				clock.advance(61);
				const two = await b.claim(bob, { phase });
				assert.equal(two.card?.attempts, 2);
				const parked = await b.fail(bob, { cardId: `${p}f`, epoch: two.lease?.epoch ?? -1, reason: 'still red' });
				assert.equal(parked.card.status, 'blocked');
				assert.equal(parked.card.blockedReason, 'failed 2 of 2 attempts; last: still red; before: tests red');
				assert.equal(parked.card.failed, true, 'a card that used up its attempts is marked failed');
				const unblocked = await b.unblock(human, { cardId: `${p}f` });
				assert.equal(unblocked.card.attempts, 0);
				const attempts = (await b.get(human, { cardId: `${p}f` })).attempts;
				assert.deepEqual(
					attempts.map(a => [a.owner, a.outcome, a.reason]),
					[
						['bob', 'failed', 'tests red'],
						['bob', 'failed', 'still red'],
					],
				);
			});
		});

		describe('transitions through the store', () => {
			it('runs the legal path create → claim → heartbeat → complete → reopen → block → unblock → delete', async () => {
				const p = prefix();
				const id = `${p}a`;
				await b.create(alice, { cards: [{ id, title: 'a' }] });
				const c = await b.claim(bob, { cardId: id });
				const epoch = c.lease?.epoch ?? -1;
				const hb = await b.heartbeat(bob, { cardId: id, epoch, progress: 40, note: 'halfway' });
				assert.equal(hb.card.progress, 40);
				assert.equal(hb.card.progressNote, 'halfway');
				const done = await b.complete(bob, { cardId: id, epoch, result: 'commit abc123' });
				assert.equal(done.card.status, 'done');
				assert.equal(done.card.result, 'commit abc123');
				assert.equal(done.card.claimOwner, null);
				assert.equal((await b.reopen(human, { cardId: id, reason: 'regressed' })).card.status, 'ready');
				assert.equal((await b.block(human, { cardId: id, reason: 'needs design' })).card.status, 'blocked');
				assert.equal((await b.unblock(human, { cardId: id })).card.status, 'ready');
				const c2 = await b.claim(bob, { cardId: id });
				assert.equal(
					(await b.release(bob, { cardId: id, epoch: c2.lease?.epoch ?? -1, reason: 'lunch' })).card.status,
					'ready',
				);
				const c3 = await b.claim(alice, { cardId: id });
				const blocked = await b.block(human, { cardId: id, reason: 'halt' });
				assert.equal(blocked.card.claimEpoch, (c3.lease?.epoch ?? -1) + 1, 'blocking a held card fences its holder');
				await b.unblock(human, { cardId: id });
				assert.deepEqual(await b.delete(human, { cardId: id }), { deleted: id });
				const history = (await b.listEvents({ cardId: id, limit: 100 })).events.map(e => e.type);
				assert.deepEqual(history, [
					'created',
					'claimed',
					'heartbeat',
					'completed',
					'reopened',
					'blocked',
					'unblocked',
					'claimed',
					'released',
					'claimed',
					'blocked',
					'unblocked',
					'deleted',
				]);
				await refused(b.get(human, { cardId: id }), 'not_found');
			});

			it('refuses each illegal transition with its code and changes nothing', async () => {
				const p = prefix();
				await b.create(alice, {
					cards: [
						{ id: `${p}ready`, title: 'r' },
						{ id: `${p}claimed`, title: 'c' },
						{ id: `${p}blocked`, title: 'b' },
						{ id: `${p}done`, title: 'd' },
					],
				});
				await b.claim(bob, { cardId: `${p}claimed` });
				await b.block(human, { cardId: `${p}blocked`, reason: 'waiting' });
				await b.complete(human, { cardId: `${p}done`, force: true });
				const cases: [string, () => Promise<unknown>, ErrorCode][] = [
					['complete ready', () => b.complete(bob, { cardId: `${p}ready` }), 'invalid_transition'],
					['heartbeat ready', () => b.heartbeat(bob, { cardId: `${p}ready` }), 'invalid_transition'],
					['release ready', () => b.release(bob, { cardId: `${p}ready` }), 'invalid_transition'],
					['fail ready', () => b.fail(bob, { cardId: `${p}ready`, reason: 'x' }), 'invalid_transition'],
					['reclaim ready', () => b.reclaim(human, { cardId: `${p}ready` }), 'invalid_transition'],
					['unblock ready', () => b.unblock(human, { cardId: `${p}ready` }), 'invalid_transition'],
					['reopen ready', () => b.reopen(human, { cardId: `${p}ready` }), 'invalid_transition'],
					['claim claimed', () => b.claim(alice, { cardId: `${p}claimed` }), 'conflict'],
					['complete by non-holder', () => b.complete(alice, { cardId: `${p}claimed` }), 'lease_lost'],
					['unblock claimed', () => b.unblock(human, { cardId: `${p}claimed` }), 'invalid_transition'],
					['reopen claimed', () => b.reopen(human, { cardId: `${p}claimed` }), 'invalid_transition'],
					['delete claimed', () => b.delete(human, { cardId: `${p}claimed` }), 'invalid_transition'],
					['claim blocked', () => b.claim(alice, { cardId: `${p}blocked` }), 'invalid_transition'],
					['block blocked', () => b.block(human, { cardId: `${p}blocked`, reason: 'again' }), 'invalid_transition'],
					[
						'release blocked (force)',
						() => b.release(human, { cardId: `${p}blocked`, force: true }),
						'invalid_transition',
					],
					['reopen blocked', () => b.reopen(human, { cardId: `${p}blocked` }), 'invalid_transition'],
					['claim done', () => b.claim(alice, { cardId: `${p}done` }), 'invalid_transition'],
					['complete done (force)', () => b.complete(human, { cardId: `${p}done`, force: true }), 'invalid_transition'],
					['block done', () => b.block(human, { cardId: `${p}done`, reason: 'x' }), 'invalid_transition'],
					['unblock done', () => b.unblock(human, { cardId: `${p}done` }), 'invalid_transition'],
					['anything on a missing card', () => b.block(human, { cardId: `${p}nope`, reason: 'x' }), 'not_found'],
				];
				for (const [name, op, code] of cases) {
					await refusedWithoutChange(b, op, code).catch((e: unknown) => {
						throw new Error(`${name}: ${String(e)}`);
					});
				}
			});

			it('human overrides: force complete and force release fence the holder', async () => {
				const p = prefix();
				await b.create(alice, {
					cards: [
						{ id: `${p}a`, title: 'a' },
						{ id: `${p}b`, title: 'b' },
					],
				});
				const a = await b.claim(bob, { cardId: `${p}a` });
				const forced = await b.complete(human, { cardId: `${p}a`, force: true });
				assert.equal(forced.card.status, 'done');
				assert.equal(forced.card.claimEpoch, (a.lease?.epoch ?? -1) + 1);
				const event = (await b.listEvents({ cardId: `${p}a` })).events.at(-1);
				assert.equal(event?.data.forced, true);
				assert.equal(event.data.previousOwner, 'bob');
				const bl = await b.claim(bob, { cardId: `${p}b` });
				await b.release(human, { cardId: `${p}b`, force: true });
				await refused(b.heartbeat(bob, { cardId: `${p}b`, epoch: bl.lease?.epoch ?? -1 }), 'lease_lost');
			});
		});

		describe('update', () => {
			it('edits fields, bumps the version and refuses a stale version', async () => {
				const p = prefix();
				await b.create(alice, { cards: [{ id: `${p}a`, title: 'a' }] });
				const up = await b.update(human, {
					cardId: `${p}a`,
					version: 1,
					title: 'A better title',
					priority: 7,
					phase: 'later',
					requires: ['lang:go'],
					acceptance: ['works'],
					maxAttempts: 5,
				});
				assert.equal(up.card.version, 2);
				assert.equal(up.card.title, 'A better title');
				assert.equal(up.card.maxAttempts, 5);
				const event = (await b.listEvents({ cardId: `${p}a` })).events.at(-1);
				assert.deepEqual(event?.data.changed, ['title', 'phase', 'priority', 'requires', 'acceptance', 'maxAttempts']);
				await refusedWithoutChange(
					b,
					() => b.update(alice, { cardId: `${p}a`, version: 1, title: 'lost update' }),
					'conflict',
					new RegExp(`Card ${p}a is at version 2; your edit was made on version 1`),
				);
				const seq = await b.lastSeq();
				assert.equal((await b.update(human, { cardId: `${p}a`, title: 'A better title' })).card.version, 2);
				assert.equal(await b.lastSeq(), seq, 'an update that changes nothing logs nothing');
			});
		});

		describe('dependencies', () => {
			it('links and unlinks, keeping unmet_deps exact, and refuses unknown or missing edges', async () => {
				const p = prefix();
				await b.create(alice, {
					cards: [
						{ id: `${p}a`, title: 'a' },
						{ id: `${p}b`, title: 'b' },
						{ id: `${p}c`, title: 'c' },
					],
				});
				await b.complete(human, { cardId: `${p}b`, force: true });
				const linked = await b.link(alice, { cardId: `${p}c`, dependsOn: [`${p}a`, `${p}b`] });
				assert.deepEqual(linked.card.dependsOn, [`${p}a`, `${p}b`]);
				assert.equal(linked.card.unmetDeps, 1);
				await refusedWithoutChange(
					b,
					() => b.link(alice, { cardId: `${p}c`, dependsOn: `${p}zz` }),
					'not_found',
					/Unknown dependency/,
				);
				await refusedWithoutChange(
					b,
					() => b.unlink(alice, { cardId: `${p}a`, dependsOn: `${p}c` }),
					'not_found',
					/does not depend/,
				);
				const unlinked = await b.unlink(alice, { cardId: `${p}c`, dependsOn: `${p}a` });
				assert.deepEqual(unlinked.card.dependsOn, [`${p}b`]);
				assert.equal(unlinked.card.unmetDeps, 0);
				const reopened = await b.reopen(human, { cardId: `${p}b` });
				const readiness = (await b.listEvents({ cardId: `${p}b` })).events.at(-1)?.data.readiness;
				assert.equal(reopened.card.status, 'ready');
				assert.deepEqual(readiness, [{ id: `${p}c`, unmetDeps: 1 }]);
			});

			it('refuses a link that closes a cycle, naming it', async () => {
				const p = prefix();
				await b.create(alice, {
					cards: [
						{ id: `${p}A1`, title: 'a' },
						{ id: `${p}B2`, title: 'b', dependsOn: [`${p}A1`] },
					],
				});
				await refusedWithoutChange(
					b,
					() => b.link(alice, { cardId: `${p}A1`, dependsOn: `${p}B2` }),
					'cycle',
					new RegExp(`${p}A1 → ${p}B2 → ${p}A1`),
				);
				await refusedWithoutChange(b, () => b.link(alice, { cardId: `${p}A1`, dependsOn: `${p}A1` }), 'cycle');
			});

			it('refuses a cycle through a 1,000-long chain', async () => {
				const p = prefix();
				const cards = Array.from({ length: 1000 }, (_, i) => ({
					id: `${p}c${i}`,
					title: `chain ${i}`,
					...(i > 0 ? { dependsOn: [`${p}c${i - 1}`] } : {}),
				}));
				await b.create(alice, { cards });
				const e = await refused(b.link(alice, { cardId: `${p}c0`, dependsOn: `${p}c999` }), 'cycle');
				const path = (e.data as { cycle: string[] }).cycle;
				assert.equal(path.length, 1001);
				assert.equal(path[0], `${p}c0`);
				assert.equal(path.at(-1), `${p}c0`);
			});

			it('refuses to delete a card others depend on', async () => {
				const p = prefix();
				await b.create(alice, {
					cards: [
						{ id: `${p}a`, title: 'a' },
						{ id: `${p}b`, title: 'b', dependsOn: [`${p}a`] },
					],
				});
				await refusedWithoutChange(
					b,
					() => b.delete(human, { cardId: `${p}a` }),
					'has_dependents',
					new RegExp(`${p}b depends on it`),
				);
			});
		});

		describe('idempotent requests', () => {
			it('replays a keyed mutation instead of applying it twice', async () => {
				const p = prefix();
				const phase = `${p}phase`;
				await b.create(alice, {
					cards: [
						{ id: `${p}a`, title: 'a', phase },
						{ id: `${p}b`, title: 'b', phase },
					],
				});
				const key = { actor: 'bob', requestKey: `${p}claim-1` };
				const first = await b.claim(key, { phase });
				const seq = await b.lastSeq();
				const again = await b.claim(key, { phase });
				assert.deepEqual(again, first);
				assert.equal(await b.lastSeq(), seq);
				// "Nothing claimable" is not remembered: the same key claims once work appears, then replays it.
				const waitKey = { actor: 'carol', requestKey: `${p}claim-wait` };
				const lonely = `${p}lonely`;
				assert.equal((await b.claim(waitKey, { phase: lonely })).card, null);
				await b.create(alice, { cards: [{ id: `${p}c`, title: 'c', phase: lonely }] });
				const taken = await b.claim(waitKey, { phase: lonely });
				assert.equal(taken.card?.id, `${p}c`);
				assert.deepEqual(await b.claim(waitKey, { phase: lonely }), taken);
				const created = await b.create({ actor: 'alice', requestKey: `${p}create` }, { cards: [{ title: 'once' }] });
				const recreated = await b.create({ actor: 'alice', requestKey: `${p}create` }, { cards: [{ title: 'once' }] });
				assert.deepEqual(recreated, created);
				assert.equal(
					(await b.list(human, { text: 'once' })).cards.filter(c => c.id === created.cards[0]?.id).length,
					1,
				);
			});
		});

		describe('reads', () => {
			it('get returns dependencies, dependents, history and attempts', async () => {
				const p = prefix();
				await b.create(alice, {
					cards: [
						{ id: `${p}a`, title: 'a' },
						{ id: `${p}b`, title: 'b', dependsOn: [`${p}a`] },
						{ id: `${p}c`, title: 'c', dependsOn: [`${p}b`] },
					],
				});
				const c = await b.claim(bob, { cardId: `${p}a` });
				await b.heartbeat(bob, { cardId: `${p}a`, epoch: c.lease?.epoch ?? -1, progress: 30, note: 'half done' });
				await b.reclaim(human, { cardId: `${p}a`, reason: 'bob went quiet' });
				const c2 = await b.claim(alice, { cardId: `${p}a` });
				const got = await b.get(human, { cardId: `${p}b` });
				assert.deepEqual(got.dependencies, [
					{ id: `${p}a`, title: 'a', status: 'claimed', unmetDeps: 0, deferUntil: null },
				]);
				// c waits on b: the ref says so (unmetDeps), as show and the board print it.
				assert.deepEqual(got.dependents, [
					{ id: `${p}c`, title: 'c', status: 'ready', unmetDeps: 1, deferUntil: null },
				]);
				const a = await b.get(human, { cardId: `${p}a` });
				assert.deepEqual(
					a.history.map(e => e.type),
					['created', 'claimed', 'heartbeat', 'reclaimed', 'claimed'],
				);
				assert.equal(a.attempts.length, 2);
				assert.deepEqual(
					{
						owner: a.attempts[0]?.owner,
						outcome: a.attempts[0]?.outcome,
						note: a.attempts[0]?.progressNote,
						reason: a.attempts[0]?.reason,
					},
					{ owner: 'bob', outcome: 'reclaimed', note: 'half done', reason: 'bob went quiet' },
				);
				assert.equal(a.attempts[1]?.outcome, 'active');
				assert.equal(a.attempts[1].epoch, c2.lease?.epoch);
			});

			it('lists with filters and a stable cursor', async () => {
				const p = prefix();
				const phase = `${p}phase`;
				await b.create(alice, {
					cards: Array.from({ length: 7 }, (_, i) => ({
						id: `${p}${i}`,
						title: `item ${i} ${p}`,
						phase,
						priority: i % 3,
					})),
				});
				await b.claim(bob, { cardId: `${p}0` });
				const seen: string[] = [];
				let cursor: string | undefined;
				do {
					const page = await b.list(human, { phase, limit: 3, ...(cursor === undefined ? {} : { cursor }) });
					assert.ok(page.cards.length <= 3);
					seen.push(...page.cards.map(c => c.id));
					cursor = page.nextCursor;
				} while (cursor !== undefined);
				assert.deepEqual(seen, [`${p}2`, `${p}5`, `${p}1`, `${p}4`, `${p}0`, `${p}3`, `${p}6`]);
				assert.deepEqual(
					(await b.list(human, { phase, owner: 'bob' })).cards.map(c => c.id),
					[`${p}0`],
				);
				assert.equal((await b.list(human, { phase, status: 'claimed' })).cards.length, 1);
				assert.equal((await b.list(human, { phase, status: ['ready', 'done'] })).cards.length, 6);
				// Claimed and blocked go to SQL as constants (for their partial indexes), the rest as a parameter.
				await b.block(human, { cardId: `${p}3`, reason: 'waiting on legal' });
				await b.block(human, { cardId: `${p}6`, reason: 'waiting on legal' });
				assert.deepEqual(
					(await b.list(human, { phase, status: 'blocked' })).cards.map(c => c.id),
					[`${p}3`, `${p}6`],
				);
				assert.deepEqual(
					(await b.list(human, { phase, status: ['blocked', 'claimed'], limit: 2 })).cards.map(c => c.id),
					[`${p}0`, `${p}3`],
				);
				assert.equal((await b.list(human, { phase, status: ['ready', 'blocked'] })).cards.length, 6);
				await b.unblock(human, { cardId: `${p}3` });
				await b.unblock(human, { cardId: `${p}6` });
				assert.equal((await b.list(human, { phase, readyOnly: true })).cards.length, 6);
				assert.deepEqual(
					(await b.list(human, { text: `ITEM 3 ${p}` })).cards.map(c => c.id),
					[`${p}3`],
				);
				assert.equal((await b.list(human, { text: '100%_' })).cards.length, 0);
				await refused(b.list(human, { cursor: 'garbage' }), 'invalid_input', /cursor/);
			});

			it('pages ready cards (the prepared path) exactly as the general list orders them', async () => {
				const p = prefix();
				await b.create(alice, {
					cards: Array.from({ length: 23 }, (_, i) => ({ id: `${p}${i}`, title: `r${i}`, priority: i % 4 })),
				});
				const paged: string[] = [];
				let cursor: string | undefined;
				do {
					const page = await b.list(human, { readyOnly: true, limit: 7, ...(cursor === undefined ? {} : { cursor }) });
					paged.push(...page.cards.map(c => c.id));
					cursor = page.nextCursor;
				} while (cursor !== undefined);
				// text: '' takes the general (dynamic) path with the same filter.
				const all = (await b.list(human, { readyOnly: true, text: '', limit: 1000 })).cards.map(c => c.id);
				assert.deepEqual(paged, all);
				assert.ok(paged.includes(`${p}22`));
				assert.equal(new Set(paged).size, paged.length);
			});

			it('stats counts statuses, waiting, deferred, claimable, expired and stalled', async () => {
				const s = await b.stats(human, {});
				assert.equal(s.total, s.counts.ready + s.counts.claimed + s.counts.blocked + s.counts.done);
				assert.equal(s.counts.ready, s.waiting + s.deferred + s.claimable);
				assert.equal(s.lastSeq, await b.lastSeq());
			});
		});

		describe('agents', () => {
			it('registers agents and reports health, held cards and stalls on the clock', async () => {
				const p = prefix();
				await b.registerAgent({
					id: `${p}claude`,
					name: 'Claude',
					client: 'claude-code',
					capabilities: ['lang:ts'],
					host: 'box',
					pid: 42,
				});
				await b.create(alice, { cards: [{ id: `${p}a`, title: 'a' }] });
				await b.claim({ actor: `${p}claude` }, { cardId: `${p}a`, ttlSeconds: 3600 });
				let me = (await b.listAgents(new Set([`${p}claude`]))).agents.find(a => a.id === `${p}claude`);
				assert.deepEqual(
					{
						health: me?.health,
						cards: me?.cards,
						status: me?.status,
						connected: me?.connected,
						pid: me?.pid,
						stalled: me?.stalled,
					},
					{ health: 'healthy', cards: [`${p}a`], status: 'working', connected: true, pid: 42, stalled: false },
				);
				clock.advance(40);
				me = (await b.listAgents()).agents.find(a => a.id === `${p}claude`);
				assert.equal(me?.health, 'late');
				assert.equal(me.connected, false);
				await b.ping({ actor: `${p}claude` });
				clock.advance(901);
				me = (await b.listAgents()).agents.find(a => a.id === `${p}claude`);
				assert.equal(me?.health, 'dead');
				// A dead agent's card shows its holder's health, not a stall (core/rules/health.ts; stalled.test.ts).
				assert.equal(me.stalled, false);
				const taken = await b.reclaimAgent(human, { agentId: `${p}claude` });
				assert.deepEqual(
					taken.cards.map(c => [c.id, c.status]),
					[[`${p}a`, 'ready']],
				);
			});

			it('releases every claim of a disconnected agent with one released event each', async () => {
				const p = prefix();
				await b.create(alice, {
					cards: [
						{ id: `${p}a`, title: 'a' },
						{ id: `${p}b`, title: 'b' },
					],
				});
				await b.claim({ actor: `${p}gone` }, { cardId: `${p}a` });
				await b.claim({ actor: `${p}gone` }, { cardId: `${p}b` });
				const seq = await b.lastSeq();
				const released = await b.releaseAgent({ actor: `${p}gone` }, `${p}gone`, 'agent disconnected');
				assert.deepEqual(
					released.map(c => c.status),
					['ready', 'ready'],
				);
				const events = await b.eventsAfter(seq, 10);
				assert.deepEqual(
					events.map(e => [e.type, e.data.reason]),
					[
						['released', 'agent disconnected'],
						['released', 'agent disconnected'],
					],
				);
				assert.deepEqual(
					events.map(e => [e.data.previousOwner, e.data.forced]),
					[
						[`${p}gone`, undefined],
						[`${p}gone`, undefined],
					],
				);
				assert.ok(
					released.every(c => c.claimEpoch === 2),
					'the departed holder is fenced out',
				);
			});
		});

		describe('events', () => {
			it('notifies listeners after commit with exactly the appended events, and never for refusals', async () => {
				const p = prefix();
				const seen: number[] = [];
				const off = b.onCommitted(events => seen.push(...events.map(e => e.seq)));
				await b.create(alice, {
					cards: [
						{ id: `${p}a`, title: 'a' },
						{ id: `${p}b`, title: 'b' },
					],
				});
				await refused(b.unblock(human, { cardId: `${p}a` }), 'invalid_transition');
				off();
				await b.block(human, { cardId: `${p}a`, reason: 'after unsubscribe' });
				const last = await b.lastSeq();
				assert.deepEqual(seen, [last - 2, last - 1]);
				const all = await b.listEvents({ afterSeq: last - 3 });
				assert.deepEqual(
					all.events.map(e => e.seq),
					[last - 2, last - 1, last],
				);
				assert.equal(all.lastSeq, last);
			});

			it('a listener that throws does not turn a committed change into a failure', async () => {
				const p = prefix();
				const off = b.onCommitted(() => {
					throw new Error('listener bug');
				});
				const before = logged.length;
				try {
					const { cards } = await b.create(alice, { cards: [{ id: `${p}a`, title: 'a' }] });
					assert.equal(cards[0]?.id, `${p}a`);
					const c = await b.claim(alice, { cardId: `${p}a` });
					await b.complete(alice, { cardId: `${p}a`, epoch: c.lease?.epoch ?? -1 });
				} finally {
					off();
				}
				assert.equal((await b.get(human, { cardId: `${p}a` })).card.status, 'done');
				const reported = logged.slice(before);
				assert.equal(reported.length, 3);
				for (const line of reported) {
					assert.match(line, / error backlog: an onCommitted listener failed: Error: listener bug\n/);
				}
			});

			it('keeps seqs gap-free and increasing', async () => {
				let seq = 0;
				let previous = 0;
				for (;;) {
					const page = await b.eventsAfter(seq, 500);
					if (page.length === 0) {
						break;
					}
					for (const e of page) {
						assert.ok(e.seq > previous);
						previous = e.seq;
					}
					seq = page.at(-1)?.seq ?? seq;
				}
				if (kind === 'pglite') {
					assert.equal(
						previous,
						(await b.listEvents({ afterSeq: 0, limit: 1 })).events.length === 1 ? await b.lastSeq() : 0,
					);
				}
			});
		});

		describe('export and import', () => {
			it('round-trips every card losslessly into another backlog, skipping existing ids', async () => {
				const target = await openTestBacklog(kind);
				try {
					const source = await snapshot(b);
					let cursor: string | undefined;
					let imported = 0;
					do {
						const page = await b.exportCards(cursor === undefined ? {} : { cursor });
						assert.ok(page.cards.length <= 500);
						imported += (await target.backlog.importCards(human, { cards: page.cards })).imported;
						cursor = page.nextCursor;
					} while (cursor !== undefined);
					assert.equal(imported, source.cards.length);
					const copy = await snapshot(target.backlog);
					assert.deepEqual(copy.cards, source.cards);
					const again = await target.backlog.importCards(human, { cards: source.cards.slice(0, 3) });
					assert.deepEqual(again, { imported: 0, skipped: 3 });
				} finally {
					await target.cleanup();
				}
			});

			it('refuses imports with oversized text, changing nothing', async () => {
				const card = (await b.exportCards({})).cards[0];
				assert.ok(card !== undefined);
				await refusedWithoutChange(
					b,
					() => b.importCards(human, { cards: [{ ...card, id: 'imp-big', body: 'x'.repeat(70_000) }] }),
					'invalid_input',
					/64 KiB/,
				);
			});
		});

		describe('maintenance', () => {
			it('vacuums and prunes request_log entries older than a day', async () => {
				const p = prefix();
				await b.create({ actor: 'alice', requestKey: `${p}old` }, { cards: [{ id: `${p}a`, title: 'a' }] });
				clock.advance(86_401);
				await b.maintenance();
				const replay = await b.create(
					{ actor: 'alice', requestKey: `${p}old` },
					{ cards: [{ id: `${p}b`, title: 'b' }] },
				);
				assert.equal(replay.cards[0]?.id, `${p}b`, 'a pruned key is a new request');
			});
		});
	});
}
