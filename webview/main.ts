/**
 * Entry of the board bundle (dist/webview/board.js): picks the transport from <body data-host>, loads
 * the live columns in full, progressively (boardLoad.ts), Done by pages (paging.ts) and the agents,
 * subscribes to the event feed and wires state, rendering, toolbar, banners, the state before the
 * first snapshot (firstLoad.ts) and of an empty backlog (emptyBoard.ts), drag and drop, keyboard and
 * focus (focus.ts), detail pane and requests (actions.ts), the pauses (pauseBar.ts) and the landing
 * queue (landingView.ts) together; the
 * first connection and the ping are boardConnect.ts's, what reaches the DOM after a change is
 * boardUpdates.ts's. Only the boot and the wiring live here: no request logic, no rules, no element
 * building beyond the layout.
 */
// Must stay the first import: it configures zod before core/protocol/index.ts defines its schemas.
import './jitless';

import type { BacklogEvent, Pause } from '../core/protocol';
import { EpicRollups } from '../core/protocol/epicRollups';
import { RpcClient } from '../core/protocol/rpc';
import { isCardless } from '../core/rules/dispatched';
import { BoardActions } from './actions';
import { connectFirst, pingWhileOpen } from './boardConnect';
import { BoardLoad } from './boardLoad';
import { Banners } from './banners';
import type { RenderContext } from './cardView';
import { columnIds } from './columns';
import { DetailPane } from './detail';
import { DragController, type DropTarget } from './dnd';
import { BoardFocus } from './focus';
import { boardAgentId, randomHex } from './identity';
import { attachKeyboard, keyHelp } from './keyboard';
import { LandingView } from './landingView';
import { PauseBar } from './pauseBar';
import { ProjectPicker } from './projects';
import { BoardView } from './render';
import { DoneColumn } from './doneColumn';
import { EmptyBoard } from './emptyBoard';
import { FirstLoad } from './firstLoad';
import { projectsSeen } from './scopeView';
import type { Change } from './change';
import { BoardUpdates } from './boardUpdates';
import { blockedFilters } from './filter';
import { BoardState } from './state';
import { TagFilter } from './tagFilter';
import { Toolbar } from './toolbar';
import { type HostApi, VsCodeHost, browserConnector, getHostApi, hubSocketUrl } from './transport';
import { el } from './dom';

const host = document.body.dataset.host === 'vscode' ? 'vscode' : 'browser';
const state = new BoardState();

// ---------------------------------------------------------------- layout

const app = document.getElementById('app') ?? document.body.appendChild(el('div', 'app'));
app.id = 'app';
const toolbar = new Toolbar();
const { filterInput, phaseSelect } = toolbar;
const projectPicker = new ProjectPicker(host, applyFilter);
const tagFilter = new TagFilter(host, applyFilter);
phaseSelect.after(projectPicker.select, tagFilter.epicSelect, tagFilter.labelSelect);
projectPicker.update([], 0, 0); // "All projects" (hidden without projects) until the cards say more
const banners = new Banners(host);
const showError = (e: unknown): void => banners.showError(e);
const keys = el('p', 'keys', keyHelp);
keys.id = 'board-keys';

const view = new BoardView(renderContext);
const boardFocus = new BoardFocus(state, view);
const layout = el('main', 'layout');
const detail = new DetailPane({
	state,
	getCard: async cardId => {
		const got = await client.request('card/get', { cardId });
		rollups.put(cardId, got.children ?? null);
		return got;
	},
	diff: (cardId, paths) => client.request('card/diff', { cardId, ...(paths === undefined ? {} : { paths }) }),
	link: (cardId, dependsOn) => actions.link(cardId, dependsOn, true),
	unlink: (cardId, dependsOn) => actions.link(cardId, dependsOn, false),
	move: (cardId, to) => void actions.move(cardId, to, undefined),
	edit: card => void actions.editCard(card),
	comment: (cardId, text) => actions.comment(cardId, text),
	showError,
	revealInTree: host === 'vscode' ? cardId => vsHost?.post({ type: 'view/revealInTree', cardId }) : undefined,
	closed: cardId => boardFocus.cardIfShown(cardId),
});
layout.append(view.root, detail.root);
const emptyBoard = new EmptyBoard(() => void actions.createCard());
const firstLoad = new FirstLoad({
	banners,
	toolbar,
	view,
	controls: [phaseSelect, projectPicker.select, view.columns.blocked.filterSelect, toolbar.newButton],
	updateSummary: () => updates.updateSummary(),
});
// What reaches the DOM after a change (boardUpdates.ts); done and boardLoad are made below.
const updates = new BoardUpdates({
	state,
	view,
	focus: boardFocus,
	detail,
	toolbar,
	projectPicker,
	tagFilter,
	emptyBoard,
	firstLoad,
	done: () => done,
	boardLoad: () => boardLoad,
});
const queue = (change: Change): void => updates.queue(change);
const pauseBar = new PauseBar(() => client, showError, showPauses);
toolbar.newButton.after(pauseBar.button);
app.replaceChildren(toolbar.root, ...banners.elements, projectPicker.empty, emptyBoard.root, layout, keys);
banners.error.after(pauseBar.root);
// The landing queue: its words on the cards in line and the open detail, its count in Review's head.
const landingView = new LandingView(state, ids => {
	refreshRows();
	ids.forEach(id => detail.cardChanged(id));
});
view.columns.review.root.querySelector('.column-head')?.append(landingView.strip);
projectPicker.empty.after(tagFilter.empty);
app.removeAttribute('aria-busy');

