/**
 * The tree's property over a random plan of thousands of cards, on PGlite and PostgreSQL: random
 * dependencies and parents (each on an earlier card, so most creates stand; the ones that would close
 * a cycle through parents and dependencies are refused and skipped), then random completions (forced,
 * parents with open children included), reopens and deletions. After each phase the cards list
 * readyOnly returns (through claimableSql) are exactly those the rule written out here says: ready,
 * no unmet dependency of its own or of any ancestor, not deferred, no child that is not done; and
 * the claim index's stats agree on how many. Pauses (a phase, some cards) are set and cleared along the
 * way: the faces' check (the claim guard table over card/list's cards, and over the holds a face derives
 * from the cards itself) agrees with the rule and the SQL, and stats count each ready card under the
 * word list shows for it.
 * A random plan of 2,000 cards on each store is a proof, not a unit test: it runs in
 * `npm run test:proofs`, beside the fast unit suite.
 * @first among the longest proofs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { BatonError } from '../../core/errors';
import { allCards, backlogForSuite, storeKinds } from '../helpers/backlog';
import type { StateWord } from '../../core/rules/claimable';
import {
	faceDerivedClaimable,
	faceWords,
	listedClaimable,
	listedReady,
	ruleClaimable,
} from '../helpers/claimableOracle';
import { prng } from '../helpers/prng';

const human: OpContext = { actor: 'vscode:planner' };
const cardCount = 2000;

async function refusedOrDone(op: Promise<unknown>): Promise<boolean> {
	try {
		await op;
		return true;
	} catch (e) {
		if (BatonError.is(e)) {
			return false;
		}
		throw e;
	}
}

for (const kind of storeKinds) {
	describe(`claimable with parents over a random plan on ${kind}`, () => {
		let b: Backlog;
		backlogForSuite(kind, {}, t => {
			b = t.backlog;
		});

		it(`holds for ${cardCount} cards through completions, reopens and deletions`, async () => {
			const random = prng(31);
			const pick = <T>(list: readonly T[]): T | undefined => list[Math.floor(random() * list.length)];
			const ids: string[] = [];
			let refusedCreates = 0;
			// In batches of single-card creates, each naming earlier cards only.
			for (let i = 0; i < cardCount; i++) {
				const id = `T${i}`;
				const deps =
					random() < 0.3 ? [...new Set([pick(ids), pick(ids)].filter((d): d is string => d !== undefined))] : [];
				const parent = random() < 0.35 ? pick(ids) : undefined;
				const made = await refusedOrDone(
					b.create(human, {
						cards: [
							{
								id,
								title: `card ${i}`,
								priority: Math.floor(random() * 5),
								phase: pick(['a', 'b', 'c']) ?? 'a',
								...(deps.length > 0 ? { dependsOn: deps } : {}),
								...(parent === undefined ? {} : { parent }),
							},
						],
					}),
				);
				if (made) {
					ids.push(id);
				} else {
					refusedCreates++;
				}
			}
			const check = async (phase: string): Promise<void> => {
				const cards = await allCards(b);
				const pauses = (await b.pauses.list()).pauses;
				const now = new Date();
				const expected = ruleClaimable(cards, now, pauses);
				assert.deepEqual(await listedClaimable(b), expected, `${phase}: list readyOnly differs from the rule`);
				const listed = await listedReady(b);
				const words = faceWords(listed, now);
				const claimable = [...words].filter(([, w]) => w === 'ready').map(([id]) => id);
				assert.deepEqual(
					claimable.sort(),
					expected,
					`${phase}: the guard table over list's cards differs from the rule`,
				);
				assert.deepEqual(faceDerivedClaimable(cards, listed, now), expected, `${phase}: a face's own holds differ`);
				const stats = await b.stats(human, {});
				const count = (w: StateWord): number => [...words.values()].filter(x => x === w).length;
				assert.deepEqual(
					[stats.claimable, stats.waiting, stats.deferred, stats.paused, stats.counts.ready],
					[expected.length, count('waiting'), count('deferred'), count('paused'), listed.length],
					`${phase}: stats differ from list's words`,
				);
			};
			const pauseSome = async (): Promise<void> => {
				await b.pauses.set(human, { scope: 'phase', target: 'b' });
				for (let i = 0; i < 20; i++) {
					const id = pick(ids);
					if (id !== undefined) {
						await refusedOrDone(b.pauses.set(human, { scope: 'card', target: id }));
					}
				}
			};
			await check('created');
			await pauseSome();
			await check('paused');
			let done = 0;
			for (let i = 0; i < 600; i++) {
				const id = pick(ids);
				if (id !== undefined && (await refusedOrDone(b.complete(human, { cardId: id, force: true })))) {
					done++;
				}
			}
			await check('completed');
			for (let i = 0; i < 150; i++) {
				const id = pick(ids);
				if (id !== undefined) {
					await refusedOrDone(b.reopen(human, { cardId: id, force: true }));
				}
			}
			await check('reopened');
			await b.pauses.clear(human, { all: true });
			await check('resumed');
			await pauseSome();
			let deleted = 0;
			for (let i = 0; i < 300; i++) {
				const id = pick(ids);
				if (id !== undefined && (await refusedOrDone(b.delete(human, { cardId: id })))) {
					ids.splice(ids.indexOf(id), 1);
					deleted++;
				}
			}
			await check('deleted');
			const cards = await allCards(b);
			assert.ok(cards.filter(c => c.parent != null).length > 300, 'the plan has children');
			assert.ok(done > 100 && deleted > 10, `done ${done}, deleted ${deleted}`);
			console.log(
				`${kind}: ${cards.length} cards, ${refusedCreates} creates refused as cycles, ${done} completed, ${deleted} deleted`,
			);
		});
	});
}
