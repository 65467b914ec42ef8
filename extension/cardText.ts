/**
 * Short human texts about cards shared by the tree, the quick picks and the notifications: lease
 * countdowns, the stalled/expired flags and the one-line summary. Pure: callers pass now. It words
 * the rules, it does not define them: expired, stalled, waiting and deferred come from core
 * (lease.ts, health.ts, claimable.ts), the same functions the hub and the board call.
 */
import { isDeferred, isWaiting } from '../core/rules/claimable';
import { formatDuration } from '../core/duration';
import { isCardStalled } from '../core/rules/health';
import { isLeaseExpired } from '../core/rules/lease';
import { pauseText, seatText } from '../core/rules/dispatched';
import { checksSummary } from '../core/rules/checks';
import type { AgentHealth, Card, HealthThresholds, Pause } from '../core/protocol';

/** "lease 4m 05s" or "lease expired 12s ago"; undefined for a card without a lease. */
export function leaseText(card: Card, now: number): string | undefined {
	if (card.status !== 'claimed' || card.leaseExpiresAt === null) {
		return undefined;
	}
	const left = Date.parse(card.leaseExpiresAt) - now;
	return isLeaseExpired(card, now) ? `lease expired ${formatDuration(-left)} ago` : `lease ${formatDuration(left)}`;
}

/** Priority first, then the oldest (the claim order). */
export function compareByPriority(a: Card, b: Card): number {
	return b.priority - a.priority || a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
}

/** Cut to `n` characters with an ellipsis. */
function cut(text: string, n: number): string {
	return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

/**
 * "A4 · P2 · agent-1 · lease 4m 05s · 40%": id, priority, owner, lease and progress. `holder` is the
 * holder's health as this window sees it (undefined: not known), so a dead agent's card reads as
 * held by a dead agent (the Agents tree), not as stalled. A dispatched card reads "claude · seat 2 ·
 * 4 min" instead of its agent id; `pause` (core/rules/dispatched.ts `pauseOf`) marks a ready card
 * paused with who and why; an assigned card names its assignee.
 */
export function cardSummary(
	card: Card,
	now: number,
	thresholds: HealthThresholds,
	holder: AgentHealth | undefined,
	pause?: Pause,
): string {
	const parts: string[] = [card.id];
	if (card.priority !== 0) {
		parts.push(`P${card.priority}`);
	}
	if (card.phase !== null) {
		parts.push(card.phase);
	}
	if (card.status === 'claimed' && card.dispatch) {
		parts.push(card.dispatch.kind, seatText(card.dispatch, now));
	} else if (card.status === 'claimed' && card.claimOwner !== null) {
		parts.push(card.claimOwner);
	}
	if (card.assignee && card.status !== 'done' && card.status !== 'claimed') {
		parts.push(`assigned to ${card.assignee}`);
	}
	if (pause !== undefined && card.status === 'ready') {
		parts.push(cut(pauseText(pause), 60));
	}
	if (card.status === 'review' && card.completedBy) {
		parts.push(`by ${card.completedBy}`);
	}
	// The check before review: in review (running or passed), or what sent a ready card back.
	if (
		card.checks !== undefined &&
		(card.status === 'review' || (card.status === 'ready' && card.checks.state !== 'passed'))
	) {
		parts.push(cut(checksSummary(card.checks), 60));
	}
	// Another card landed and this branch no longer merges into its base: approving would send it back.
	if (card.status === 'review' && card.workspace?.conflicts !== undefined) {
		parts.push(`conflicts with ${card.workspace.base}`);
	}
	if (card.needsInput === true) {
		parts.push('needs input');
	}
	const lease = leaseText(card, now);
	if (lease !== undefined) {
		parts.push(lease);
	}
	if (card.status === 'claimed' && card.progress !== null) {
		parts.push(`${card.progress}%`);
	}
	if (isCardStalled(card, holder, now, thresholds)) {
		parts.push('stalled');
	}
	if (isWaiting(card)) {
		parts.push(`waits on ${card.unmetDeps}`);
	}
	if (isDeferred(card, now) && card.deferUntil !== null) {
		parts.push(`deferred ${formatDuration(Date.parse(card.deferUntil) - now)}`);
	}
	if (card.status === 'blocked' && card.blockedReason !== null) {
		parts.push(cut(card.blockedReason, 60));
	}
	return parts.join(' · ');
}
