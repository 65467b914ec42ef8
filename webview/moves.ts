/**
 * What a drop (or a keyboard move) of a card onto a column means: the one legal hub request, what
 * to ask the human first, and the optimistic look of the card; or a refusal that says why. Also the
 * priority a card gets when it is dropped between two others in Ready. Moves from and to In review
 * are reviewMoves.ts's. Pure: no DOM, no transport.
 */
import { cardHold } from '../core/rules/claimGuards';
import { isDeferred, isWaiting } from '../core/rules/claimable';
import { isLeaseExpired } from '../core/rules/lease';
import { type Card, type Method, type Params, limits } from '../core/protocol';
import { type ColumnId, columnOf, columnTitles } from './columns';
import { completionStatus, planReviewMove } from './reviewMoves';

/** The request a move performs, typed by method. */
export type MoveRequest =
	| { method: 'card/claim'; params: Params<'card/claim'> }
	| { method: 'card/complete'; params: Params<'card/complete'> }
	| { method: 'card/block'; params: Params<'card/block'> }
	| { method: 'card/release'; params: Params<'card/release'> }
	| { method: 'card/reclaim'; params: Params<'card/reclaim'> }
	| { method: 'card/unblock'; params: Params<'card/unblock'> }
	| { method: 'card/reopen'; params: Params<'card/reopen'> }
	| { method: 'card/update'; params: Params<'card/update'> }
	| { method: 'card/review'; params: Params<'card/review'> };

export type MovePlan =
	| { kind: 'none' }
	| { kind: 'refuse'; reason: string }
	| {
			kind: 'request';
			/** Human-readable description, e.g. "Claim A4 as you". */
			label: string;
			request: MoveRequest;
			/** Ask for confirmation with this text before sending. */
			confirm?: string;
			/**
			 * Ask for a reason (block) or a note (request changes) before sending, with this prompt; the
			 * answer goes into the request (`withAnswer`). Cancelling sends nothing.
			 */
			askReason?: string;
			/** The button that sends the answer (default "Block"). */
			askConfirm?: string;
			/** The longest answer the hub takes (default limits.reasonLength). */
			askMaxLength?: number;
			/** How the card looks until the hub answers. */
			optimistic: Partial<Card>;
	  };

export interface MoveContext {
	/** Our actor id (HelloOk.actor). */
	actor: string | undefined;
	nowMs: number;
	/** Titles of the dependencies the card still waits on (for the refusal text). */
	waitingOn: readonly string[];
}

function holder(card: Card): string {
	return card.claimOwner ?? 'nobody';
}

/** Decides what dropping `card` on column `to` does. */
export function planMove(card: Card, to: ColumnId, ctx: MoveContext): MovePlan {
	const from = columnOf(card.status);
	if (from === to) {
		return { kind: 'none' };
	}
	const review = planReviewMove(card, to, ctx);
	if (review !== undefined) {
		return review;
	}
	const mine = card.claimOwner !== null && card.claimOwner === ctx.actor;
	const leaseOver = isLeaseExpired(card, ctx.nowMs);
	const id = card.id;
	switch (`${from}>${to}`) {
		case 'ready>inProgress': {
			if (isWaiting(card)) {
				const list = ctx.waitingOn.length > 0 ? ctx.waitingOn.join(', ') : `${card.unmetDeps} dependencies`;
				return { kind: 'refuse', reason: `${id} waits on ${list}; it can be claimed once they are done.` };
			}
			if (card.deferUntil !== null && isDeferred(card, ctx.nowMs)) {
				return {
					kind: 'refuse',
					reason: `${id} is deferred until ${new Date(card.deferUntil).toLocaleString()} (retry backoff); claim it after that.`,
				};
			}
			// The other claim guards a card carries (open children, a waiting ancestor, a pause, files held).
			const hold = cardHold(card, ctx.nowMs);
			if (hold !== undefined) {
				return { kind: 'refuse', reason: hold.refusal(card) };
			}
			return {
				kind: 'request',
				label: `Claim ${id} as you`,
				request: { method: 'card/claim', params: { cardId: id } },
				optimistic: { status: 'claimed', claimOwner: ctx.actor ?? 'you', claimedAt: new Date(ctx.nowMs).toISOString() },
			};
		}
		case 'ready>blocked':
			return {
				kind: 'request',
				label: `Block ${id}`,
				request: { method: 'card/block', params: { cardId: id, reason: '' } },
				askReason: `Why is ${id} blocked?`,
				optimistic: { status: 'blocked' },
			};
		case 'inProgress>done': {
			// The holder's own completion of a card that needs review goes to In review; a forced one skips it.
			const lands = completionStatus(card, !mine);
			const skips = !mine && completionStatus(card, false) === 'review' ? ' It skips the review.' : '';
			return {
				kind: 'request',
				label: mine
					? lands === 'review'
						? `Submit ${id} for review`
						: `Complete ${id}`
					: `Complete ${id} for ${holder(card)}`,
				request: { method: 'card/complete', params: mine ? { cardId: id } : { cardId: id, force: true } },
				...(mine
					? {}
					: {
							confirm: `${id} is held by ${holder(card)}. Mark it done anyway? The agent's lease is ended and its later writes are refused.${skips}`,
						}),
				optimistic: {
					status: lands,
					claimOwner: null,
					leaseExpiresAt: null,
					...(lands === 'review' ? { completedBy: ctx.actor ?? null } : {}),
				},
			};
		}
		case 'inProgress>blocked':
			return {
				kind: 'request',
				label: `Block ${id}`,
				request: { method: 'card/block', params: { cardId: id, reason: '' } },
				askReason: mine
					? `Why is ${id} blocked? Your claim on it is released.`
					: `Why is ${id} blocked? This takes it from ${holder(card)}.`,
				optimistic: { status: 'blocked', claimOwner: null, leaseExpiresAt: null },
			};
		case 'inProgress>ready': {
			const optimistic: Partial<Card> = { status: 'ready', claimOwner: null, leaseExpiresAt: null, claimedAt: null };
			if (mine) {
				return {
					kind: 'request',
					label: `Release ${id}`,
					request: { method: 'card/release', params: { cardId: id } },
					optimistic,
				};
			}
			return {
				kind: 'request',
				label: `Reclaim ${id} from ${holder(card)}`,
				request: { method: 'card/reclaim', params: { cardId: id, reason: 'moved back to Ready on the board' } },
				...(leaseOver
					? {}
					: {
							confirm: `${id} is held by ${holder(card)} and its lease is still running. Take it back to Ready? The agent's later writes are refused.`,
						}),
				optimistic,
			};
		}
		case 'blocked>ready':
			return {
				kind: 'request',
				label: `Unblock ${id}`,
				request: { method: 'card/unblock', params: { cardId: id } },
				optimistic: { status: 'ready', blockedReason: null },
			};
		case 'done>ready':
			return {
				kind: 'request',
				label: `Reopen ${id}`,
				request: { method: 'card/reopen', params: { cardId: id, reason: 'reopened on the board' } },
				optimistic: { status: 'ready' },
			};
		case 'ready>done':
			return {
				kind: 'refuse',
				reason: `${id} is not in progress: only a claimed card can be completed. Move it to In progress first.`,
			};
		case 'blocked>inProgress':
		case 'blocked>done':
			return {
				kind: 'refuse',
				reason: `${id} is blocked${card.blockedReason === null ? '' : ` (${card.blockedReason})`}: move it back to Ready to unblock it first.`,
			};
		case 'done>inProgress':
		case 'done>blocked':
			return {
				kind: 'refuse',
				reason: `${id} is done: move it back to Ready to reopen it first.`,
			};
		default:
			return { kind: 'refuse', reason: `${id} cannot move from ${columnTitles[from]} to ${columnTitles[to]}.` };
	}
}

