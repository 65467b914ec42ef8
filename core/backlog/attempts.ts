/**
 * Pure: a card's attempts (each claim and how it ended) read from its events. No I/O. A review claim
 * (`claimed` with data.review) is not an attempt at the work; a review's verdict re-labels the attempt
 * it judged: `approved`, `changes requested` with the reviewer's note as its reason, or `landing
 * conflicted` (the base moved under an approval) with the conflict as its reason; a failed check,
 * `checks failed` (or `checks timed out`) with its hand-over as the reason. A holder's completion that
 * did not land (review none) ends its own attempt as `landing conflicted`, with why.
 */
import type { Attempt, BacklogEvent, Card, EventType } from '../protocol';

const verdicts = {
	approved: 'approved',
	changes_requested: 'changes requested',
	land_conflicted: 'landing conflicted',
} as const;

/** Each claim of a card and how it ended, from its events (the next agent picks up from there). */
export function deriveAttempts(history: readonly BacklogEvent[], current: Card): Attempt[] {
	const attempts: Attempt[] = [];
	let open: Attempt | undefined;
	const ends: Partial<Record<EventType, string>> = {
		released: 'released',
		failed: 'failed',
		reclaimed: 'reclaimed',
		completed: 'completed',
		review_requested: 'in review',
		blocked: 'blocked',
		deleted: 'deleted',
	};
	for (const e of history) {
		const card = e.data.card;
		if (e.type === 'checks_finished' && e.data.state !== 'passed') {
			// A failed check ends the attempt it judged as a failed one, its hand-over the reason.
			const judged = [...attempts].reverse().find(a => a.outcome === 'in review');
			if (judged !== undefined) {
				judged.outcome = e.data.state === 'timed_out' ? 'checks timed out' : 'checks failed';
				judged.reason = e.data.reason ?? judged.reason;
			}
		} else if (e.type === 'land_conflicted' && open !== undefined) {
			// The holder's own completion did not land (review none): its attempt ends here, with why.
			open.endedAt = e.at;
			open.outcome = verdicts.land_conflicted;
			open.reason = e.data.reason ?? null;
			open = undefined;
		} else if (e.type === 'approved' || e.type === 'changes_requested' || e.type === 'land_conflicted') {
			const judged = [...attempts].reverse().find(a => a.outcome === 'in review');
			if (judged !== undefined) {
				judged.outcome = verdicts[e.type];
				judged.reason = e.data.note ?? e.data.reason ?? judged.reason;
			}
		} else if (e.type === 'claimed' && e.data.review === true) {
			// A reviewer took the review: not an attempt at the work.
		} else if (e.type === 'claimed' && card !== null) {
			open = {
				epoch: card.claimEpoch,
				owner: card.claimOwner ?? e.actor,
				claimedAt: e.at,
				endedAt: null,
				outcome: 'active',
				progress: null,
				progressNote: null,
				reason: null,
				result: null,
			};
			attempts.push(open);
		} else if (open !== undefined && e.type === 'heartbeat' && card !== null) {
			open.progress = card.progress;
			open.progressNote = card.progressNote;
		} else if (open !== undefined && ends[e.type] !== undefined) {
			open.endedAt = e.at;
			open.outcome = ends[e.type] ?? e.type;
			open.reason = e.data.reason ?? null;
			open.result = e.data.result ?? null;
			open = undefined;
		}
	}
	if (open !== undefined && current.status === 'claimed') {
		open.progress = current.progress;
		open.progressNote = current.progressNote;
	}
	return attempts;
}
