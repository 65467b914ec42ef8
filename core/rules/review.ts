/**
 * The review gate's rules, pure like core/rules/stateMachine.ts, which delegates to it: an agent's
 * complete of a card with review → `review`; approve → `done`; request changes → back to `ready`
 * with the note as the next attempt's hand-over (a failed attempt: past maxAttempts it parks in
 * `blocked`); an approval whose landing conflicts → back to `ready` with the conflict as
 * the hand-over (not a failed attempt); a completion that lands by itself (review none) but whose
 * landing failed → back to `ready` with why as the hand-over (a failed attempt); a reviewing agent's
 * claim of review work; whether a card's checks let a person approve it in bulk. No I/O and no clock
 * reads; who the reviewer is (a human, or an agent and its capabilities) is the caller's to say.
 */
import { BatonError } from '../errors';
import { checkChecksPassed, checksStarted } from './checks';
import { clip, noClaim, refuse } from './claim';
import { checkLease, isHeld, isLeaseExpired, leaseExpiry } from './lease';
import type { Action, CardPatch, CardState, Decision } from './cardState';

/** The capability an agent advertises to take review work (`claim {review: true}`). */
export const reviewCapability = 'review';

/** Who is reviewing: a human (VS Code, the board, the CLI) or an agent (an MCP session). */
export type Reviewer = 'human' | 'agent';

export type ReviewAction =
	| {
			type: 'approve' | 'requestChanges';
			actor: string;
			reviewer: Reviewer;
			note?: string | undefined;
			/** Refuse unless the card is at this version (the reviewer looked at it). */
			version?: number | undefined;
			/** A reviewing agent's lease epoch (from claim {review}). */
			epoch?: number | undefined;
			/** The reviewing connection's session: a review lease is its claiming session's. */
			session?: string | undefined;
			/** A person approves work they completed themselves, saying so (`baton approve --own-work`). */
			ownWork?: boolean | undefined;
	  }
	| {
			/**
			 * An approval whose landing conflicted with the base: allowed exactly when the
			 * approval was; the card goes back to ready with `handoff` (what to rebase on what, and the
			 * files), not counted as a failed attempt.
			 */
			type: 'landConflict';
			actor: string;
			reviewer: Reviewer;
			ownWork?: boolean | undefined;
			version?: number | undefined;
			epoch?: number | undefined;
			session?: string | undefined;
			handoff: string;
			files: readonly string[];
	  }
	| {
			/**
			 * The holder completed a card that lands by itself (review none, workspaces on) and landing its
			 * branch failed (a conflict, or a refusal: nothing to land, a checkout of the base mid-rebase…):
			 * the card goes back to ready with `handoff` (why, and the files), the branch kept.
			 */
			type: 'landFailed';
			actor: string;
			epoch?: number | undefined;
			session?: string | undefined;
			handoff: string;
			files: readonly string[];
	  }
	| {
			type: 'claimReview';
			actor: string;
			ttlSeconds: number;
			capabilities: readonly string[];
			session?: string | undefined;
	  };

/**
 * The holder's complete of a card that needs review: to `review`, the lease ended, the result kept.
 * With the project's `check`, its run starts in the same write (`checks` running), so no approval can
 * slip in before it; without one, an earlier run's outcome is dropped (it judged other work).
 */
export function submitForReview(
	card: CardState,
	actor: string,
	result: string | undefined,
	check?: string,
	now?: Date,
): Decision {
	return {
		patch: {
			status: 'review',
			...noClaim,
			result: result ?? null,
			completedBy: actor,
			handoff: null,
			blockedReason: null,
			deferUntil: null,
			...(check !== undefined && now !== undefined
				? { checks: checksStarted(check, now) }
				: card.checks != null
					? { checks: null }
					: {}),
		},
		event: 'review_requested',
		data: { ...(result !== undefined ? { result } : {}), review: card.review },
	};
}

export function decideReview(card: CardState, action: ReviewAction, now: Date): Decision {
	if (action.type === 'claimReview') {
		return claimReview(card, action, now);
	}
	if (action.type === 'landConflict') {
		return landConflict(card, action, now);
	}
	if (action.type === 'landFailed') {
		return landFailed(card, action, now);
	}
	checkReviewable(card, action, now);
	const held = isHeld(card);
	const fence = held ? { claimEpoch: card.claimEpoch + 1 } : {};
	const previous =
		held && card.claimOwner !== action.actor
			? { previousOwner: card.claimOwner ?? undefined, previousEpoch: card.claimEpoch }
			: {};
	const note = action.note?.trim() ?? '';
	if (action.type === 'approve') {
		return {
			patch: { status: 'done', ...noClaim, handoff: null, ...fence },
			event: 'approved',
			data: {
				...(note !== '' ? { note } : {}),
				...previous,
				...(action.ownWork === true && card.completedBy === action.actor ? { ownWork: true } : {}),
			},
		};
	}
	if (note === '') {
		throw new BatonError(
			'invalid_input',
			`Requesting changes on card ${card.id} needs a note: say what to change. The next attempt starts from it.`,
			{ cardId: card.id, field: 'note' },
		);
	}
	// A failed attempt: the agent's claim already counted it; past maxAttempts the card parks.
	const parked = card.attempts >= card.maxAttempts;
	const patch: CardPatch = {
		status: parked ? 'blocked' : 'ready',
		...noClaim,
		result: null,
		completedBy: null,
		handoff: note,
		deferUntil: null,
		...fence,
		...(parked
			? {
					blockedReason: clip(`changes requested after ${card.attempts} of ${card.maxAttempts} attempts: ${note}`),
					failed: true,
				}
			: {}),
	};
	return {
		patch,
		event: 'changes_requested',
		data: {
			note,
			reason: note,
			...(card.completedBy !== null ? { previousOwner: card.completedBy } : {}),
			...previous,
		},
	};
}

