/**
 * The Backlog tree's icon of a card: its group's, in that state's colour (deferred, expired, stalled,
 * needs input). Reads the card and the health it is given: no cache, no requests.
 */
import * as vscode from 'vscode';
import { isDeferred } from '../core/rules/claimable';
import { isCardStalled } from '../core/rules/health';
import { isLeaseExpired } from '../core/rules/lease';
import type { AgentHealth, Card, HealthThresholds } from '../core/protocol';
import type { GroupKey } from './backlogNodes';

export function cardIcon(
	card: Card,
	group: GroupKey,
	now: number,
	thresholds: HealthThresholds,
	holder: AgentHealth | undefined,
): vscode.ThemeIcon {
	const color = (id: string) => new vscode.ThemeColor(id);
	if (card.needsInput === true) {
		return new vscode.ThemeIcon('comment-unresolved', color('list.warningForeground'));
	}
	switch (group) {
		case 'ready':
			return isDeferred(card, now)
				? new vscode.ThemeIcon('history', color('disabledForeground'))
				: new vscode.ThemeIcon('circle-large-outline', color('charts.green'));
		case 'waiting':
			return new vscode.ThemeIcon('watch', color('charts.yellow'));
		case 'claimed':
			if (isLeaseExpired(card, now)) {
				return new vscode.ThemeIcon('warning', color('list.errorForeground'));
			}
			return isCardStalled(card, holder, now, thresholds)
				? new vscode.ThemeIcon('warning', color('list.warningForeground'))
				: new vscode.ThemeIcon('play-circle', color('charts.blue'));
		case 'review':
			return new vscode.ThemeIcon('eye', color('charts.orange'));
		case 'failed':
			return new vscode.ThemeIcon('error', color('list.errorForeground'));
		case 'blocked':
			return new vscode.ThemeIcon('circle-slash', color('charts.red'));
		case 'done':
			return new vscode.ThemeIcon('pass-filled', color('charts.purple'));
	}
}
