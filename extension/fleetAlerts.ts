/**
 * Shows the alerts alertRules.ts decides on as VS Code notifications with the next step as buttons:
 * a failed card offers Open Card (reveal it in the tree) and Retry (unblock it); an agent that died
 * holding cards offers Reclaim (its cards back to Ready, confirmed) and Show Agents. Off with the
 * setting `baton.notifications.fleet`. Decides nothing itself.
 */
import * as vscode from 'vscode';
import { visibleText } from '../core/visibleText';

import { type FleetAlert, AlertTracker, alertText } from './alertRules';
import { commandIds } from './commands';
import type { HubConnection } from './hubConnection';

export class FleetAlerts implements vscode.Disposable {
	private readonly tracker = new AlertTracker();
	private readonly disposables: vscode.Disposable[];

	constructor(private readonly hub: HubConnection) {
		this.disposables = [
			hub.onDidChangeCards(change => {
				if (change.reset) {
					this.tracker.reset();
				}
				this.show(this.tracker.cards(hub.cards.values()));
			}),
			hub.onDidChangeAgents(() => this.show(this.tracker.agents(hub.agentViews()))),
		];
	}

	private show(alerts: FleetAlert[]): void {
		if (alerts.length === 0 || !vscode.workspace.getConfiguration('baton').get<boolean>('notifications.fleet', true)) {
			return;
		}
		for (const alert of alerts) {
			if (alert.kind === 'cardFailed') {
				void vscode.window.showWarningMessage(visibleText(alertText(alert)), 'Open Card', 'Retry').then(choice => {
					if (choice === 'Open Card') {
						void vscode.commands.executeCommand(commandIds.revealCard, alert.cardId);
					} else if (choice === 'Retry') {
						void vscode.commands.executeCommand(commandIds.unblockCard, alert.cardId);
					}
				});
			} else {
				void vscode.window.showWarningMessage(visibleText(alertText(alert)), 'Reclaim', 'Show Agents').then(choice => {
					if (choice === 'Reclaim') {
						void vscode.commands.executeCommand(commandIds.reclaimAgentClaims, alert.agentId);
					} else if (choice === 'Show Agents') {
						void vscode.commands.executeCommand(commandIds.showAgents);
					}
				});
			}
		}
	}

	dispose(): void {
		for (const d of this.disposables) {
			d.dispose();
		}
	}
}
