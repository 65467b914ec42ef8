/**
 * Turns a foreign backlog, already parsed into neutral items (beads.ts, backlogMd.ts, taskmaster.ts),
 * into the Baton cards one `data/import` call writes, with the id map and a report of what is
 * skipped and what was imported before. Pure: the caller passes the store's cards and the time; no
 * I/O, no clock. Everything that can refuse an import is checked here, before anything is written.
 */
import { findAnyCycle } from '../../rules/dag';
import { BatonError } from '../../errors';
import { plural } from '../../plural';
import { type Card, CardId, type CardStatus, type ReviewMode, limits } from '../../protocol';

export type ImportSource = 'beads' | 'backlog-md' | 'taskmaster';
export const importSources: readonly ImportSource[] = ['beads', 'backlog-md', 'taskmaster'];

/** The largest source an import reads (a file, or a Backlog.md folder's task files together). */
export const maxImportBytes = 4 * 1024 * 1024;

/** One work item of a foreign backlog, in Baton's terms but still keyed by the source's own id. */
export interface ForeignItem {
	/** The id in the source (`bd-a1b2`, `task-3`, `1.2`). */
	ref: string;
	/** Where it is written, for messages: `issues.jsonl line 4`, `task-3 - Title.md`. */
	where: string;
	title: string;
	/** Markdown: the description and the source's other text sections, labels and notes. */
	body: string;
	status: 'ready' | 'review' | 'blocked' | 'done';
	/** Why it is blocked, or what the source said that Baton has no status for ("was in progress"). */
	statusNote?: string;
	/** On Baton's scale: 0 = the source's default/medium, +1 per step more urgent. */
	priority: number;
	/** Refs this item waits on (blocking dependencies only). */
	dependsOn: string[];
	/** The ref of the parent (epic, task of a sub-task): the card's parent. */
	parent?: string;
	/** Refs of related and duplicated items, and of the item whose work found this one. */
	related?: string[];
	duplicates?: string[];
	discoveredFrom?: string;
	acceptance: string[];
	labels: string[];
	createdAt?: string;
	updatedAt?: string;
}

export interface ImportSkip {
	ref: string;
	where: string;
	reason: string;
}

/** What a parser read: the items, and what it left out on purpose (each with a reason). */
export interface ForeignBacklog {
	source: ImportSource;
	items: ForeignItem[];
	skips: ImportSkip[];
}

/** What the store holds that an import must not collide with. */
export interface ExistingCard {
	id: string;
	idempotencyKey: string | null;
	dependsOn: readonly string[];
}

export interface ImportOptions {
	/** The project the cards go to; null = none. */
	project: string | null;
	/** The backlog's review setting, for cards that are not in review. */
	review: ReviewMode;
	now: Date;
}

export interface IdMapping {
	ref: string;
	id: string;
	/** False when the source id did not fit Baton's rules or was taken, and a new one was made. */
	kept: boolean;
}

export interface ImportPlan {
	source: ImportSource;
	/** The cards to write, in one data/import call (empty when everything is imported already). */
	cards: Card[];
	mapped: IdMapping[];
	/** Items imported by an earlier run (recognised by their source reference), left as they are. */
	already: IdMapping[];
	skips: ImportSkip[];
	counts: { cards: number; dependencies: number; byStatus: Record<CardStatus, number> };
}

/**
 * The source reference kept on each imported card (as its idempotency key, unique in the store), so
 * a re-import recognises what it imported before. The project is part of it: two projects may both
 * import their own Taskmaster task "1".
 */
export function sourceKey(source: ImportSource, project: string | null, ref: string): string {
	const key = `import:${source}:${project ?? '-'}:${ref}`;
	return key.length <= limits.idempotencyKeyLength
		? key
		: `${key.slice(0, limits.idempotencyKeyLength - 9)}~${hash8(key)}`;
}

/** A short stable hash (FNV-1a, hex) for keys and ids that must be shortened. */
function hash8(s: string): string {
	let h = 0x811c9dc5;
	for (let i = 0; i < s.length; i++) {
		h ^= s.charCodeAt(i);
		h = Math.imul(h, 0x01000193) >>> 0;
	}
	return h.toString(16).padStart(8, '0');
}