const minPriority = -1_000_000;
const maxPriority = 1_000_000;

/** Ready order (priority desc, then older first): same as columns.ts's columnOrder.ready. */
function before(a: { priority: number; createdAt: string; id: string }, b: Card): boolean {
	if (a.priority !== b.priority) {
		return a.priority > b.priority;
	}
	if (a.createdAt !== b.createdAt) {
		return a.createdAt < b.createdAt;
	}
	return a.id < b.id;
}

/**
 * The priority that puts `card` at `index` of the Ready list `list` (which may contain `card`;
 * index counts positions in the list without it). Returns undefined when the card already sits
 * there. When no priority fits exactly (neighbours with equal priority and the wrong age order) it
 * returns the closest one, so the card lands next to the chosen spot.
 */
export function priorityForDrop(list: readonly Card[], card: Card, index: number): number | undefined {
	const others = list.filter(c => c.id !== card.id);
	const at = Math.max(0, Math.min(index, others.length));
	const above = others[at - 1];
	const below = others[at];
	const current = list.findIndex(c => c.id === card.id);
	if (current >= 0 && current === at) {
		return undefined;
	}
	const fits = (p: number): boolean => {
		const probe = { priority: p, createdAt: card.createdAt, id: card.id };
		return (
			(above === undefined || before(above, { ...card, ...probe })) && (below === undefined || before(probe, below))
		);
	};
	let p: number;
	if (above === undefined) {
		if (below === undefined) {
			return undefined;
		}
		p = below.priority + 1;
	} else if (below === undefined) {
		p = above.priority - 1;
	} else if (above.priority - below.priority >= 2) {
		p = Math.floor((above.priority + below.priority) / 2);
	} else if (fits(above.priority)) {
		p = above.priority;
	} else if (fits(below.priority)) {
		p = below.priority;
	} else {
		p = above.priority;
	}
	return Math.max(minPriority, Math.min(maxPriority, p));
}

/** The update request for a priority change. */
export function priorityRequest(card: Card, priority: number): MoveRequest {
	return { method: 'card/update', params: { cardId: card.id, priority } };
}

/** Methods a move can send (for typing the dispatcher). */
export type MoveMethod = MoveRequest['method'] & Method;

/** The request with the human's answer to `askReason` in it: a block's reason, a review's note. */
export function withAnswer(request: MoveRequest, answer: string): MoveRequest {
	switch (request.method) {
		case 'card/block':
			return { method: 'card/block', params: { ...request.params, reason: answer } };
		case 'card/review':
			return { method: 'card/review', params: { ...request.params, note: answer } };
		default:
			return request;
	}
}

/** Trims and bounds a reason typed by the human; undefined when empty. */
export function cleanReason(text: string): string | undefined {
	const t = text.trim();
	return t === '' ? undefined : t.slice(0, limits.reasonLength);
}
