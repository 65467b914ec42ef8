/**
 * card/stats from maintained counts and card/list {text} through card_text (migration 0012), on both
 * stores: after a random workload the counts equal a full count of the cards (before and after the
 * delta rows are folded), so do the counts by project (0016, the hub's /metrics), and the text filter finds ids, titles and bodies case-insensitively with
 * `%`, `_`, `\` and quotes taken literally, following edits and deletes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Backlog } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import type { Db } from '../../core/store/db';
import { openTestBacklog, storeKinds, type TestBacklog } from '../helpers/backlog';
import { prng } from '../helpers/prng';

const human = { actor: 'human' };

/** What stats must say, counted from every card (the query stats ran before migration 0012). */
async function fullCount(db: Db, now: Date): Promise<Record<string, number>> {
	const [row] = await db.query<Record<string, unknown>>(
		`SELECT
			count(*) FILTER (WHERE status = 'ready') AS ready,
			count(*) FILTER (WHERE status = 'claimed') AS claimed,
			count(*) FILTER (WHERE status = 'review') AS review,
			count(*) FILTER (WHERE status = 'blocked') AS blocked,
			count(*) FILTER (WHERE status = 'done') AS done,
			count(*) FILTER (WHERE needs_input) AS needs_input,
			count(*) FILTER (WHERE status = 'ready' AND unmet_deps > 0) AS waiting,
			count(*) FILTER (WHERE status = 'ready' AND unmet_deps = 0 AND defer_until > $1) AS deferred,
			count(*) FILTER (WHERE status = 'ready' AND unmet_deps = 0 AND (defer_until IS NULL OR defer_until <= $1)) AS claimable,
			count(*) AS total
		 FROM cards`,
		[now],
	);
	return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
}

async function statsAsCounts(b: Backlog): Promise<Record<string, number>> {
	const s = await b.stats(human, {});
	return {
		...s.counts,
		needs_input: s.needsInput,
		waiting: s.waiting,
		deferred: s.deferred,
		claimable: s.claimable,
		total: s.total,
	};
}

