/**
 * card_counts stays exactly a recount of the cards, key by key (bucket, waiting, needs input, project),
 * on both stores, after a seeded random mix of every operation that moves a card between keys: the
 * one-statement complete and complete {next} (which write their own count rows since migration 0027),
 * the general paths (review, force, children, parents that auto-close), claims, releases, fails,
 * blocks, reopens, questions and answers, dependency links, project and parent edits, deletes. Checked
 * after every few steps, so a wrong row is caught near the step that wrote it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Backlog } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import type { Db } from '../../core/store/db';
import { openTestBacklog, storeKinds, type TestBacklog } from '../helpers/backlog';
import { prng } from '../helpers/prng';

const human = { actor: 'human' };
const projects = ['github.com/acme/web', 'github.com/acme/api', null];

/** The delta rows summed per key, and the cards counted per key, as sorted lines. */
async function sumsAndRecount(db: Db): Promise<{ sums: string[]; recount: string[] }> {
	const line = (r: { bucket: string; waiting: boolean; needs_input: boolean; project: string | null; n: unknown }) =>
		`${r.bucket}|${String(r.waiting)}|${String(r.needs_input)}|${r.project ?? '-'}=${Number(r.n)}`;
	type R = { bucket: string; waiting: boolean; needs_input: boolean; project: string | null; n: unknown };
	const sums = await db.query<R>(
		`SELECT bucket, waiting, needs_input, project, sum(n) AS n FROM card_counts
		 GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0`,
	);
	const recount = await db.query<R>(
		`SELECT baton_count_bucket(status) AS bucket, unmet_deps > 0 AS waiting, needs_input, project, count(*) AS n
		 FROM cards GROUP BY 1, 2, 3, 4`,
	);
	return { sums: sums.map(line).sort(), recount: recount.map(line).sort() };
}

