/**
 * The latency mechanisms change nothing but speed: one seeded random sequence of operations (create,
 * link, unlink, claim, heartbeat, complete, complete {next}, release, fail, reclaim, block, unblock,
 * reopen, forced completes, reviews and re-sent requests; cards with projects, scopes and review, claims
 * by project) runs in lockstep on backlogs that differ only in
 * which fast paths are on (core/backlog/fastPaths.ts): all on, all off, and each one off alone, on
 * PGlite and on PostgreSQL. Every answer (result, or error code, message and data) must be the same
 * as with all on, and so must every card, every event and the derived words (each card's state word,
 * list's waitsOn, stats and the claimable page per project) at the end. Ids are fixed and time comes
 * from a ManualClock, so the only thing normalised is PostgreSQL's seq numbering: a hot statement
 * that meets a known request key fails after taking a value from the sequence, leaving a hole the
 * general path (which looks the key up first) does not, so there the events are compared in order.
 * Thousands of operations on nine backlogs make it a proof, not a unit test: it runs in
 * `npm run test:proofs`, beside the fast unit suite.
 * @first every fast path on and off over random sequences on each store: among the longest proofs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { type FastPaths, noFastPaths } from '../../core/backlog/fastPaths';
import { stateWord } from '../../core/rules/claimable';
import { ManualClock } from '../../core/clock';
import { BatonError } from '../../core/errors';
import type { BacklogEvent, Card } from '../../core/protocol';
import { allCards, openTestBacklog, type StoreKind, storeKinds, type TestBacklog } from '../helpers/backlog';
import { listedClaimable, ruleClaimable } from '../helpers/claimableOracle';
import { prng } from '../helpers/prng';

/** The first is the reference. `wire` exists on PGlite only, so PostgreSQL leaves it out. */
const configs: Record<StoreKind, Record<string, Partial<FastPaths>>> = {
	pglite: {
		'all on': {},
		'all off': noFastPaths,
		'-wire': { wire: false },
		'-hot': { hot: false },
		'-handOver': { handOver: false },
	},
	postgres: {
		'all on': {},
		'all off': noFastPaths,
		'-hot': { hot: false },
		'-handOver': { handOver: false },
	},
};

const agents = ['ag-1', 'ag-2', 'ag-3'];
const projects = ['web', 'api'];
/** A claim's project: one of them, null (only cards without one), '*' (any). */
const claimProjects: readonly (string | null)[] = ['web', 'api', null, '*'];
/** Scopes that overlap (src/a/** and src/a/x.ts), do not (src/b/**), and a lock. */
const scopes: readonly string[][] = [['src/a/**'], ['src/a/x.ts'], ['src/b/**'], ['lock:db']];
const seeds = [3, 11, 29];
const steps = 220;

interface Lease {
	agent: string;
	cardId: string;
	epoch: number;
}

/** One operation, applied the same way to every backlog. */
interface Op {
	label: string;
	run: (b: Backlog) => Promise<unknown>;
}

type Outcome = { ok: unknown } | { error: { code: string; message: string; data: unknown } };

async function outcomeOf(op: Op, b: Backlog): Promise<Outcome> {
	try {
		return { ok: await op.run(b) };
	} catch (e) {
		if (!BatonError.is(e)) {
			throw e;
		}
		return { error: { code: e.code, message: e.message, data: e.data ?? null } };
	}
}

async function allEvents(b: Backlog, kind: StoreKind): Promise<BacklogEvent[]> {
	const events: BacklogEvent[] = [];
	for (let page = await b.eventsAfter(0, 1000); page.length > 0;) {
		events.push(...page);
		page = await b.eventsAfter(page[page.length - 1]?.seq ?? 0, 1000);
	}
	// PostgreSQL: a sequence value taken by a statement that rolled back is never handed out again.
	return kind === 'postgres' ? events.map((e, i) => ({ ...e, seq: i + 1 })) : events;
}

/** Draws operations from the reference backlog's state. */
class Scenario {
	readonly random: () => number;
	readonly counts: Record<string, number> = {};
	/** Leases handed out, live or not: zombies keep using theirs. */
	private readonly leases: Lease[] = [];
	private next = 0;
	private lastKeyed: Op | undefined;

