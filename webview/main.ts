/**
 * Entry of the board bundle (dist/webview/board.js): picks the transport from <body data-host>, loads
 * every card and agent, subscribes to the event feed and wires state, rendering, drag and drop,
 * keyboard, detail pane and dialogs together. Only wiring and the request flow live here.
 */
// Must stay the first import: it configures zod before core/protocol.ts defines its schemas.
import './jitless';

import { BatonError } from '../core/errors';
import { isAlive } from '../core/health';
import { type BacklogEvent, type Card, type HelloOk, type StoreHealth, limits } from '../core/protocol';
import { type ConnectionState, RpcClient } from '../core/rpc';
import { DetailPane } from './detail';
import { askText, confirmDialog } from './dialog';
import { DragController, type DropTarget } from './dnd';
import { cardFormDialog } from './editor';
import { attachKeyboard, keyHelp } from './keyboard';
import { type MoveRequest, planMove, priorityForDrop, priorityRequest } from './moves';
import { BoardView, type RenderContext } from './render';
import {
	type Change,
	type ColumnId,
	BoardState,
	blockedFilters,
	columnIds,
	columnOf,
	emptyChange,
	mergeChange,
} from './state';
import { type HostApi, VsCodeHost, browserConnector, getHostApi, hubSocketUrl } from './transport';

/** Emitted on document after a batch of events reached the DOM (used by tests and the benchmark). */
export interface AppliedDetail {
	seqs: number[];
	appliedAt: number;
}

const host = document.body.dataset.host === 'vscode' ? 'vscode' : 'browser';
const state = new BoardState();
let tabStopId: string | undefined;
let focusedId: string | undefined;
let loaded = false;
/** Events that arrive while the first snapshot loads; applied after it, in order. */
const buffered: BacklogEvent[] = [];

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
	const e = document.createElement(tag);
	e.className = className;
	if (text !== undefined) {
		e.textContent = text;
	}
	return e;
}

// ---------------------------------------------------------------- layout

const app = document.getElementById('app') ?? document.body.appendChild(el('div', 'app'));
app.id = 'app';
const toolbar = el('header', 'toolbar');
const brand = el('h1', 'brand', 'Baton');
const filterInput = el('input', 'input filter-text');
filterInput.type = 'search';
filterInput.placeholder = 'Filter by id or title  ( / )';
filterInput.setAttribute('aria-label', 'Filter cards by id or title');
const phaseSelect = el('select', 'input filter-phase');
phaseSelect.setAttribute('aria-label', 'Filter by phase');
const newButton = el('button', 'btn btn-primary', 'New card');
newButton.type = 'button';
newButton.title = 'Create a card (N)';
const summary = el('span', 'summary');
summary.setAttribute('aria-live', 'polite');
toolbar.append(brand, filterInput, phaseSelect, newButton, summary);

const connectionBanner = el('div', 'banner banner-connection');
connectionBanner.setAttribute('role', 'status');
connectionBanner.hidden = true;
/** The store refuses writes (disk full, PostgreSQL away): stays up until the hub says otherwise. */
const storeBanner = el('div', 'banner banner-store');
storeBanner.setAttribute('role', 'alert');
storeBanner.hidden = true;
const errorBanner = el('div', 'banner banner-error');
errorBanner.setAttribute('role', 'alert');
errorBanner.hidden = true;
const errorText = el('span', 'banner-text');
const errorClose = el('button', 'btn btn-icon', '✕');
errorClose.type = 'button';
errorClose.setAttribute('aria-label', 'Dismiss message');
errorBanner.append(errorText, errorClose);
const keys = el('p', 'keys', keyHelp);
keys.id = 'board-keys';

