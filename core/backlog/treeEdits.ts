/**
 * The tree checks of a create and of an edit, between cards.ts and parentChecks.ts: which
 * parents a batch names (in the batch or in the store), the project each child will have, and the cycle
 * check with the batch's own cards and links applied. Sends no SQL of its own; decides nothing
 * parentChecks.ts does not.
 */
import type { Card } from '../protocol';
import type { Queryable } from '../store/db';
import type { CardInput } from './createPlan';
import { checkParents, checkTreeCycle, hasTrees } from './parentChecks';
import { present } from './values';

/** A create's parents: they exist (in the batch or the store), share the child's project, close no cycle. */
export async function checkCreatedTree(
	tx: Queryable,
	toCreate: readonly CardInput[],
	ids: readonly string[],
): Promise<void> {
	const withParent = toCreate.flatMap((c, i) =>
		c.parent === undefined ? [] : [{ id: present(ids[i]), parent: c.parent, project: c.project ?? null }],
	);
	if (withParent.length === 0) {
		return;
	}
	const batch = new Map(toCreate.map((c, i) => [present(ids[i]), { project: c.project ?? null }]));
	await checkParents(tx, withParent, batch);
	await checkTreeCycle(
		tx,
		toCreate.map((c, i) => ({ id: present(ids[i]), parent: c.parent ?? null, deps: [...new Set(c.dependsOn ?? [])] })),
	);
}

/** An edit's new parent (null: none): it exists, shares the project, closes no cycle. */
export async function checkEditedParent(tx: Queryable, card: Card, parent: string | null): Promise<void> {
	if (parent === null) {
		return;
	}
	await checkParents(tx, [{ id: card.id, parent, project: card.project ?? null }]);
	await checkTreeCycle(tx, [{ id: card.id, parent, deps: card.dependsOn }]);
}

/** A link's new dependencies, checked against the tree (the plain dependency cycle is dependencies.ts's). */
export async function checkLinkedTree(tx: Queryable, card: Card, deps: readonly string[]): Promise<void> {
	if (!(await hasTrees(tx))) {
		return;
	}
	await checkTreeCycle(tx, [
		{ id: card.id, parent: card.parent ?? null, deps: [...new Set([...card.dependsOn, ...deps])] },
	]);
}
