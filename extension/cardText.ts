/**
 * Short human texts about cards shared by the tree, the quick picks and the notifications: lease
 * countdowns, the stalled/expired flags and the one-line summary. Pure: callers pass now.
 */
import type { Card } from '../core/protocol';

/** "4m 05s", "52s", "1h 02m". */
export function formatDuration(seconds: number): string {
	const s = Math.max(0, Math.round(seconds));
	if (s < 60) {
		return `${s}s`;
	}
	if (s < 3600) {
		return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
	}
	return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** "lease 4m 05s" or "lease expired 12s ago"; undefined for a card without a lease. */
export function leaseText(card: Card, now: number): string | undefined {
	if (card.status !== 'claimed' || card.leaseExpiresAt === null) {
		return undefined;
	}
	const left = (Date.parse(card.leaseExpiresAt) - now) / 1000;
	return left >= 0 ? `lease ${formatDuration(left)}` : `lease expired ${formatDuration(-left)} ago`;
}

export function isLeaseExpired(card: Card, now: number): boolean {
	return card.status === 'claimed' && card.leaseExpiresAt !== null && Date.parse(card.leaseExpiresAt) < now;
}

/** A held card whose holder has reported no progress for stallSeconds (DESIGN §5). */
export function isCardStalled(card: Card, now: number, stallSeconds: number): boolean {
	if (card.status !== 'claimed') {
		return false;
	}
	const since = card.progressAt ?? card.claimedAt;
	return since !== null && (now - Date.parse(since)) / 1000 >= stallSeconds;
}

/** A ready card that waits on dependencies (DESIGN §3: not claimable yet). */
export function isWaiting(card: Card): boolean {
	return card.status === 'ready' && card.unmetDeps > 0;
}

export function isDeferred(card: Card, now: number): boolean {
	return card.status === 'ready' && card.deferUntil !== null && Date.parse(card.deferUntil) > now;
}

/** Priority first, then the oldest (DESIGN §3's claim order). */
export function compareByPriority(a: Card, b: Card): number {
	return b.priority - a.priority || a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
}

/** "A4 · P2 · agent-1 · lease 4m 05s · 40%": id, priority, owner, lease and progress. */
export function cardSummary(card: Card, now: number, stallSeconds: number): string {
	const parts: string[] = [card.id];
	if (card.priority !== 0) {
		parts.push(`P${card.priority}`);
	}
	if (card.phase !== null) {
		parts.push(card.phase);
	}
	if (card.status === 'claimed' && card.claimOwner !== null) {
		parts.push(card.claimOwner);
	}
	const lease = leaseText(card, now);
	if (lease !== undefined) {
		parts.push(lease);
	}
	if (card.status === 'claimed' && card.progress !== null) {
		parts.push(`${card.progress}%`);
	}
	if (isCardStalled(card, now, stallSeconds) && !isLeaseExpired(card, now)) {
		parts.push('stalled');
	}
	if (isWaiting(card)) {
		parts.push(`waits on ${card.unmetDeps}`);
	}
	if (isDeferred(card, now) && card.deferUntil !== null) {
		parts.push(`deferred ${formatDuration((Date.parse(card.deferUntil) - now) / 1000)}`);
	}
	if (card.status === 'blocked' && card.blockedReason !== null) {
		parts.push(card.blockedReason.length > 60 ? `${card.blockedReason.slice(0, 59)}…` : card.blockedReason);
	}
	return parts.join(' · ');
}
