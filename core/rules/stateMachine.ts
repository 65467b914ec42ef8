/**
 * The card state machine, pure: given a card as it is, an action and `now`, decide whether
 * the action is legal and return the patch to apply and the event to log. No I/O and no clock reads;
 * Backlog applies the patch and appends the event in one transaction.
 */
import { describeCycle } from './dag';
import { BatonError } from '../errors';
import { checkLease, isHeld, leaseExpiry } from './lease';
import { type Action, type CardPatch, type CardState, type Decision, backoffDelaySeconds } from './cardState';
import { checkClaimable, clip, noClaim, refuse } from './claim';
import { checksFinished } from './checks';
import { decideReview, endReviewLease, reviewLeaseEnded, submitForReview } from './review';

export type { Action, BackoffPolicy, CardPatch, CardState, Decision } from './cardState';
export { backoffDelaySeconds } from './cardState';

/** Decides a state-changing action on one card. Throws BatonError when it is not legal now. */
export function decide(card: CardState, action: Action, now: Date): Decision {
	switch (action.type) {
		case 'claim': {
			checkClaimable(card, action.actor, null, now);
			return {
				patch: {
					status: 'claimed',
					claimOwner: action.actor,
					claimSession: action.session ?? null,
					claimedAt: now,
					leaseExpiresAt: leaseExpiry(now, action.ttlSeconds),
					leaseTtlSeconds: action.ttlSeconds,
					claimEpoch: card.claimEpoch + 1,
					attempts: card.attempts + 1,
					progress: null,
					progressNote: null,
					progressAt: now,
					deferUntil: null,
				},
				event: 'claimed',
				data: { epoch: card.claimEpoch + 1 },
			};
		}
		case 'heartbeat': {
			checkLease(card, action.actor, action.epoch, now, 'heartbeat', action.session);
			const patch: CardPatch = {
				leaseExpiresAt: leaseExpiry(now, action.ttlSeconds),
				leaseTtlSeconds: action.ttlSeconds,
			};
			const progressChanged = action.progress !== undefined && action.progress !== card.progress;
			const noteChanged = action.note !== undefined && action.note !== card.progressNote;
			if (action.progress !== undefined || action.note !== undefined) {
				// Reporting progress (even unchanged) shows the holder is working: it resets "stalled".
				patch.progressAt = now;
			}
			if (progressChanged) {
				patch.progress = action.progress ?? null;
			}
			if (noteChanged) {
				patch.progressNote = action.note ?? null;
			}
			// Heartbeat events are logged for progress changes only, not for lease renewals, which would flood the log.
			return { patch, event: progressChanged || noteChanged ? 'heartbeat' : null, data: {} };
		}
		case 'complete': {
			if (card.status === 'review') {
				refuse(card, 'completed', 'Approve it or request changes (review) instead.');
			}
			const forced = forcedOverride(card, action, now, 'completed');
			// The DAG invariant: never done while a dependency is not (link and reopen keep claimed cards at 0).
			checkDepsDone(card);
			if (action.force !== true && card.review !== 'none') {
				return submitForReview(card, action.actor, action.result, action.check, now);
			}
			return {
				patch: {
					status: 'done',
					...noClaim,
					result: action.result ?? null,
					blockedReason: null,
					deferUntil: null,
					...(forced.bump ? { claimEpoch: card.claimEpoch + 1 } : {}),
				},
				event: 'completed',
				data: { ...(action.result !== undefined ? { result: action.result } : {}), ...forced.data },
			};
		}
		case 'release': {
			if (card.status === 'review') {
				return endReviewLease(card, action, now);
			}
			const forced = forcedOverride(card, action, now, 'released');
			return {
				// Handing a card back is not a failed attempt: the claim's attempt is given back.
				patch: {
					status: 'ready',
					...noClaim,
					attempts: Math.max(card.attempts - 1, 0),
					...(forced.bump ? { claimEpoch: card.claimEpoch + 1 } : {}),
				},
				event: 'released',
				data: { ...(action.reason !== undefined ? { reason: action.reason } : {}), ...forced.data },
			};
		}
		case 'fail': {
			if (card.status === 'review') {
				refuse(card, 'failed', 'A reviewer approves it or requests changes (review), or releases the review.');
			}
			checkLease(card, action.actor, action.epoch, now, 'fail', action.session);
			const retry = action.retry ?? true;
			if (retry && card.attempts < card.maxAttempts) {
				const backoff = action.backoffSeconds ?? backoffDelaySeconds(action.backoff, card.attempts);
				return {
					patch: {
						status: 'ready',
						...noClaim,
						deferUntil: backoff > 0 ? new Date(now.getTime() + backoff * 1000) : null,
					},
					event: 'failed',
					data: { reason: action.reason, retry: true, ...(backoff > 0 ? { backoffSeconds: backoff } : {}) },
				};
			}
			const earlier = (action.earlierReasons ?? []).slice(0, 4);
			const why = retry
				? `failed ${card.attempts} of ${card.maxAttempts} attempts; last: ${action.reason}` +
					(earlier.length > 0 ? `; before: ${earlier.join('; ')}` : '')
				: action.reason;
			return {
				patch: { status: 'blocked', ...noClaim, blockedReason: clip(why), failed: true },
				event: 'failed',
				data: { reason: action.reason, retry: false },
			};
		}
		case 'reclaim': {
			if (card.status === 'review' && isHeld(card)) {
				return reviewLeaseEnded(card, 'reclaimed', action.reason);
			}
			if (card.status !== 'claimed') {
				refuse(card, 'reclaimed', 'Only a claimed card can be reclaimed.');
			}
			// epoch++ in the same update that frees the card, so a late write from the old holder fails.
			const parked = card.attempts >= card.maxAttempts;
			return {
				patch: {
					status: parked ? 'blocked' : 'ready',
					...noClaim,
					claimEpoch: card.claimEpoch + 1,
					...(parked
						? {
								blockedReason: `reclaimed after ${card.attempts} of ${card.maxAttempts} attempts: ${action.reason}`,
								failed: true,
							}
						: {}),
				},
				event: 'reclaimed',
				data: {
					reason: action.reason,
					previousOwner: card.claimOwner ?? undefined,
					previousEpoch: card.claimEpoch,
				},
			};
		}
		case 'disconnect': {
			if (card.status === 'review' && isHeld(card)) {
				return reviewLeaseEnded(card, 'released', action.reason);
			}
			if (card.status !== 'claimed') {
				refuse(card, 'released', 'Only a claimed card can be released.');
			}
			return {
				patch: { status: 'ready', ...noClaim, claimEpoch: card.claimEpoch + 1 },
				event: 'released',
				data: { reason: action.reason, previousOwner: card.claimOwner ?? undefined, previousEpoch: card.claimEpoch },
			};
		}
		case 'block': {
			if (card.status !== 'ready' && card.status !== 'claimed') {
				refuse(
					card,
					'blocked',
					card.status === 'done'
						? 'Reopen it first.'
						: card.status === 'review'
							? 'Approve it or request changes first.'
							: 'It is already blocked.',
				);
			}
			const held = card.status === 'claimed';
			return {
				patch: {
					status: 'blocked',
					...noClaim,
					blockedReason: action.reason,
					failed: false,
					...(held ? { claimEpoch: card.claimEpoch + 1 } : {}),
				},
				event: 'blocked',
				data: {
					reason: action.reason,
					...(held ? { previousOwner: card.claimOwner ?? undefined, previousEpoch: card.claimEpoch } : {}),
				},
			};
		}
		case 'unblock': {
			if (card.status !== 'blocked') {
				refuse(card, 'unblocked', 'Only a blocked card can be unblocked.');
			}
			// A fresh attempt budget: parking at maxAttempts is what brought most cards here.
			return {
				patch: { status: 'ready', blockedReason: null, failed: false, attempts: 0, deferUntil: null },
				event: 'unblocked',
				data: {},
			};
		}
		case 'reopen': {
			if (card.status !== 'done') {
				refuse(card, 'reopened', 'Only a done card can be reopened.');
			}
			return {
				patch: {
					status: 'ready',
					result: null,
					failed: false,
					attempts: 0,
					deferUntil: null,
					progress: null,
					progressNote: null,
				},
				event: 'reopened',
				data: action.reason !== undefined ? { reason: action.reason } : {},
			};
		}
		case 'requeue': {
			if (card.status !== 'claimed') {
				refuse(card, 'requeued', 'Only a claimed card can lose its claim.');
			}
			return {
				patch: {
					status: 'ready',
					...noClaim,
					claimEpoch: card.claimEpoch + 1,
					attempts: Math.max(card.attempts - 1, 0),
				},
				event: 'released',
				data: {
					reason: action.reason,
					previousOwner: card.claimOwner ?? undefined,
					previousEpoch: card.claimEpoch,
					forced: true,
				},
			};
		}
		case 'approve':
		case 'requestChanges':
		case 'landConflict':
		case 'landFailed':
		case 'claimReview':
			return decideReview(card, action, now);
		case 'checksFinished':
			return checksFinished(card, action, now);
	}
}

