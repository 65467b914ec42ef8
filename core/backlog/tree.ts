/**
 * Parents and children in the store: the words of a claim refused by the tree, a parent's
 * roll-up, the refusal to close a parent with open children or to delete a card with children, and
 * auto-close. The checks of a parent set by create or edit (it exists, same project, no cycle) are
 * parentChecks.ts's. "Claimable" itself is not decided here: claimableSql.ts holds it (open_children
 * and tree_waits, kept by migrations 0023's and 0028's triggers); this module only reads and explains.
 */
import { BatonError } from '../errors';
import type { Card, CardRef, ChildrenRollup } from '../protocol';
import type { Queryable } from '../store/db';
import { act } from './cardActions';
import { type StateWord, refStateWord } from '../rules/claimable';
import { withHolds } from './cardHolds';
import { anyWaitSql, claimableSql, deferredSql, pausedSql } from './claimableSql';
import type { PendingEvent } from './unitOfWork';

/** Children listed by card/get (a roll-up counts all of them). */
const rollupList = 1000;

/**
 * Why a ready card with its dependencies done is still not claimable, in words (claim by id): it has
 * open children, or an ancestor waits on a dependency. Undefined when the tree holds it back not.
 */
export async function treeHold(tx: Queryable, cardId: string, now: Date): Promise<BatonError | undefined> {
	const [row] = await tx.query<{ ok: boolean; open: number; parent: string | null }>(
		`SELECT (${claimableSql('$2')}) AS ok, open_children AS open, parent FROM cards WHERE id = $1`,
		[cardId, now],
	);
	if (row === undefined || row.ok) {
		return undefined;
	}
	if (row.open > 0) {
		const open = await openChildren(tx, cardId);
		return new BatonError(
			'invalid_transition',
			`Card ${cardId} has ${plural(row.open, 'open child', 'open children')} (${listed(open, row.open)}); it is claimable once they are done. Claim one of them instead.`,
			{ cardId, openChildren: open },
		);
	}
	const path: string[] = [cardId];
	for (let up = row.parent; up !== null && path.length < 65;) {
		path.push(up);
		const [a] = await tx.query<{ unmet: number; parent: string | null }>(
			'SELECT unmet_deps AS unmet, parent FROM cards WHERE id = $1',
			[up],
		);
		if (a === undefined) {
			break;
		}
		if (a.unmet > 0) {
			const deps = await tx.query<{ id: string }>(
				`SELECT e.dep_id AS id FROM edges e LEFT JOIN cards d ON d.id = e.dep_id
				 WHERE e.card_id = $1 AND d.status IS DISTINCT FROM 'done' ORDER BY e.dep_id LIMIT 5`,
				[up],
			);
			const names = listed(
				deps.map(d => d.id),
				a.unmet,
			);
			const via = path.length > 2 ? ` (${path.join(' → ')})` : '';
			return new BatonError(
				'invalid_transition',
				`Card ${cardId} waits: its ${path.length === 2 ? 'parent' : 'ancestor'} ${up} waits on ${names}${via}. Claim one of those, or claim without a card id.`,
				{ cardId, path, waitsOn: deps.map(d => d.id) },
			);
		}
		up = a.parent;
	}
	return undefined;
}

/** The open (not done) children of a card, first 20 by id. */
export async function openChildren(tx: Queryable, cardId: string): Promise<string[]> {
	const rows = await tx.query<{ id: string }>(
		`SELECT id FROM cards WHERE parent = $1 AND status <> 'done' ORDER BY id LIMIT 20`,
		[cardId],
	);
	return rows.map(r => r.id);
}

/**
 * Closing a parent by hand: refused while children are open, unless forced; forced, returns the
 * children it leaves open (said in the result and the event).
 */
export async function checkCloseParent(
	tx: Queryable,
	card: Card,
	force: boolean | undefined,
	openCount: number,
): Promise<string[]> {
	if (openCount === 0) {
		return [];
	}
	const open = await openChildren(tx, card.id);
	if (force !== true) {
		throw new BatonError(
			'invalid_transition',
			`Card ${card.id} has ${plural(openCount, 'open child', 'open children')} (${listed(open, openCount)}); complete them first, or force it, which leaves them open.`,
			{ cardId: card.id, openChildren: open },
		);
	}
	return open;
}

/** How many open children a card has (migration 0023's counter). */
export async function openChildCount(tx: Queryable, cardId: string): Promise<number> {
	const rows = await tx.query<{ n: number }>('SELECT open_children AS n FROM cards WHERE id = $1', [cardId]);
	return rows[0]?.n ?? 0;
}

/** Refuses deleting a card that has children, naming them. */
export async function checkNoChildren(tx: Queryable, cardId: string): Promise<void> {
	const rows = await tx.query<{ id: string }>('SELECT id FROM cards WHERE parent = $1 ORDER BY id LIMIT 20', [cardId]);
	if (rows.length > 0) {
		const ids = rows.map(r => r.id);
		throw new BatonError(
			'has_dependents',
			`Card ${cardId} cannot be deleted: ${ids.join(', ')} ${ids.length === 1 ? 'is its child' : 'are its children'}. Move or delete ${ids.length === 1 ? 'it' : 'them'} first (edit --parent / --no-parent).`,
			{ cardId, children: ids },
		);
	}
}

/** A card ref as card/get gives it (protocol CardRef), built in SQL from the row `c`. */
const refJson = `json_build_object('id', c.id, 'title', c.title, 'status', c.status, 'unmetDeps', c.unmet_deps,
	'deferUntil', baton_ts(c.defer_until))`;

