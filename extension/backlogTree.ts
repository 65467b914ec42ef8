/**
 * The Backlog tree (issue item 2): cards grouped by status, sorted by priority, with per-state icons,
 * context values for the menus, markdown tooltips (cardTooltip.ts) and a phase/label/text filter; the pauses
 * on top (what is paused, by whom and why; Resume from the row's menu); within a group,
 * children nest under their epic, which shows "3 / 5 done" (treeNesting.ts). Updates come from the
 * connection's event feed; group and card items keep stable ids, so a refresh never collapses what
 * the user expanded. An approved card in its base's landing queue says "Landing now" or "Waiting to
 * land · 2nd" (core/rules/landing.ts), and In review's row counts the line. Reads the cached state
 * only: no request per render. The nodes, groups, context values and filter are backlogNodes.ts's
 * (vscode-free).
 */
import * as vscode from 'vscode';
import { compareRecent } from '../core/rules/donePages';
import { pauseOf, pauseTarget, pauseText } from '../core/rules/dispatched';
import { holdsOf } from '../core/rules/faceHolds';
import { landingCount, landingLine, landingText } from '../core/rules/landing';
import { usageText } from '../core/rules/usage';
import type { Card } from '../core/protocol';
import { EpicRollups } from '../core/protocol/epicRollups';
import { type LiveScopes, liveScopesOf, scopeWait, scopeWaitText } from '../core/scope/conflicts';
import {
	type BacklogFilter,
	type BacklogNode,
	type CardNode,
	type GroupKey,
	type GroupNode,
	cardContextValue,
	groupNodes,
	groupOf,
	groups,
	matchesFilter,
	moreNode,
} from './backlogNodes';
import { cardIcon } from './cardIcon';
import { cardTooltip, md } from './cardTooltip';
import { visibleText } from '../core/visibleText';
import { cardSummary, compareByPriority } from './cardText';
import type { DispatchWatch } from './dispatchWatch';
import type { HubConnection } from './hubConnection';
import { type Nesting, countChildren, epicWords, linksMarkdown, nestCards, treeProgress } from './treeNesting';
import type { WorkspaceProjects } from './workspaceProjects';

export class BacklogTreeProvider implements vscode.TreeDataProvider<BacklogNode>, vscode.Disposable {
	private readonly changeEmitter = new vscode.EventEmitter<BacklogNode | undefined>();
	readonly onDidChangeTreeData = this.changeEmitter.event;
	private filterValue: BacklogFilter = {};
	private pending: ReturnType<typeof setTimeout> | undefined;
	private readonly disposables: vscode.Disposable[] = [];
	private readonly countdown: ReturnType<typeof setInterval>;
	private claimed: LiveScopes | undefined;
	/** Each group's nesting and each parent's children counted, until the cards, filter or projects change. */
	private readonly nests = new Map<GroupKey, Nesting>();
	private children: ReturnType<typeof countChildren> | undefined;
	private readonly rollups: EpicRollups;
	/** The cards with the holds the set shows (core/rules/faceHolds.ts), until the cards or pauses change. */
	private held: ((card: Card) => Card) | undefined;

	constructor(
		private readonly hub: HubConnection,
		/** The workspace's projects and the All projects switch; absent: every card shows. */
		private readonly projects?: WorkspaceProjects,
		/** Pauses; absent: none shown. */
		private readonly dispatch?: DispatchWatch,
	) {
		this.rollups = new EpicRollups(
			async cardId => (await hub.request('card/get', { cardId })).children ?? null,
			() => this.scheduleRefresh(),
		);
		this.disposables.push(
			hub.onDidChangeCards(change => {
				this.claimed = undefined;
				this.held = undefined;
				if (change.reset) {
					this.rollups.clear();
				}
				for (const id of change.ids) {
					this.rollups.cardChanged(id, hub.cards.get(id));
				}
				this.forgetNesting();
				this.scheduleRefresh();
			}),
			hub.onDidChangeState(() => this.scheduleRefresh()),
			hub.onDidChangeLanding(() => this.scheduleRefresh()),
		);
		if (projects !== undefined) {
			this.disposables.push(
				projects.onDidChange(() => {
					this.forgetNesting();
					this.changeEmitter.fire(undefined);
				}),
			);
		}
		if (dispatch !== undefined) {
			this.disposables.push(
				dispatch.onDidChange(() => {
					this.held = undefined;
					this.scheduleRefresh();
				}),
			);
		}
		// Lease countdowns and stalled flags move with the clock, not with events. A whole refresh, as every
		// event makes: a refresh of the In progress group alone, landing while a whole one was in flight,
		// left VS Code 1.117 showing another group's new count without its new row ("In review 1", empty).
		this.countdown = setInterval(() => {
			for (const card of hub.cards.values()) {
				if (card.status === 'claimed') {
					this.scheduleRefresh();
					return;
				}
			}
		}, 5_000);
	}