function renderContext(): RenderContext {
	return { state, nowMs: Date.now(), tabStopId: boardFocus.tabStopId, rollups };
}

// ---------------------------------------------------------------- transport and client

let vsHost: VsCodeHost | undefined;
let hostApi: HostApi | undefined;
if (host === 'vscode') {
	hostApi = getHostApi();
	vsHost = new VsCodeHost(hostApi, window);
	vsHost.onView(m => {
		if (m.type === 'view/openCard') {
			detail.open(m.cardId);
		} else if (m.type === 'view/projects') {
			projectPicker.setWorkspace(m.workspace, m.showAll);
		}
	});
}
const client = new RpcClient({
	connect: vsHost?.connect ?? browserConnector(hubSocketUrl(location)),
	hello:
		host === 'browser'
			? { client: 'board', agent: { id: boardAgentId(), name: 'Board user', client: 'board' } }
			: { client: 'board' },
	// crypto.randomUUID exists only in secure contexts; getRandomValues works everywhere.
	randomId: () => randomHex(16),
});
// Epics' "3 / 5 done": the hub's roll-ups, fetched as epics show and when their children change.
const rollups = new EpicRollups(
	async cardId => (await client.request('card/get', { cardId })).children ?? null,
	() => columnIds.forEach(col => view.columns[col].refreshAll()),
);
const actions = new BoardActions({
	client,
	state,
	queue,
	showError,
	focusCardIfShown: id => boardFocus.cardIfShown(id),
	openDetail: id => detail.open(id),
	projects: () => {
		const chosen = projectPicker.selected;
		return {
			known: [...new Set([...projectsSeen(state), ...chosen])].sort(),
			preferred: chosen.length === 1 ? chosen[0] : undefined,
		};
	},
});

const done = new DoneColumn({
	column: view.columns.done,
	list: params => client.request('card/list', params),
	state,
	queue,
	showError,
	isLoaded: (): boolean => boardLoad.loaded,
});

const boardLoad: BoardLoad = new BoardLoad({
	list: params => client.request('card/list', params),
	agents: () => client.request('agent/list', {}),
	stats: () => client.request('card/stats', {}),
	state,
	done,
	queue,
	showError,
	renderAll: () => updates.renderAll(),
	liveChanged: () => {
		updates.updateLiveHeads();
		if (boardLoad.complete) {
			updates.updatePhases();
		}
	},
});

// ---------------------------------------------------------------- applying changes

function onEvent(event: BacklogEvent): void {
	if (event.type === 'paused' || event.type === 'resumed') {
		void pauseBar.load();
	}
	if (isCardless(event)) {
		return; // a pause or a run: no card changed
	}
	landingView.eventArrived(event);
	if (boardLoad.buffer(event)) {
		return;
	}
	updates.arrived(event.seq);
	done.totals.apply(event, state.getReal(event.cardId), boardLoad.complete);
	rollups.cardChanged(event.cardId, event.data.card ?? undefined);
	queue(state.applyEvent(event));
	detail.eventArrived(event);
}

// ---------------------------------------------------------------- drag, keyboard, filter

new DragController(view, {
	onDrop: (cardId: string, target: DropTarget) => void actions.move(cardId, target.column, target.index),
	onClick: cardId => {
		boardFocus.cardIfShown(cardId);
		detail.open(cardId);
	},
});

attachKeyboard({
	view,
	focusCard: (id, column) => boardFocus.card(id, column),
	open: id => detail.open(id),
	moveBy: (id, step) => actions.moveBy(id, step),
	reorder: (id, delta) => actions.reorder(id, delta),
	newCard: () => void actions.createCard(),
	focusFilter: () => filterInput.focus(),
});

