/**
 * Pure planning of a create: which inputs make new cards (idempotency keys), the batch's ids, text
 * limits, dependencies inside the batch and outside it, cycles, the rows to insert and the answer in
 * input order. No I/O: cards.ts reads what the plan needs, and writes what it returns.
 */
import { checkBody, checkLabels, checkTitle, parseTimestamp } from '../protocol/cardText';
import { findAnyCycle } from '../rules/dag';
import { BatonError } from '../errors';
import type { Card, ParsedParams, ReviewMode } from '../protocol';
import { cycleError } from '../rules/stateMachine';
import { present } from './values';

export type CardInput = ParsedParams<'card/create'>['cards'][number];
export type CardRecord = ReturnType<typeof cardRecords>[number];

/** The inputs that make new cards: not an existing card's key, and the same key twice in one batch creates one card. */
export function cardsToCreate(inputs: readonly CardInput[], byKey: ReadonlyMap<string, Card>): CardInput[] {
	const fresh = inputs.filter(c => c.idempotencyKey === undefined || !byKey.has(c.idempotencyKey));
	const seenKeys = new Set<string>();
	return fresh.filter(c => {
		if (c.idempotencyKey === undefined) {
			return true;
		}
		if (seenKeys.has(c.idempotencyKey)) {
			return false;
		}
		seenKeys.add(c.idempotencyKey);
		return true;
	});
}

/** Each id of the batch to its position; an id twice is refused. */
export function batchIndex(ids: readonly string[]): Map<string, number> {
	const batch = new Map<string, number>();
	ids.forEach((id, i) => {
		if (batch.has(id)) {
			throw new BatonError('invalid_input', `Card id ${id} appears twice in this create; ids must be unique.`, {
				cardId: id,
			});
		}
		batch.set(id, i);
	});
	return batch;
}

export function checkTexts(toCreate: readonly CardInput[], ids: readonly string[]): void {
	toCreate.forEach((c, i) => {
		const id = present(ids[i]);
		checkTitle(id, c.title);
		checkBody(id, c.body ?? '');
	});
}

/** Dependencies on cards outside this batch (they must exist already). */
export function externalDeps(toCreate: readonly CardInput[], batch: ReadonlyMap<string, number>): Set<string> {
	const external = new Set<string>();
	for (const c of toCreate) {
		for (const d of c.dependsOn ?? []) {
			if (!batch.has(d)) {
				external.add(d);
			}
		}
	}
	return external;
}

/** Refuses dependencies that are neither in the batch nor in the store (`depStatus`). */
export function checkKnownDeps(external: ReadonlySet<string>, depStatus: ReadonlyMap<string, string>): void {
	const unknown = [...external].filter(d => !depStatus.has(d));
	if (unknown.length > 0) {
		throw new BatonError(
			'not_found',
			`Unknown dependency ${unknown.length === 1 ? 'id' : 'ids'}: ${unknown.slice(0, 10).join(', ')}. Create ${unknown.length === 1 ? 'it' : 'them'} first or in the same call.`,
			{ unknown },
		);
	}
}

/** Refuses a cycle among the batch's own cards (existing cards cannot depend on new ones). */
export function checkBatchCycle(
	toCreate: readonly CardInput[],
	ids: readonly string[],
	batch: ReadonlyMap<string, number>,
): void {
	const graph = new Map<string, string[]>();
	toCreate.forEach((c, i) => {
		graph.set(
			present(ids[i]),
			(c.dependsOn ?? []).filter(d => batch.has(d)),
		);
	});
	const cycle = findAnyCycle(graph);
	if (cycle !== null) {
		throw cycleError(cycle);
	}
}

/** The rows to insert (snake_case, as jsonb_populate_recordset reads them), unmet counts included. */
export function cardRecords(
	toCreate: readonly CardInput[],
	ids: readonly string[],
	batch: ReadonlyMap<string, number>,
	depStatus: ReadonlyMap<string, string>,
	now: Date,
	/** The backlog's review setting, for cards that do not say. */
	review: ReviewMode,
) {
	return toCreate.map((c, i) => {
		const id = present(ids[i]);
		const deps = [...new Set(c.dependsOn ?? [])].sort();
		const unmet = deps.filter(d => batch.has(d) || depStatus.get(d) !== 'done').length;
		return {
			id,
			title: c.title,
			body: c.body ?? '',
			phase: c.phase ?? null,
			priority: c.priority ?? 0,
			status: 'ready',
			requires: [...new Set(c.requires ?? [])].sort(),
			depends_on: deps,
			unmet_deps: unmet,
			claim_epoch: 0,
			attempts: 0,
			max_attempts: c.maxAttempts ?? 3,
			failed: false,
			backoff_seconds: c.backoffSeconds ?? null,
			stall_release_seconds: c.stallReleaseSeconds ?? null,
			defer_until: c.deferUntil === undefined ? null : parseTimestamp('deferUntil', c.deferUntil).toISOString(),
			idempotency_key: c.idempotencyKey ?? null,
			acceptance: c.acceptance ?? [],
			version: 1,
			created_at: now.toISOString(),
			updated_at: now.toISOString(),
			review: c.review ?? review,
			needs_input: false,
			project: c.project ?? null,
			scope: c.scope ?? [],
			reserved: [],
			labels: checkLabels(id, c.labels ?? []),
			parent: c.parent ?? null,
			auto_close: c.autoClose ?? false,
			open_children: 0,
			tree_waits: false,
			related: [],
			duplicates: [],
			discovered_from: c.discoveredFrom ?? null,
			base: c.base ?? null,
		};
	});
}

/** The edges of the new cards as two parallel arrays (card, dependency) for one unnest insert. */
export function edgesOf(records: readonly CardRecord[]): { edgeFrom: string[]; edgeTo: string[] } {
	const edgeFrom: string[] = [];
	const edgeTo: string[] = [];
	for (const r of records) {
		for (const d of r.depends_on) {
			edgeFrom.push(r.id);
			edgeTo.push(d);
		}
	}
	return { edgeFrom, edgeTo };
}

/** Answer in input order: new cards, or the existing card of a repeated idempotency key. */
export function answerInInputOrder(
	inputs: readonly CardInput[],
	toCreate: readonly CardInput[],
	ids: readonly string[],
	created: ReadonlyMap<string, Card>,
	byKey: ReadonlyMap<string, Card>,
): Card[] {
	const idOf = new Map(toCreate.map((c, i) => [c, present(ids[i])]));
	const createdByKey = new Map<string, Card>();
	for (const c of created.values()) {
		if (c.idempotencyKey !== null) {
			createdByKey.set(c.idempotencyKey, c);
		}
	}
	return inputs.map(c => {
		const id = idOf.get(c);
		if (id !== undefined) {
			return present(created.get(id));
		}
		const key = present(c.idempotencyKey);
		return present(byKey.get(key) ?? createdByKey.get(key));
	});
}
