/**
 * The claim guards' contract, one table on real PGlite and PostgreSQL: each case a backlog state (an
 * epic with open children, a child of a waiting epic, a paused card, a card waiting on files a claim
 * holds, on a dependency, a deferred one, a claimable one), the word every face shows for it
 * (core/rules/claimable.ts over what card/list and card/get carry), what `list --status <word>` returns,
 * the stats key that counts it, and the refusal a claim by id gives (the guard named, with a next step).
 * Then stats add up to list, the epic's roll-up counts a waiting child as waiting, and an unknown word
 * is refused with the words listed, changing nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import { ListParams } from '../../core/protocol';
import { cardGuards, claimHold, claimerGuards, guardNamed } from '../../core/rules/claimGuards';
import { type StateWord, refStateWord, stateWord, stateWords } from '../../core/rules/claimable';
import { backlogForSuite, storeKinds } from '../helpers/backlog';

const human: OpContext = { actor: 'vscode:alice' };
const agent: OpContext = { actor: 'claude-code-1' };
const other: OpContext = { actor: 'codex-1' };

interface Case {
	id: string;
	what: string;
	word: StateWord;
	/** card/stats' key that counts it (claimable for `ready`). */
	count: 'claimable' | 'waiting' | 'deferred' | 'paused';
	/** A claim of it by id is refused with a text matching this (absent: the claim succeeds). */
	refusal?: RegExp;
}

const cases: readonly Case[] = [
	{ id: 'EPIC', what: 'an epic with an open child', word: 'waiting', count: 'waiting', refusal: /open child/ },
	{ id: 'KID', what: "the epic's open child", word: 'ready', count: 'claimable' },
	{
		id: 'DEP',
		what: 'a card waiting on a dependency',
		word: 'waiting',
		count: 'waiting',
		refusal: /unfinished dependenc/,
	},
	{ id: 'TOP', what: 'the dependency (claimable)', word: 'ready', count: 'claimable' },
	{
		id: 'WEPIC',
		what: 'an epic waiting on a dependency',
		word: 'waiting',
		count: 'waiting',
		refusal: /unfinished dependenc/,
	},
	{ id: 'WKID', what: 'a child of a waiting epic', word: 'waiting', count: 'waiting', refusal: /parent/ },
	{ id: 'PAUSED', what: 'a paused card', word: 'paused', count: 'paused', refusal: /paused/ },
	{ id: 'FILES', what: 'a card waiting on files a claim holds', word: 'waiting', count: 'waiting', refusal: /HOLD/ },
	{ id: 'DEFER', what: 'a deferred card', word: 'deferred', count: 'deferred', refusal: /deferred until/ },
];

for (const kind of storeKinds) {
	describe(`claim guards on ${kind}`, () => {
		let b: Backlog;
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');
		backlogForSuite(kind, { clock }, t => {
			b = t.backlog;
		});

		it('builds the backlog state of every case', async () => {
			await b.create(human, {
				cards: [
					{ id: 'EPIC', title: 'an epic', priority: 10 },
					{ id: 'KID', title: 'its child', parent: 'EPIC', priority: 10 },
					{ id: 'TOP', title: 'a dependency', priority: 1 },
					{ id: 'DEP', title: 'waits on TOP', dependsOn: ['TOP'] },
					{ id: 'WEPIC', title: 'an epic that waits on TOP', dependsOn: ['TOP'] },
					{ id: 'WKID', title: 'child of a waiting epic', parent: 'WEPIC' },
					{ id: 'PAUSED', title: 'paused by a human' },
					{ id: 'HOLD', title: 'holds src/**', priority: 99, scope: ['src/**'] },
					{ id: 'FILES', title: 'wants src/a.ts', scope: ['src/a.ts'] },
					{ id: 'DEFER', title: 'failed once', priority: 98 },
				],
			});
			await b.pauses.set(human, { scope: 'card', target: 'PAUSED', reason: 'not yet' });
			await b.claim(other, { cardId: 'HOLD' });
			const d = await b.claim(agent, { cardId: 'DEFER' });
			await b.fail(agent, { cardId: 'DEFER', epoch: d.lease?.epoch, reason: 'flaky', backoffSeconds: 600 });
		});

		it('each case shows its word in list and get, list --status takes the word, a claim names the guard', async () => {
			const now = clock.now();
			const listed = new Map((await b.list(human, { status: 'ready', limit: 1000 })).cards.map(c => [c.id, c]));
			for (const c of cases) {
				const card = listed.get(c.id);
				assert.ok(card, `${c.id} (${c.what}) is listed`);
				assert.equal(stateWord(card, now), c.word, `${c.what}: list's word`);
				const got = await b.get(human, { cardId: c.id });
				assert.equal(stateWord(got.card, now), c.word, `${c.what}: show's word`);
				const byWord = await b.list(human, { status: c.word === 'ready' ? 'ready' : c.word, limit: 1000 });
				const words = byWord.cards.map(x => stateWord(x, now));
				assert.ok(
					byWord.cards.some(x => x.id === c.id),
					`${c.what}: list --status ${c.word} returns it`,
				);
				if (c.word !== 'ready') {
					assert.ok(
						words.every(w => w === c.word),
						`list --status ${c.word} returns only ${c.word} cards (${words.join(',')})`,
					);
				}
				if (c.refusal !== undefined) {
					await assert.rejects(
						b.claim(human, { cardId: c.id }),
						(e: Error) => c.refusal?.test(e.message) === true && /[.;:] \w/.test(e.message),
						`${c.what}: a claim by id is refused naming the guard`,
					);
				}
			}
			// readyOnly is the word `ready`: claimable now by some agent.
			const ready = (await b.list(human, { readyOnly: true, limit: 1000 })).cards.map(c => c.id).sort();
			assert.deepEqual(
				ready,
				cases
					.filter(c => c.word === 'ready')
					.map(c => c.id)
					.sort(),
			);
		});

		it('stats count each ready card once under its word, adding up to list', async () => {
			const now = clock.now();
			const listed = (await b.list(human, { status: 'ready', limit: 1000 })).cards;
			const count = (w: StateWord): number => listed.filter(c => stateWord(c, now) === w).length;
			const s = await b.stats(human, {});
			assert.deepEqual(
				{ claimable: s.claimable, waiting: s.waiting, deferred: s.deferred, paused: s.paused, ready: s.counts.ready },
				{
					claimable: count('ready'),
					waiting: count('waiting'),
					deferred: count('deferred'),
					paused: count('paused'),
					ready: listed.length,
				},
			);
			assert.equal(s.claimable + s.waiting + s.deferred + s.paused, s.counts.ready);
			for (const key of ['claimable', 'waiting', 'deferred', 'paused'] as const) {
				assert.equal(s[key], cases.filter(c => c.count === key).length, `stats.${key}`);
			}
		});

		it("the epic's roll-up counts a waiting child as waiting, and its refs carry the child's word", async () => {
			const now = clock.now();
			const waiting = (await b.get(human, { cardId: 'WEPIC' })).children;
			assert.ok(waiting);
			assert.deepEqual([waiting.ready, waiting.waiting], [0, 1]);
			assert.deepEqual(
				waiting.cards.map(c => refStateWord(c, now)),
				['waiting'],
			);
			const epic = (await b.get(human, { cardId: 'EPIC' })).children;
			assert.ok(epic);
			assert.deepEqual([epic.ready, epic.waiting], [1, 0]);
			assert.equal(refStateWord(epic.cards[0] ?? { status: 'done' }, now), 'ready');
		});

		it('when the holds end, every case is ready (a pause cleared, the files freed, the backoff over)', async () => {
			await b.pauses.clear(human, { scope: 'card', target: 'PAUSED' });
			await b.release(other, { cardId: 'HOLD' });
			clock.advance(601);
			const now = clock.now();
			const words = Object.fromEntries(
				(await b.list(human, { status: 'ready', limit: 1000 })).cards.map(c => [c.id, stateWord(c, now)]),
			);
			for (const id of ['PAUSED', 'FILES', 'DEFER', 'HOLD']) {
				assert.equal(words[id], 'ready', id);
			}
			assert.equal(words.EPIC, 'waiting');
		});
	});
}