	get filter(): BacklogFilter {
		return this.filterValue;
	}

	setFilter(filter: BacklogFilter): void {
		const clean: BacklogFilter = {};
		if (filter.phase !== undefined && filter.phase !== '') {
			clean.phase = filter.phase;
		}
		if (filter.label !== undefined && filter.label !== '') {
			clean.label = filter.label;
		}
		if (filter.text !== undefined && filter.text.trim() !== '') {
			clean.text = filter.text.trim();
		}
		this.filterValue = clean;
		this.forgetNesting();
		void vscode.commands.executeCommand('setContext', 'baton.backlogFiltered', Object.keys(clean).length > 0);
		this.changeEmitter.fire(undefined);
	}

	/** "github.com/acme/web · phase: api · label: ui · “login”", shown as the view's description. */
	describeFilter(): string {
		const parts: string[] = [];
		const project = this.projects?.label;
		if (project !== undefined) {
			parts.push(project);
		}
		if (this.filterValue.phase !== undefined) {
			parts.push(`phase: ${this.filterValue.phase}`);
		}
		if (this.filterValue.label !== undefined) {
			parts.push(`label: ${this.filterValue.label}`);
		}
		if (this.filterValue.text !== undefined) {
			parts.push(`“${this.filterValue.text}”`);
		}
		return parts.join(' · ');
	}

	/**
	 * Cards of one group as the tree shows them (filtered, sorted). Done: the loaded pages, newest
	 * first (the hub's order), none with a doneLimit of 0.
	 */
	cardsIn(key: GroupKey): Card[] {
		if (key === 'done' && this.hub.settings.doneLimit === 0) {
			return [];
		}
		const cards = [...this.hub.cards.values()].filter(
			c => this.groupOf(c) === key && matchesFilter(c, this.filterValue) && (this.projects?.includes(c) ?? true),
		);
		if (key === 'done') {
			return cards.filter(c => this.hub.done.shows(c)).sort(compareRecent);
		}
		if (key === 'review') {
			// The order Review Next Card takes: the longest waiting first.
			return cards.sort((a, b) => a.updatedAt.localeCompare(b.updatedAt));
		}
		return cards.sort(compareByPriority);
	}

	/**
	 * A card's group by the claim guards' word: a ready card that waits on a dependency, an open child, a
	 * waiting ancestor or files another claim holds is in Waiting, as `baton list` says.
	 */
	private groupOf(card: Card): GroupKey {
		this.held ??= holdsOf(this.hub.cards.values(), this.dispatch?.pauses);
		const held = this.held(card);
		// An epic held only by its open children stays in Ready with them, so they nest under it (its
		// description says its progress); any other hold moves it to Waiting.
		const { openChildren, ...rest } = held;
		if (card.status === 'ready' && (openChildren ?? 0) > 0 && groupOf(rest) === 'ready') {
			return 'ready';
		}
		return groupOf(held);
	}

	/** The node for a card id (for TreeView.reveal), or undefined when filtered out or unknown. */
	nodeFor(cardId: string): CardNode | undefined {
		const card = this.hub.cards.get(cardId);
		if (!card) {
			return undefined;
		}
		const group = this.groupOf(card);
		return this.cardsIn(group).some(c => c.id === cardId) ? { kind: 'card', card, group } : undefined;
	}