for (const kind of storeKinds) {
	describe(`card_counts against a recount on ${kind}`, () => {
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

		it('a hot complete writes its two rows itself, once, and leaves the trigger on for the next statement', async () => {
			await b.create(human, {
				cards: [{ id: 'h-dep' }, { id: 'h-next', dependsOn: ['h-dep'], project: 'github.com/acme/web' }].map(c => ({
					title: c.id,
					...c,
				})),
			});
			const rowsNow = async (): Promise<number> =>
				(await db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_counts'))[0]?.n ?? 0;
			const { card, lease } = await b.claim({ actor: 'h1' }, {});
			assert.equal(card?.id, 'h-dep');
			const before = await rowsNow();
			const done = await b.complete({ actor: 'h1' }, { cardId: 'h-dep', epoch: lease?.epoch });
			assert.deepEqual(done.unblocked, ['h-next']);
			// open -1, done +1 for h-dep; waiting -1, not waiting +1 for h-next: four rows, none twice.
			assert.equal((await rowsNow()) - before, 4);
			// The next statement is not marked: a question moves h-next between keys through the trigger.
			const mid = await rowsNow();
			await b.comment(human, { cardId: 'h-next', text: 'Which API?', question: true });
			assert.equal((await rowsNow()) - mid, 2);
			const { sums, recount } = await sumsAndRecount(db);
			assert.deepEqual(sums, recount);
		});

		it('equal key by key after a random mix of operations, before and after folding', async () => {
			const random = prng(kind === 'pglite' ? 27 : 28);
			const pickOf = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
			const ids: string[] = [];
			let made = 0;
			const create = async (n: number): Promise<void> => {
				const cards = Array.from({ length: n }, () => {
					const id = `r${made++}`;
					const project = pickOf(projects);
					// A parent of the same project (the backlog refuses another), sometimes auto-closing.
					const parent = random() < 0.25 ? ids.find(p => p.endsWith(String(Math.floor(random() * 10)))) : undefined;
					const deps = ids.length > 0 && random() < 0.35 ? [pickOf(ids)] : [];
					return {
						id,
						title: `Work ${id}`,
						priority: Math.floor(random() * 4),
						...(project !== null ? { project } : {}),
						...(deps.length > 0 ? { dependsOn: deps } : {}),
						...(random() < 0.15 ? { review: 'human' as const } : {}),
						...(parent !== undefined ? { parent, autoClose: random() < 0.5 } : {}),
					};
				});
				// One at a time: a parent or a dependency of another project is refused, and that is fine.
				for (const card of cards) {
					await b.create(human, { cards: [card] }).then(
						() => ids.push(card.id),
						async () => {
							const { parent: _p, autoClose: _a, ...plain } = card;
							await b.create(human, { cards: [{ ...plain, dependsOn: undefined }] });
							ids.push(card.id);
						},
					);
				}
			};
			const ignore = (): undefined => undefined;
			await create(40);
			const agents = ['a1', 'a2', 'a3'];
			for (let step = 0; step < 260; step++) {
				const actor = { actor: pickOf(agents) };
				const project = pickOf([...projects, undefined]);
				const roll = random();
				if (roll < 0.45) {
					const { card, lease } = await b.claim(actor, project === undefined ? {} : { project });
					if (card !== null && lease !== null) {
						const then = random();
						if (then < 0.35) {
							await b.complete(actor, { cardId: card.id, epoch: lease.epoch });
						} else if (then < 0.6) {
							const done = await b.complete(actor, { cardId: card.id, epoch: lease.epoch, next: {} });
							if (done.next?.card && done.next.lease && random() < 0.5) {
								await b.complete(actor, { cardId: done.next.card.id, epoch: done.next.lease.epoch });
							}
						} else if (then < 0.7) {
							await b.release(actor, { cardId: card.id, epoch: lease.epoch });
						} else if (then < 0.8) {
							await b.fail(actor, { cardId: card.id, epoch: lease.epoch, reason: 'broke' }).catch(ignore);
						} else if (then < 0.9) {
							await b.comment(actor, { cardId: card.id, text: 'Which API?', question: true });
						}
					}
				} else if (roll < 0.5) {
					await create(3);
				} else if (roll < 0.56) {
					const id = pickOf(ids);
					await b.review(human, { cardId: id, approve: random() < 0.7, note: 'again' }, 'human').catch(ignore);
				} else if (roll < 0.62) {
					await b.reopen(human, { cardId: pickOf(ids), force: random() < 0.5 }).catch(ignore);
				} else if (roll < 0.67) {
					await b.block(human, { cardId: pickOf(ids), reason: 'legal' }).catch(ignore);
				} else if (roll < 0.72) {
					await b.unblock(human, { cardId: pickOf(ids) }).catch(ignore);
				} else if (roll < 0.77) {
					await b.comment(human, { cardId: pickOf(ids), text: 'Use v2.' }).catch(ignore);
				} else if (roll < 0.82) {
					await b.link(human, { cardId: pickOf(ids), dependsOn: pickOf(ids) }).catch(ignore);
				} else if (roll < 0.86) {
					await b.update(human, { cardId: pickOf(ids), project: pickOf(projects) }).catch(ignore);
				} else if (roll < 0.9) {
					await b.update(human, { cardId: pickOf(ids), parent: random() < 0.3 ? null : pickOf(ids) }).catch(ignore);
				} else if (roll < 0.94) {
					const victim = pickOf(ids);
					await b.delete(human, { cardId: victim }).then(() => ids.splice(ids.indexOf(victim), 1), ignore);
				} else {
					// Someone else's complete of a held card, forced: the general path.
					const [held] = await db.query<{ id: string }>("SELECT id FROM cards WHERE status = 'claimed' LIMIT 1");
					if (held !== undefined) {
						await b.complete(human, { cardId: held.id, force: true }).catch(ignore);
					}
				}
				clock.advance(5);
				if (step % 20 === 19) {
					const { sums, recount } = await sumsAndRecount(db);
					assert.deepEqual(sums, recount, `after step ${step}`);
				}
			}
			const { sums, recount } = await sumsAndRecount(db);
			assert.deepEqual(sums, recount);
			const statuses = await db.query<{ status: string; n: unknown }>(
				'SELECT status, count(*) AS n FROM cards GROUP BY 1',
			);
			// The mix reached the paths it is for.
			const seen = new Set(statuses.map(s => s.status));
			assert.ok(seen.has('done') && seen.has('ready'), [...seen].join(', '));
			await b.maintenance();
			const folded = await sumsAndRecount(db);
			assert.deepEqual(folded.sums, folded.recount);
		});
	});
}
