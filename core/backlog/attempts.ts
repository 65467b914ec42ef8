/** Pure: a card's attempts (each claim and how it ended) read from its events. No I/O. */
import type { Attempt, BacklogEvent, Card, EventType } from '../protocol';

/** Each claim of a card and how it ended, from its events (DESIGN §5: the next agent picks up from there). */
export function deriveAttempts(history: readonly BacklogEvent[], current: Card): Attempt[] {
	const attempts: Attempt[] = [];
	let open: Attempt | undefined;
	const ends: Partial<Record<EventType, string>> = {
		released: 'released',
		failed: 'failed',
		reclaimed: 'reclaimed',
		completed: 'completed',
		blocked: 'blocked',
		deleted: 'deleted',
	};
	for (const e of history) {
		const card = e.data.card;
		if (e.type === 'claimed' && card !== null) {
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
