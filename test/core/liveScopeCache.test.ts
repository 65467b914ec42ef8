/**
 * The live scopes kept between claims (core/backlog/liveScopeCache.ts and scopedClaim.ts),
 * through the Backlog on real PGlite and PostgreSQL: a claim never takes a card whose scope meets a live
 * claim, and takes it as soon as that claim ends, whichever way it ends (complete, release, fail, a
 * forced reclaim, lease expiry and the reaper's reclaim, a block); a card kept back is remembered only
 * while its holder's claim lives; a restarted hub reads the live set afresh; on PostgreSQL a second
 * Backlog on the same schema that changes the live set is seen; and agents claiming and ending at once
 * never hold overlapping scopes (checked by replaying the event log).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Backlog, type OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import type { BacklogEvent, Card } from '../../core/protocol';
import { type HeldScope, LiveScopes, liveScope, scopesOverlap } from '../../core/scope/conflicts';
import { readScope } from '../../core/scope/read';
import { openTestBacklog, storeKinds, type TestBacklog } from '../helpers/backlog';
import { prng } from '../helpers/prng';

const human: OpContext = { actor: 'vscode:alice' };
const a1: OpContext = { actor: 'claude-code-1' };
const a2: OpContext = { actor: 'codex-2' };

let counter = 0;
const id = (name: string): string => `${name}-${++counter}`;

/** Ends a card's claim one way; each must free its files for the next claim. */
type End = (b: Backlog, clock: ManualClock, card: Card) => Promise<unknown>;
const ends: Record<string, End> = {
	complete: (b, _c, card) => b.complete(a1, { cardId: card.id, epoch: card.claimEpoch }),
	release: (b, _c, card) => b.release(a1, { cardId: card.id, epoch: card.claimEpoch }),
	fail: (b, _c, card) => b.fail(a1, { cardId: card.id, epoch: card.claimEpoch, reason: 'broke', retry: false }),
	'forced reclaim': (b, _c, card) => b.reclaim(human, { cardId: card.id }),
	'lease expiry and the reaper': async (b, clock) => {
		clock.advance(120);
		return b.reclaim({ actor: 'baton:reaper' }, {});
	},
	block: (b, _c, card) => b.block(human, { cardId: card.id, reason: 'parked' }),
};

describe('LiveScopes kept up by add and remove', () => {
	it('answers as a set built afresh from the claims left, through thousands of changes and its rebuilds', () => {
		const random = prng(3);
		const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
		const entryOf = (): string =>
			pick([
				() => `src/m${Math.floor(random() * 30)}/**`,
				() => `src/m${Math.floor(random() * 30)}/*.ts`,
				() => `lib/m${Math.floor(random() * 30)}.ts`,
				() => `lock:l${Math.floor(random() * 10)}`,
				() => '**/*.md',
				() => `{src,lib}/m${Math.floor(random() * 30)}/x.ts`,
			])();
		const kept = new LiveScopes();
		const held = new Map<string, HeldScope>();
		for (let step = 0; step < 4000; step++) {
			const cardId = `K-${Math.floor(random() * 60)}`;
			if (random() < 0.5) {
				const h: HeldScope = {
					cardId,
					holder: 'a',
					title: cardId,
					project: pick([null, 'p', 'q']),
					entries: Array.from({ length: 1 + Math.floor(random() * 4) }, entryOf),
				};
				kept.add(h);
				held.set(cardId, h);
			} else {
				kept.remove(cardId);
				held.delete(cardId);
			}
			if (step % 50 === 0) {
				const fresh = new LiveScopes(held.values());
				for (let q = 0; q < 20; q++) {
					const project = pick([null, 'p', 'q']);
					const entries = Array.from({ length: 1 + Math.floor(random() * 3) }, entryOf);
					assert.deepEqual(
						kept.conflict(project, entries) === undefined,
						fresh.conflict(project, entries) === undefined,
						`step ${step}: ${entries.join(' ')}`,
					);
				}
				assert.equal(kept.size, held.size);
			}
		}
	});
});