/** The landing conflicted: back to ready with the conflict as the hand-over, the review lease ended. */
function landConflict(card: CardState, action: Extract<ReviewAction, { type: 'landConflict' }>, now: Date): Decision {
	checkReviewable(card, { ...action, type: 'approve' }, now);
	const held = isHeld(card);
	return {
		// Not a failed attempt: the work was approved, the base moved under it. So it never parks.
		patch: {
			status: 'ready',
			...noClaim,
			result: null,
			completedBy: null,
			handoff: clip(action.handoff),
			deferUntil: null,
			...(held ? { claimEpoch: card.claimEpoch + 1 } : {}),
		},
		event: 'land_conflicted',
		data: {
			reason: action.handoff,
			files: [...action.files],
			...(card.completedBy !== null ? { previousOwner: card.completedBy } : {}),
			...(held && card.claimOwner !== action.actor
				? { previousOwner: card.claimOwner ?? undefined, previousEpoch: card.claimEpoch }
				: {}),
		},
	};
}

/**
 * The holder's completion did not land: back to ready with why as the hand-over, the lease ended. A
 * failed attempt (unlike an approval's conflict), so a card that can never land (an agent that changes
 * nothing, a conflict no agent resolves) parks in blocked after maxAttempts instead of cycling forever.
 */
function landFailed(card: CardState, action: Extract<ReviewAction, { type: 'landFailed' }>, now: Date): Decision {
	if (card.status !== 'claimed') {
		refuse(card, 'completed', 'Only its holder completes a claimed card.');
	}
	checkLease(card, action.actor, action.epoch, now, 'complete', action.session);
	const handoff = clip(action.handoff);
	const data = { reason: action.handoff, files: [...action.files] };
	if (card.attempts < card.maxAttempts) {
		return {
			patch: { status: 'ready', ...noClaim, result: null, handoff, deferUntil: null },
			event: 'land_conflicted',
			data,
		};
	}
	return {
		patch: {
			status: 'blocked',
			...noClaim,
			result: null,
			handoff,
			blockedReason: clip(`failed ${card.attempts} of ${card.maxAttempts} attempts; last: ${action.handoff}`),
			failed: true,
		},
		event: 'land_conflicted',
		data,
	};
}

/**
 * Whether a card's checks let a person approve it with the others (`baton approve --all-passing`): it
 * passes when its project runs no check (no `checks` record) or its last check passed. Takes any card
 * shape, so a card without the field reads as one without a check.
 */
export function passesChecks(card: { id: string; checks?: { state: string } | null | undefined }): boolean {
	return card.checks == null || card.checks.state === 'passed';
}