const view = new BoardView(renderContext);
const layout = el('main', 'layout');
const detail = new DetailPane({
	state,
	getCard: cardId => client.request('card/get', { cardId }),
	link: async (cardId, dependsOn) => {
		const r = await client.request('card/link', { cardId, dependsOn });
		queue(state.applyResult(r.card, state.eventSeqOf(cardId)));
	},
	unlink: async (cardId, dependsOn) => {
		const r = await client.request('card/unlink', { cardId, dependsOn });
		queue(state.applyResult(r.card, state.eventSeqOf(cardId)));
	},
	move: (cardId, to) => void performMove(cardId, to, undefined),
	edit: card => void editCard(card),
	showError,
	revealInTree: host === 'vscode' ? cardId => vsHost?.post({ type: 'view/revealInTree', cardId }) : undefined,
	closed: cardId => focusCardIfShown(cardId),
});
layout.append(view.root, detail.root);
app.replaceChildren(toolbar, connectionBanner, storeBanner, errorBanner, layout, keys);
app.removeAttribute('aria-busy');

function renderContext(): RenderContext {
	return { state, nowMs: Date.now(), tabStopId };
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
		}
	});
}
const randomHex = (bytes: number): string =>
	Array.from(crypto.getRandomValues(new Uint8Array(bytes)), b => b.toString(16).padStart(2, '0')).join('');

/**
 * The browser board acts as one stable agent per browser profile, so its claims stay its own across
 * reconnects (the hub would otherwise name each connection anew) and its pings renew their leases.
 * In VS Code the extension answers the hello with its own identity (`vscode:<user>`).
 */