	getChildren(element?: BacklogNode): BacklogNode[] {
		if (element === undefined) {
			if (this.hub.cards.size === 0) {
				// An empty tree lets the view show its welcome content (connecting / empty backlog).
				return [];
			}
			const label = this.projects?.label;
			if (label !== undefined && ![...this.hub.cards.values()].some(c => this.projects?.includes(c) ?? true)) {
				return [{ kind: 'empty', label: `No cards in ${label} — show all projects` }];
			}
			const pauses: BacklogNode[] = (this.dispatch?.pauses ?? []).map(pause => ({ kind: 'pause', pause }));
			return [...pauses, ...groups.map(g => groupNodes.get(g.key)).filter((g): g is GroupNode => g !== undefined)];
		}
		if (element.kind === 'card') {
			const nested = this.nesting(element.group).children.get(element.card.id) ?? [];
			return nested.map(card => ({ kind: 'card', card, group: element.group }));
		}
		if (element.kind !== 'group') {
			return [];
		}
		const rows: BacklogNode[] = this.nesting(element.key).roots.map(card => ({
			kind: 'card',
			card,
			group: element.key,
		}));
		if (element.key === 'done' && this.hub.done.more && this.hub.settings.doneLimit > 0) {
			rows.push(moreNode);
		}
		return rows;
	}

	getParent(element: BacklogNode): BacklogNode | undefined {
		const parent = element.kind === 'card' ? this.nesting(element.group).parentOf.get(element.card.id) : undefined;
		if (parent !== undefined && element.kind === 'card') {
			return { kind: 'card', card: parent, group: element.group };
		}
		return element.kind === 'card'
			? groupNodes.get(element.group)
			: element.kind === 'more'
				? groupNodes.get('done')
				: undefined;
	}

	/**
	 * A group's count. Done counts every done card (the hub's stats, kept by the events) unless a
	 * filter applies; then the loaded matches, with "+" while more pages exist.
	 */
	private countOf(key: GroupKey): string {
		const shown = this.cardsIn(key).length;
		if (key !== 'done' || !this.hub.done.more) {
			return String(shown);
		}
		const filtered = Object.keys(this.filterValue).length > 0 || this.projects?.label !== undefined;
		return filtered ? `${shown}+` : String(this.hub.done.totals.done);
	}

	getTreeItem(element: BacklogNode): vscode.TreeItem {
		const now = Date.now();
		if (element.kind === 'empty') {
			const item = new vscode.TreeItem(element.label, vscode.TreeItemCollapsibleState.None);
			item.id = 'empty:projects';
			item.iconPath = new vscode.ThemeIcon('info');
			item.command = { command: 'baton.showAllProjects', title: 'Show All Projects' };
			item.contextValue = 'empty.projects';
			return item;
		}
		if (element.kind === 'pause') {
			const p = element.pause;
			const item = new vscode.TreeItem(`Paused: ${pauseTarget(p)}`, vscode.TreeItemCollapsibleState.None);
			item.id = `pause:${p.scope}:${p.target ?? ''}`;
			item.description = pauseText(p) + (p.stop ? ' · agents stopped' : '');
			item.tooltip = `${pauseText(p)} (${new Date(p.at).toLocaleString()}).${p.scope === 'kind' ? ` No ${p.target ?? ''} agent is started.` : ' No claim of its cards is granted until it is resumed.'}`;
			item.iconPath = new vscode.ThemeIcon('debug-pause', new vscode.ThemeColor('list.warningForeground'));
			item.contextValue = 'pause';
			return item;
		}
		if (element.kind === 'more') {
			const left = Math.max(0, this.hub.done.totals.done - this.cardsIn('done').length);
			const item = new vscode.TreeItem('Load more…', vscode.TreeItemCollapsibleState.None);
			item.id = 'more:done';
			item.description = this.hub.done.loading ? 'loading' : `${left.toLocaleString('en')} more, newest first`;
			item.iconPath = new vscode.ThemeIcon('ellipsis');
			item.command = { command: 'baton.loadMoreDone', title: 'Load More Done Cards' };
			item.contextValue = 'more.done';
			return item;
		}
		if (element.kind === 'group') {
			const spec = groups.find(g => g.key === element.key);
			const count = this.countOf(element.key);
			const item = new vscode.TreeItem(
				spec?.label ?? element.key,
				spec?.expanded === false ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.Expanded,
			);
			item.id = `group:${element.key}`;
			// The line's words for the cards this group shows (the projects and filter chosen).
			const lined = element.key === 'review' ? this.cardsIn('review').map(c => this.hub.landing.get(c.id)) : [];
			const landing = landingCount(lined.filter(e => e !== undefined));
			item.description = landing === '' ? count : `${count} · ${landing}`;
			item.contextValue = `group.${element.key}`;
			return item;
		}
		const card = element.card;
		const nest = this.nesting(element.group);
		// Agent-written text: no control character or bidi override reaches the tree raw.
		const item = new vscode.TreeItem(
			visibleText(card.title),
			nest.children.has(card.id) ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
		);
		item.id = `card:${card.id}`;
		const thresholds = this.hub.thresholds;
		const holder = this.hub.healthOf(card.claimOwner, now);
		const wait = card.status === 'ready' ? scopeWait(card, this.liveClaims()) : undefined;
		const pause = card.status === 'ready' ? pauseOf(card, this.dispatch?.pauses ?? []) : undefined;
		const epic = epicWords(this.progressOf(card), card, nest.parentOf.has(card.id));
		const landing = card.status === 'done' ? undefined : this.hub.landing.get(card.id);
		item.description = visibleText(
			cardSummary(card, now, thresholds, holder, pause) +
				(landing ? ` · ${landingText(landing)}` : '') +
				(wait ? ` · ${scopeWaitText(wait)}` : '') +
				(epic ? ` · ${epic}` : ''),
		);
		item.iconPath = cardIcon(card, this.groupOf(card), now, thresholds, holder);
		item.contextValue = cardContextValue(card, this.hub.me);
		item.accessibilityInformation = { label: `${card.id} ${visibleText(card.title)}, ${item.description}` };
		return item;
	}

