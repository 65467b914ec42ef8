/**
 * Property test of the DAG invariant on real PGlite and PostgreSQL: random sequences of create, link,
 * unlink, claim, heartbeat, complete (by holders and by zombies holding stale leases), release and
 * reopen (forced or not), with the invariant checked against the stored cards after every step:
 * - every card's unmetDeps is the number of its dependencies that are not done;
 * - no card is claimed while a dependency is not done;
 * - no card is done while a dependency is not done, except one a forced reopen flagged as built on it.
 * Refusals must be BatonErrors with the expected codes; anything else fails the run. A proof over
 * random sequences, so it runs in `npm run test:proofs`, beside the fast unit suite.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Backlog } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import { BatonError } from '../../core/errors';
import type { Card, ErrorCode } from '../../core/protocol';
import { allCards as cardList, openTestBacklog, storeKinds, type TestBacklog } from '../helpers/backlog';
import { prng } from '../helpers/prng';

const agents = ['ag-1', 'ag-2', 'ag-3'];
/** Refusals a random operation may meet; an `internal` or a non-Baton error fails the test. */
const expectedRefusals = new Set<ErrorCode>([
	'cycle',
	'invalid_transition',
	'conflict',
	'lease_lost',
	'has_dependents',
]);

interface Held {
	agent: string;
	cardId: string;
	epoch: number;
}

async function allCards(b: Backlog): Promise<Map<string, Card>> {
	return new Map((await cardList(b)).map(c => [c.id, c]));
}

/** `flagged` holds "card|dep" for each done card a forced reopen of dep flagged. */
function checkInvariant(cards: Map<string, Card>, flagged: ReadonlySet<string>, step: string): void {
	for (const c of cards.values()) {
		const undone = c.dependsOn.filter(d => cards.get(d)?.status !== 'done');
		assert.equal(c.unmetDeps, undone.length, `${step}: ${c.id} counts ${c.unmetDeps} unmet, has [${undone.join()}]`);
		if (c.status === 'claimed') {
			assert.deepEqual(undone, [], `${step}: ${c.id} is claimed while [${undone.join()}] are not done`);
		}
		if (c.status === 'done') {
			for (const d of undone) {
				assert.ok(flagged.has(`${c.id}|${d}`), `${step}: ${c.id} is done while ${d} is not, and was not flagged`);
			}
		}
	}
}