describe('the claim guard table', () => {
	it('an unknown status word is refused with the words listed', () => {
		const r = ListParams.safeParse({ status: 'idle' });
		assert.equal(r.success, false);
		const text = JSON.stringify(r.error.issues);
		for (const w of stateWords) {
			assert.ok(text.includes(`'${w}'`) || text.includes(`"${w}"`), `the error lists ${w}: ${text}`);
		}
		for (const w of stateWords) {
			assert.equal(ListParams.safeParse({ status: w }).success, true, w);
		}
	});

	it('lists every guard once, the per-claimer ones apart from the word', () => {
		const names = [...cardGuards, ...claimerGuards].map(g => g.name);
		assert.deepEqual(names.sort(), [...new Set(names)].sort());
		assert.deepEqual(claimerGuards.map(g => g.name).sort(), [
			'assignment',
			'capabilities',
			'labels',
			'maxHeld',
			'phase',
			'project',
		]);
		const card = { id: 'C1', status: 'ready' as const, unmetDeps: 0, deferUntil: null };
		const now = Date.parse('2026-03-01T09:00:00.000Z');
		const cases: [Parameters<typeof claimHold>[0], Parameters<typeof claimHold>[1], string | undefined][] = [
			[card, { id: 'a' }, undefined],
			[{ ...card, assignee: 'b' }, { id: 'a' }, 'assignment'],
			[{ ...card, assignee: 'kind:claude' }, { id: 'a', kind: 'claude' }, undefined],
			[card, { id: 'a', held: 2, maxHeld: 2 }, 'maxHeld'],
			[{ ...card, project: 'web' }, { id: 'a', project: 'api' }, 'project'],
			[{ ...card, project: 'web' }, { id: 'a', project: '*' }, undefined],
			[{ ...card, requires: ['lang:go'] }, { id: 'a', capabilities: ['lang:ts'] }, 'capabilities'],
			[{ ...card, phase: 'build' }, { id: 'a', phase: 'test' }, 'phase'],
			[{ ...card, labels: ['ui'] }, { id: 'a', labels: ['db'] }, 'labels'],
			[{ ...card, paused: true, assignee: 'b' }, { id: 'a' }, 'pause'],
		];
		for (const [c, claimer, want] of cases) {
			const hold = claimHold(c, claimer, now);
			assert.equal(hold?.name, want, JSON.stringify([c, claimer]));
			if (hold !== undefined) {
				const text = hold.perClaimer ? hold.refusal(c, claimer) : hold.refusal(c);
				assert.match(text, /[.;:] \w/, `${hold.name}'s refusal says what to do: ${text}`);
			}
		}
		assert.equal(guardNamed('files').perClaimer, false);
	});
});
