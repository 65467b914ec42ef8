/**
 * The check before review on the board: the card face's badge (running / passed / failed, in the
 * theme's colours, board.css `.flag-checks-*`) and the words of the detail pane, all from the card's
 * `checks` and core's summary (core/rules/checks.ts), the same words as `baton show` and VS Code. It
 * decides nothing: whether a card may be approved is the hub's (the board shows its refusal).
 */
import type { Card, CardChecks } from '../core/protocol';
import { checksSummary } from '../core/rules/checks';

/** The badge's class suffix and word for each state. */
const badges: Record<CardChecks['state'], { name: string; label: string }> = {
	running: { name: 'checks-running', label: 'checks running' },
	passed: { name: 'checks-passed', label: 'checks passed' },
	failed: { name: 'checks-failed', label: 'checks failed' },
	timed_out: { name: 'checks-failed', label: 'checks timed out' },
};

/**
 * The card face's badge: while the card is in review, and on a card a failed check sent back to Ready;
 * none for a card without checks (or done, where they no longer matter).
 */
export function checksBadge(card: Card): { name: string; label: string; title: string } | undefined {
	const checks = card.checks;
	if (checks === undefined || !(card.status === 'review' || (card.status === 'ready' && checks.state !== 'passed'))) {
		return undefined;
	}
	return { ...badges[checks.state], title: checksSummary(checks) };
}

/** "Checks passed (npm test, 12 s)." as the detail pane's sentence. */
export function checksSentence(checks: CardChecks): string {
	const text = checksSummary(checks);
	return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}