document.addEventListener('keydown', e => {
	if (
		e.key === 'Escape' &&
		!e.defaultPrevented &&
		detail.cardId !== undefined &&
		document.querySelector('dialog[open]') === null
	) {
		e.preventDefault();
		detail.close();
	}
});

toolbar.newButton.addEventListener('click', () => void actions.createCard());
toolbar.needsInputButton.addEventListener('click', () => {
	const first = state.needsInput()[0];
	if (first !== undefined) {
		boardFocus.cardIfShown(first);
		detail.open(first, { reply: true });
	}
});

let filterTimer: number | undefined;
const blockedSelect = view.columns.blocked.filterSelect;
function applyFilter(): void {
	const blocked = blockedFilters.find(f => f === blockedSelect?.value) ?? 'all';
	const projects = projectPicker.selected;
	queue(state.setFilter({ text: filterInput.value, phase: phaseSelect.value, blocked, projects, ...tagFilter.value }));
	landingView.drawStrip();
	hostApi?.setState({ filter: state.filter });
	if (boardLoad.loaded) {
		void done.pager.reset(state.filter);
	}
}
filterInput.addEventListener('input', () => {
	window.clearTimeout(filterTimer);
	filterTimer = window.setTimeout(applyFilter, 120);
});
phaseSelect.addEventListener('change', applyFilter);
blockedSelect?.addEventListener('change', applyFilter);

/** The pauses changed: the ready cards they hold back show it. */
function showPauses(pauses: readonly Pause[]): void {
	state.pauses = pauses;
	refreshRows();
}

/** Re-fills the rendered rows (agents, pauses, the clock changed what they show) and the summary. */
function refreshRows(): void {
	if (boardLoad.loaded) {
		for (const col of columnIds) {
			view.columns[col].refreshAll();
		}
		updates.updateSummary();
	}
}

// Countdowns, agent health and stalled/expired markers move with the clock; only rendered rows are touched.
window.setInterval(refreshRows, 1000);

// ---------------------------------------------------------------- boot

async function boot(): Promise<void> {
	firstLoad.connection('connecting');
	client.onState(s => firstLoad.connection(s));
	client.onStore(s => banners.showStore(s));
	client.onEvent(onEvent);
	client.onAgents(agents => {
		state.setAgents(agents);
		refreshRows();
	});
	client.onLanding(entries => landingView.apply(entries));
	client.onHello(h => {
		state.actor = h.actor;
		state.thresholds = h.thresholds;
		document.body.dataset.actor = h.actor;
		// At every hello: the notices missed while offline never come. A hub without the queue: none shown.
		landingView.load(client).catch(() => undefined);
	});
	const saved = hostApi?.getState() as { filter?: { text?: unknown; phase?: unknown; blocked?: unknown } } | undefined;
	tagFilter.restore(saved?.filter);
	if (typeof saved?.filter?.text === 'string' && typeof saved.filter.phase === 'string') {
		filterInput.value = saved.filter.text;
		const blocked = blockedFilters.find(f => f === saved.filter?.blocked) ?? 'all';
		if (blockedSelect !== undefined) {
			blockedSelect.value = blocked;
		}
		state.setFilter({ text: saved.filter.text, phase: saved.filter.phase, blocked });
	}
	// The browser tab's remembered project (VS Code's host says its own with view/projects).
	state.setFilter({ ...state.filter, projects: projectPicker.selected, ...tagFilter.value });
	const hello = await connectFirst(client, e => {
		firstLoad.connection('offline');
		showError(e);
	});
	banners.hideError();
	// Subscribe before loading: events before the first render are buffered and applied then, in order
	// (boardLoad.ts); the live pages after it merge with the events applied meanwhile.
	await client.subscribe(hello.seq);
	performance.mark('baton:subscribed');
	void pauseBar.load();
	// The log was compacted past what this board saw while it was away: load it again.
	client.onResync(() => {
		rollups.clear();
		boardLoad.load().catch(showError);
	});
	// Drawn with the first page of each column; the rest of the live pages follow (baton:live-complete).
	if (!(await boardLoad.load())) {
		await boardLoad.firstRender; // a resync replaced this load before it drew: that one draws
	}
	performance.mark('baton:first-render');
	// rAF runs before that frame's style, layout and paint; a task queued from it runs after them.
	requestAnimationFrame(() => setTimeout(() => performance.mark('baton:first-frame'), 0));
	document.body.dataset.ready = 'true';
	pingWhileOpen(client, showError);
}

boot().catch((e: unknown) => {
	showError(e);
	document.body.dataset.ready = 'error';
});