function boardAgentId(): string {
	try {
		const saved = localStorage.getItem('baton.boardAgent');
		if (saved !== null && /^board:[0-9a-f]{8}$/.test(saved)) {
			return saved;
		}
		const id = `board:${randomHex(4)}`;
		localStorage.setItem('baton.boardAgent', id);
		return id;
	} catch {
		// Storage can be disabled; a per-page identity still works, it just does not survive a reload.
		return `board:${randomHex(4)}`;
	}
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

// ---------------------------------------------------------------- applying changes

let pending = emptyChange();
let pendingSeqs: number[] = [];
let flushQueued = false;

function queue(change: Change): void {
	mergeChange(pending, change);
	if (!flushQueued) {
		flushQueued = true;
		// A microtask, not a frame: an event reaches the DOM in the same task it arrived in.
		queueMicrotask(flush);
	}
}

function flush(): void {
	flushQueued = false;
	const change = pending;
	const seqs = pendingSeqs;
	pending = emptyChange();
	pendingSeqs = [];
	if (!loaded) {
		return;
	}
	const hadFocus = focusedId !== undefined && (document.activeElement?.closest('.board') ?? null) !== null;
	updateTabStop();
	for (const col of change.columns) {
		view.columns[col].setCards(state.column(col));
	}
	if (change.phases) {
		updatePhases();
	}
	for (const id of change.cards) {
		detail.cardChanged(id);
	}
	updateSummary();
	if (hadFocus && focusedId !== undefined) {
		// Rows are recycled: make sure focus stays on the same card, not on the node that held it.
		const card = state.get(focusedId);
		const node = card === undefined ? undefined : view.columns[columnOf(card.status)].elementFor(focusedId);
		if (node !== undefined && document.activeElement !== node) {
			node.focus({ preventScroll: true });
		}
	}
	if (seqs.length > 0) {
		document.dispatchEvent(
			new CustomEvent<AppliedDetail>('baton:applied', { detail: { seqs, appliedAt: performance.now() } }),
		);
	}
}

function updateTabStop(): void {
	const focused = focusedId === undefined ? undefined : state.get(focusedId);
	if (focused !== undefined && state.matches(focused)) {
		tabStopId = focusedId;
		return;
	}
	tabStopId = undefined;
	for (const col of columnIds) {
		const first = state.column(col)[0];
		if (first !== undefined) {
			tabStopId = first.id;
			return;
		}
	}
}

function renderAll(): void {
	updateTabStop();
	for (const col of columnIds) {
		view.columns[col].setCards(state.column(col));
	}
	updatePhases();
	updateSummary();
}

function updatePhases(): void {
	const current = state.filter.phase;
	const all = el('option', '', 'All phases');
	all.value = '';
	const options = [all];
	for (const p of state.phases()) {
		const o = el('option', '', p);
		o.value = p;
		options.push(o);
	}
	phaseSelect.replaceChildren(...options);
	phaseSelect.value = current;
}

function updateSummary(): void {
	const agents = [...state.agents.values()];
	const now = Date.now();
	const alive = agents.filter(a => isAlive(state.healthOf(a.id, now) ?? a.health)).length;
	summary.textContent = `${state.size.toLocaleString()} cards · ${alive} of ${agents.length} agents alive`;
}

function onEvent(event: BacklogEvent): void {
	if (!loaded) {
		buffered.push(event);
		return;
	}
	pendingSeqs.push(event.seq);
	queue(state.applyEvent(event));
}

// ---------------------------------------------------------------- banners

let errorTimer: number | undefined;
function showError(error: unknown): void {
	const message = BatonError.is(error) || error instanceof Error ? error.message : String(error);
	errorText.textContent = message;
	errorBanner.hidden = false;
	window.clearTimeout(errorTimer);
	errorTimer = window.setTimeout(() => (errorBanner.hidden = true), 15_000);
}
errorClose.addEventListener('click', () => (errorBanner.hidden = true));

const connectionText: Record<ConnectionState, string> = {
	connecting: 'Connecting to the Baton hub…',
	connected: '',
	offline:
		host === 'browser'
			? 'Offline: the Baton hub is unreachable. Reconnecting… If the hub was restarted, run "baton board" for a fresh link.'
			: 'Offline: the Baton hub is unreachable. Reconnecting…',
	closed: 'Disconnected from the Baton hub. Reload to reconnect.',
};
function showConnection(s: ConnectionState): void {
	document.body.dataset.connection = s;
	connectionBanner.textContent = connectionText[s];
	connectionBanner.hidden = s === 'connected';
}

function showStore(store: StoreHealth): void {
	document.body.dataset.store = store.state;
	const fallback = store.state === 'disk_full' ? 'The disk holding the backlog is full: changes are refused.' : '';
	storeBanner.textContent = store.state === 'ok' ? '' : (store.message ?? fallback);
	storeBanner.hidden = store.state === 'ok';
}

// ---------------------------------------------------------------- moves

async function sendMove(request: MoveRequest): Promise<Card | undefined> {
	switch (request.method) {
		case 'card/claim': {
			const r = await client.request('card/claim', request.params);
			if (r.card === null) {
				throw new BatonError('conflict', r.reason ?? `${request.params.cardId ?? 'The card'} could not be claimed.`);
			}
			return r.card;
		}
		case 'card/complete':
			return (await client.request('card/complete', request.params)).card;
		case 'card/block':
			return (await client.request('card/block', request.params)).card;
		case 'card/release':
			return (await client.request('card/release', request.params)).card;
		case 'card/reclaim':
			return (await client.request('card/reclaim', request.params)).cards[0];
		case 'card/unblock':
			return (await client.request('card/unblock', request.params)).card;
		case 'card/reopen':
			return (await client.request('card/reopen', request.params)).card;
		case 'card/update':
			return (await client.request('card/update', request.params)).card;
	}
}

/** Shows the change at once, sends it, and rolls it back if the hub refuses. */
async function send(id: string, request: MoveRequest, optimistic: Partial<Card>): Promise<void> {
	const sentAt = state.eventSeqOf(id);
	queue(state.optimistic(id, optimistic));
	try {
		const card = await sendMove(request);
		queue(card === undefined ? state.rollback(id) : state.applyResult(card, sentAt));
	} catch (e) {
		queue(state.rollback(id));
		if (request.method === 'card/reopen' && request.params.force !== true && BatonError.is(e, 'has_dependents')) {
			// Work built on it has started: say which, and reopen only when the user says so.
			const detail = `${e.message}\n\nForced, claimed dependents go back to the queue and done ones are flagged.`;
			if (await confirmDialog(`Reopen ${id} anyway?`, detail, 'Reopen anyway')) {
				await send(id, { method: 'card/reopen', params: { ...request.params, force: true } }, optimistic);
			}
			return;
		}
		showError(e);
	}
}

async function performMove(id: string, to: ColumnId, dropIndex: number | undefined): Promise<void> {
	const card = state.get(id);
	if (card === undefined) {
		return;
	}
	if (to === 'ready' && card.status === 'ready') {
		if (dropIndex !== undefined) {
			const list = state.column('ready');
			const current = list.findIndex(c => c.id === id);
			// dropIndex counts gaps in the list with the card in it; priorityForDrop counts without.
			const index = current >= 0 && current < dropIndex ? dropIndex - 1 : dropIndex;
			const p = priorityForDrop(list, card, index);
			if (p !== undefined && p !== card.priority) {
				await send(id, priorityRequest(card, p), { priority: p });
			}
		}
		return;
	}
	const waitingOn = state.waitingOn(card).map(d => (d.title === undefined ? d.id : `${d.id} (${d.title})`));
	const plan = planMove(card, to, { actor: state.actor, nowMs: Date.now(), waitingOn });
	if (plan.kind === 'none') {
		return;
	}
	if (plan.kind === 'refuse') {
		showError(plan.reason);
		return;
	}
	if (plan.confirm !== undefined && !(await confirmDialog(plan.label, plan.confirm, plan.label))) {
		return;
	}
	let request = plan.request;
	if (plan.askReason !== undefined && request.method === 'card/block') {
		const reason = await askText(plan.label, plan.askReason, 'Block', limits.reasonLength);
		if (reason === undefined) {
			return;
		}
		request = { method: 'card/block', params: { ...request.params, reason } };
	}
	await send(id, request, plan.optimistic);
	focusCardIfShown(id);
}

function reorder(id: string, delta: -1 | 1): void {
	const list = state.column('ready');
	const card = state.get(id);
	const current = list.findIndex(c => c.id === id);
	if (card === undefined || current < 0) {
		return;
	}
	const p = priorityForDrop(list, card, current + delta);
	if (p !== undefined && p !== card.priority) {
		void send(id, priorityRequest(card, p), { priority: p }).then(() => focusCardIfShown(id));
	}
}

// ---------------------------------------------------------------- create / edit

async function createCard(): Promise<void> {
	const r = await cardFormDialog(undefined, state.phases());
	if (r?.kind !== 'create') {
		return;
	}
	try {
		const { cards } = await client.request('card/create', { cards: [r.input] });
		for (const c of cards) {
			queue(state.applyResult(c, state.eventSeqOf(c.id)));
		}
		const first = cards[0];
		if (first !== undefined) {
			detail.open(first.id);
		}
	} catch (e) {
		showError(e);
	}
}

async function editCard(card: Card): Promise<void> {
	const r = await cardFormDialog(card, state.phases());
	if (r?.kind !== 'update') {
		return;
	}
	const { cardId: _id, version: _v, ...patch } = r.params;
	await send(card.id, { method: 'card/update', params: r.params }, patch as Partial<Card>);
}

// ---------------------------------------------------------------- focus, drag, keyboard, filter

function focusCardIfShown(id: string): void {
	const card = state.get(id);
	if (card === undefined || !state.matches(card)) {
		return;
	}
	focusCard(id, columnOf(card.status));
}

function focusCard(id: string, column: ColumnId): void {
	const col = view.columns[column];
	const index = col.indexOf(id);
	if (index < 0) {
		return;
	}
	focusedId = id;
	tabStopId = id;
	col.reveal(index);
	const prev = view.root.querySelector<HTMLElement>('.card[tabindex="0"]');
	if (prev !== null && prev.dataset.id !== id) {
		prev.tabIndex = -1;
	}
	const node = col.elementFor(id);
	if (node !== undefined) {
		node.tabIndex = 0;
		node.focus({ preventScroll: true });
	}
}

view.root.addEventListener('focusin', e => {
	const card = e.target instanceof HTMLElement ? e.target.closest<HTMLElement>('.card') : null;
	if (card?.dataset.id !== undefined) {
		focusedId = card.dataset.id;
	}
});

new DragController(view, {
	onDrop: (cardId: string, target: DropTarget) => void performMove(cardId, target.column, target.index),
	onClick: cardId => {
		focusCardIfShown(cardId);
		detail.open(cardId);
	},
});

attachKeyboard({
	view,
	focusCard,
	open: id => detail.open(id),
	move: (id, to) => void performMove(id, to, undefined),
	reorder,
	newCard: () => void createCard(),
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

newButton.addEventListener('click', () => void createCard());

let filterTimer: number | undefined;
const blockedSelect = view.columns.blocked.filterSelect;
function applyFilter(): void {
	const blocked = blockedFilters.find(f => f === blockedSelect?.value) ?? 'all';
	queue(state.setFilter({ text: filterInput.value, phase: phaseSelect.value, blocked }));
	hostApi?.setState({ filter: state.filter });
}
filterInput.addEventListener('input', () => {
	window.clearTimeout(filterTimer);
	filterTimer = window.setTimeout(applyFilter, 120);
});
phaseSelect.addEventListener('change', applyFilter);
blockedSelect?.addEventListener('change', applyFilter);

// Countdowns, agent health and stalled/expired markers move with the clock; only rendered rows are touched.
window.setInterval(() => {
	if (loaded) {
		for (const col of columnIds) {
			view.columns[col].refreshAll();
		}
		updateSummary();
	}
}, 1000);

// ---------------------------------------------------------------- boot

async function loadAllCards(): Promise<Card[]> {
	const all: Card[] = [];
	let cursor: string | undefined;
	do {
		const page = await client.request('card/list', cursor === undefined ? { limit: 1000 } : { limit: 1000, cursor });
		all.push(...page.cards);
		cursor = page.nextCursor;
	} while (cursor !== undefined);
	return all;
}

async function boot(): Promise<void> {
	showConnection('connecting');
	client.onState(showConnection);
	client.onStore(showStore);
	client.onEvent(onEvent);
	client.onAgents(agents => {
		state.setAgents(agents);
		if (loaded) {
			for (const col of columnIds) {
				view.columns[col].refreshAll();
			}
			updateSummary();
		}
	});
	client.onHello(h => {
		state.actor = h.actor;
		state.thresholds = h.thresholds;
		document.body.dataset.actor = h.actor;
	});
	const saved = hostApi?.getState() as { filter?: { text?: unknown; phase?: unknown; blocked?: unknown } } | undefined;
	if (typeof saved?.filter?.text === 'string' && typeof saved.filter.phase === 'string') {
		filterInput.value = saved.filter.text;
		const blocked = blockedFilters.find(f => f === saved.filter?.blocked) ?? 'all';
		if (blockedSelect !== undefined) {
			blockedSelect.value = blocked;
		}
		state.setFilter({ text: saved.filter.text, phase: saved.filter.phase, blocked });
	}
	let hello: HelloOk | undefined;
	// The RpcClient reconnects by itself once connected; the very first connection is retried here.
	for (let delay = 500; hello === undefined; delay = Math.min(delay * 2, 10_000)) {
		try {
			hello = await client.start();
		} catch (e) {
			showConnection('offline');
			showError(e);
			await new Promise(resolve => window.setTimeout(resolve, delay));
		}
	}
	errorBanner.hidden = true;
	// Subscribe before loading: events during the load are buffered and applied after it, in order.
	await client.subscribe(hello.seq);
	performance.mark('baton:subscribed');
	const [cards, agents] = await Promise.all([loadAllCards(), client.request('agent/list', {})]);
	performance.mark('baton:data-loaded');
	state.load(cards);
	state.setAgents(agents.agents);
	state.thresholds = agents.thresholds;
	for (const e of buffered.splice(0)) {
		state.applyEvent(e);
	}
	loaded = true;
	renderAll();
	performance.mark('baton:first-render');
	// rAF runs before that frame's style, layout and paint; a task queued from it runs after them.
	requestAnimationFrame(() => setTimeout(() => performance.mark('baton:first-frame'), 0));
	document.body.dataset.ready = 'true';
	// Liveness for this board's agent: the hub renews the leases of claims made here while it is open.
	window.setInterval(() => {
		if (client.connectionState === 'connected') {
			client.request('agent/ping', {}).catch((e: unknown) => {
				if (!BatonError.is(e, 'unavailable') && !BatonError.is(e, 'timeout')) {
					showError(e);
				}
			});
		}
	}, 10_000);
}

boot().catch((e: unknown) => {
	showError(e);
	document.body.dataset.ready = 'error';
});
