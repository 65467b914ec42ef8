/**
 * What holds a `baton run` back from claiming besides its seats: its dollar budget (--run-budget-usd,
 * the sum of the costs its agents reported, each attempt's latest report counted once) and the review
 * line (--max-in-review: while N or more cards of the run's scope wait for review, people are the
 * bottleneck and another card would only wait longer). Gives the words the run's line says; asks the
 * hub only for card/stats' review count. Must not: stop a running agent (a budget passed stops
 * claiming; the agents at work finish their cards) or count a cost nobody reported.
 */
import { errorText } from '../../core/log';
import type { RpcClient } from '../../core/protocol/rpc';
import { dollars } from '../../core/rules/usage';

export class RunLimits {
	/** Each attempt's (card:epoch) latest reported cost. */
	private readonly spent = new Map<string, number>();
	private inReview = 0;

	constructor(
		private readonly budgetUsd: number | undefined,
		private readonly maxInReview: number | undefined,
		/** The run's claim scope, as card/stats narrows its counts. */
		private readonly project: string | null,
	) {}

	/** An attempt's latest reported cost. */
	spend(key: string, costUsd: number): void {
		this.spent.set(key, costUsd);
	}

	spentUsd(): number {
		let sum = 0;
		for (const v of this.spent.values()) {
			sum += v;
		}
		return sum;
	}

	/** Reads the review count when --max-in-review is set; a failed read keeps the last count (logged by `warn`). */
	async refresh(main: RpcClient, warn: (text: string) => void): Promise<void> {
		if (this.maxInReview === undefined) {
			return;
		}
		try {
			const stats = await main.request('card/stats', { project: this.project });
			this.inReview = stats.counts.review;
		} catch (e) {
			warn(`reading the review count failed: ${errorText(e)}`);
		}
	}

	/** Why the run claims nothing now (its line says this), or undefined when it may claim. */
	held(): string | undefined {
		const spent = this.spentUsd();
		if (this.budgetUsd !== undefined && spent >= this.budgetUsd) {
			return `run budget spent: ${dollars(spent)} of --run-budget-usd ${this.budgetUsd}; no new card is claimed`;
		}
		if (this.maxInReview !== undefined && this.inReview >= this.maxInReview) {
			return `${this.inReview} wait for your review (--max-in-review ${this.maxInReview}); no new card is claimed until fewer do`;
		}
		return undefined;
	}
}