	/** Tooltips are built only when hovered: body excerpt, dependencies and acceptance, and its attempts' usage. */
	async resolveTreeItem(item: vscode.TreeItem, element: BacklogNode): Promise<vscode.TreeItem> {
		if (element.kind !== 'card') {
			return item;
		}
		// The usage is not on the listed card: one card/get for the hovered row (a failure leaves it out).
		const usage = await this.hub
			.request('card/get', { cardId: element.card.id }, 2_000)
			.then(r => `\n\n$(credit-card) ${md(usageText(r.usage))}`)
			.catch(() => '');
		const card = this.hub.cards.get(element.card.id) ?? element.card;
		const now = Date.now();
		const wait = card.status === 'ready' ? scopeWait(card, this.liveClaims()) : undefined;
		const tip = cardTooltip(card, this.groupOf(card), now, this.hub.cards, wait);
		const landing = card.status === 'done' ? undefined : this.hub.landing.get(card.id);
		if (landing !== undefined) {
			tip.appendMarkdown(`$(git-merge) ${md(landingLine(landing))}\n\n`);
		}
		const parentTitle = card.parent == null ? undefined : this.hub.cards.get(card.parent)?.title;
		tip.appendMarkdown(linksMarkdown(card, this.progressOf(card), parentTitle, md));
		tip.appendMarkdown(usage);
		item.tooltip = tip;
		return item;
	}

	dispose(): void {
		this.rollups.dispose();
		clearInterval(this.countdown);
		clearTimeout(this.pending);
		for (const d of this.disposables) {
			d.dispose();
		}
		this.changeEmitter.dispose();
	}

	private nesting(group: GroupKey): Nesting {
		let nest = this.nests.get(group);
		if (nest === undefined) {
			nest = nestCards(this.cardsIn(group));
			this.nests.set(group, nest);
		}
		return nest;
	}

	private forgetNesting(): void {
		this.nests.clear();
		this.children = undefined;
	}

	/** An epic's progress (hub's roll-up, asked for on first use), or undefined for a card with no children. */
	private progressOf(card: Card): ReturnType<typeof treeProgress> {
		this.children ??= countChildren(this.hub.cards.values());
		return treeProgress(card, this.children.get(card.id), this.rollups);
	}

	/** The live scopes of the claimed cards, read once per refresh for the "waits on files held by …" test. */
	private liveClaims(): LiveScopes {
		this.claimed ??= liveScopesOf(this.hub.cards.values());
		return this.claimed;
	}

	/** Coalesces bursts of events (a 1,000-card plan) into one refresh. */
	private scheduleRefresh(): void {
		if (this.pending !== undefined) {
			return;
		}
		this.pending = setTimeout(() => {
			this.pending = undefined;
			this.changeEmitter.fire(undefined);
		}, 50);
	}
}
