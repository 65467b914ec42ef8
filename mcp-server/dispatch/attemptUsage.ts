/**
 * One dispatched attempt's usage as its `--command` agent prints it (usageLine.ts): the latest report,
 * sent to the hub as `dispatch/usage` when it changed (on the seat's connection, as the card's holder),
 * whether it passed the run's `--max-cost-usd`, and an unreadable line logged once per attempt (then
 * ignored: a chatty agent's bad lines must not flood the supervisor's log). Must not: stop the agent
 * itself (agentJob.ts does, through its stop path), or guess a cost the agent did not report.
 */
import { createLogger, errorText } from '../../core/log';
import type { Usage } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { commandUsage } from './usageLine';

const log = createLogger('run').child('usage');

export class AttemptUsage {
	latest: Usage | undefined;
	private sent: string | undefined;
	private warned = false;

	constructor(
		private readonly cardId: string,
		private readonly epoch: number,
		private readonly maxCostUsd: number | undefined,
	) {}

	/** Reads new output lines; true when a usage line changed the report. */
	read(lines: readonly string[]): boolean {
		let changed = false;
		for (const line of lines) {
			const found = commandUsage(line);
			if (found === undefined) {
				continue;
			}
			if ('invalid' in found) {
				if (!this.warned) {
					this.warned = true;
					log.warn(
						`${this.cardId}: a BATON_USAGE line was ignored (${found.invalid}); later bad lines are ignored silently`,
					);
				}
				continue;
			}
			this.latest = {
				inputTokens: found.usage.inputTokens,
				outputTokens: found.usage.outputTokens,
				costUsd: found.usage.costUsd,
			};
			changed = true;
		}
		return changed;
	}

	/** The `--max-cost-usd` budget's words when the reported cost passed it; undefined otherwise. */
	overBudget(): string | undefined {
		const cost = this.latest?.costUsd;
		if (this.maxCostUsd === undefined || cost === undefined || cost === null || cost <= this.maxCostUsd) {
			return undefined;
		}
		return `its reported cost $${cost} passed the --max-cost-usd ${this.maxCostUsd} budget`;
	}

	/** Sends the latest report when the hub does not have it yet; never throws (logged). */
	async flush(conn: RpcClient): Promise<void> {
		const usage = this.latest;
		const text = JSON.stringify(usage);
		if (usage === undefined || text === this.sent) {
			return;
		}
		this.sent = text;
		await conn
			.request('dispatch/usage', { cardId: this.cardId, epoch: this.epoch, usage })
			.catch((e: unknown) => log.warn(`${this.cardId}: recording its usage failed: ${errorText(e)}`));
	}
}
