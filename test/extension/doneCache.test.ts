/**
 * The extension's Done cache against a fake `card/list` over an in-memory backlog: the
 * first page, "Load more…" pages newest first with no duplicate, a done card deleted or changed while
 * its page was unloaded, and the done count kept by events (core/rules/donePages.ts DoneTotals).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { compareRecent } from '../../core/rules/donePages';
import type { BacklogEvent, Card, Params, Result, StatsResult } from '../../core/protocol';
import { DoneCache } from '../../extension/doneCache';
import { makeCard } from '../helpers/cards';

const at = (s: number): string => new Date(Date.parse('2026-04-01T00:00:00.000Z') + s * 1000).toISOString();

/** A backlog of 250 done cards (E249 newest) and 2 ready ones, served as the hub would page it. */
function backlog(): { all: Map<string, Card>; list: (p: Params<'card/list'>) => Promise<Result<'card/list'>> } {
	const all = new Map<string, Card>();
	for (let i = 0; i < 250; i++) {
		const id = `E${String(i).padStart(3, '0')}`;
		all.set(id, makeCard({ id, status: 'done', updatedAt: at(i) }));
	}
	all.set('R1', makeCard({ id: 'R1' }));
	all.set('R2', makeCard({ id: 'R2' }));
	const list = (p: Params<'card/list'>): Promise<Result<'card/list'>> => {
		assert.equal(p.order, 'recent');
		const done = [...all.values()].filter(c => c.status === 'done').sort(compareRecent);
		const start = p.cursor === undefined ? 0 : done.findIndex(c => compareRecent(c, JSON.parse(p.cursor!) as Card) > 0);
		const from = start < 0 ? done.length : start;
		const cards = done.slice(from, from + (p.limit ?? 50));
		const last = cards[cards.length - 1];
		const more = from + cards.length < done.length && last !== undefined;
		return Promise.resolve(more ? { cards, nextCursor: JSON.stringify(last) } : { cards });
	};
	return { all, list };
}

const stats =
	(done: number, total: number, lastSeq: number): (() => Promise<StatsResult>) =>
	() =>
		Promise.resolve({ counts: { ready: 0, claimed: 0, review: 0, blocked: 0, done }, total, lastSeq } as StatsResult);

const event = (seq: number, type: BacklogEvent['type'], cardId: string, card: Card | null): BacklogEvent => ({
	seq,
	at: at(1000 + seq),
	cardId,
	actor: 'x',
	type,
	data: { card },
});

describe('DoneCache (the Backlog tree by pages)', () => {
	it('loads the first page, then 100 more at a time, newest first, each card once', async () => {
		const { list } = backlog();
		const map = new Map<string, Card>();
		const cache = new DoneCache(map);
		await cache.load(list, stats(250, 252, 10), 20);
		assert.equal(map.size, 20);
		assert.ok(cache.more);
		assert.equal(cache.totals.done, 250);
		await cache.loadMore(list);
		await cache.loadMore(list);
		assert.equal(map.size, 220);
		await cache.loadMore(list);
		assert.equal(map.size, 250);
		assert.equal(cache.more, false);
		const shown = [...map.values()].filter(c => cache.shows(c)).sort(compareRecent);
		assert.equal(shown[0]?.id, 'E249');
		assert.equal(shown.at(-1)?.id, 'E000');
	});

	it('shows a changed unloaded card once, on top; forgets a deleted one; counts both', async () => {
		const { all, list } = backlog();
		// The live cards are in the cache before Done's first page, as HubConnection loads them.
		const map = new Map<string, Card>([...all].filter(([, c]) => c.status !== 'done'));
		const cache = new DoneCache(map);
		await cache.load(list, stats(250, 252, 10), 20);
		// E100 (unloaded) is edited: it is the newest change now.
		const e100 = { ...all.get('E100')!, title: 'renamed', updatedAt: at(900), version: 2 };
		all.set('E100', e100);
		cache.beforeEvent(event(11, 'updated', 'E100', e100));
		map.set('E100', e100);
		assert.ok(cache.shows(e100));
		assert.equal(cache.totals.done, 250);
		// E050 (unloaded) is deleted; R1 completes; E249 (loaded) is reopened.
		cache.beforeEvent(event(12, 'deleted', 'E050', null));
		all.delete('E050');
		const r1 = { ...all.get('R1')!, status: 'done' as const, updatedAt: at(901) };
		cache.beforeEvent(event(13, 'completed', 'R1', r1));
		map.set('R1', r1);
		all.set('R1', r1);
		const e249 = { ...map.get('E249')!, status: 'ready' as const, updatedAt: at(902) };
		cache.beforeEvent(event(14, 'reopened', 'E249', e249));
		map.set('E249', e249);
		all.set('E249', e249);
		assert.equal(cache.totals.done, 249);
		// An event already in the stats is not counted twice.
		cache.beforeEvent(event(9, 'completed', 'R2', { ...all.get('R2')!, status: 'done' }));
		assert.equal(cache.totals.done, 249);
		while (cache.more) {
			await cache.loadMore(list);
		}
		const done = [...map.values()].filter(c => c.status === 'done' && cache.shows(c)).sort(compareRecent);
		assert.equal(done.length, 249);
		assert.equal(new Set(done.map(c => c.id)).size, 249);
		assert.deepEqual(
			done.slice(0, 3).map(c => c.id),
			['R1', 'E100', 'E248'],
		);
		assert.ok(!done.some(c => c.id === 'E050'));
	});

	it('drops a page of an older snapshot', async () => {
		const { list } = backlog();
		const map = new Map<string, Card>();
		const cache = new DoneCache(map);
		await cache.load(list, stats(250, 252, 0), 20);
		const late = cache.loadMore(list);
		map.clear();
		await cache.load(list, stats(250, 252, 0), 5);
		await late;
		assert.equal(map.size, 5);
	});
});
