/**
 * The epics' face logic in node: the board's index of children and labels as cards come, change and
 * go; the epic and label filter; the shared roll-up cache (fetched once per epic, again only when a
 * child is created, deleted, moves or crosses done, bursts coalesced); the tree's nesting within a
 * group. Real BoardState and EpicRollups, with a recording fetch in place of the hub's card/get.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { EpicRollups, type Rollup } from '../../core/protocol/epicRollups';
import { countChildren, epicWords, nestCards, treeProgress } from '../../extension/treeNesting';
import { epicProgress } from '../../webview/epics';
import { isFiltering } from '../../webview/filter';
import { doneQuery } from '../../webview/paging';
import { BoardState } from '../../webview/state';
import { makeCard, makeEvent } from './fixtures';

const settle = (): Promise<void> => new Promise(r => setTimeout(r, 150));

describe('board: epics and labels in BoardState', () => {
	it('keeps each parent’s children and the labels in use as cards come, change and go', () => {
		const s = new BoardState();
		s.load([
			makeCard({ id: 'E1' }),
			makeCard({ id: 'A', parent: 'E1', labels: ['ui'] }),
			makeCard({ id: 'B', parent: 'E1', labels: ['api', 'ui'], status: 'done' }),
		]);
		assert.deepEqual(s.index.parents(), ['E1']);
		assert.deepEqual(s.index.labels(), ['api', 'ui']);
		assert.deepEqual(epicProgress(s, undefined, 'E1'), { total: 2, done: 1 }, 'the cards at hand until the hub says');
		assert.equal(epicProgress(s, undefined, 'A'), undefined, 'a card without children is no epic');
		const v = s.index.version;
		s.applyEvent(makeEvent(1, 'updated', makeCard({ id: 'B', parent: 'E2', labels: ['api'], status: 'done' })));
		assert.deepEqual(s.index.parents(), ['E1', 'E2']);
		assert.ok(s.index.version > v, 'a new epic rebuilds the choices');
		assert.deepEqual(epicProgress(s, undefined, 'E1'), { total: 1, done: 0 });
		s.applyEvent(makeEvent(2, 'deleted', null, { cardId: 'A' }));
		assert.deepEqual(s.index.parents(), ['E2']);
		assert.deepEqual(s.index.labels(), ['api']);
	});

	it('filters by epic (the epic and its children) and by label, and says a filter is on', () => {
		const s = new BoardState();
		s.load([
			makeCard({ id: 'E1' }),
			makeCard({ id: 'A', parent: 'E1', labels: ['ui'] }),
			makeCard({ id: 'B', labels: ['ui'] }),
			makeCard({ id: 'C' }),
		]);
		const shown = (): string[] =>
			['ready', 'inProgress', 'review', 'blocked', 'done'].flatMap(c => s.column(c as 'ready').map(card => card.id));
		s.setFilter({ text: '', phase: '', epic: 'E1' });
		assert.deepEqual(shown().sort(), ['A', 'E1']);
		assert.equal(isFiltering(s.filter), true);
		s.setFilter({ text: '', phase: '', label: 'ui' });
		assert.deepEqual(shown().sort(), ['A', 'B']);
		s.setFilter({ text: '', phase: '', epic: 'E1', label: 'ui' });
		assert.deepEqual(shown(), ['A']);
		s.setFilter({ text: '', phase: '' });
		assert.equal(isFiltering(s.filter), false);
		assert.equal(shown().length, 4);
	});

	it('sends the epic and the label with Done’s page queries, so older done children are found', () => {
		assert.deepEqual(doneQuery({ text: '', phase: '', epic: 'E1', label: 'ui' }), {
			status: 'done',
			order: 'recent',
			limit: 200,
			parent: 'E1',
			label: 'ui',
		});
		assert.equal('parent' in doneQuery({ text: '', phase: '', epic: '' }), false);
	});
});

describe('EpicRollups', () => {
	function cache(): { rollups: EpicRollups; fetched: string[]; changed: string[][]; hub: Map<string, Rollup> } {
		const fetched: string[] = [];
		const changed: string[][] = [];
		const hub = new Map<string, Rollup>();
		const rollups = new EpicRollups(
			id => {
				fetched.push(id);
				return Promise.resolve(hub.get(id) ?? null);
			},
			ids => changed.push(ids),
		);
		return { rollups, fetched, changed, hub };
	}

	it('fetches an epic once, coalescing a burst of asks, and says when it changed', async () => {
		const { rollups, fetched, changed, hub } = cache();
		hub.set('E1', { total: 5, done: 2 });
		assert.equal(rollups.get('E1'), undefined);
		assert.equal(rollups.get('E1'), undefined);
		await settle();
		assert.deepEqual(fetched, ['E1']);
		assert.deepEqual(changed, [['E1']]);
		assert.deepEqual(rollups.get('E1'), { total: 5, done: 2 });
		await settle();
		assert.deepEqual(fetched, ['E1'], 'a known roll-up is not fetched again');
		rollups.dispose();
	});

	it('fetches again only when a child is new, moves, crosses done or is deleted', async () => {
		const { rollups, fetched, hub } = cache();
		hub.set('E1', { total: 2, done: 0 });
		hub.set('E2', { total: 1, done: 0 });
		rollups.get('E1');
		rollups.get('E2');
		await settle();
		fetched.length = 0;
		rollups.cardChanged('A', { parent: 'E1', status: 'ready' });
		await settle();
		assert.deepEqual(fetched, ['E1'], 'a child seen for the first time');
		rollups.cardChanged('A', { parent: 'E1', status: 'claimed' });
		rollups.cardChanged('A', { parent: 'E1', status: 'review' });
		await settle();
		assert.deepEqual(fetched, ['E1'], 'not for a change that leaves the counts shown');
		hub.set('E1', { total: 2, done: 1 });
		rollups.cardChanged('A', { parent: 'E1', status: 'done' });
		await settle();
		assert.deepEqual(fetched, ['E1', 'E1']);
		assert.deepEqual(rollups.get('E1'), { total: 2, done: 1 });
		rollups.cardChanged('A', { parent: 'E2', status: 'done' });
		await settle();
		assert.deepEqual(fetched.slice(2).sort(), ['E1', 'E2'], 'both epics of a move');
		rollups.cardChanged('A', undefined);
		await settle();
		assert.deepEqual(fetched.slice(4), ['E2'], 'a deleted child');
		rollups.cardChanged('Z', { parent: 'E9', status: 'ready' });
		await settle();
		assert.deepEqual(fetched.slice(5), [], 'an epic no face showed is not fetched');
		rollups.dispose();
	});
});

describe('Backlog tree nesting', () => {
	it('nests a child under its parent in the same group, keeps order, and never loses a cycle', () => {
		const n = nestCards([
			makeCard({ id: 'E1' }),
			makeCard({ id: 'A', parent: 'E1' }),
			makeCard({ id: 'X', parent: 'ELSEWHERE' }),
			makeCard({ id: 'B', parent: 'E1' }),
			makeCard({ id: 'C', parent: 'A' }),
			makeCard({ id: 'P', parent: 'Q' }),
			makeCard({ id: 'Q', parent: 'P' }),
		]);
		assert.deepEqual(
			n.roots.map(c => c.id),
			['E1', 'X', 'P'],
		);
		assert.deepEqual(
			n.children.get('P')?.map(c => c.id),
			['Q'],
			'a cycle (which the hub refuses) is cut, not dropped',
		);
		assert.deepEqual(
			n.children.get('E1')?.map(c => c.id),
			['A', 'B'],
		);
		assert.deepEqual(
			n.children.get('A')?.map(c => c.id),
			['C'],
		);
		assert.equal(n.parentOf.get('C')?.id, 'A');
		assert.equal(epicWords({ total: 5, done: 3 }, makeCard({ id: 'E1' }), false), '3 / 5 done');
		assert.equal(epicWords(undefined, makeCard({ id: 'X', parent: 'E9' }), false), 'in E9');
		assert.equal(epicWords(undefined, makeCard({ id: 'A', parent: 'E1' }), true), '');
	});

	it('counts the children at hand in one pass until the hub’s roll-up arrives, then shows the hub’s', async () => {
		const cards = [
			makeCard({ id: 'E1' }),
			makeCard({ id: 'A', parent: 'E1', status: 'done' }),
			makeCard({ id: 'B', parent: 'E1' }),
			makeCard({ id: 'C' }),
		];
		const local = countChildren(cards);
		assert.deepEqual([...local.keys()], ['E1']);
		const rollups = new EpicRollups(
			() => Promise.resolve({ total: 4, done: 3 }),
			() => undefined,
		);
		const [e1, c] = [cards[0], cards[3]];
		assert.ok(e1 && c);
		assert.deepEqual(treeProgress(e1, local.get('E1'), rollups), { total: 2, done: 1 });
		assert.equal(treeProgress(c, local.get('C'), rollups), undefined, 'no epic, no request');
		await settle();
		assert.deepEqual(treeProgress(e1, local.get('E1'), rollups), { total: 4, done: 3 }, 'older done children count');
		rollups.dispose();
	});
});