async function run(
	b: Backlog,
	clock: ManualClock,
	seed: number,
	steps: number,
	tag: string,
): Promise<Record<string, number>> {
	const random = prng(seed);
	const pick = <T>(list: readonly T[]): T | undefined => list[Math.floor(random() * list.length)];
	const flagged = new Set<string>();
	const held: Held[] = []; // live and stale leases: zombies keep theirs
	const counts: Record<string, number> = {};
	let next = 0;
	const count = (name: string): void => {
		counts[name] = (counts[name] ?? 0) + 1;
	};
	for (let step = 0; step < steps; step++) {
		const cards = await allCards(b);
		const ids = [...cards.keys()];
		const r = random();
		let label = '';
		try {
			if (ids.length < 4 || r < 0.14) {
				const n = 1 + Math.floor(random() * 3);
				const batch = Array.from({ length: n }, () => ({
					id: `${tag}${next++}`,
					title: 'card',
					dependsOn: [...new Set(Array.from({ length: Math.floor(random() * 3) }, () => pick(ids)))].filter(
						(d): d is string => d !== undefined,
					),
				}));
				label = `create ${batch.map(c => `${c.id}<-[${c.dependsOn.join()}]`).join(' ')}`;
				await b.create({ actor: 'planner' }, { cards: batch });
			} else if (r < 0.26) {
				const [from, to] = [pick(ids), pick(ids)];
				if (from === undefined || to === undefined || from === to) {
					continue;
				}
				label = `link ${from} -> ${to}`;
				await b.link({ actor: 'planner' }, { cardId: from, dependsOn: to });
			} else if (r < 0.32) {
				const withDeps = [...cards.values()].filter(c => c.dependsOn.length > 0);
				const c = pick(withDeps);
				const dep = c === undefined ? undefined : pick(c.dependsOn);
				if (c === undefined || dep === undefined) {
					continue;
				}
				label = `unlink ${c.id} -> ${dep}`;
				await b.unlink({ actor: 'planner' }, { cardId: c.id, dependsOn: dep });
			} else if (r < 0.52) {
				const agent = pick(agents) ?? 'ag-1';
				const target = random() < 0.5 ? pick(ids) : undefined;
				label = `claim ${agent} ${target ?? '(best)'}`;
				const out = await b.claim({ actor: agent }, target === undefined ? {} : { cardId: target });
				if (out.card !== null && out.lease !== null) {
					held.push({ agent, cardId: out.card.id, epoch: out.lease.epoch });
				}
			} else if (r < 0.74) {
				const lease = pick(held);
				if (lease === undefined) {
					continue;
				}
				label = `complete ${lease.agent} ${lease.cardId}@${lease.epoch}`;
				await b.complete({ actor: lease.agent }, { cardId: lease.cardId, epoch: lease.epoch });
			} else if (r < 0.8) {
				const lease = pick(held);
				if (lease === undefined) {
					continue;
				}
				label = `${random() < 0.5 ? 'heartbeat' : 'release'} ${lease.agent} ${lease.cardId}@${lease.epoch}`;
				if (label.startsWith('heartbeat')) {
					await b.heartbeat({ actor: lease.agent }, { cardId: lease.cardId, epoch: lease.epoch, progress: 50 });
				} else {
					await b.release({ actor: lease.agent }, { cardId: lease.cardId, epoch: lease.epoch });
				}
			} else if (r < 0.84) {
				const c = pick([...cards.values()].filter(x => x.status === 'ready'));
				if (c === undefined) {
					continue;
				}
				label = `force-complete ${c.id}`;
				await b.complete({ actor: 'vscode:human' }, { cardId: c.id, force: true });
			} else {
				const c = pick([...cards.values()].filter(x => x.status === 'done'));
				if (c === undefined) {
					continue;
				}
				const force = random() < 0.5;
				label = `reopen ${c.id}${force ? ' --force' : ''}`;
				const out = await b.reopen({ actor: 'vscode:human' }, { cardId: c.id, force });
				for (const f of out.flagged ?? []) {
					flagged.add(`${f}|${c.id}`);
				}
			}
			count(`${label.split(' ')[0] ?? ''} ok`);
		} catch (e) {
			if (!BatonError.is(e) || !expectedRefusals.has(e.code)) {
				throw new Error(`seed ${seed} step ${step} (${label}) failed unexpectedly: ${String(e)}`);
			}
			count(`${label.split(' ')[0] ?? ''} refused`);
		}
		clock.advance(1);
		checkInvariant(await allCards(b), flagged, `seed ${seed} step ${step} after ${label}`);
	}
	return counts;
}

for (const kind of storeKinds) {
	describe(`DAG invariant under random operations on ${kind}`, () => {
		let t: TestBacklog;
		const clock = new ManualClock('2026-06-01T00:00:00.000Z');

		before(async () => {
			t = await openTestBacklog(kind, { clock, defaultTtlSeconds: 3600 });
		});
		after(async () => {
			await t.cleanup();
		});

		for (const seed of [1, 7, 42]) {
			it(`holds after every step (seed ${seed})`, async () => {
				const counts = await run(t.backlog, clock, seed, 160, `s${seed}-`);
				// The run must have exercised what it claims to: completes, refusals, and forced reopens.
				assert.ok((counts['complete ok'] ?? 0) > 5, JSON.stringify(counts));
				assert.ok((counts['reopen ok'] ?? 0) > 0, JSON.stringify(counts));
				assert.ok((counts['complete refused'] ?? 0) + (counts['reopen refused'] ?? 0) > 0, JSON.stringify(counts));
			});
		}
	});
}
