/**
 * Pure dependency-graph checks (a link that would close a cycle is refused, naming it).
 * Iterative, so a 1,000-long chain cannot overflow the stack. No I/O: callers pass the edges.
 */

/** Edges as `card -> the ids it depends on`. */
export type DependencyMap = ReadonlyMap<string, readonly string[]>;

/**
 * If adding edges `from -> each of deps` would close a cycle, returns the cycle as a path that starts
 * and ends at `from` (e.g. `['A1', 'B2', 'A1']`); otherwise null. `graph` holds the existing edges;
 * only what is reachable from `deps` is visited.
 */
export function findCycle(graph: DependencyMap, from: string, deps: readonly string[]): string[] | null {
	if (deps.includes(from)) {
		return [from, from];
	}
	// Depth-first search from the new dependencies looking for `from`; parents rebuild the path.
	const parent = new Map<string, string>();
	const stack: string[] = [];
	for (const start of deps) {
		if (!parent.has(start)) {
			parent.set(start, from);
			stack.push(start);
		}
	}
	for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
		for (const next of graph.get(node) ?? []) {
			if (next === from) {
				return pathBack(parent, node, from);
			}
			if (!parent.has(next)) {
				parent.set(next, node);
				stack.push(next);
			}
		}
	}
	return null;
}

function pathBack(parent: ReadonlyMap<string, string>, last: string, from: string): string[] {
	const reversed = [from, last];
	for (let node = parent.get(last); node !== undefined && node !== from; node = parent.get(node)) {
		reversed.push(node);
	}
	reversed.push(from);
	return reversed.reverse();
}

/**
 * Finds any cycle in a whole graph (a batch of new cards that may depend on each other). Returns one
 * cycle as a closed path, or null. Iterative three-colour depth-first search.
 */
export function findAnyCycle(graph: DependencyMap): string[] | null {
	const state = new Map<string, 'open' | 'done'>();
	for (const root of graph.keys()) {
		if (state.has(root)) {
			continue;
		}
		const path: string[] = [root];
		const iterators: Iterator<string>[] = [(graph.get(root) ?? [])[Symbol.iterator]()];
		state.set(root, 'open');
		for (let top = iterators.at(-1); top !== undefined; top = iterators.at(-1)) {
			const step = top.next();
			if (step.done === true) {
				const finished = path.pop();
				if (finished !== undefined) {
					state.set(finished, 'done');
				}
				iterators.pop();
				continue;
			}
			const next = step.value;
			const seen = state.get(next);
			if (seen === 'open') {
				return [...path.slice(path.indexOf(next)), next];
			}
			if (seen === undefined) {
				state.set(next, 'open');
				path.push(next);
				iterators.push((graph.get(next) ?? [])[Symbol.iterator]());
			}
		}
	}
	return null;
}

/** "A1 → B2 → A1" */
export function describeCycle(path: readonly string[]): string {
	return path.join(' → ');
}
