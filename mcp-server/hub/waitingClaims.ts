/**
 * Waiting claims (`card/claim` with waitSeconds): retry when a delivered event could have
 * made a card claimable, or when the next deferred card comes due, up to the deadline; woken by
 * events, never by polling. Only the final answer asks the backlog why nothing is claimable (a
 * count over the whole table). It decides nothing about cards: every try is a plain backlog claim.
 * Deadlines and sleeps are on the hub's Clock, the backlog's own, so a ManualClock drives them in tests.
 */
import type { Backlog, OpContext } from '../../core/backlog';
import { type Clock, systemClock } from '../../core/clock';
import type { BacklogEvent, EventType, ParsedParams, Result } from '../../core/protocol';
import type { Connection } from './connections';

/** What a waiting claim reads of its connection: whether it closed (then it stops waiting). */
type ClaimConnection = Pick<Connection, 'closed'>;

/** Events that can make a card claimable; a waiting claim retries on them. */
const wakingEvents: ReadonlySet<EventType> = new Set<EventType>([
	'created',
	'updated',
	'released',
	'failed',
	'reclaimed',
	'completed',
	'unblocked',
	'reopened',
	'unlinked',
	'deleted',
	// The review gate: an approval frees dependents, a request for changes sends the card back to
	// ready, and a card entering review is work for a waiting reviewer (claim {review: true}).
	'approved',
	'changes_requested',
	'review_requested',
	// An approval whose landing conflicted sends the card back to ready.
	'land_conflicted',
	// A failed check sends the card back to ready; a passed one makes it review work for an agent.
	'checks_finished',
	// A pause cleared, an assignment changed, a held card given up frees a max-held claimer.
	'resumed',
	'assigned',
]);

export class WaitingClaims {
	/** Bumped on each waking event; a claim that saw no card re-checks it before waiting. */
	private wakeGeneration = 0;
	private readonly wakeListeners = new Set<() => void>();

	constructor(
		private readonly backlog: Backlog,
		private readonly stopping: () => boolean,
		/** A claim answered: the seconds the hub worked on it (its sleeps left out), and whether it got a card. */
		private readonly onAnswered: (seconds: number, gotCard: boolean) => void = () => undefined,
		private readonly clock: Clock = systemClock,
	) {}

	private nowMs(): number {
		return this.clock.now().getTime();
	}

	async claim(
		conn: ClaimConnection,
		ctx: OpContext,
		params: ParsedParams<'card/claim'>,
	): Promise<Result<'card/claim'>> {
		const started = performance.now();
		let slept = 0;
		const result = await this.tryUntilDeadline(conn, ctx, params, ms => (slept += ms));
		this.onAnswered((performance.now() - started - slept) / 1000, result.card !== null);
		return result;
	}

	private async tryUntilDeadline(
		conn: ClaimConnection,
		ctx: OpContext,
		params: ParsedParams<'card/claim'>,
		onSlept: (ms: number) => void,
	): Promise<Result<'card/claim'>> {
		const deadline = this.nowMs() + (params.waitSeconds ?? 0) * 1000;
		for (;;) {
			const generation = this.wakeGeneration;
			// Only the final answer says why nothing is claimable: the explanation counts the whole table.
			const final = this.nowMs() >= deadline;
			// Every try uses the request's own key: the backlog does not remember "nothing claimable", so a
			// retry claims afresh, and a re-send after a failover replays the card a try already took.
			const result = await this.backlog.claim(ctx, params, { explain: final });
			if (result.card !== null || final || conn.closed || this.stopping()) {
				return result;
			}
			if (this.nowMs() >= deadline) {
				continue; // the wait ran out during this try: one more, which explains
			}
			if (generation !== this.wakeGeneration) {
				continue;
			}
			const deferredAt = await this.backlog.nextDeferredAt();
			if (generation !== this.wakeGeneration) {
				continue;
			}
			const sleepStarted = performance.now();
			await this.waitForWake(deadline, deferredAt);
			onSlept(performance.now() - sleepStarted);
		}
	}

	/** Wakes every waiting claim when the batch holds an event that can free a card. */
	onEvents(events: readonly BacklogEvent[]): void {
		if (events.some(e => wakingEvents.has(e.type))) {
			this.wakeGeneration++;
			this.wakeAll();
		}
	}

	/** Wakes every waiting claim (also at stop, so each answers at once). */
	wakeAll(): void {
		for (const wake of [...this.wakeListeners]) {
			wake();
		}
	}

	private waitForWake(deadline: number, deferredAt: Date | null): Promise<void> {
		return new Promise(resolve => {
			const until = deferredAt === null ? deadline : Math.min(deadline, deferredAt.getTime() + 5);
			const done = (): void => {
				this.clock.clearTimer(timer);
				this.wakeListeners.delete(done);
				resolve();
			};
			const timer = this.clock.setTimeout(done, Math.max(0, until - this.nowMs()));
			this.wakeListeners.add(done);
		});
	}
}