for (const kind of storeKinds) {
	describe(`counts and text on ${kind}`, () => {
		let t: TestBacklog;
		let b: Backlog;
		let db: Db;
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');

		before(async () => {
			t = await openTestBacklog(kind, { clock, defaultTtlSeconds: 600 });
			b = t.backlog;
			db = (b as unknown as { db: Db }).db;
		});
		after(async () => {
			await t.cleanup();
		});

		it('stats equal a full count after a random workload, before and after folding', async () => {
			const random = prng(kind === 'pglite' ? 3 : 4);
			const ids: string[] = [];
			for (let batch = 0; batch < 4; batch++) {
				const cards = Array.from({ length: 25 }, (_, i) => {
					const id = `w${batch}-${i}`;
					const deps = ids.length > 0 && random() < 0.3 ? [ids[Math.floor(random() * ids.length)]!] : [];
					return {
						id,
						title: `Work ${id}`,
						priority: Math.floor(random() * 4),
						...(deps.length > 0 ? { dependsOn: deps } : {}),
						...(random() < 0.1 ? { deferUntil: new Date(clock.now().getTime() + 3_600_000).toISOString() } : {}),
						...(random() < 0.2 ? { review: 'human' as const } : {}),
					};
				});
				await b.create(human, { cards });
				ids.push(...cards.map(c => c.id));
			}
			const agents = ['a1', 'a2', 'a3'];
			for (let step = 0; step < 150; step++) {
				const actor = { actor: agents[step % agents.length]! };
				const roll = random();
				const { card, lease } = await b.claim(actor, {});
				if (card === null || lease === null) {
					break;
				}
				if (roll < 0.55) {
					await b.complete(actor, { cardId: card.id, epoch: lease.epoch });
				} else if (roll < 0.7) {
					await b.release(actor, { cardId: card.id, epoch: lease.epoch });
				} else if (roll < 0.8) {
					await b.comment(actor, { cardId: card.id, text: 'Which API?', question: true });
				} else if (roll < 0.9) {
					await b.block(human, { cardId: card.id, reason: 'legal' });
				}
				if (random() < 0.1) {
					const victim = ids[Math.floor(random() * ids.length)]!;
					await b.delete(human, { cardId: victim }).then(
						() => ids.splice(ids.indexOf(victim), 1),
						() => undefined, // held or depended on: refused, counts unchanged
					);
				}
			}
			clock.advance(1_800);
			assert.deepEqual(await statsAsCounts(b), await fullCount(db, clock.now()));
			const before = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_counts'))[0]?.n ?? 0;
			await b.maintenance();
			const folded = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_counts'))[0]?.n ?? 0;
			assert.ok(folded < before && folded <= 20, `${before} delta rows folded into ${folded}`);
			assert.deepEqual(await statsAsCounts(b), await fullCount(db, clock.now()));
			clock.advance(3_600);
			assert.deepEqual(await statsAsCounts(b), await fullCount(db, clock.now()));
			const s = await b.stats(human, {});
			const [oldest] = await db.query<{ at: string | null }>(
				"SELECT baton_ts(min(created_at)) AS at FROM cards WHERE status = 'ready'",
			);
			assert.equal(s.oldestReadyAt, oldest?.at ?? null);
		});

		it('counts by project and status (migration 0016) equal a full count, before and after folding', async () => {
			const full = async (): Promise<string[]> =>
				(
					await db.query<{ project: string | null; status: string; n: unknown }>(
						"SELECT project, status, count(*) AS n FROM cards WHERE id LIKE 'p-%' GROUP BY 1, 2",
					)
				)
					.map(r => `${r.project ?? '-'}|${r.status}=${Number(r.n)}`)
					.sort();
			// Only this test's cards: subtract what the earlier test left, counted the same way.
			const earlier = await b.countsByProject();
			const mine = async (): Promise<string[]> => {
				const now = await b.countsByProject();
				return now
					.map(c => {
						const was = earlier.find(e => e.project === c.project && e.status === c.status)?.n ?? 0;
						return { ...c, n: c.n - was };
					})
					.filter(c => c.n !== 0)
					.map(c => `${c.project ?? '-'}|${c.status}=${c.n}`)
					.sort();
			};
			const projects = ['github.com/acme/web', 'github.com/acme/api', undefined];
			await b.create(human, {
				cards: Array.from({ length: 12 }, (_, i) => ({
					id: `p-${i}`,
					title: `Project work ${i}`,
					priority: 100,
					...(projects[i % 3] === undefined ? {} : { project: projects[i % 3] }),
				})),
			});
			const agent = { actor: 'p-agent' };
			for (let i = 0; i < 6; i++) {
				const { card, lease } = await b.claim(agent, { cardId: `p-${i}` });
				if (card !== null && lease !== null && i % 2 === 0) {
					await b.complete(agent, { cardId: card.id, epoch: lease.epoch });
				}
			}
			await b.update(human, { cardId: 'p-7', project: 'github.com/acme/new' });
			await b.update(human, { cardId: 'p-2', project: null }); // a done card
			await b.block(human, { cardId: 'p-9', reason: 'legal' });
			await b.delete(human, { cardId: 'p-11' });
			assert.deepEqual(await mine(), await full());
			await b.maintenance();
			assert.deepEqual(await mine(), await full());
		});

		it('finds text in ids, titles and bodies, case-insensitively, special characters literally', async () => {
			await b.create(human, {
				cards: [
					{ id: 'tx-Alpha', title: 'Parser for the WIDGET format', body: 'plain' },
					{ id: 'tx-beta', title: 'Other', body: 'Discount of 100% on item_7' },
					{ id: 'tx-gamma', title: 'Paths', body: String.raw`C:\temp\new and it's quoted` },
					{ id: 'tx-delta', title: '100 percent', body: 'itemX7 and 100x' },
				],
			});
			const found = async (text: string): Promise<string[]> =>
				(await b.list(human, { text, limit: 100 })).cards
					.map(c => c.id)
					.filter(id => id.startsWith('tx-'))
					.sort();
			assert.deepEqual(await found('widget'), ['tx-Alpha']);
			assert.deepEqual(await found('TX-ALPHA'), ['tx-Alpha']);
			assert.deepEqual(await found('tx-'), ['tx-Alpha', 'tx-beta', 'tx-delta', 'tx-gamma']);
			assert.deepEqual(await found('DISCOUNT'), ['tx-beta']);
			assert.deepEqual(await found('100%'), ['tx-beta']);
			assert.deepEqual(await found('item_7'), ['tx-beta']);
			assert.deepEqual(await found('_'), ['tx-beta']);
			assert.deepEqual(await found(String.raw`\temp\n`), ['tx-gamma']);
			assert.deepEqual(await found('\\'), ['tx-gamma']);
			assert.deepEqual(await found("it's"), ['tx-gamma']);
			assert.deepEqual(await found('  widget  '), ['tx-Alpha']);
			assert.deepEqual(await found('no such words'), []);
			// A title spanning into the body is not a match (the fields are searched one by one).
			assert.deepEqual(await found('format plain'), []);
			await b.update(human, { cardId: 'tx-Alpha', title: 'Lexer', body: 'now about GADGETS' });
			assert.deepEqual(await found('widget'), []);
			assert.deepEqual(await found('gadget'), ['tx-Alpha']);
			await b.delete(human, { cardId: 'tx-beta' });
			assert.deepEqual(await found('discount'), []);
			const [texts] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM card_text WHERE id LIKE 'tx-%'");
			assert.equal(texts?.n, 3);
		});
	});
}
