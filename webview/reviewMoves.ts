/**
 * The review gate on the board: what a drop onto or out of In review means. From In
 * review, Done approves and Ready requests changes (after asking the note); a human may review any
 * card except one they completed. Into In review, only the holder's own completion of a card that
 * needs review leads; everything else is refused with the reason. Also which column a keyboard move
 * lands on, so In review is reachable and passable from the keyboard. Pure: no DOM, no transport;
 * the hub still decides (a stale version or a card that moved on is refused there).
 */
import { isLeaseExpired } from '../core/rules/lease';
import { type Card, limits } from '../core/protocol';
import { type ColumnId, columnIds, columnOf, columnTitles } from './columns';
import type { MoveContext, MovePlan } from './moves';

const needsReview = (card: Card): boolean => (card.review ?? 'none') !== 'none';

/** The plan for a move from or to In review; undefined when neither end is In review. */
export function planReviewMove(card: Card, to: ColumnId, ctx: MoveContext): MovePlan | undefined {
	const from = columnOf(card.status);
	if (from === 'review') {
		return planFromReview(card, to, ctx);
	}
	if (to === 'review') {
		return planToReview(card, ctx);
	}
	return undefined;
}

function planFromReview(card: Card, to: ColumnId, ctx: MoveContext): MovePlan {
	const id = card.id;
	if (to !== 'done' && to !== 'ready') {
		return {
			kind: 'refuse',
			reason: `${id} is in review: approve it (move it to Done) or request changes (move it to Ready) first.`,
		};
	}
	if (card.completedBy !== null && card.completedBy !== undefined && card.completedBy === ctx.actor) {
		return {
			kind: 'refuse',
			reason: `You completed ${id}, so you cannot review it here: another agent or a human must, or approve your own work saying so with \`baton approve ${id} --own-work\`.`,
		};
	}
	const reviewer = card.claimOwner !== null && !isLeaseExpired(card, ctx.nowMs) ? card.claimOwner : undefined;
	const takesOver = reviewer === undefined ? '' : ` ${reviewer} is reviewing it; its review ends.`;
	if (to === 'done') {
		return {
			kind: 'request',
			label: `Approve ${id}`,
			request: { method: 'card/review', params: { cardId: id, approve: true, version: card.version } },
			...(reviewer === undefined
				? {}
				: { confirm: `${reviewer} is reviewing ${id}. Approve it yourself? The agent's review ends.` }),
			optimistic: { status: 'done', claimOwner: null, leaseExpiresAt: null, claimedAt: null },
		};
	}
	const parks = card.attempts >= card.maxAttempts;
	return {
		kind: 'request',
		label: `Request changes on ${id}`,
		request: { method: 'card/review', params: { cardId: id, approve: false, note: '', version: card.version } },
		askReason:
			`What should change in ${id}? The next attempt starts from your note.${takesOver}` +
			(parks ? ` It has used all ${card.maxAttempts} attempts, so it parks in Blocked.` : ''),
		askConfirm: 'Request changes',
		askMaxLength: limits.noteLength,
		optimistic: {
			status: parks ? 'blocked' : 'ready',
			claimOwner: null,
			leaseExpiresAt: null,
			claimedAt: null,
			completedBy: null,
		},
	};
}

function planToReview(card: Card, ctx: MoveContext): MovePlan {
	const id = card.id;
	if (card.status !== 'claimed') {
		return {
			kind: 'refuse',
			reason: `${id} is ${columnTitles[columnOf(card.status)].toLowerCase()}: a card comes to In review when the agent working on it completes it.`,
		};
	}
	if (card.claimOwner !== ctx.actor) {
		return {
			kind: 'refuse',
			reason: `${id} is held by ${card.claimOwner ?? 'nobody'}: it comes to In review when that agent completes it.`,
		};
	}
	if (!needsReview(card)) {
		return {
			kind: 'refuse',
			reason: `${id} needs no review (review: none): move it to Done to complete it, or edit it to ask for a review.`,
		};
	}
	return {
		kind: 'request',
		label: `Submit ${id} for review`,
		request: { method: 'card/complete', params: { cardId: id } },
		optimistic: { status: 'review', claimOwner: null, leaseExpiresAt: null, completedBy: ctx.actor },
	};
}

/** How a completion by the card's own holder lands: in review when the card needs one. */
export function completionStatus(card: Card, forced: boolean): 'review' | 'done' {
	return !forced && needsReview(card) ? 'review' : 'done';
}

/**
 * The column a keyboard move (Ctrl+Shift+→ / ←) of `card` goes to. From In review, → approves
 * (Done) and ← requests changes (Ready); a move would pass over In review unless the card can land
 * there (its holder submitting it), so → from In progress still blocks a card that needs no review.
 */
export function keyboardTarget(card: Card, step: 1 | -1, ctx: MoveContext): ColumnId | undefined {
	const from = columnOf(card.status);
	if (from === 'review') {
		return step === 1 ? 'done' : 'ready';
	}
	const next = columnIds[columnIds.indexOf(from) + step];
	if (next === 'review' && planToReview(card, ctx).kind === 'refuse') {
		return columnIds[columnIds.indexOf(from) + 2 * step];
	}
	return next;
}