	constructor(
		seed: number,
		private readonly tag: string,
	) {
		this.random = prng(seed);
	}

	private pick<T>(list: readonly T[]): T | undefined {
		return list[Math.floor(this.random() * list.length)];
	}

	/** About half of the requests carry an idempotency key, as hub clients' do. */
	private ctx(actor: string, step: number): OpContext {
		return this.random() < 0.5 ? { actor, requestKey: `${this.tag}k${step}` } : { actor };
	}

	/** Remembers the leases an answer hands out. */
	noteOutcome(outcome: Outcome): void {
		if (!('ok' in outcome)) {
			return;
		}
		const out = outcome.ok as { card?: Card | null; next?: { card: Card | null } };
		for (const card of [out.card, out.next?.card]) {
			if (card?.status === 'claimed' && card.claimOwner !== null) {
				const lease = { agent: card.claimOwner, cardId: card.id, epoch: card.claimEpoch };
				if (!this.leases.some(l => l.cardId === lease.cardId && l.epoch === lease.epoch)) {
					this.leases.push(lease);
				}
			}
		}
	}

	count(name: string): void {
		this.counts[name] = (this.counts[name] ?? 0) + 1;
	}

	draw(cards: readonly Card[], step: number): Op | undefined {
		const r = this.random();
		const ids = cards.map(c => c.id);
		const ofStatus = (status: Card['status']): Card[] => cards.filter(c => c.status === status);
		const keyed = (label: string, actor: string, run: (b: Backlog, ctx: OpContext) => Promise<unknown>): Op => {
			const ctx = this.ctx(actor, step);
			const op: Op = { label: `${label}${ctx.requestKey === undefined ? '' : ' (keyed)'}`, run: b => run(b, ctx) };
			if (ctx.requestKey !== undefined) {
				this.lastKeyed = op;
			}
			return op;
		};
		if (ids.length < 5 || r < 0.12) {
			const made: { id: string; project?: string | undefined }[] = [];
			const batch = Array.from({ length: 1 + Math.floor(this.random() * 3) }, () => {
				const id = `${this.tag}${this.next++}`;
				// Parents: an existing card or one made earlier in this batch, its project taken along.
				const parentOf = this.random() < 0.3 ? this.pick([...cards, ...made]) : undefined;
				const project =
					parentOf === undefined
						? this.random() < 0.35
							? this.pick(projects)
							: undefined
						: (parentOf.project ?? undefined);
				made.push({ id, project });
				const deps = [...new Set([this.pick(ids), this.pick(ids)])].filter(
					(d): d is string => d !== undefined && this.random() < 0.45,
				);
				return {
					id,
					title: `card ${id}`,
					priority: Math.floor(this.random() * 4),
					...(deps.length > 0 ? { dependsOn: deps } : {}),
					...(this.random() < 0.15 ? { requires: ['gpu'] } : {}),
					...(this.random() < 0.2 ? { phase: 'p1' } : {}),
					...(this.random() < 0.2 ? { maxAttempts: 2 } : {}),
					// What the hot paths hand to the general path or filter on: projects, scopes
					// (a scoped card is never taken by the one-statement claims) and the review gate.
					...(project === undefined ? {} : { project }),
					...(parentOf === undefined ? {} : { parent: parentOf.id }),
					...(this.random() < 0.25 ? { autoClose: true } : {}),
					...(this.random() < 0.25 ? { scope: this.pick(scopes) } : {}),
					...(this.random() < 0.2 ? { review: this.random() < 0.5 ? ('human' as const) : ('agent' as const) } : {}),
				};
			});
			// A single card is often left to the backlog's readable id, and made by an agent that may hold a
			// card (discoveredFrom, and its parent): the one-statement create's cases.
			const cardsOut = batch.length === 1 && this.random() < 0.5 ? batch.map(({ id: _id, ...rest }) => rest) : batch;
			const creator = this.random() < 0.3 ? (this.pick(agents) ?? 'planner') : 'planner';
			return keyed(`create ${batch.map(c => c.id).join(' ')}`, creator, (b, ctx) => b.create(ctx, { cards: cardsOut }));
		}
		if (r < 0.18) {
			const [from, to] = [this.pick(ids), this.pick(ids)];
			if (from === undefined || to === undefined || from === to) {
				return undefined;
			}
			return keyed(`link ${from} -> ${to}`, 'planner', (b, ctx) => b.link(ctx, { cardId: from, dependsOn: to }));
		}
		if (r < 0.2) {
			// Move a card under another parent, or out of its own; cycles and projects refused alike.
			const c = this.pick(cards);
			const to = this.random() < 0.25 ? null : this.pick(cards.filter(x => x.project === c?.project));
			if (c === undefined || to === undefined) {
				return undefined;
			}
			return keyed(`reparent ${c.id} -> ${to?.id ?? 'none'}`, 'planner', (b, ctx) =>
				b.update(ctx, { cardId: c.id, parent: to?.id ?? null }),
			);
		}
		if (r < 0.22) {
			const c = this.pick(cards.filter(x => x.dependsOn.length > 0));
			const dep = c === undefined ? undefined : this.pick(c.dependsOn);
			if (c === undefined || dep === undefined) {
				return undefined;
			}
			return keyed(`unlink ${c.id} -> ${dep}`, 'planner', (b, ctx) => b.unlink(ctx, { cardId: c.id, dependsOn: dep }));
		}
		if (r < 0.38) {
			const agent = this.pick(agents) ?? 'ag-1';
			const target = this.random() < 0.2 ? this.pick(ids) : undefined;
			const params = {
				...(target === undefined ? {} : { cardId: target }),
				...(this.random() < 0.3 ? { capabilities: ['gpu'] } : {}),
				...(this.random() < 0.15 ? { phase: 'p1' } : {}),
				...(this.random() < 0.5 ? { ttlSeconds: 30 } : {}),
				...(this.random() < 0.4 ? { project: this.pick(claimProjects) ?? null } : {}),
			};
			return keyed(`claim ${agent} ${JSON.stringify(params)}`, agent, (b, ctx) => b.claim(ctx, params));
		}
		// Mostly a live lease, as agents mostly hold one; else any handed out, stale ones included.
		const live = cards.flatMap(c =>
			c.status === 'claimed' && c.claimOwner !== null
				? [{ agent: c.claimOwner, cardId: c.id, epoch: c.claimEpoch }]
				: [],
		);
		const lease = this.random() < 0.75 && live.length > 0 ? this.pick(live) : this.pick(this.leases);
		if (r < 0.46) {
			if (lease === undefined) {
				return undefined;
			}
			const params = {
				cardId: lease.cardId,
				...(this.random() < 0.8 ? { epoch: lease.epoch } : {}),
				...(this.random() < 0.5 ? { progress: Math.floor(this.random() * 101) } : {}),
				...(this.random() < 0.3 ? { note: `note ${step}` } : {}),
				...(this.random() < 0.3 ? { ttlSeconds: 60 } : {}),
			};
			return keyed(`heartbeat ${lease.agent} ${JSON.stringify(params)}`, lease.agent, (b, ctx) =>
				b.heartbeat(ctx, params),
			);
		}
		if (r < 0.68) {
			if (lease === undefined) {
				return undefined;
			}
			const withNext = this.random() < 0.55;
			const next =
				this.random() < 0.5
					? {}
					: this.random() < 0.4
						? { capabilities: ['gpu'] }
						: this.random() < 0.5
							? { phase: 'p1', ttlSeconds: 30 }
							: { project: this.pick(claimProjects) ?? null };
			const params = {
				cardId: lease.cardId,
				...(this.random() < 0.85 ? { epoch: lease.epoch } : {}),
				...(this.random() < 0.4 ? { result: `done at ${step}` } : {}),
				...(withNext ? { next } : {}),
			};
			return keyed(`complete ${lease.agent} ${JSON.stringify(params)}`, lease.agent, (b, ctx) =>
				b.complete(ctx, params),
			);
		}
		if (r < 0.73) {
			if (lease === undefined) {
				return undefined;
			}
			const params = { cardId: lease.cardId, epoch: lease.epoch, reason: 'handing back' };
			return keyed(`release ${lease.agent} ${lease.cardId}`, lease.agent, (b, ctx) => b.release(ctx, params));
		}
		if (r < 0.78) {
			if (lease === undefined) {
				return undefined;
			}
			const params = {
				cardId: lease.cardId,
				epoch: lease.epoch,
				reason: 'tests fail',
				...(this.random() < 0.3 ? { retry: false } : {}),
				...(this.random() < 0.5 ? { backoffSeconds: Math.floor(this.random() * 20) } : {}),
			};
			return keyed(`fail ${lease.agent} ${JSON.stringify(params)}`, lease.agent, (b, ctx) => b.fail(ctx, params));
		}
		if (r < 0.82) {
			const c = this.random() < 0.5 ? this.pick(ofStatus('claimed')) : undefined;
			return keyed(`reclaim ${c?.id ?? '(expired)'}`, 'vscode:human', (b, ctx) =>
				b.reclaim(ctx, c === undefined ? {} : { cardId: c.id, reason: 'taking it back' }),
			);
		}
		if (r < 0.85) {
			const c = this.pick(cards.filter(x => x.status !== 'done'));
			if (c === undefined) {
				return undefined;
			}
			return keyed(`block ${c.id}`, 'vscode:human', (b, ctx) => b.block(ctx, { cardId: c.id, reason: 'on hold' }));
		}
		if (r < 0.89) {
			const c = this.pick(ofStatus('blocked'));
			if (c === undefined) {
				return undefined;
			}
			return keyed(`unblock ${c.id}`, 'vscode:human', (b, ctx) => b.unblock(ctx, { cardId: c.id }));
		}
		if (r < 0.93) {
			const c = this.pick(ofStatus('done'));
			if (c === undefined) {
				return undefined;
			}
			const force = this.random() < 0.5;
			return keyed(`reopen ${c.id}${force ? ' --force' : ''}`, 'vscode:human', (b, ctx) =>
				b.reopen(ctx, { cardId: c.id, force }),
			);
		}
		if (r < 0.94) {
			// Deletions: refused while it has dependents, children or a holder.
			const c = this.pick(cards);
			if (c === undefined) {
				return undefined;
			}
			return keyed(`delete ${c.id}`, 'vscode:human', (b, ctx) => b.delete(ctx, { cardId: c.id }));
		}
		if (r < 0.95) {
			const c = this.pick(cards.filter(x => x.status !== 'done'));
			if (c === undefined) {
				return undefined;
			}
			return keyed(`force-complete ${c.id}`, 'vscode:human', (b, ctx) =>
				b.complete(ctx, { cardId: c.id, force: true }),
			);
		}
		if (r < 0.975) {
			const c = this.pick(ofStatus('review'));
			if (c === undefined) {
				return undefined;
			}
			const approve = this.random() < 0.6;
			const params = approve ? { cardId: c.id, approve } : { cardId: c.id, approve, note: 'change it' };
			return keyed(`review ${c.id} ${approve ? 'approve' : 'changes'}`, 'vscode:human', (b, ctx) =>
				b.review(ctx, params, 'human'),
			);
		}
		// A client re-sending its last keyed request (after a lost answer or a hub failover).
		const again = this.lastKeyed;
		return again === undefined ? undefined : { label: `re-send: ${again.label}`, run: b => again.run(b) };
	}
}

