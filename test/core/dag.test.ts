/** Pure DAG checks: cycle paths named, long chains handled without recursion. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { describeCycle, findAnyCycle, findCycle } from '../../core/rules/dag';

const graphOf = (edges: Record<string, string[]>): Map<string, string[]> => new Map(Object.entries(edges));

describe('findCycle', () => {
	it('names a self link', () => {
		assert.deepEqual(findCycle(new Map(), 'A1', ['A1']), ['A1', 'A1']);
	});

	it('names a two-card cycle as a closed path', () => {
		// B2 already depends on A1; A1 -> B2 would close it.
		assert.deepEqual(findCycle(graphOf({ B2: ['A1'] }), 'A1', ['B2']), ['A1', 'B2', 'A1']);
		assert.equal(describeCycle(['A1', 'B2', 'A1']), 'A1 → B2 → A1');
	});

	it('finds the path through a diamond', () => {
		const g = graphOf({ B: ['C'], C: ['D'], X: ['D'], D: ['A'] });
		assert.deepEqual(findCycle(g, 'A', ['X', 'B']), ['A', 'B', 'C', 'D', 'A']);
	});

	it('returns null when the new edges keep the graph acyclic', () => {
		const g = graphOf({ B: ['C'], C: [], D: ['B'] });
		assert.equal(findCycle(g, 'A', ['B', 'D']), null);
	});

	it('handles a 1,000-long chain without recursion limits', () => {
		const g = new Map<string, string[]>();
		for (let i = 1; i < 1000; i++) {
			g.set(`c${i}`, [`c${i - 1}`]);
		}
		const cycle = findCycle(g, 'c0', ['c999']);
		assert.equal(cycle?.length, 1001);
		assert.equal(cycle[0], 'c0');
		assert.equal(cycle[1], 'c999');
		assert.equal(cycle.at(-1), 'c0');
		assert.equal(findCycle(g, 'fresh', ['c999']), null);
	});

	it('handles a 100,000-long chain too', () => {
		const g = new Map<string, string[]>();
		for (let i = 1; i < 100_000; i++) {
			g.set(`c${i}`, [`c${i - 1}`]);
		}
		assert.equal(findCycle(g, 'c0', ['c99999'])?.length, 100_001);
	});
});

describe('findAnyCycle', () => {
	it('finds a cycle inside a batch and returns it closed', () => {
		const cycle = findAnyCycle(graphOf({ A: ['B'], B: ['C'], C: ['A'], D: ['A'] }));
		assert.ok(cycle !== null);
		assert.equal(cycle[0], cycle.at(-1));
		assert.deepEqual([...cycle].sort(), ['A', 'A', 'B', 'C']);
	});

	it('accepts a DAG, including edges to cards outside the batch', () => {
		assert.equal(findAnyCycle(graphOf({ A: ['B', 'C'], B: ['C', 'Z'], C: [] })), null);
	});

	it('walks a 1,000-long batch chain iteratively', () => {
		const g = new Map<string, string[]>();
		for (let i = 1; i < 1000; i++) {
			g.set(`c${i}`, [`c${i - 1}`]);
		}
		assert.equal(findAnyCycle(g), null);
		g.set('c0', ['c999']);
		assert.equal(findAnyCycle(g)?.length, 1001);
	});
});
