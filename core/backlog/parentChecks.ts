/**
 * The checks of a parent set by create or edit: the parent exists (in the same call's batch
 * or the store), is not the card itself and is of the same project, and no cycle closes through
 * parents, or through parents and dependencies together. Only reads and refuses: it changes nothing,
 * and decides nothing about claimability (claimableSql.ts) or the tree's other words (tree.ts).
 */
import { describeCycle, findAnyCycle } from '../rules/dag';
import { BatonError } from '../errors';
import type { Queryable } from '../store/db';

/** A card as the cycle check sees it: its parent and its dependencies. */
interface TreeNode {
	parent: string | null;
	deps: readonly string[];
}

/** A change the cycle check applies over the stored graph: a card (new or existing) and its links. */
export interface TreeChange {
	id: string;
	parent: string | null;
	deps: readonly string[];
}

/** True when some card has a parent: a backlog without trees pays for none of these checks. */
export async function hasTrees(tx: Queryable): Promise<boolean> {
	const rows = await tx.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM cards WHERE parent IS NOT NULL) AS any');
	return rows[0]?.any === true;
}

/**
 * Checks the parents a create or an edit names (`changes`, whose `project` is the card's): each exists
 * (in `batch`, the cards created by the same call, or in the store), is not the card itself and is of
 * the same project. Throws one clear error; changes nothing.
 */
export async function checkParents(
	tx: Queryable,
	changes: readonly { id: string; parent: string; project: string | null }[],
	batch: ReadonlyMap<string, { project: string | null }> = new Map(),
): Promise<void> {
	const stored = [...new Set(changes.map(c => c.parent).filter(p => !batch.has(p)))];
	const found = new Map<string, string | null>();
	if (stored.length > 0) {
		const rows = await tx.query<{ id: string; project: string | null }>(
			'SELECT id, project FROM cards WHERE id = ANY($1::text[])',
			[stored],
		);
		for (const r of rows) {
			found.set(r.id, r.project);
		}
	}
	for (const c of changes) {
		if (c.parent === c.id) {
			throw new BatonError('invalid_input', `Card ${c.id} cannot be its own parent.`, {
				cardId: c.id,
				parent: c.parent,
			});
		}
		const inBatch = batch.get(c.parent);
		const project = inBatch !== undefined ? inBatch.project : found.get(c.parent);
		if (inBatch === undefined && !found.has(c.parent)) {
			throw new BatonError(
				'not_found',
				`Card ${c.id}: its parent ${c.parent} does not exist. Create the parent first or in the same call.`,
				{ cardId: c.id, parent: c.parent },
			);
		}
		if (project !== undefined && project !== null && c.project !== null && project !== c.project) {
			throw new BatonError(
				'invalid_input',
				`Card ${c.id} (project ${c.project}) cannot be a child of ${c.parent}, which is in project ${project}.`,
				{ cardId: c.id, parent: c.parent, project: c.project, parentProject: project },
			);
		}
	}
}

/**
 * Refuses changes that would close a cycle through parents, or through parents and dependencies
 * together: a card waits on its dependencies, on its open children, and on its ancestors'
 * dependencies, so a child may not depend on its ancestor, nor an ancestor on its descendant, nor a
 * mixture close a loop. Reads the part of the graph the changes can reach, applies them, and searches.
 */
export async function checkTreeCycle(tx: Queryable, changes: readonly TreeChange[]): Promise<void> {
	if (changes.length === 0) {
		return;
	}
	const roots = new Set<string>();
	for (const c of changes) {
		roots.add(c.id);
		if (c.parent !== null) {
			roots.add(c.parent);
		}
		for (const d of c.deps) {
			roots.add(d);
		}
	}
	const nodes = await reachableNodes(tx, [...roots]);
	for (const c of changes) {
		nodes.set(c.id, { parent: c.parent, deps: c.deps });
	}
	const cycle = findAnyCycle(waitGraph(nodes));
	if (cycle !== null) {
		throw treeCycleError(startAtChange(cycle, changes), nodes);
	}
}

/**
 * The cards reachable from `roots` by what a card waits on: dependencies and children in full, and the
 * ancestors (whose dependencies a child inherits) by their dependencies and parents only.
 */
async function reachableNodes(tx: Queryable, roots: string[]): Promise<Map<string, TreeNode>> {
	const rows = await tx.query<{ id: string; parent: string | null; deps: string[] }>(
		`WITH RECURSIVE reach(id, full_node) AS (
			SELECT unnest($1::text[]), true
			UNION
			SELECT n.id, n.full_node FROM reach r, LATERAL (
				SELECT e.dep_id AS id, true AS full_node FROM edges e WHERE e.card_id = r.id
				UNION ALL SELECT c.id, true FROM cards c WHERE r.full_node AND c.parent = r.id
				UNION ALL SELECT c.parent, false FROM cards c WHERE c.id = r.id AND c.parent IS NOT NULL
			) n
		)
		SELECT c.id, c.parent, c.depends_on AS deps FROM cards c WHERE c.id IN (SELECT id FROM reach) ORDER BY c.id`,
		[roots],
	);
	return new Map(rows.map(r => [r.id, { parent: r.parent, deps: r.deps }]));
}

/** Each card to what it waits on: its dependencies, its children, its ancestors' dependencies. */
function waitGraph(nodes: ReadonlyMap<string, TreeNode>): Map<string, string[]> {
	const graph = new Map<string, string[]>();
	for (const [id, node] of nodes) {
		const waits = new Set(node.deps);
		const seen = new Set<string>([id]);
		for (let up = node.parent; up !== null && !seen.has(up); up = nodes.get(up)?.parent ?? null) {
			seen.add(up);
			for (const d of nodes.get(up)?.deps ?? []) {
				waits.add(d);
			}
		}
		graph.set(id, [...waits]);
	}
	for (const [id, node] of nodes) {
		if (node.parent !== null) {
			graph.get(node.parent)?.push(id);
		}
	}
	// A parent chain that loops is a cycle of its own; so is a card its own ancestor.
	for (const [id, node] of nodes) {
		const seen = new Set<string>([id]);
		for (let up = node.parent; up !== null; up = nodes.get(up)?.parent ?? null) {
			if (seen.has(up)) {
				graph.get(up)?.push(up);
				break;
			}
			seen.add(up);
		}
	}
	return graph;
}

/** The closed path rotated to start (and end) at the first changed card on it, so the words do not depend on row order. */
function startAtChange(cycle: readonly string[], changes: readonly TreeChange[]): string[] {
	const open = cycle.slice(0, -1);
	const at = Math.max(
		0,
		open.findIndex(id => changes.some(c => c.id === id)),
	);
	const rotated = [...open.slice(at), ...open.slice(0, at)];
	return [...rotated, rotated[0] ?? ''];
}

function treeCycleError(cycle: readonly string[], nodes: ReadonlyMap<string, TreeNode>): BatonError {
	// Through parents only when every step is a card and its parent (either way round).
	const parentsOnly = cycle.every((id, i) => {
		const next = cycle[i + 1];
		return next === undefined || nodes.get(id)?.parent === next || nodes.get(next)?.parent === id;
	});
	return new BatonError(
		'cycle',
		`That would close a cycle through ${parentsOnly ? 'parents' : 'parents and dependencies'}: ${describeCycle(cycle)}. A card waits on its children and its parent's dependencies; change the parent or remove a link instead.`,
		{ cycle },
	);
}