/**
 * What the faces print about the backlog: each card's word (core/rules/claimable.ts), list's waitsOn, and
 * stats and the ready page per project as claim sees them.
 */
async function derivedWords(b: Backlog, clock: ManualClock): Promise<unknown> {
	const ctx: OpContext = { actor: 'vscode:reader' };
	const now = clock.now();
	const byProject: Record<string, unknown> = {};
	for (const project of claimProjects) {
		const narrowed = project === '*' ? {} : { project };
		const list = await b.list(ctx, { ...narrowed, status: 'ready', limit: 500 });
		// lastSeq aside: on PostgreSQL a hot statement that meets a known key leaves a hole (see above).
		const { lastSeq: _lastSeq, ...stats } = await b.stats(ctx, narrowed);
		byProject[String(project)] = {
			stats,
			words: list.cards.map(c => [c.id, stateWord(c, now)]),
			waitsOn: list.waitsOn ?? {},
			claimable: (await b.list(ctx, { ...narrowed, readyOnly: true, limit: 500 })).cards.map(c => c.id),
		};
	}
	return byProject;
}

for (const kind of storeKinds) {
	describe(`fast paths on and off give the same cards and events on ${kind}`, () => {
		const clock = new ManualClock('2026-06-01T00:00:00.000Z');
		const opened: [string, TestBacklog][] = [];

		before(async () => {
			for (const [name, fastPaths] of Object.entries(configs[kind])) {
				opened.push([name, await openTestBacklog(kind, { clock, defaultTtlSeconds: 120, fastPaths })]);
			}
		});
		after(async () => {
			for (const [, t] of opened) {
				await t.cleanup();
			}
		});

		for (const seed of seeds) {
			it(`answers alike at every step, with every fast path on, off, and each off alone (seed ${seed})`, async t => {
				const [reference, ...others] = opened.map(([name, t]) => ({ name, backlog: t.backlog }));
				assert.ok(reference !== undefined);
				const scenario = new Scenario(seed, `s${seed}-`);
				for (let step = 0; step < steps; step++) {
					const op = scenario.draw(await allCards(reference.backlog), step);
					if (op !== undefined) {
						const expected = await outcomeOf(op, reference.backlog);
						for (const other of others) {
							assert.deepEqual(
								await outcomeOf(op, other.backlog),
								expected,
								`seed ${seed} step ${step} (${op.label}): ${other.name} answered otherwise than all on`,
							);
						}
						scenario.noteOutcome(expected);
						const handedOver = 'ok' in expected && (expected.ok as { next?: { card: Card | null } }).next?.card;
						scenario.count(
							`${op.label.split(' ')[0] ?? ''} ${'ok' in expected ? (handedOver ? 'ok, next' : 'ok') : 'refused'}`,
						);
					}
					clock.advance(Math.floor(scenario.random() * 10));
					if (step % 20 === 19) {
						assert.deepEqual(
							await listedClaimable(reference.backlog),
							ruleClaimable(await allCards(reference.backlog), clock.now()),
							`seed ${seed} step ${step}: claimable is not what the claimable rule says`,
						);
					}
				}
				const cards = await allCards(reference.backlog);
				const events = await allEvents(reference.backlog, kind);
				const words = await derivedWords(reference.backlog, clock);
				for (const other of others) {
					assert.deepEqual(
						await derivedWords(other.backlog, clock),
						words,
						`seed ${seed}: ${other.name}'s words differ`,
					);
					assert.deepEqual(await allCards(other.backlog), cards, `seed ${seed}: ${other.name}'s cards differ`);
					assert.deepEqual(await allEvents(other.backlog, kind), events, `seed ${seed}: ${other.name}'s events differ`);
				}
				// The sequence must have exercised what it is about: the hot paths, the hand-over and refusals.
				assert.ok(
					cards.some(c => c.parent != null),
					'no children in the sequence',
				);
				// The reference's log holds every seed's events so far: by the last seed, a parent closed itself.
				if (seed === seeds.at(-1)) {
					assert.ok(
						events.some(e => e.data.autoClosed === true),
						'no auto-close in the sequences',
					);
				}
				const { counts } = scenario;
				const summary = JSON.stringify(counts);
				t.diagnostic(`${events.length} events; ${summary}`);
				for (const name of [
					'claim ok',
					'complete ok',
					'complete ok, next',
					'heartbeat ok',
					'complete refused',
					'reopen ok',
					're-send:',
					'review',
				]) {
					assert.ok(
						Object.keys(counts).some(k => k.startsWith(name)),
						`${name} never happened: ${summary}`,
					);
				}
				assert.ok(
					events.some(e => e.type === 'claimed') && events.some(e => e.type === 'reclaimed'),
					`no claims or reclaims in ${events.length} events`,
				);
			});
		}
	});
}