/** Throws unless `action`'s reviewer may approve or request changes on `card` now. */
function checkReviewable(
	card: CardState,
	action: Omit<Extract<ReviewAction, { type: 'approve' | 'requestChanges' }>, 'note'>,
	now: Date,
): void {
	const verb = action.type === 'approve' ? 'approved' : 'sent back with changes';
	if (card.status !== 'review') {
		throw new BatonError(
			'invalid_transition',
			`Card ${card.id} is ${card.status}, not in review, so it cannot be ${verb}. Only a card whose agent completed it under review waits for one.`,
			{ cardId: card.id, status: card.status },
		);
	}
	// A person may approve work they completed (they resolved a conflict themselves, say), saying so; an
	// agent never reviews its own.
	const ownWork = action.type === 'approve' && action.ownWork === true && action.reviewer === 'human';
	if (card.completedBy === action.actor && !ownWork) {
		throw new BatonError(
			'conflict',
			action.reviewer === 'human' && action.type === 'approve'
				? `You completed card ${card.id}, so approving it approves your own work: another person or an agent reviewer can, or approve it yourself saying so with \`baton approve ${card.id} --own-work\` (recorded in its history).`
				: `You completed card ${card.id}, so you cannot review it; another agent or a human must.`,
			{ cardId: card.id, completedBy: card.completedBy },
		);
	}
	if (action.type === 'approve') {
		checkChecksPassed(card, 'approved');
	}
	if (action.version !== undefined && action.version !== card.version) {
		throw new BatonError(
			'conflict',
			`Card ${card.id} changed since you looked (it is at version ${card.version}, you reviewed version ${action.version}); show it again and review what it is now.`,
			{ cardId: card.id, version: card.version, yourVersion: action.version },
		);
	}
	if (action.reviewer === 'agent') {
		if (card.review !== 'agent') {
			throw new BatonError(
				'invalid_transition',
				`Card ${card.id} waits for a human's review; an agent cannot ${action.type === 'approve' ? 'approve it' : 'send it back'}. Ask a person to run \`baton ${action.type === 'approve' ? 'approve' : 'reject'} ${card.id}\` from their own terminal, VS Code or the board.`,
				{ cardId: card.id, review: card.review },
			);
		}
		if (card.claimOwner !== action.actor) {
			throw new BatonError(
				'invalid_transition',
				`You do not hold the review of card ${card.id}. Take review work with claim {review: true} (your session needs the capability '${reviewCapability}'), then review the card it gives you.`,
				{ cardId: card.id, holder: card.claimOwner },
			);
		}
		checkLease(card, action.actor, action.epoch, now, 'review', action.session);
	}
}

function claimReview(card: CardState, action: Extract<ReviewAction, { type: 'claimReview' }>, now: Date): Decision {
	checkReviewClaimable(card, action.actor, action.capabilities, now);
	return {
		patch: {
			claimOwner: action.actor,
			claimSession: action.session ?? null,
			claimedAt: now,
			leaseExpiresAt: leaseExpiry(now, action.ttlSeconds),
			leaseTtlSeconds: action.ttlSeconds,
			claimEpoch: card.claimEpoch + 1,
			progress: null,
			progressNote: null,
			progressAt: now,
		},
		event: 'claimed',
		data: { epoch: card.claimEpoch + 1, review: true },
	};
}

/** Throws unless `actor` (with `capabilities`) may take the review of `card` now. */
export function checkReviewClaimable(card: CardState, actor: string, capabilities: readonly string[], now: Date): void {
	checkReviewCapability(capabilities);
	if (card.status !== 'review' || card.review !== 'agent') {
		throw new BatonError(
			'invalid_transition',
			card.status === 'review'
				? `Card ${card.id} waits for a human's review, not an agent's.`
				: `Card ${card.id} is ${card.status}, not in review; claim it without review: true to work on it.`,
			{ cardId: card.id, status: card.status, review: card.review },
		);
	}
	if (card.completedBy === actor) {
		throw new BatonError('conflict', `You completed card ${card.id}, so you cannot review it; another agent must.`, {
			cardId: card.id,
			completedBy: card.completedBy,
		});
	}
	checkChecksPassed(card, 'reviewed');
	if (card.claimOwner !== null && !isLeaseExpired(card, now)) {
		throw new BatonError(
			'conflict',
			`Agent ${card.claimOwner} is reviewing card ${card.id} (epoch ${card.claimEpoch}); claim other review work.`,
			{ cardId: card.id, holder: card.claimOwner, epoch: card.claimEpoch },
		);
	}
}

/** Review work needs the `review` capability (the MCP server passes the session's). */
export function checkReviewCapability(capabilities: readonly string[]): void {
	if (!capabilities.includes(reviewCapability)) {
		throw new BatonError(
			'invalid_input',
			`Review work needs the capability '${reviewCapability}', and this session does not advertise it. Start the agent with it (baton mcp --capabilities ${reviewCapability}, or BATON_CAPABILITIES) or pass capabilities: ["${reviewCapability}"].`,
			{ missing: [reviewCapability] },
		);
	}
}

/** A reviewing agent's lease ends (reclaimed, or its session closed): the card stays in review, free. */
export function reviewLeaseEnded(card: CardState, event: 'reclaimed' | 'released', reason: string): Decision {
	return {
		patch: { ...noClaim, claimEpoch: card.claimEpoch + 1 },
		event,
		data: { reason, previousOwner: card.claimOwner ?? undefined, previousEpoch: card.claimEpoch, review: true },
	};
}

/** The reviewer hands the review back (release), or a human takes it away (release with force). */
export function endReviewLease(card: CardState, action: Extract<Action, { type: 'release' }>, now: Date): Decision {
	if (action.force === true) {
		if (!isHeld(card)) {
			refuse(card, 'released', 'Nobody is reviewing it.');
		}
		return reviewLeaseEnded(card, 'released', action.reason ?? `released by ${action.actor}`);
	}
	checkLease(card, action.actor, action.epoch, now, 'release', action.session);
	return {
		patch: { ...noClaim },
		event: 'released',
		data: { ...(action.reason !== undefined ? { reason: action.reason } : {}), review: true },
	};
}
