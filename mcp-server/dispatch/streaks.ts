/**
 * How one agent kind is doing under `baton run`: a rate-limit cool-down (the agent's own signal that the provider
 * refused it for rate or quota, rateLimit.ts: no new agent of that kind until it passes) and the failure streak (three failures in
 * a row within ten minutes: the kind is paused with the reason instead of burning through the backlog).
 * Pure bookkeeping with the time passed in; it asks nothing of the hub and starts nothing.
 */

/** Failures in a row that pause a kind, and the window they must fall in. */
export const streakLength = 3;
export const streakWindowMs = 10 * 60_000;

export interface Failure {
	at: number;
	cardId: string;
	reason: string;
}

export class KindHealth {
	private readonly coolUntil = new Map<string, number>();
	private readonly streaks = new Map<string, Failure[]>();

	constructor(private readonly cooldownMs: number) {}

	/** Starts (or extends) the kind's cool-down; returns when it ends. */
	coolDown(kind: string, now: number): number {
		const until = Math.max(this.coolUntil.get(kind) ?? 0, now + this.cooldownMs);
		this.coolUntil.set(kind, until);
		return until;
	}

	/** When the kind's cool-down ends, or undefined when it may start agents now. */
	coolingUntil(kind: string, now: number): number | undefined {
		const until = this.coolUntil.get(kind);
		if (until === undefined || until <= now) {
			this.coolUntil.delete(kind);
			return undefined;
		}
		return until;
	}

	/** A card of this kind ended well (completed, or its agent ended it itself): the streak is broken. */
	succeeded(kind: string): void {
		this.streaks.delete(kind);
	}

	/**
	 * A card of this kind failed because of its agent (exit before complete, budget). Returns the
	 * failures that make a streak when this one completes it (then the streak starts over), else undefined.
	 */
	failed(kind: string, failure: Failure): Failure[] | undefined {
		const recent = (this.streaks.get(kind) ?? []).filter(f => failure.at - f.at <= streakWindowMs);
		recent.push(failure);
		if (recent.length >= streakLength) {
			this.streaks.delete(kind);
			return recent.slice(-streakLength);
		}
		this.streaks.set(kind, recent);
		return undefined;
	}
}

/** The pause reason of a streak: how many, within what, and the last failure's reason. */
export function streakReason(kind: string, failures: readonly Failure[]): string {
	const last = failures.at(-1);
	const cards = failures.map(f => f.cardId).join(', ');
	const text = `${failures.length} ${kind} agents failed in a row within 10 minutes (${cards}); last: ${last?.reason ?? ''}`;
	return text.length > 500 ? `${text.slice(0, 499)}…` : text;
}
