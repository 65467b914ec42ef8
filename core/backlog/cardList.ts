/**
 * card/list's pages: the ready page (the board's and agents' most common one, a prepared hot
 * statement in claim order), and every other filter and order written as one page query (paging.ts)
 * with its `waitsOn`, each text prepared by name on PGlite (pageName). card/listRows runs the
 * same filter and order and builds each card's row (protocol CardRow) instead of the whole card. Must
 * not: write, hold SQL of the hot statements beyond sending the ready page, or decide readiness
 * (claimableSql.ts does).
 */
import type { Card, CardRow, ListStatus, ParsedParams, Result } from '../protocol';
import { isClaimable } from '../rules/claimable';
import { ofWords, withHolds } from './cardHolds';
import { anyWaitSql, claimableSql, deferredSql, pausedSql } from './claimableSql';
import { textCondition } from './counts';
import { withWaitsOn } from './dependencies';
import {
	afterInClaimOrder,
	afterInRecentOrder,
	decodeCursor,
	decodeRecentCursor,
	type ListOrder,
	page,
	pageOf,
	recentPageOf,
	recentRowPageOf,
	rowPage,
	rowPageOf,
} from './paging';
import type { OpContext, UnitOfWork } from './unitOfWork';

/** At most this many list page texts are prepared (pageName). */
const maxPageNames = 64;

/** A page's statement: its text, parameters and prepared name (PGlite), and the order its cursor is in. */
interface PageQuery {
	text: string;
	params: unknown[];
	name: string | undefined;
	order: ListOrder;
	/** The answer carries waitsOn (not on the ready page: its cards wait on nothing). */
	waitsOn: boolean;
}

export class CardList {
	/** List page texts prepared on PGlite, by text (pageName). */
	private readonly pageNames = new Map<string, string>();

	constructor(private readonly uow: UnitOfWork) {}

	async list(_ctx: OpContext, p: ParsedParams<'card/list'>): Promise<Result<'card/list'>> {
		const q = this.query(p, false);
		const result = await this.held(
			p,
			page(await this.uow.db.query<{ card: Card | null }>(q.text, q.params, q.name), p.limit ?? 50, q.order),
		);
		return q.waitsOn ? withWaitsOn(this.uow.db, result) : result;
	}

	/** card/listRows: list's page, each card as its row (protocol CardRow). */
	async listRows(_ctx: OpContext, p: ParsedParams<'card/listRows'>): Promise<Result<'card/listRows'>> {
		const q = this.query(p, true);
		const rows = await this.uow.db.query<{ card: CardRow; at: string }>(q.text, q.params, q.name);
		const result = await this.held(p, rowPage(rows, p.limit ?? 50, q.order));
		return q.waitsOn ? withWaitsOn(this.uow.db, result) : result;
	}

	/**
	 * The page's ready cards with what holds them back (cardHolds.ts), and of a page filtered by words
	 * or to claimable cards, only the cards those name (the cursor still follows the page as read).
	 */
	private async held<R extends Result<'card/list'> | Result<'card/listRows'>>(
		p: ParsedParams<'card/list'>,
		result: R,
	): Promise<R> {
		const now = this.uow.clock.now();
		let cards = await withHolds<R['cards'][number]>(this.uow.db, result.cards);
		const words = wordsOf(p.status);
		if (words.some(w => w === 'ready' || w === 'waiting')) {
			cards = ofWords(cards, words, now);
		}
		if (p.readyOnly === true) {
			cards = cards.filter(c => isClaimable(c, now));
		}
		return { ...result, cards };
	}

