/**
 * Projects and scopes through the Backlog on real PGlite and PostgreSQL: a claim
 * hands out its project's cards and cards with none, never another project's; it never hands out a
 * card whose scope overlaps a live claim of the same project, says who holds the files when nothing
 * else is claimable, and refuses such a card claimed by id naming the holder and both globs;
 * `reserve` grants what is free and returns what is not; every way a claim ends releases its
 * reservations. Bad scopes and reserve on a card one does not hold are refused and change nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import { liveScopesOf, scopeWait, scopeWaitText } from '../../core/scope/conflicts';
import type { BacklogEvent, Card } from '../../core/protocol';
import { openTestBacklog, storeKinds, type TestBacklog } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const human: OpContext = { actor: 'vscode:alice' };
const a1: OpContext = { actor: 'claude-code-1' };
const a2: OpContext = { actor: 'codex-2' };
const web = 'github.com/acme/web';
const api = 'github.com/acme/api';

let counter = 0;

for (const kind of storeKinds) {
	describe(`projects and scopes on ${kind}`, () => {
		let t: TestBacklog;
		let b: Backlog;
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');
		const committed: BacklogEvent[] = [];

		before(async () => {
			t = await openTestBacklog(kind, { clock });
			b = t.backlog;
			b.onCommitted(events => committed.push(...events));
		});
		after(async () => {
			await t.cleanup();
		});

		/** Fresh ids, and a clean slate: every card left from an earlier test is done or deleted. */
		const id = (name: string): string => `${name}-${++counter}`;
		async function clearReady(): Promise<void> {
			for (const card of (await b.list(human, { status: ['ready', 'claimed'], limit: 1000 })).cards) {
				await b.delete(human, { cardId: card.id }).catch(async () => {
					await b.release(human, { cardId: card.id, force: true });
					await b.delete(human, { cardId: card.id });
				});
			}
		}
		const get = async (cardId: string): Promise<Card> => (await b.get(human, { cardId })).card;

		it('stores project and scope, and lists a project with the cards of no project', async () => {
			await clearReady();
			const [w, n, o] = [id('W'), id('N'), id('O')];
			const made = await b.create(human, {
				cards: [
					{ id: w, title: 'web work', project: web, scope: ['src/auth/**', 'lock:db-migrations'] },
					{ id: n, title: 'no project' },
					{ id: o, title: 'api work', project: api },
				],
			});
			assert.deepEqual(
				made.cards.map(c => [c.id, c.project, c.scope, c.reserved]),
				[
					[w, web, ['src/auth/**', 'lock:db-migrations'], []],
					[n, null, [], []],
					[o, api, [], []],
				],
			);
			const listed = (await b.list(human, { project: web })).cards.map(c => c.id).sort();
			assert.deepEqual(listed, [n, w].sort());
			const ready = (await b.list(human, { project: web, readyOnly: true })).cards.map(c => c.id).sort();
			assert.deepEqual(ready, [n, w].sort());
			// '*' lists every project, as it claims from every project.
			const every = (await b.list(human, { project: '*' })).cards.map(c => c.id);
			assert.deepEqual(every.filter(id => [w, n, o].includes(id)).sort(), [n, o, w].sort());
		});

		it('a claim hands out its project and cards with none, never another project', async () => {
			await clearReady();
			const [mine, none, theirs] = [id('M'), id('N'), id('T')];
			await b.create(human, {
				cards: [
					{ id: theirs, title: 'api first', project: api, priority: 30 },
					{ id: mine, title: 'web', project: web, priority: 20 },
					{ id: none, title: 'shared', priority: 10 },
				],
			});
			const first = await b.claim(a1, { project: web });
			assert.equal(first.card?.id, mine);
			const second = await b.claim(a1, { project: web });
			assert.equal(second.card?.id, none);
			const third = await b.claim(a1, { project: web });
			assert.equal(third.card, null);
			// Another project's card is not taken, but named with how to take it.
			assert.match(
				third.reason ?? '',
				/1 claimable card is in other projects \(github\.com\/acme\/api 1\): claim with project '\*'/,
			);
			// Without a project: only cards with none. With '*': any.
			assert.equal((await b.claim(a2, { project: null })).card, null);
			assert.equal((await b.claim(a2, { project: '*' })).card?.id, theirs);
			// By id, another project's card is refused and stays ready.
			const other = id('T');
			await b.create(human, { cards: [{ id: other, title: 'api', project: api }] });
			await refused(b.claim(a1, { cardId: other, project: web }), 'invalid_transition', /belongs to project/);
			assert.equal((await get(other)).status, 'ready');
			// complete {next} follows the same rule.
			const done = await b.complete(a1, { cardId: mine, next: { project: web } });
			assert.equal(done.next?.card, null);
		});

		it('never hands out a card whose scope overlaps a live claim of the same project', async () => {
			await clearReady();
			const [auth, authTest, billing, apiAuth] = [id('AUTH'), id('AUTHT'), id('BILL'), id('APIA')];
			await b.create(human, {
				cards: [
					{ id: auth, title: 'Session cookie hardening', project: web, scope: ['src/auth/**'], priority: 40 },
					{ id: authTest, title: 'Auth tests', project: web, scope: ['src/auth/*.test.ts'], priority: 30 },
					{ id: apiAuth, title: 'API auth', project: api, scope: ['src/auth/**'], priority: 25 },
					{ id: billing, title: 'Billing', project: web, scope: ['src/billing/**'], priority: 20 },
				],
			});
			const first = await b.claim(a1, { project: web });
			assert.equal(first.card?.id, auth);
			// authTest overlaps src/auth/**: the next claim skips it for billing (priority 20 < 30).
			const second = await b.claim(a2, { project: web });
			assert.equal(second.card?.id, billing);
			// Another project's same paths are no conflict.
			assert.equal((await b.claim(a2, { project: api })).card?.id, apiAuth);
			// Nothing else: the reason names the holder.
			const none = await b.claim({ actor: 'agent-3' }, { project: web });
			assert.equal(none.card, null);
			assert.match(none.reason ?? '', new RegExp(`1 ready card waits on files held by ${auth} \\(claude-code-1\\)`));
			// By id: refused, naming the holder and both globs; nothing changed.
			const e = await refused(b.claim({ actor: 'agent-3' }, { cardId: authTest }), 'conflict', /claude-code-1/);
			assert.match(e.message, /"src\/auth\/\*\.test\.ts" overlaps "src\/auth\/\*\*"/);
			assert.equal((await get(authTest)).status, 'ready');
			// Once the holder completes, the waiting card is claimable.
			await b.complete(a1, { cardId: auth });
			assert.equal((await b.claim({ actor: 'agent-3' }, { project: web })).card?.id, authTest);
		});

		it('the faces say a card waits exactly when the hub would refuse it: scopes meet only within one project', async () => {
			// The board and the tree once said a card without a project "waits on files held by"
			// a web claim that the hub does not hold against it (the hub granted the claim).
			await clearReady();
			const [held, loose, sameWeb, apiSame] = [id('HELD'), id('LOOSE'), id('SAMEW'), id('APIS')];
			await b.create(human, {
				cards: [
					{ id: held, title: 'web src', project: web, scope: ['src/**'], priority: 40 },
					{ id: loose, title: 'no project', scope: ['src/a.ts'], priority: 30 },
					{ id: sameWeb, title: 'web again', project: web, scope: ['src/b.ts'], priority: 20 },
					{ id: apiSame, title: 'api', project: api, scope: ['src/c.ts'], priority: 10 },
				],
			});
			assert.equal((await b.claim(a1, { cardId: held, project: web })).card?.id, held);
			const cards = (await b.list(human, { limit: 1000 })).cards;
			const live = liveScopesOf(cards);
			const wait = (cardId: string): string | undefined => {
				const card = cards.find(c => c.id === cardId);
				const w = card === undefined ? undefined : scopeWait(card, live);
				return w === undefined ? undefined : scopeWaitText(w);
			};
			assert.equal(wait(sameWeb), `waits on files held by ${held} (claude-code-1)`);
			// Stats counts it as the claim does, not claimable.
			assert.equal((await b.stats(human, {})).claimable, 2, 'loose and api; not the card waiting on files');
			await refused(b.claim(a2, { cardId: sameWeb, project: web }), 'conflict', /claude-code-1/);
			assert.equal(wait(loose), undefined, 'a card without a project is its own project');
			assert.equal(wait(apiSame), undefined);
			assert.equal((await b.claim(a2, { cardId: loose, project: web })).card?.id, loose);
			assert.equal((await b.claim({ actor: 'agent-3' }, { cardId: apiSame, project: api })).card?.id, apiSame);
		});

		it('locks conflict by name; different names and disjoint folders do not', async () => {
			await clearReady();
			const [m1, m2, m3, m4] = [id('MIG'), id('MIG'), id('DOC'), id('SRC')];
			await b.create(human, {
				cards: [
					{ id: m1, title: 'migration 1', project: web, scope: ['lock:db-migrations'], priority: 4 },
					{ id: m2, title: 'migration 2', project: web, scope: ['lock:db-migrations'], priority: 3 },
					{ id: m3, title: 'docs', project: web, scope: ['lock:docs', 'docs/**'], priority: 2 },
					{ id: m4, title: 'src', project: web, scope: ['src/a/**', 'src/{b,c}/*.ts'], priority: 1 },
				],
			});
			const got = [];
			for (const actor of ['w1', 'w2', 'w3', 'w4']) {
				got.push((await b.claim({ actor }, { project: web })).card?.id ?? null);
			}
			assert.deepEqual(got, [m1, m3, m4, null]);
		});

		it('reserve grants what is free, returns what is not, and the claim ending releases it', async () => {
			await clearReady();
			const [x, y] = [id('X'), id('Y')];
			await b.create(human, {
				cards: [
					{ id: x, title: 'x', project: web, scope: ['src/x/**'], priority: 2 },
					{ id: y, title: 'y', project: web, scope: ['src/y/**'], priority: 1 },
				],
			});
			const cx = await b.claim(a1, { project: web });
			const cy = await b.claim(a2, { project: web });
			assert.equal(cy.card?.id, y);
			const r = await b.reserve(a1, { cardId: x, paths: ['package.json', 'src/y/index.ts', 'src/x/more.ts'] });
			assert.deepEqual(r.granted, ['package.json', 'src/x/more.ts']);
			assert.deepEqual(r.refused, [{ path: 'src/y/index.ts', theirs: 'src/y/**', cardId: y, holder: 'codex-2' }]);
			assert.deepEqual(r.card.reserved, ['package.json', 'src/x/more.ts']);
			assert.deepEqual(committed.at(-1)?.data.granted, ['package.json', 'src/x/more.ts']);
			// The other agent now cannot reserve package.json.
			const r2 = await b.reserve(a2, { cardId: y, paths: ['package.json'] });
			assert.deepEqual(r2.granted, []);
			assert.equal(r2.refused[0]?.holder, 'claude-code-1');
			// A card needing package.json waits on x.
			const z = id('Z');
			await b.create(human, { cards: [{ id: z, title: 'z', project: web, scope: ['*.json'] }] });
			assert.match((await b.claim({ actor: 'w9' }, { project: web })).reason ?? '', new RegExp(`held by ${x}`));
			// Reserve on a card one does not hold: refused, nothing changed.
			await refused(b.reserve(a2, { cardId: x, paths: ['docs/**'] }), 'lease_lost');
			await refused(b.reserve(a1, { cardId: z, paths: ['docs/**'] }), 'invalid_transition', /not claimed/);
			assert.deepEqual((await get(x)).reserved, ['package.json', 'src/x/more.ts']);
			// Release ends the claim and its reservations: z becomes claimable.
			await b.release(a1, { cardId: x, epoch: cx.lease?.epoch });
			assert.deepEqual((await get(x)).reserved, []);
			// The zombie of that claim cannot reserve again.
			await refused(b.reserve(a1, { cardId: x, epoch: cx.lease?.epoch, paths: ['src/x/**'] }), 'lease_lost');
			assert.equal((await b.claim({ actor: 'w9' }, { project: web })).card?.id, x);
		});

		it('every end of a claim drops its reservations', async () => {
			await clearReady();
			const ends: [string, (cardId: string) => Promise<unknown>][] = [
				['complete', cardId => b.complete(a1, { cardId })],
				['fail', cardId => b.fail(a1, { cardId, reason: 'broke' })],
				['reclaim', cardId => b.reclaim(human, { cardId, reason: 'stuck' })],
				['agent exit', () => b.releaseAgent(human, a1.actor, 'agent exited')],
				[
					'lease expiry',
					async () => {
						clock.advance(3_600_000);
						return b.reclaim(human, {});
					},
				],
			];
			for (const [name, end] of ends) {
				const c = id('E');
				await b.create(human, { cards: [{ id: c, title: name, project: web, scope: ['src/e/**'] }] });
				const claim = await b.claim(a1, { cardId: c, ttlSeconds: 60 });
				await b.reserve(a1, { cardId: c, paths: ['src/shared/**'] });
				await end(c);
				const after = await get(c);
				assert.notEqual(after.status, 'claimed', name);
				assert.deepEqual(after.reserved, [], name);
				assert.ok(after.claimEpoch >= (claim.lease?.epoch ?? 0), name);
				if (after.status === 'ready') {
					await b.delete(human, { cardId: c });
				}
			}
		});

		it('refuses bad scopes with a clear error and changes nothing', async () => {
			const c = id('BAD');
			const cases: [string[], RegExp][] = [
				[['/etc/passwd'], /absolute path/],
				[['../other/**'], /leaves the project root/],
				[['lock:db migrations'], /lock name/],
				[['src/{a,{b,c}}'], /nests braces/],
				[['src/[abc'], /not a valid glob: it opens a character class "\[" that never closes/],
				[['src/{a,b'], /not a valid glob: it opens a brace "\{" that never closes/],
				[['src/[z-a].ts'], /range "z-a" backwards/],
				[Array.from({ length: 65 }, (_, i) => `f${i}.ts`), /at most 64 entries/],
			];
			for (const [scope, why] of cases) {
				await refused(b.create(human, { cards: [{ id: c, title: 'bad', scope }] }), 'invalid_input', why);
				await refused(b.get(human, { cardId: c }), 'not_found');
			}
			await b.create(human, { cards: [{ id: c, title: 'good', scope: ['src/**'] }] });
			await refused(b.update(human, { cardId: c, scope: ['/abs'] }), 'invalid_input', /absolute path/);
			const claim = await b.claim(a1, { cardId: c });
			await refused(b.reserve(a1, { cardId: c, paths: ['../up'] }), 'invalid_input', /leaves the project root/);
			// A held card's scope changes only through reserve.
			await refused(b.update(human, { cardId: c, scope: ['docs/**'] }), 'invalid_transition', /cannot change/);
			const now = await get(c);
			assert.deepEqual([now.scope, now.reserved, now.claimEpoch], [['src/**'], [], claim.lease?.epoch]);
			await b.complete(a1, { cardId: c });
		});
	});
}
