/**
 * The status bar items. Agents (issue item 5): other agents' health at a glance, warning colour when
 * one is late or stalled, error colour when one is stale or dead while holding work, or when the hub
 * is unreachable or its store refuses writes (disk full, PostgreSQL away); the tooltip lists agents
 * and their cards; a click opens the Agents view. The human's own agent is left out: this window knows
 * it is alive. Review: "N to review · M questions" beside it while there are any, the
 * cards in its tooltip; a click reviews the next card (or replies, when there are only questions).
 */
import * as vscode from 'vscode';
import { type AgentView, healthRank } from './agentHealth';
import type { HubConnection } from './hubConnection';
import { type DeskSummary, deskSummary } from './reviewQueue';
import type { WorkspaceProjects } from './workspaceProjects';

export interface StatusSummary {
	text: string;
	level: 'ok' | 'warning' | 'error';
	tooltip: string;
}

/** Agents worth watching: alive ones, and dead ones that still hold cards. */
function watched(views: readonly AgentView[], me: string): AgentView[] {
	return views.filter(v => v.agent.id !== me && (v.health !== 'dead' || v.cards.length > 0));
}

/**
 * The status text and level for the current state; pure over the connection's cache. With `projects`
 * each agent's cards are those of the workspace's projects, and the tooltip says so.
 */
export function summarize(hub: HubConnection, now = Date.now(), projects?: WorkspaceProjects): StatusSummary {
	if (hub.state !== 'connected') {
		const offline = hub.state === 'offline';
		return {
			text: offline ? '$(debug-disconnect) Baton offline' : '$(sync~spin) Baton',
			level: offline ? 'error' : 'ok',
			tooltip: offline
				? `The Baton hub for ${hub.dataDir} is not reachable${hub.lastError ? `: ${hub.lastError}` : ''}. Reconnecting…`
				: `Connecting to the Baton hub for ${hub.dataDir}…`,
		};
	}
	const store = hub.store;
	if (store.state !== 'ok') {
		// Writes are refused for every agent: that outranks any one agent's health.
		return {
			text: store.state === 'disk_full' ? '$(error) Baton: disk full' : '$(error) Baton: store unavailable',
			level: 'error',
			tooltip: store.message ?? `The Baton store is ${store.state.replace('_', ' ')}.`,
		};
	}
	const views = watched(hub.agentViews(now), hub.me).map(v =>
		projects === undefined ? v : { ...v, cards: v.cards.filter(c => projects.includes(c)) },
	);
	const count = (pred: (v: AgentView) => boolean) => views.filter(pred).length;
	const late = count(v => v.health === 'late');
	const stale = count(v => v.health === 'stale');
	const dead = count(v => v.health === 'dead');
	const stalled = count(v => v.stalled);
	const flags: string[] = [];
	if (dead > 0) {
		flags.push(`${dead} dead`);
	}
	if (stale > 0) {
		flags.push(`${stale} stale`);
	}
	if (late > 0) {
		flags.push(`${late} late`);
	}
	if (stalled > 0) {
		flags.push(`${stalled} stalled`);
	}
	const level = dead + stale > 0 ? 'error' : late + stalled > 0 ? 'warning' : 'ok';
	const icon = level === 'error' ? '$(error)' : level === 'warning' ? '$(warning)' : '$(pulse)';
	const noun = views.length === 1 ? 'agent' : 'agents';
	const text = `${icon} ${views.length} ${noun}${flags.length > 0 ? ` · ${flags.join(' · ')}` : ''}`;
	const lines = views
		.sort((a, b) => healthRank[b.health] - healthRank[a.health])
		.map(v => {
			const cards = v.cards.map(c => `${c.id}${c.progress === null ? '' : ` ${c.progress}%`}`).join(', ');
			return `${v.agent.name} — ${v.health}${v.stalled ? ', stalled' : ''}${cards === '' ? ', idle' : ` — ${cards}`}`;
		});
	const label = projects?.label;
	const scope = label === undefined ? '' : `\nCards of ${label} (Baton: Show All Projects for every project)`;
	return {
		text,
		level,
		tooltip: (lines.length > 0 ? lines.join('\n') : 'No agent is connected to this backlog.') + scope,
	};
}

