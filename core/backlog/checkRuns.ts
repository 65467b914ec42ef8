/**
 * The check before review in the store: a check's outcome recorded on its card by the rules
 * (core/rules/checks.ts: passed stays in review, failed or timed out goes back like a failed attempt,
 * event `checks_finished`), and the cards whose check is still running (a starting hub reruns those of
 * its host). Starting a check is complete's own write (core/rules/review.ts submitForReview). Runs no
 * command and reads no project setting: the hub does both (mcp-server/hub/checks.ts).
 */
import type { Card } from '../protocol';
import type { ChecksOutcome } from '../rules/checks';
import { act } from './cardActions';
import type { BacklogSettings } from './settings';
import type { OpContext, UnitOfWork } from './unitOfWork';

export class CheckRuns {
	constructor(
		private readonly uow: UnitOfWork,
		private readonly settings: BacklogSettings,
	) {}

	/**
	 * Records how the check that started at `startedAt` ended. Refused (`conflict`, nothing written) when
	 * the card no longer waits for that run: approved, sent back, deleted, or completed again since.
	 */
	finish(ctx: OpContext, cardId: string, startedAt: string, outcome: ChecksOutcome): Promise<Card> {
		return this.uow.mutate({ actor: ctx.actor }, 'card/checks', async (tx, now) => {
			const { card, events } = await act(
				tx,
				cardId,
				async before => {
					const settings = await this.settings.read(tx);
					return {
						type: 'checksFinished',
						startedAt,
						outcome,
						backoff: {
							baseSeconds: before.backoffSeconds ?? settings.backoffSeconds,
							maxSeconds: settings.backoffMaxSeconds,
						},
					};
				},
				now,
			);
			return { result: card, events };
		});
	}

	/** Cards in review whose check is running, oldest first (at most 1,000: a hub's start-up work). */
	async running(): Promise<Card[]> {
		const rows = await this.uow.db.query<{ card: Card }>(
			`SELECT baton_card(cards) AS card FROM cards
			 WHERE status = 'review' AND checks->>'state' = 'running' ORDER BY updated_at, id LIMIT 1000`,
		);
		return rows.map(r => r.card);
	}
}