/**
 * complete/release by the holder need its lease; with `force` (the human override) anyone may do it
 * and, when someone else held the card, the epoch is bumped so that holder is fenced out.
 */
function forcedOverride(
	card: CardState,
	action: { actor: string; session?: string | undefined; epoch?: number | undefined; force?: boolean | undefined },
	now: Date,
	verb: 'completed' | 'released',
): { bump: boolean; data: Record<string, unknown> } {
	if (action.force !== true) {
		checkLease(card, action.actor, action.epoch, now, verb === 'completed' ? 'complete' : 'release', action.session);
		return { bump: false, data: {} };
	}
	if (verb === 'released' && card.status !== 'claimed') {
		refuse(card, 'released', 'Only a claimed card can be released.');
	}
	if (verb === 'completed' && card.status === 'done') {
		refuse(card, 'completed', 'It is already done.');
	}
	const heldByOther = card.status === 'claimed' && card.claimOwner !== action.actor;
	const held = card.status === 'claimed';
	return {
		bump: held,
		data: {
			forced: true,
			...(heldByOther || held ? { previousOwner: card.claimOwner ?? undefined, previousEpoch: card.claimEpoch } : {}),
		},
	};
}

/** A card is only completable while every dependency is done. */
function checkDepsDone(card: CardState): void {
	if (card.unmetDeps > 0) {
		throw new BatonError(
			'invalid_transition',
			`Card ${card.id} still waits on ${card.unmetDeps} unfinished ${card.unmetDeps === 1 ? 'dependency' : 'dependencies'}; complete those first.`,
			{ cardId: card.id, unmetDeps: card.unmetDeps },
		);
	}
}

/** The refusal for a link or create that would close a cycle. */
export function cycleError(path: readonly string[]): BatonError {
	return new BatonError(
		'cycle',
		`That dependency would close a cycle: ${describeCycle(path)}. Remove one of these links instead.`,
		{ cycle: path },
	);
}