/**
 * card/get's parent ref and children roll-up (undefined when it has none). One statement reads the
 * parent and the children in claim order, the list as one json value (1,000 refs decoded by
 * JSON.parse, not as 1,000 rows of 5 fields), and the counts are tallied from that list; only an epic
 * of more than 1,000 children is counted by a second query. The target: `show` of an epic of 1,000
 * children ≤ 20 ms (docs/benchmarks.md, epics); the aggregate's ORDER BY is the subquery's, so
 * PostgreSQL sorts once, and both are named statements, planned once per connection.
 */
export async function treeOf(
	db: Queryable,
	card: Card,
	now: Date,
): Promise<{ parent?: CardRef; children?: ChildrenRollup }> {
	const [row] = await db.query<{ parent: CardRef | null; cards: CardRef[] | null }>(
		`SELECT (SELECT ${refJson} FROM cards c WHERE c.id = $2) AS parent,
			(SELECT json_agg(${refJson} ORDER BY c.k, c.created_at, c.id) FROM (SELECT id, title, status, unmet_deps,
				defer_until, -priority AS k, created_at FROM cards WHERE parent = $1
				ORDER BY -priority, created_at, id LIMIT ${rollupList + 1}) c) AS cards`,
		[card.id, card.parent ?? null],
		'baton_card_tree',
	);
	const out: { parent?: CardRef; children?: ChildrenRollup } = {};
	if (row?.parent != null) {
		const [parent] = await withHolds(db, [row.parent]);
		out.parent = parent ?? row.parent;
	}
	const listed = await withHolds(db, row?.cards ?? []);
	if (listed.length === 0) {
		return out;
	}
	// Counted by the word list shows for each child (core/rules/claimGuards.ts): a waiting child is not ready.
	const by = new Map<StateWord, number>();
	if (listed.length > rollupList) {
		const [counts] = await db.query<Record<string, unknown>>(
			`SELECT count(*) FILTER (WHERE status = 'done') AS done, count(*) FILTER (WHERE status = 'review') AS review,
				count(*) FILTER (WHERE status = 'blocked') AS blocked, count(*) FILTER (WHERE status = 'claimed') AS claimed,
				count(*) FILTER (WHERE status = 'ready') AS ready, count(*) FILTER (WHERE ${anyWaitSql()}) AS waiting,
				count(*) FILTER (WHERE ${deferredSql('$2')}) AS deferred,
				count(*) FILTER (WHERE EXISTS (SELECT 1 FROM pauses) AND ${claimableSql('$2')} AND ${pausedSql()}) AS paused
			 FROM cards WHERE parent = $1`,
			[card.id, now],
			'baton_card_tree_counts',
		);
		const n = (k: string): number => Number(counts?.[k] ?? 0);
		for (const w of ['done', 'review', 'blocked', 'claimed', 'waiting', 'deferred', 'paused'] as const) {
			by.set(w, n(w));
		}
		// Files another claim holds are not counted over more than rollupList children: those count as ready.
		by.set('ready', n('ready') - n('waiting') - n('deferred') - n('paused'));
	} else {
		for (const c of listed) {
			const w = refStateWord(c, now);
			by.set(w, (by.get(w) ?? 0) + 1);
		}
	}
	const n = (s: StateWord): number => by.get(s) ?? 0;
	out.children = {
		total: [...by.values()].reduce((a, b) => a + b, 0),
		done: n('done'),
		review: n('review'),
		blocked: n('blocked'),
		claimed: n('claimed'),
		ready: n('ready'),
		waiting: n('waiting'),
		deferred: n('deferred'),
		paused: n('paused'),
		cards: listed.slice(0, rollupList),
	};
	return out;
}

/**
 * After a child is done (completed, approved, forced): each ancestor that has auto-close and no open
 * child left completes by itself (or goes to review when it has review), and so on up; a parent that
 * became claimable is returned in `unblocked`. The events are the usual ones, with `autoClosed: true`.
 */
export async function afterChildDone(
	tx: Queryable,
	child: Card,
	actor: string,
	now: Date,
): Promise<{ events: PendingEvent[]; unblocked: string[] }> {
	const events: PendingEvent[] = [];
	const unblocked: string[] = [];
	for (let parentId = child.parent ?? null; parentId !== null;) {
		const [p] = await tx.query<{ auto: boolean; open: number; status: string; unmet: number; review: string }>(
			`SELECT auto_close AS auto, open_children AS open, status, unmet_deps AS unmet, review FROM cards
			 WHERE id = $1 FOR UPDATE`,
			[parentId],
		);
		if (p === undefined || p.open > 0 || p.status !== 'ready') {
			break;
		}
		if (!p.auto || p.unmet > 0) {
			const [c] = await tx.query<{ ok: boolean }>(`SELECT (${claimableSql('$2')}) AS ok FROM cards WHERE id = $1`, [
				parentId,
				now,
			]);
			if (c?.ok === true) {
				unblocked.push(parentId);
			}
			break;
		}
		if (p.review !== 'none') {
			const [r] = await tx.query<{ card: Card }>(
				`UPDATE cards SET status = 'review', completed_by = $2, version = version + 1, updated_at = $3
				 WHERE id = $1 RETURNING baton_card(cards) AS card`,
				[parentId, actor, now],
			);
			if (r !== undefined) {
				events.push({ cardId: parentId, type: 'review_requested', data: { card: r.card, autoClosed: true } });
			}
			break;
		}
		const closed = await act(tx, parentId, { type: 'complete', actor, force: true }, now, {
			autoClosed: true,
			forced: undefined,
		});
		events.push(...closed.events);
		parentId = closed.card.parent ?? null;
	}
	return { events, unblocked };
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** "A, B, C" or "A, B, C and 4 more". */
function listed(ids: readonly string[], total: number): string {
	const shown = ids.slice(0, 5);
	return total > shown.length ? `${shown.join(', ')} and ${total - shown.length} more` : shown.join(', ');
}
