/**
 * The Agents tree (issue item 2): each agent with a health icon, its client, current card, progress,
 * last seen and "stalled", derived each second from the connection's cache (extension/agentHealth.ts).
 * Items set `agent.busy` / `agent.idle` so the menus offer "reveal card" and "reclaim its claims".
 */
import * as vscode from 'vscode';
import type { AgentHealth } from '../core/protocol';
import type { AgentView } from './agentHealth';
import { formatDuration } from '../core/duration';
import { visibleText } from '../core/visibleText';
import type { HubConnection } from './hubConnection';

export interface AgentNode {
	kind: 'agent';
	view: AgentView;
}

const healthIcons: Record<AgentHealth, { icon: string; color: string }> = {
	healthy: { icon: 'pass', color: 'testing.iconPassed' },
	late: { icon: 'warning', color: 'list.warningForeground' },
	stale: { icon: 'error', color: 'list.errorForeground' },
	dead: { icon: 'circle-slash', color: 'disabledForeground' },
};

/** "claude-code · A4 40% · seen 12s ago · stalled". */
export function agentDescription(view: AgentView): string {
	const parts: string[] = [view.agent.client];
	const card = view.cards[0];
	if (card) {
		parts.push(card.progress === null ? card.id : `${card.id} ${card.progress}%`);
		if (view.cards.length > 1) {
			parts.push(`+${view.cards.length - 1}`);
		}
	}
	parts.push(view.ageSeconds < 2 ? 'seen now' : `seen ${formatDuration(view.ageSeconds * 1000)} ago`);
	if (view.stalled) {
		parts.push('stalled');
	} else if (view.health !== 'healthy') {
		parts.push(view.health);
	}
	return parts.join(' · ');
}

export class AgentsTreeProvider implements vscode.TreeDataProvider<AgentNode>, vscode.Disposable {
	private readonly changeEmitter = new vscode.EventEmitter<undefined>();
	readonly onDidChangeTreeData = this.changeEmitter.event;
	private readonly disposables: vscode.Disposable[] = [];
	private readonly ticker: ReturnType<typeof setInterval>;

	constructor(private readonly hub: HubConnection) {
		this.disposables.push(
			hub.onDidChangeAgents(() => this.changeEmitter.fire(undefined)),
			hub.onDidChangeCards(() => this.changeEmitter.fire(undefined)),
			hub.onDidChangeState(() => this.changeEmitter.fire(undefined)),
		);
		// "seen 12s ago" ages even when nothing happens.
		this.ticker = setInterval(() => {
			if (this.hub.agents.length > 0) {
				this.changeEmitter.fire(undefined);
			}
		}, 5_000);
	}

	getChildren(element?: AgentNode): AgentNode[] {
		if (element !== undefined) {
			return [];
		}
		// Dead agents that hold nothing are history, not fleet: the hub keeps every agent ever seen.
		return this.hub
			.agentViews()
			.filter(v => v.health !== 'dead' || v.cards.length > 0 || v.agent.connected)
			.map(view => ({ kind: 'agent', view }));
	}

	getTreeItem(element: AgentNode): vscode.TreeItem {
		const { agent, health, stalled, cards } = element.view;
		const label = agent.id === this.hub.me ? `${agent.name} (you)` : agent.name;
		const item = new vscode.TreeItem(visibleText(label), vscode.TreeItemCollapsibleState.None);
		item.id = `agent:${agent.id}`;
		item.description = visibleText(agentDescription(element.view));
		const icon = stalled ? { icon: 'watch', color: 'list.warningForeground' } : healthIcons[health];
		item.iconPath = new vscode.ThemeIcon(icon.icon, new vscode.ThemeColor(icon.color));
		item.contextValue = cards.length > 0 ? `agent.busy.${health}` : `agent.idle.${health}`;
		const tip = new vscode.MarkdownString();
		tip.appendText(`${agent.name} (${agent.id})\n`);
		tip.appendMarkdown('\n');
		tip.appendText(
			`${health}${stalled ? ', stalled' : ''} · ${agent.client} · last seen ${new Date(agent.lastSeenAt).toLocaleTimeString()}` +
				`${agent.host === null ? '' : ` · ${agent.host}`}${agent.pid === null ? '' : ` pid ${agent.pid}`}`,
		);
		for (const card of cards) {
			tip.appendMarkdown('\n\n');
			tip.appendText(
				visibleText(
					`${card.id} ${card.title}${card.progress === null ? '' : ` — ${card.progress}%`}${card.progressNote === null ? '' : ` ${card.progressNote}`}`,
				),
			);
		}
		item.tooltip = tip;
		if (cards[0]) {
			item.command = { command: 'baton.revealCard', title: 'Reveal Card', arguments: [element] };
		}
		return item;
	}

	dispose(): void {
		clearInterval(this.ticker);
		for (const d of this.disposables) {
			d.dispose();
		}
		this.changeEmitter.dispose();
	}
}