/** A card id for `ref`: the ref itself when it fits and is free, else a cleaned form with -2, -3… */
function chooseId(ref: string, source: ImportSource, taken: ReadonlySet<string>): IdMapping {
	if (CardId.safeParse(ref).success && !taken.has(ref)) {
		return { ref, id: ref, kept: true };
	}
	let base = ref.replace(/[^A-Za-z0-9._:-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '');
	if (base === '') {
		base = `${source}-${hash8(ref)}`;
	}
	if (base.length > limits.idLength - 4) {
		base = `${base.slice(0, limits.idLength - 13)}-${hash8(ref)}`;
	}
	if (base !== ref && !taken.has(base)) {
		return { ref, id: base, kept: false };
	}
	for (let n = 2; ; n++) {
		const id = `${base}-${n}`;
		if (!taken.has(id)) {
			return { ref, id, kept: false };
		}
	}
}

const titleEllipsis = '…';

/**
 * Plans the import of `backlog` into a store holding `existing`. Refuses (BatonError invalid_input,
 * naming the item's place in the source) duplicate refs, too many items, oversized text and a cycle;
 * a dependency on an item that is neither in the source nor imported before is dropped and reported.
 */
export function planImport(
	backlog: ForeignBacklog,
	existing: readonly ExistingCard[],
	options: ImportOptions,
): ImportPlan {
	const { source } = backlog;
	const seen = new Map<string, ForeignItem>();
	for (const item of backlog.items) {
		const first = seen.get(item.ref);
		if (first !== undefined) {
			throw new BatonError(
				'invalid_input',
				`${item.where}: id "${item.ref}" appears twice (first at ${first.where}); nothing was imported.`,
				{ ref: item.ref },
			);
		}
		seen.set(item.ref, item);
	}
	const byKey = new Map<string, string>();
	const taken = new Set<string>();
	for (const c of existing) {
		taken.add(c.id);
		if (c.idempotencyKey !== null) {
			byKey.set(c.idempotencyKey, c.id);
		}
	}
	const already: IdMapping[] = [];
	const fresh: ForeignItem[] = [];
	const idOf = new Map<string, string>();
	for (const item of backlog.items) {
		const id = byKey.get(sourceKey(source, options.project, item.ref));
		if (id === undefined) {
			fresh.push(item);
		} else {
			already.push({ ref: item.ref, id, kept: id === item.ref });
			idOf.set(item.ref, id);
		}
	}
	if (fresh.length > limits.importBatch) {
		throw new BatonError(
			'too_large',
			`The source has ${fresh.length} items to import; one import holds at most ${limits.importBatch} (so it is applied in one transaction). Split the source.`,
			{ items: fresh.length, limit: limits.importBatch },
		);
	}
	// Ids in source order, so the same source into the same store always maps the same way.
	const mapped: IdMapping[] = [];
	for (const item of fresh) {
		const m = chooseId(item.ref, source, taken);
		taken.add(m.id);
		idOf.set(item.ref, m.id);
		mapped.push(m);
	}
	const skips = [...backlog.skips];
	const deps = new Map<string, Set<string>>(fresh.map(i => [i.ref, new Set<string>()]));
	const addDep = (item: ForeignItem, on: string, what: string): void => {
		const target = idOf.get(on);
		if (target === undefined) {
			skips.push({
				ref: item.ref,
				where: item.where,
				reason: `${what} "${on}" is not in the source; the link is dropped`,
			});
			return;
		}
		deps.get(item.ref)?.add(target);
	};
	for (const item of fresh) {
		for (const on of item.dependsOn) {
			addDep(item, on, 'dependency');
		}
	}
	// Sub-tasks become children of their parent, imported now or before; links that do not
	// block keep the ids they map to. A ref that is in neither is dropped and reported.
	for (const item of fresh) {
		for (const [what, ref] of [
			['parent', item.parent],
			['discovered-from', item.discoveredFrom],
			...(item.related ?? []).map(r => ['related', r] as const),
			...(item.duplicates ?? []).map(r => ['duplicates', r] as const),
		] as const) {
			if (ref !== undefined && idOf.get(ref) === undefined) {
				skips.push({ ref: item.ref, where: item.where, reason: `${what} "${ref}" is not in the source` });
			}
		}
	}
	const cards = fresh.map(item => toCard(item, [...(deps.get(item.ref) ?? [])], idOf, options, source));
	checkCycles(cards, existing, mapped);
	const byStatus: Record<CardStatus, number> = { ready: 0, claimed: 0, review: 0, blocked: 0, done: 0 };
	let dependencies = 0;
	for (const c of cards) {
		byStatus[c.status]++;
		dependencies += c.dependsOn.length;
	}
	return { source, cards, mapped, already, skips, counts: { cards: cards.length, dependencies, byStatus } };
}

function toCard(
	item: ForeignItem,
	dependsOn: string[],
	idOf: ReadonlyMap<string, string>,
	options: ImportOptions,
	source: ImportSource,
): Card {
	const id = idOf.get(item.ref) ?? item.ref;
	const now = options.now.toISOString();
	const title = item.title.trim();
	const shortTitle =
		title.length > limits.titleLength ? `${title.slice(0, limits.titleLength - 1).trimEnd()}${titleEllipsis}` : title;
	if (shortTitle === '') {
		throw new BatonError('invalid_input', `${item.where}: item "${item.ref}" has no title; nothing was imported.`, {
			ref: item.ref,
		});
	}
	const body = [
		`Imported from ${source} ${item.ref}.`,
		...(shortTitle === title ? [] : [`Full title: ${title}`]),
		...(item.statusNote === undefined ? [] : [item.statusNote]),
		// Labels Baton cannot hold (spaces, too long, too many) stay in the text.
		...(labelsOf(item).text.length === 0 ? [] : [`Labels: ${labelsOf(item).text.join(', ')}`]),
		...(item.body.trim() === '' ? [] : ['', item.body.trim()]),
	].join('\n');
	if (new TextEncoder().encode(body).length > limits.bodyBytes) {
		throw new BatonError(
			'too_large',
			`${item.where}: the text of "${item.ref}" is larger than a card's ${limits.bodyBytes} bytes; nothing was imported.`,
			{ ref: item.ref },
		);
	}
	const acceptance = item.acceptance.map(a => a.trim()).filter(a => a !== '');
	if (acceptance.length > limits.acceptanceItems || acceptance.some(a => a.length > limits.acceptanceLength)) {
		throw new BatonError(
			'too_large',
			`${item.where}: "${item.ref}" has more than ${limits.acceptanceItems} acceptance criteria or one longer than ${limits.acceptanceLength} characters; nothing was imported.`,
			{ ref: item.ref },
		);
	}
	if (dependsOn.length > limits.dependsOn) {
		throw new BatonError(
			'too_large',
			`${item.where}: "${item.ref}" depends on ${dependsOn.length} items; a card may depend on at most ${limits.dependsOn}.`,
			{ ref: item.ref },
		);
	}
	return {
		id,
		title: shortTitle,
		body,
		phase: null,
		priority: item.priority,
		status: item.status,
		requires: [],
		dependsOn: dependsOn.sort(),
		unmetDeps: 0,
		claimOwner: null,
		claimedAt: null,
		leaseExpiresAt: null,
		leaseSeconds: null,
		claimEpoch: 0,
		attempts: 0,
		maxAttempts: 3,
		deferUntil: null,
		progress: null,
		progressNote: null,
		progressAt: null,
		result: item.status === 'done' ? (item.statusNote ?? null) : null,
		blockedReason: item.status === 'blocked' ? (item.statusNote ?? `Blocked in ${source} when imported.`) : null,
		failed: false,
		backoffSeconds: null,
		stallReleaseSeconds: null,
		idempotencyKey: sourceKey(source, options.project, item.ref),
		review: item.status === 'review' && options.review === 'none' ? 'human' : options.review,
		completedBy: null,
		handoff: null,
		needsInput: false,
		project: options.project,
		scope: [],
		reserved: [],
		labels: labelsOf(item).kept,
		parent: item.parent === undefined ? null : (idOf.get(item.parent) ?? null),
		related: mapRefs(item.related, idOf),
		duplicates: mapRefs(item.duplicates, idOf),
		discoveredFrom: item.discoveredFrom === undefined ? null : (idOf.get(item.discoveredFrom) ?? null),
		acceptance,
		version: 1,
		createdAt: validTime(item.createdAt) ?? now,
		updatedAt: validTime(item.updatedAt) ?? validTime(item.createdAt) ?? now,
	};
}

const labelPattern = /^[A-Za-z0-9_:/-]{1,32}$/;

/** The labels a card can hold (the first 16 valid ones) and the rest, kept in the text. */
function labelsOf(item: ForeignItem): { kept: string[]; text: string[] } {
	const valid = [...new Set(item.labels.filter(l => labelPattern.test(l)))].sort();
	const kept = valid.slice(0, limits.labels);
	return { kept, text: item.labels.filter(l => !kept.includes(l)) };
}

/** Source refs mapped to card ids; refs that are not imported are left out (reported by planImport). */
function mapRefs(refs: readonly string[] | undefined, idOf: ReadonlyMap<string, string>): string[] {
	return [...new Set((refs ?? []).flatMap(r => (idOf.has(r) ? [idOf.get(r) ?? r] : [])))].sort();
}

/** An ISO time the store accepts, or undefined (a missing or unreadable source time becomes "now"). */
function validTime(value: string | undefined): string | undefined {
	if (value === undefined) {
		return undefined;
	}
	const t = new Date(value);
	return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}

/** Refuses a cycle among the new cards (and the store's edges), named in the source's own ids. */
function checkCycles(cards: readonly Card[], existing: readonly ExistingCard[], mapped: readonly IdMapping[]): void {
	const graph = new Map<string, readonly string[]>();
	for (const c of existing) {
		graph.set(c.id, c.dependsOn);
	}
	for (const c of cards) {
		graph.set(c.id, c.dependsOn);
	}
	const cycle = findAnyCycle(graph);
	if (cycle === null) {
		return;
	}
	const refOf = new Map(mapped.map(m => [m.id, m.ref]));
	const path = cycle.map(id => refOf.get(id) ?? id).join(' → ');
	throw new BatonError('cycle', `The source's dependencies form a cycle: ${path}; nothing was imported.`, { cycle });
}

/** The human summary of a plan (dry run and real run print the same lines). */
export function describePlan(plan: ImportPlan, applied: boolean): string {
	const s = plan.counts.byStatus;
	const statuses = (Object.keys(s) as CardStatus[])
		.filter(k => s[k] > 0)
		.map(k => `${s[k]} ${k}`)
		.join(', ');
	const skipped = plan.skips.length > 0 ? `; ${plural(plan.skips.length, 'item')} skipped (below)` : '';
	const lines = [
		plan.cards.length === 0
			? `Nothing to import from ${plan.source}: ${plural(plan.already.length, 'item')} imported before; nothing changed${skipped}.`
			: `${applied ? 'Imported' : 'Would import'} ${plural(plan.counts.cards, 'card')} from ${plan.source} (${statuses}) with ${plural(plan.counts.dependencies, 'dependency')}${plan.already.length > 0 ? `; ${plural(plan.already.length, 'item')} imported before left as they are` : ''}${skipped}.`,
	];
	const renamed = plan.mapped.filter(m => !m.kept);
	if (renamed.length > 0) {
		lines.push(`Ids mapped (taken or not a valid card id): ${renamed.map(m => `${m.ref} → ${m.id}`).join(', ')}`);
	}
	for (const skip of plan.skips) {
		lines.push(`Skipped: ${skip.where} (${skip.ref}): ${skip.reason}`);
	}
	if (!applied && plan.cards.length > 0) {
		lines.push('Dry run: nothing was written.');
	}
	return lines.join('\n');
}
