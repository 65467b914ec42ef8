/**
 * Parents and children through the Backlog on real PGlite and PostgreSQL: a card with open
 * children is never claimable and a claim by id says so; a child waits while an ancestor waits on a
 * dependency, and the reason names the path; card/get rolls the children up; list filters by parent;
 * auto-close completes (or sends to review) a parent when its last child is done; closing a parent
 * by hand with open children is refused unless forced; bad parents and cycles through parents, or
 * parents and dependencies, are refused with one clear error and change nothing. A child that is not
 * its parent's last open child completes in one statement, and two last children completing at once
 * on two backlogs (PostgreSQL) still close their parent.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Backlog, type BacklogOptions, type OpContext } from '../../core/backlog';
import type { BacklogEvent } from '../../core/protocol';
import type { Db } from '../../core/store/db';
import { backlogForSuite, storeKinds } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const human: OpContext = { actor: 'vscode:alice' };
const agent: OpContext = { actor: 'claude-code-1' };
let counter = 0;

/** Counts the transactions a backlog opens (the general path runs in one; the hot statements in none). */
function countTransactions(b: Backlog): { n: number; stop(): void } {
	const uow = (b as unknown as { uow: { db: Db } }).uow;
	const db = uow.db;
	const counter = { n: 0, stop: () => (uow.db = db) };
	uow.db = new Proxy(db, {
		get(t, prop) {
			const value: unknown = Reflect.get(t, prop, t);
			if (prop === 'transaction') {
				counter.n++;
			}
			return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
		},
	});
	return counter;
}