	/** The statement of a page of cards, or of rows. */
	private query(p: ParsedParams<'card/list'>, rows: boolean): PageQuery {
		const now = this.uow.clock.now();
		const limit = p.limit ?? 50;
		const onlyReady =
			p.readyOnly === true &&
			p.status === undefined &&
			p.phase === undefined &&
			p.owner === undefined &&
			p.project === undefined &&
			p.text === undefined &&
			p.label === undefined &&
			p.parent === undefined &&
			p.order !== 'recent';
		if (onlyReady) {
			// The board's and agents' most common page: prepared, reading the claim index in claim order.
			const cursor = p.cursor === undefined ? null : decodeCursor(p.cursor);
			const sql = this.uow.catalogue.sql;
			const [first, next] = rows ? [sql.readyRows, sql.readyRowsAfter] : [sql.readyPage, sql.readyPageAfter];
			return {
				text: cursor === null ? first : next,
				params: cursor === null ? [now, limit + 1] : [now, limit + 1, ...cursor],
				name: `baton_ready_${rows ? 'rows' : 'page'}${cursor === null ? '' : '_after'}`,
				order: 'priority',
				waitsOn: false,
			};
		}
		const where: string[] = [];
		const params: unknown[] = [];
		const param = (v: unknown): string => {
			params.push(v);
			return `$${params.length}`;
		};
		const recent = p.order === 'recent';
		if (p.status !== undefined) {
			const words = wordsOf(p.status);
			const statuses = words.filter(w => w !== 'waiting' && w !== 'deferred' && w !== 'paused');
			const held = heldWordsSql(words, param, now);
			const stored =
				statuses.length === 0
					? undefined
					: recent && statuses.every(s => s === 'done')
						? // A constant, so the generic plan can read the partial cards_done_recent_idx (0014).
							`status = 'done'`
						: statuses.every(s => s === 'claimed' || s === 'blocked')
							? // Claimed and blocked cards are few by nature (one per working agent; those waiting for
								// a human) and have partial indexes, which only a constant lets PGlite's generic plans use
								// (plan_cache_mode): 65 ms -> 2-3 ms at 100k cards. Ready and done cards are the bulk,
								// which the order index serves whatever the statistics say, so they stay a parameter.
								`status IN (${statuses.map(s => (s === 'claimed' ? "'claimed'" : "'blocked'")).join(', ')})`
							: `status = ANY(${param(statuses)}::text[])`;
			const either = [stored, ...held].filter(x => x !== undefined);
			where.push(either.length === 1 ? (either[0] ?? 'true') : `(${either.join(' OR ')})`);
		}
		if (p.phase !== undefined) {
			where.push(`phase = ${param(p.phase)}`);
		}
		if (p.owner !== undefined) {
			where.push(`claim_owner = ${param(p.owner)}`);
		}
		if (p.project === null) {
			where.push('project IS NULL');
		} else if (p.project !== undefined && p.project !== '*') {
			where.push(`(project IS NULL OR project = ${param(p.project)})`);
		}
		if (p.parent !== undefined) {
			where.push(`parent = ${param(p.parent)}`);
		}
		if (p.label !== undefined) {
			where.push(`${param(p.label)}::text = ANY(labels)`);
		}
		if (p.readyOnly === true) {
			where.push(claimableSql(param(now)));
		}
		if (p.text !== undefined && p.text.trim() !== '') {
			where.push(textCondition(p.text));
		}
		if (recent) {
			if (p.cursor !== undefined) {
				const [updatedAt, id] = decodeRecentCursor(p.cursor);
				where.push(afterInRecentOrder(param(updatedAt), param(id)));
			}
			const text = (rows ? recentRowPageOf : recentPageOf)(
				where.length > 0 ? where.join(' AND ') : 'true',
				param(limit + 1),
			);
			return { text, params, name: this.pageName(text, p.text), order: 'recent', waitsOn: true };
		}
		if (p.cursor !== undefined) {
			const [priority, createdAt, id] = decodeCursor(p.cursor);
			const pr = param(priority);
			const at = param(createdAt);
			const ident = param(id);
			where.push(
				p.readyOnly === true
					? afterInClaimOrder(pr, at, ident)
					: `(priority < ${pr} OR (priority = ${pr} AND (created_at > ${at} OR (created_at = ${at} AND id > ${ident}))))`,
			);
		}
		const text = (rows ? rowPageOf : pageOf)(
			where.length > 0 ? where.join(' AND ') : 'true',
			param(limit + 1),
			p.readyOnly === true,
		);
		return { text, params, name: this.pageName(text, p.text), order: 'priority', waitsOn: true };
	}

	/**
	 * The prepared-statement name of a list page's text on PGlite: parsing and planning the
	 * page (baton_card inlines 46 fields) was half of a 50-card page's CPU; prepared once, each page is
	 * Bind/Execute. The text varies only with which filters are set, so the names are few; a text
	 * filter's pattern is a literal in the text (the planner reads it) and is never named, and past
	 * `maxPageNames` texts the rest run unnamed. PGlite plans every statement generically
	 * (plan_cache_mode), named or not, so naming changes no plan; PostgreSQL keeps its custom plans.
	 */
	private pageName(text: string, filter: string | undefined): string | undefined {
		if (this.uow.db.mode !== 'pglite' || filter !== undefined) {
			return undefined;
		}
		let name = this.pageNames.get(text);
		if (name === undefined && this.pageNames.size < maxPageNames) {
			name = `baton_list_${this.pageNames.size}`;
			this.pageNames.set(text, name);
		}
		return name;
	}
}

/** The words of a status filter, as a list. */
function wordsOf(status: ListStatus | ListStatus[] | undefined): ListStatus[] {
	return status === undefined ? [] : Array.isArray(status) ? status : [status];
}

/**
 * The SQL of the held words a status filter names (the claim guards' order: waiting, deferred, paused).
 * `waiting` also takes the scoped cards a live claim may hold files of; held() keeps those that wait.
 */
function heldWordsSql(words: readonly ListStatus[], param: (v: unknown) => string, now: Date): string[] {
	const out: string[] = [];
	if (words.includes('waiting')) {
		out.push(
			`((${anyWaitSql()}) OR (${claimableSql(param(now))} AND scope <> '{}' AND EXISTS (SELECT 1 FROM cards lv WHERE lv.status = 'claimed' AND (lv.scope <> '{}' OR lv.reserved <> '{}'))))`,
		);
	}
	if (words.includes('deferred')) {
		out.push(`(${deferredSql(param(now))})`);
	}
	if (words.includes('paused')) {
		out.push(`(${claimableSql(param(now))} AND EXISTS (SELECT 1 FROM pauses) AND ${pausedSql()})`);
	}
	return out;
}