for (const kind of storeKinds) {
	describe(`live scopes kept between claims on ${kind}`, () => {
		let t: TestBacklog;
		let b: Backlog;
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');

		before(async () => {
			t = await openTestBacklog(kind, { clock, onDisk: true });
			b = t.backlog;
		});
		after(async () => {
			await t.cleanup();
		});

		async function clearAll(backlog = b): Promise<void> {
			for (const card of (await backlog.list(human, { status: ['ready', 'claimed'], limit: 1000 })).cards) {
				if (card.status === 'claimed') {
					await backlog.release(human, { cardId: card.id, force: true });
				}
				await backlog.delete(human, { cardId: card.id });
			}
			for (const card of (await backlog.list(human, { status: ['blocked'], limit: 1000 })).cards) {
				await backlog.delete(human, { cardId: card.id });
			}
		}

		/** H (held first), W (waits on H's files, next best), F (free, last): the claim order H, W, F. */
		async function threeCards(backlog = b): Promise<{ h: string; w: string; f: string }> {
			const [h, w, f] = [id('H'), id('W'), id('F')];
			await backlog.create(human, {
				cards: [
					{ id: h, title: 'holds src/a', priority: 3, scope: ['src/a/**', 'lock:db'] },
					{ id: w, title: 'wants src/a/x.ts', priority: 2, scope: ['src/a/x.ts'] },
					{ id: f, title: 'free', priority: 1, scope: ['src/b/**'] },
				],
			});
			return { h, w, f };
		}

		for (const [how, end] of Object.entries(ends)) {
			it(`a card kept back by a live claim is claimed once that claim ends by ${how}`, async () => {
				await clearAll();
				const { h, w, f } = await threeCards();
				const held = (await b.claim(a1, { ttlSeconds: 60 })).card;
				assert.equal(held?.id, h);
				// W meets H: the next claim passes it over (and remembers it kept back), twice over.
				const other = await b.claim(a2, {});
				assert.equal(other.card?.id, f);
				await b.release(a2, { cardId: f, epoch: other.card.claimEpoch });
				assert.equal((await b.claim(a2, {})).card?.id, f);
				await b.release(a2, { cardId: f, force: true });
				await end(b, clock, held);
				// H no longer holds its files (or is gone, or ready again ahead of W: then H is taken first).
				const next = await b.claim(a2, {});
				const expected = how === 'release' || how === 'forced reclaim' || how === 'lease expiry and the reaper' ? h : w;
				assert.equal(next.card?.id, expected, `after ${how}`);
				if (expected === h) {
					await b.release(a2, { cardId: h, force: true });
					await b.delete(human, { cardId: h });
					assert.equal((await b.claim(a2, {})).card?.id, w);
				}
			});
		}

		it('a reservation widens the live set, and its claim ending frees it', async () => {
			await clearAll();
			const [r, w] = [id('R'), id('W')];
			await b.create(human, {
				cards: [
					{ id: r, title: 'reserves', priority: 3, scope: ['docs/**'] },
					{ id: w, title: 'wants src/z', priority: 2, scope: ['src/z/**'] },
				],
			});
			const held = (await b.claim(a1, {})).card;
			assert.equal(held?.id, r);
			await b.reserve(a1, { cardId: r, epoch: held.claimEpoch, paths: ['src/z/q.ts'] });
			assert.equal((await b.claim(a2, {})).card, null);
			await b.complete(a1, { cardId: r, epoch: held.claimEpoch });
			assert.equal((await b.claim(a2, {})).card?.id, w);
		});

		it('an edited waiting card is claimable at once when it no longer meets the holder', async () => {
			await clearAll();
			const [h, w] = [id('H'), id('W')];
			await b.create(human, {
				cards: [
					{ id: h, title: 'holds src/a', priority: 3, scope: ['src/a/**'] },
					{ id: w, title: 'wants src/a', priority: 2, scope: ['src/a/x.ts'] },
				],
			});
			assert.equal((await b.claim(a1, {})).card?.id, h);
			assert.equal((await b.claim(a2, {})).card, null);
			await b.update(human, { cardId: w, scope: ['src/c/**'] });
			assert.equal((await b.claim(a2, {})).card?.id, w);
		});

		it('a restarted backlog reads the live set afresh', async () => {
			await clearAll();
			const { h, w, f } = await threeCards();
			assert.equal((await b.claim(a1, { ttlSeconds: 3600 })).card?.id, h);
			await b.close();
			b = await Backlog.open(t.options);
			t.backlog = b;
			assert.equal((await b.claim(a2, {})).card?.id, f);
			assert.equal((await b.claim(a2, {})).card, null);
			assert.ok((await b.claim(a2, {}, { explain: true })).reason?.includes(`held by ${h}`));
			await b.complete(a1, { cardId: h });
			assert.equal((await b.claim(a2, {})).card?.id, w);
		});

		if (kind === 'postgres') {
			it('sees another Backlog on the same schema change the live set', async () => {
				await clearAll();
				const other = await Backlog.open(t.options);
				try {
					const { h, w, f } = await threeCards();
					// This backlog has read the live set (a scoped claim), then the other one grants H.
					const first = (await b.claim(a2, {})).card;
					assert.equal(first?.id, h);
					await b.release(a2, { cardId: h, force: true });
					assert.equal((await other.claim(a1, {})).card?.id, h);
					assert.equal((await b.claim(a2, {})).card?.id, f);
					await other.complete(a1, { cardId: h });
					assert.equal((await b.claim(a2, {})).card?.id, w);
				} finally {
					await other.close();
				}
			});
		}

		it('agents claiming and ending at once never hold overlapping scopes (the event log replayed)', async () => {
			await clearAll();
			const random = prng(5);
			const from = await b.lastSeq();
			// 120 cards over 12 modules: most pairs of live claims would meet.
			const cards = Array.from({ length: 120 }, (_, i) => {
				const m = Math.floor(random() * 12);
				return {
					id: id('C'),
					title: `card ${i}`,
					priority: Math.floor(random() * 3),
					scope: random() < 0.2 ? [`lock:m${m}`] : [`src/m${m}/**`, `test/m${m}.ts`],
				};
			});
			await b.create(human, { cards });
			const agents = Array.from({ length: 6 }, (_, i): OpContext => ({ actor: `agent-${i}` }));
			let done = 0;
			await Promise.all(
				agents.map(async ctx => {
					for (let idle = 0; idle < 20 && done < cards.length;) {
						const { card, lease } = await b.claim(ctx, {}, { explain: false });
						if (card === null || lease === null) {
							idle++;
							await new Promise(r => setTimeout(r, 1));
							continue;
						}
						await new Promise(r => setTimeout(r, Math.floor(random() * 3)));
						const roll = random();
						if (roll < 0.7) {
							await b.complete(ctx, { cardId: card.id, epoch: lease.epoch });
							done++;
						} else if (roll < 0.85) {
							await b.release(ctx, { cardId: card.id, epoch: lease.epoch });
						} else {
							await b.reserve(ctx, { cardId: card.id, epoch: lease.epoch, paths: ['docs/shared.md'] });
							await b.complete(ctx, { cardId: card.id, epoch: lease.epoch });
							done++;
						}
					}
				}),
			);
			const events: BacklogEvent[] = [];
			for (let seq = from; ;) {
				const page = await b.eventsAfter(seq, 1000);
				if (page.length === 0) {
					break;
				}
				events.push(...page);
				seq = page.at(-1)?.seq ?? seq;
			}
			const live = new Map<string, string[]>();
			let claims = 0;
			for (const e of events) {
				const card = e.data.card;
				if (card === null) {
					live.delete(e.cardId);
					continue;
				}
				const entries = liveScope(card);
				if ((e.type === 'claimed' || e.type === 'reserved') && entries.length > 0) {
					claims += e.type === 'claimed' ? 1 : 0;
					const mine = readScope(entries);
					for (const [other, theirs] of live) {
						if (other !== card.id) {
							const meet = scopesOverlap(mine, readScope(theirs));
							assert.equal(
								meet,
								undefined,
								`seq ${e.seq}: ${card.id} [${entries.join(' ')}] meets ${other} [${theirs.join(' ')}]`,
							);
						}
					}
				}
				if (entries.length > 0) {
					live.set(card.id, entries);
				} else {
					live.delete(card.id);
				}
			}
			assert.ok(claims >= cards.length * 0.5, `${claims} claims`);
		});
	});
}