for (const kind of storeKinds) {
	describe(`parents and children on ${kind}`, () => {
		let b: Backlog;
		const committed: BacklogEvent[] = [];
		let options: BacklogOptions;
		backlogForSuite(kind, {}, t => {
			b = t.backlog;
			options = t.options;
			b.onCommitted(events => committed.push(...events));
		});
		/** Each test in its own phase, so claims only see its cards. */
		const phase = (): string => `p${++counter}`;

		it('never offers a card with open children, and says why when claimed by id', async () => {
			const ph = phase();
			await b.create(human, {
				cards: [
					{ id: `${ph}-E`, title: 'epic', phase: ph, priority: 10 },
					{ id: `${ph}-1`, title: 'one', phase: ph, parent: `${ph}-E` },
					{ id: `${ph}-2`, title: 'two', phase: ph, parent: `${ph}-E` },
					{ id: `${ph}-3`, title: 'three', phase: ph, parent: `${ph}-E` },
				],
			});
			const got = await b.claim(agent, { phase: ph });
			assert.equal(got.card?.id, `${ph}-1`);
			const byId = await refused(b.claim(agent, { cardId: `${ph}-E` }), 'invalid_transition');
			assert.match(byId.message, new RegExp(`^Card ${ph}-E has 3 open children \\(${ph}-1, ${ph}-2, ${ph}-3\\)`));
			const { card } = await b.get(human, { cardId: `${ph}-E` });
			assert.equal(card.parent, null);
			const list = await b.list(human, { parent: `${ph}-E` });
			assert.deepEqual(list.cards.map(c => c.id).sort(), [`${ph}-1`, `${ph}-2`, `${ph}-3`]);
			const ready = await b.list(human, { phase: ph, readyOnly: true });
			assert.deepEqual(ready.cards.map(c => c.id).sort(), [`${ph}-2`, `${ph}-3`]);
		});

		it('holds a child while an ancestor waits on a dependency, naming the path', async () => {
			const ph = phase();
			await b.create(human, {
				cards: [
					{ id: `${ph}-API`, title: 'api', phase: `${ph}-other` },
					{ id: `${ph}-E`, title: 'epic', phase: ph, dependsOn: [`${ph}-API`] },
					{ id: `${ph}-S`, title: 'sub-epic', phase: ph, parent: `${ph}-E` },
					{ id: `${ph}-4`, title: 'leaf', phase: ph, parent: `${ph}-S` },
					{ id: `${ph}-5`, title: 'direct', phase: ph, parent: `${ph}-E` },
				],
			});
			const none = await b.claim(agent, { phase: ph });
			assert.equal(none.card, null);
			assert.match(none.reason ?? '', /1 ready card waits on dependencies/);
			assert.match(none.reason ?? '', /2 wait while a parent waits on dependencies/);
			assert.match(none.reason ?? '', /1 has open children/);
			const direct = await refused(b.claim(agent, { cardId: `${ph}-5` }), 'invalid_transition');
			assert.equal(
				direct.message,
				`Card ${ph}-5 waits: its parent ${ph}-E waits on ${ph}-API. Claim one of those, or claim without a card id.`,
			);
			const deep = await refused(b.claim(agent, { cardId: `${ph}-4` }), 'invalid_transition');
			assert.match(
				deep.message,
				new RegExp(`its ancestor ${ph}-E waits on ${ph}-API \\(${ph}-4 → ${ph}-S → ${ph}-E\\)`),
			);
			const stats = await b.stats(human, {});
			assert.ok(stats.claimable >= 0);
			// The dependency done, the children are free; the epic still waits for them.
			const api = await b.claim(agent, { cardId: `${ph}-API` });
			assert.ok(api.lease !== null);
			await b.complete(agent, { cardId: `${ph}-API`, epoch: api.lease.epoch });
			const free = await b.list(human, { phase: ph, readyOnly: true });
			assert.deepEqual(free.cards.map(c => c.id).sort(), [`${ph}-4`, `${ph}-5`]);
		});

		it('rolls the children up in card/get', async () => {
			const ph = phase();
			await b.create(human, {
				cards: [
					{ id: `${ph}-E`, title: 'epic', phase: ph },
					{ id: `${ph}-1`, title: 'done one', phase: ph, parent: `${ph}-E` },
					{ id: `${ph}-2`, title: 'claimed one', phase: ph, parent: `${ph}-E` },
					{ id: `${ph}-3`, title: 'blocked one', phase: ph, parent: `${ph}-E` },
					{ id: `${ph}-4`, title: 'ready one', phase: ph, parent: `${ph}-E` },
				],
			});
			const one = await b.claim(agent, { cardId: `${ph}-1` });
			await b.complete(agent, { cardId: `${ph}-1`, epoch: one.lease?.epoch });
			await b.claim(agent, { cardId: `${ph}-2` });
			await b.block(human, { cardId: `${ph}-3`, reason: 'later' });
			const got = await b.get(human, { cardId: `${ph}-E` });
			const { cards, ...counts } = got.children ?? { cards: [] };
			assert.deepEqual(counts, {
				total: 4,
				done: 1,
				review: 0,
				blocked: 1,
				claimed: 1,
				ready: 1,
				waiting: 0,
				deferred: 0,
				paused: 0,
			});
			assert.equal(cards.length, 4);
			const child = await b.get(human, { cardId: `${ph}-4` });
			assert.equal(child.parent?.id, `${ph}-E`);
			assert.equal(child.children, undefined);
		});

		it('counts every child of an epic of more than 1,000 and lists the first 1,000 in claim order', async () => {
			const ph = phase();
			await b.create(human, { cards: [{ id: `${ph}-E`, title: 'epic', phase: ph }] });
			const kids = Array.from({ length: 1001 }, (_, i) => ({
				id: `${ph}-${i}`,
				title: `kid ${i}`,
				phase: ph,
				parent: `${ph}-E`,
				priority: i === 1000 ? 1 : 0,
			}));
			await b.create(human, { cards: kids.slice(0, 1000) });
			await b.create(human, { cards: kids.slice(1000) });
			const one = await b.claim(agent, { cardId: `${ph}-7` });
			await b.complete(agent, { cardId: `${ph}-7`, epoch: one.lease?.epoch });
			const { cards, ...counts } = (await b.get(human, { cardId: `${ph}-E` })).children ?? { cards: [] };
			assert.deepEqual(counts, {
				total: 1001,
				done: 1,
				review: 0,
				blocked: 0,
				claimed: 0,
				ready: 1000,
				waiting: 0,
				deferred: 0,
				paused: 0,
			});
			assert.equal(cards.length, 1000);
			// Claim order: the higher priority first, then creation, then id.
			assert.equal(cards[0]?.id, `${ph}-1000`);
			assert.deepEqual(cards[1], { id: `${ph}-0`, title: 'kid 0', status: 'ready', unmetDeps: 0, deferUntil: null });
		});

		it('auto-closes a parent when its last child is done, and goes to review when it has review', async () => {
			const ph = phase();
			await b.create(human, {
				cards: [
					{ id: `${ph}-E`, title: 'epic', phase: ph, autoClose: true },
					{ id: `${ph}-1`, title: 'one', phase: ph, parent: `${ph}-E` },
					{ id: `${ph}-R`, title: 'reviewed epic', phase: ph, autoClose: true, review: 'human' },
					{ id: `${ph}-2`, title: 'two', phase: ph, parent: `${ph}-R` },
					{ id: `${ph}-P`, title: 'plain epic', phase: ph },
					{ id: `${ph}-3`, title: 'three', phase: ph, parent: `${ph}-P` },
				],
			});
			for (const id of [`${ph}-1`, `${ph}-2`]) {
				const c = await b.claim(agent, { cardId: id });
				await b.complete(agent, { cardId: id, epoch: c.lease?.epoch });
			}
			const epic = (await b.get(human, { cardId: `${ph}-E` })).card;
			assert.equal(epic.status, 'done');
			const closed = committed.find(e => e.cardId === `${ph}-E` && e.type === 'completed');
			assert.equal(closed?.data.autoClosed, true);
			assert.equal((await b.get(human, { cardId: `${ph}-R` })).card.status, 'review');
			// Without auto-close the parent becomes claimable, and the completion says so.
			const c3 = await b.claim(agent, { cardId: `${ph}-3` });
			const done = await b.complete(agent, { cardId: `${ph}-3`, epoch: c3.lease?.epoch });
			assert.deepEqual(done.unblocked, [`${ph}-P`]);
			assert.equal((await b.get(human, { cardId: `${ph}-P` })).card.status, 'ready');
		});

		it("lists an epic's children in `unblocked` when its last dependency is done, never the epic itself", async () => {
			const ph = phase();
			await b.create(human, {
				cards: [
					{ id: `${ph}-API`, title: 'api', phase: ph, priority: 10 },
					{ id: `${ph}-E`, title: 'epic', phase: ph, dependsOn: [`${ph}-API`] },
					{ id: `${ph}-S`, title: 'sub-epic', phase: ph, parent: `${ph}-E` },
					{ id: `${ph}-1`, title: 'one', phase: ph, parent: `${ph}-S` },
					{ id: `${ph}-2`, title: 'two', phase: ph, parent: `${ph}-E` },
					{ id: `${ph}-3`, title: 'three', phase: ph, parent: `${ph}-E`, deferUntil: '2999-01-01T00:00:00.000Z' },
				],
			});
			const c = await b.claim(agent, { phase: ph });
			assert.equal(c.card?.id, `${ph}-API`);
			const done = await b.complete(agent, { cardId: `${ph}-API`, epoch: c.lease?.epoch });
			// The epic and the sub-epic have open children; the deferred child is not claimable yet.
			assert.deepEqual(done.unblocked, [`${ph}-1`, `${ph}-2`]);
		});

		it('closes an auto-close parent when its last open child is deleted', async () => {
			const ph = phase();
			await b.create(human, {
				cards: [
					{ id: `${ph}-E`, title: 'epic', phase: ph, autoClose: true },
					{ id: `${ph}-1`, title: 'one', phase: ph, parent: `${ph}-E` },
					{ id: `${ph}-2`, title: 'two', phase: ph, parent: `${ph}-E` },
				],
			});
			const c = await b.claim(agent, { cardId: `${ph}-1` });
			await b.complete(agent, { cardId: `${ph}-1`, epoch: c.lease?.epoch });
			assert.equal((await b.get(human, { cardId: `${ph}-E` })).card.status, 'ready');
			await b.delete(human, { cardId: `${ph}-2` });
			assert.equal((await b.get(human, { cardId: `${ph}-E` })).card.status, 'done');
			const closed = committed.find(e => e.cardId === `${ph}-E` && e.type === 'completed');
			assert.equal(closed?.data.autoClosed, true);
		});

		it("completes a child in one statement unless it is its parent's last open child", async () => {
			const ph = phase();
			const ids = [1, 2, 3].map(i => `${ph}-${i}`);
			await b.create(human, {
				cards: [
					{ id: `${ph}-E`, title: 'epic', phase: ph, autoClose: true },
					...ids.map(id => ({ id, title: id, phase: ph, parent: `${ph}-E` })),
				],
			});
			const transactions = countTransactions(b);
			try {
				for (const [i, id] of ids.entries()) {
					const c = await b.claim(agent, { cardId: id });
					const before = transactions.n;
					const done = await b.complete(agent, { cardId: id, epoch: c.lease?.epoch });
					assert.equal(done.card.status, 'done');
					assert.equal(transactions.n - before, i < ids.length - 1 ? 0 : 1, `completing ${id}`);
					assert.equal((await b.get(human, { cardId: `${ph}-E` })).children?.done, i + 1);
				}
			} finally {
				transactions.stop();
			}
			assert.equal((await b.get(human, { cardId: `${ph}-E` })).card.status, 'done');
			const closed = committed.filter(e => e.cardId === `${ph}-E` && e.type === 'completed');
			assert.equal(closed.length, 1);
			assert.equal(closed[0]?.data.autoClosed, true);
		});

		it('closes a parent whose last two children complete at the same moment, on two backlogs', async () => {
			// PostgreSQL: two hubs' connections; each complete locks the parent's row before it counts.
			const other = kind === 'postgres' ? await Backlog.open(options) : b;
			try {
				for (let round = 0; round < 10; round++) {
					const ph = phase();
					await b.create(human, {
						cards: [
							{ id: `${ph}-E`, title: 'epic', phase: ph, autoClose: true },
							{ id: `${ph}-1`, title: 'one', phase: ph, parent: `${ph}-E` },
							{ id: `${ph}-2`, title: 'two', phase: ph, parent: `${ph}-E` },
						],
					});
					const second: OpContext = { actor: 'codex-2' };
					const one = await b.claim(agent, { cardId: `${ph}-1` });
					const two = await other.claim(second, { cardId: `${ph}-2` });
					const done = await Promise.all([
						b.complete(agent, { cardId: `${ph}-1`, epoch: one.lease?.epoch }),
						other.complete(second, { cardId: `${ph}-2`, epoch: two.lease?.epoch }),
					]);
					assert.deepEqual(
						done.map(d => d.card.status),
						['done', 'done'],
					);
					const epic = await b.get(human, { cardId: `${ph}-E` });
					assert.equal(epic.card.status, 'done', `round ${round}: the epic was not auto-closed`);
					assert.equal(epic.children?.done, 2);
				}
			} finally {
				if (other !== b) {
					await other.close();
				}
			}
		});

		it('refuses closing a parent with open children unless forced, and says what it leaves open', async () => {
			const ph = phase();
			await b.create(human, {
				cards: [
					{ id: `${ph}-E`, title: 'epic', phase: ph },
					{ id: `${ph}-1`, title: 'one', phase: ph, parent: `${ph}-E` },
					{ id: `${ph}-2`, title: 'two', phase: ph, parent: `${ph}-E` },
				],
			});
			const no = await refused(b.complete(human, { cardId: `${ph}-E` }), 'invalid_transition');
			assert.match(
				no.message,
				new RegExp(`^Card ${ph}-E has 2 open children \\(${ph}-1, ${ph}-2\\); complete them first, or force it`),
			);
			assert.equal((await b.get(human, { cardId: `${ph}-E` })).card.status, 'ready');
			const forced = await b.complete(human, { cardId: `${ph}-E`, force: true });
			assert.deepEqual(forced.leftOpen, [`${ph}-1`, `${ph}-2`]);
			assert.equal(forced.card.status, 'done');
			const event = committed.find(e => e.cardId === `${ph}-E` && e.type === 'completed');
			assert.deepEqual(event?.data.leftOpen, [`${ph}-1`, `${ph}-2`]);
		});

		it('refuses bad parents and cycles with one clear error, changing nothing', async () => {
			const ph = phase();
			await b.create(human, {
				cards: [
					{ id: `${ph}-A`, title: 'a', phase: ph, project: 'github.com/acme/web' },
					{ id: `${ph}-B`, title: 'b', phase: ph, parent: `${ph}-A`, project: 'github.com/acme/web' },
					{ id: `${ph}-C`, title: 'c', phase: ph, parent: `${ph}-B`, project: 'github.com/acme/web' },
					{ id: `${ph}-X`, title: 'x', phase: ph, project: 'github.com/acme/api' },
					{ id: `${ph}-D`, title: 'd', phase: ph, project: 'github.com/acme/web' },
				],
			});
			await refused(
				b.create(human, { cards: [{ id: `${ph}-N`, title: 'n', parent: 'nope' }] }),
				'not_found',
				/parent nope does not exist/,
			);
			await refused(
				b.update(human, { cardId: `${ph}-A`, parent: `${ph}-A` }),
				'invalid_input',
				/cannot be its own parent/,
			);
			await refused(
				b.update(human, { cardId: `${ph}-A`, parent: `${ph}-X` }),
				'invalid_input',
				/in project github\.com\/acme\/api/,
			);
			const loop = await refused(b.update(human, { cardId: `${ph}-A`, parent: `${ph}-C` }), 'cycle');
			assert.match(loop.message, /cycle through parents: /);
			// A child may not depend on its ancestor, nor an ancestor on its descendant.
			const up = await refused(b.link(human, { cardId: `${ph}-C`, dependsOn: `${ph}-A` }), 'cycle');
			assert.match(up.message, /parents and dependencies/);
			await refused(b.link(human, { cardId: `${ph}-A`, dependsOn: `${ph}-C` }), 'cycle');
			// Mixed: D waits on C (a descendant of A); A cannot then become D's child... through its deps.
			await b.link(human, { cardId: `${ph}-D`, dependsOn: `${ph}-C` });
			await refused(b.update(human, { cardId: `${ph}-A`, parent: `${ph}-D` }), 'cycle');
			await refused(b.delete(human, { cardId: `${ph}-B` }), 'has_dependents', /is its child/);
			const a = await b.get(human, { cardId: `${ph}-A` });
			assert.equal(a.card.parent, null);
			assert.deepEqual(a.card.dependsOn, []);
			assert.equal((await b.list(human, { text: `${ph}-N` })).cards.length, 0);
		});
	});
}