export class AgentStatusBar implements vscode.Disposable {
	private readonly item: vscode.StatusBarItem;
	private readonly disposables: vscode.Disposable[] = [];
	private current: StatusSummary | undefined;

	constructor(
		private readonly hub: HubConnection,
		private readonly projects?: WorkspaceProjects,
	) {
		this.item = vscode.window.createStatusBarItem('baton.agents', vscode.StatusBarAlignment.Left, 50);
		this.item.name = 'Baton Agents';
		this.item.command = 'baton.showAgents';
		this.disposables.push(
			hub.onDidChangeAgents(() => this.update()),
			hub.onDidChangeState(() => this.update()),
			hub.onDidChangeCards(() => this.update()),
		);
		if (projects !== undefined) {
			this.disposables.push(projects.onDidChange(() => this.update()));
		}
		this.update();
		this.item.show();
	}

	/** What the item shows now (the tests read it). */
	get summary(): StatusSummary {
		return this.current ?? summarize(this.hub, Date.now(), this.projects);
	}

	update(): void {
		const s = summarize(this.hub, Date.now(), this.projects);
		const c = this.current;
		if (c?.text === s.text && c.level === s.level && c.tooltip === s.tooltip) {
			return;
		}
		this.current = s;
		this.item.text = s.text;
		this.item.tooltip = s.tooltip;
		this.item.accessibilityInformation = { label: `Baton: ${s.text.replace(/\$\([^)]*\)\s*/g, '')}` };
		this.item.backgroundColor =
			s.level === 'error'
				? new vscode.ThemeColor('statusBarItem.errorBackground')
				: s.level === 'warning'
					? new vscode.ThemeColor('statusBarItem.warningBackground')
					: undefined;
	}

	dispose(): void {
		for (const d of this.disposables) {
			d.dispose();
		}
		this.item.dispose();
	}
}

export class ReviewStatusBar implements vscode.Disposable {
	private readonly item: vscode.StatusBarItem;
	private readonly disposables: vscode.Disposable[] = [];
	private current: DeskSummary | undefined;
	private pending: ReturnType<typeof setTimeout> | undefined;

	constructor(
		private readonly hub: HubConnection,
		private readonly projects?: WorkspaceProjects,
	) {
		this.item = vscode.window.createStatusBarItem('baton.review', vscode.StatusBarAlignment.Left, 49);
		this.item.name = 'Baton Review';
		// A burst of events (a plan of 1,000 cards) is one count, not one per event.
		const schedule = () => {
			this.pending ??= setTimeout(() => {
				this.pending = undefined;
				this.update();
			}, 100);
		};
		this.disposables.push(hub.onDidChangeState(schedule), hub.onDidChangeCards(schedule));
		if (projects !== undefined) {
			this.disposables.push(projects.onDidChange(schedule));
		}
		this.update();
	}

	/** What the item shows now; undefined while hidden (the tests read it). */
	get summary(): DeskSummary | undefined {
		return this.current;
	}

	update(): void {
		const cards = [...this.hub.cards.values()].filter(c => this.projects?.includes(c) ?? true);
		const s = this.hub.state === 'connected' ? deskSummary(cards, this.hub.me) : undefined;
		if (s?.text === this.current?.text && s?.tooltip === this.current?.tooltip) {
			return;
		}
		this.current = s;
		if (!s) {
			this.item.hide();
			return;
		}
		this.item.text = `$(eye) ${s.text}`;
		this.item.tooltip = s.tooltip;
		this.item.accessibilityInformation = { label: `Baton: ${s.text}` };
		this.item.command = s.reviews > 0 ? 'baton.reviewNextCard' : 'baton.replyToAgent';
		this.item.show();
	}

	dispose(): void {
		clearTimeout(this.pending);
		for (const d of this.disposables) {
			d.dispose();
		}
		this.item.dispose();
	}
}
