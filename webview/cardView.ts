/**
 * One card's element in a column: built once per recycled DOM node and refilled from a card on every
 * change (id, priority, phase, flags, title, holder or reviewer, lease, note, a done card's result,
 * progress; a dispatched card's seat, elapsed time and last output line, an assignee chip, a paused
 * flag, its place in the landing queue), with an aria-label that says the same. Everything user-supplied goes in through
 * textContent, never HTML, except the result: markdown, sanitised by markdown.ts; styles through CSSOM (the CSP allows no inline style attributes). It must not keep state of its own
 * beyond the node's parts, nor decide a card's rules (the markers come from BoardState, i.e. core).
 */
import type { Card } from '../core/protocol';
import type { EpicRollups } from '../core/protocol/epicRollups';
import { formatDuration } from '../core/duration';
import { pauseOf, pauseText, runningText } from '../core/rules/dispatched';
import { landingLine, landingText } from '../core/rules/landing';
import { checksBadge } from './checksView';
import { fillTags } from './epics';
import { formatRemaining } from './format';
import { renderMarkdownSummary } from './markdown';
import { scopeChip, waitingOnScope } from './scopeView';
import type { BoardState } from './state';
import { el, shown } from './dom';

/** Height of one card slot (card + gap) in px; the card itself is 8 px shorter. */
export const rowHeight = 100;
/**
 * The slot in a narrow column (render.ts): room for the flags on a line of their own and the meta line
 * in two (holder and lease, then the note), so no flag or lease is cut.
 */
export const narrowRowHeight = 132;

/** Parts of a card element, found once per node and kept for fast refills. */
interface CardParts {
	id: HTMLElement;
	prio: HTMLElement;
	phase: HTMLElement;
	flags: HTMLElement;
	title: HTMLElement;
	ownerWrap: HTMLElement;
	ownerDot: HTMLElement;
	owner: HTMLElement;
	lease: HTMLElement;
	note: HTMLElement;
	/** A done card's result, as markdown on one line. */
	result: HTMLElement;
	bar: HTMLElement;
	progress: HTMLElement;
	/** A dispatched agent's last output line (all of them in its tooltip). */
	output: HTMLElement;
}

const parts = new WeakMap<HTMLElement, CardParts>();
/** Each card's tag line: epic progress, its epic, labels (epics.ts). */
const tagLines = new WeakMap<HTMLElement, HTMLElement>();

export function createCardElement(): HTMLElement {
	const card = el('div', 'card');
	card.setAttribute('role', 'listitem');
	card.tabIndex = -1;
	const top = el('div', 'card-top');
	const id = el('span', 'card-id');
	const prio = el('span', 'card-prio');
	const phase = el('span', 'card-phase');
	const flags = el('span', 'card-flags');
	top.append(id, prio, phase, flags);
	const title = el('div', 'card-title');
	const meta = el('div', 'card-meta');
	const ownerWrap = el('span', 'card-owner');
	const ownerDot = el('span', 'health-dot');
	ownerDot.setAttribute('aria-hidden', 'true');
	const owner = el('span', 'owner-name');
	ownerWrap.append(ownerDot, owner);
	const lease = el('span', 'card-lease');
	const note = el('span', 'card-note');
	const result = el('span', 'card-result markdown-line');
	meta.append(ownerWrap, lease, note, result);
	const progress = el('div', 'card-progress');
	progress.setAttribute('aria-hidden', 'true');
	const bar = el('div', 'card-progress-bar');
	progress.append(bar);
	const output = el('div', 'card-output');
	const tags = el('div', 'card-tags');
	card.append(top, title, tags, meta, output, progress);
	card.style.height = `${rowHeight - 8}px`;
	parts.set(card, {
		id,
		prio,
		phase,
		flags,
		title,
		ownerWrap,
		ownerDot,
		owner,
		lease,
		note,
		result,
		bar,
		progress,
		output,
	});
	tagLines.set(card, tags);
	return card;
}

function addFlag(flags: HTMLElement, name: string, label: string, title: string): void {
	const f = el('span', `flag flag-${name}`, label);
	f.title = title;
	flags.append(f);
}

export interface RenderContext {
	state: BoardState;
	nowMs: number;
	/** Card id that currently holds the board's single tab stop. */
	tabStopId: string | undefined;
	/** Epics' roll-ups. */
	rollups?: EpicRollups;
}

function agentLabel(state: BoardState, owner: string, nowMs: number): { name: string; health: string } {
	const a = state.agents.get(owner);
	return a === undefined
		? { name: owner, health: 'unknown' }
		: { name: a.name || a.id, health: state.healthOf(owner, nowMs) ?? 'unknown' };
}

/** Fills a card element from a card; everything user-supplied goes through textContent. */
export function fillCard(node: HTMLElement, card: Card, ctx: RenderContext): void {
	const p = parts.get(node);
	if (p === undefined) {
		return;
	}
	const { state } = ctx;
	const m = state.markers(card, ctx.nowMs);
	node.dataset.id = card.id;
	node.tabIndex = card.id === ctx.tabStopId ? 0 : -1;
	node.classList.toggle('card--waiting', m.waiting);
	node.classList.toggle('card--stalled', m.stalled);
	node.classList.toggle('card--expired', m.expired);
	node.classList.toggle('card--pending', state.isPending(card.id));
	p.id.textContent = card.id;
	p.prio.textContent = `P${card.priority}`;
	p.prio.title = `Priority ${card.priority} (higher is sooner)`;
	p.phase.textContent = card.phase ?? '';
	p.phase.hidden = card.phase === null;
	p.flags.replaceChildren();
	p.title.textContent = shown(card.title);
	p.title.title = shown(card.title);
	let owner = '';
	let health = '';
	let lease = '';
	let note = '';
	let result: string | null = null;
	const labels: string[] = [`${card.id}: ${card.title}`, `priority ${card.priority}`];
	if (card.phase !== null) {
		labels.push(`phase ${card.phase}`);
	}
	node.classList.toggle('card--asking', card.needsInput === true);
	if (card.needsInput === true) {
		addFlag(p.flags, 'input', 'needs input', 'An agent asked a question: open the card to reply');
		labels.push('needs your input: an agent asked a question');
	}
	const d = card.status === 'claimed' ? card.dispatch : undefined;
	const lines = d?.output ?? [];
	p.output.textContent = shown(lines.at(-1) ?? '');
	p.output.title = shown(lines.join('\n'));
	p.output.hidden = lines.length === 0;
	node.classList.toggle('card--dispatched', lines.length > 0);
	if (card.assignee && card.status !== 'done') {
		const kind = card.assignee.startsWith('kind:');
		const who = kind ? card.assignee.slice(5) : card.assignee;
		const words = `assigned to ${kind ? `any ${who} agent` : who}`;
		addFlag(p.flags, 'assignee', `→ ${who}`, `${words}: only it may claim this card`);
		labels.push(words);
	}
	const pause = card.status === 'ready' ? pauseOf(card, state.pauses) : undefined;
	if (pause !== undefined) {
		addFlag(p.flags, 'paused', 'paused', pauseText(pause));
		labels.push(pauseText(pause));
	}
	if (card.status === 'claimed' && card.claimOwner !== null) {
		const a = agentLabel(state, card.claimOwner, ctx.nowMs);
		owner = d ? d.kind : a.name;
		health = a.health;
		lease = card.leaseExpiresAt === null ? '' : formatRemaining(Date.parse(card.leaseExpiresAt) - ctx.nowMs);
		note = d ? runningText(d, ctx.nowMs) : (card.progressNote ?? '');
		labels.push(`held by ${a.name}`, lease, d ? note : '', lines.at(-1) ?? '');
	} else if (card.status === 'review') {
		({ owner, health, lease, note } = reviewParts(card, ctx, p.flags, labels));
	} else if (card.status === 'blocked') {
		note = card.blockedReason ?? '';
		if (card.failed === true) {
			addFlag(p.flags, 'failed', 'failed', 'Its attempts ran out or its agent gave up; move it to Ready to retry');
		}
		labels.push(`${card.failed === true ? 'failed' : 'blocked'}: ${note}`);
	} else if (card.status === 'ready' && card.handoff !== null && card.handoff !== undefined) {
		const checkFailed = card.checks !== undefined && card.checks.state !== 'passed' && card.checks.state !== 'running';
		note = `${checkFailed ? 'checks failed' : 'changes requested'}: ${card.handoff}`;
		labels.push(note);
	} else if (card.status === 'done') {
		note = `done ${formatDuration(Math.max(0, ctx.nowMs - Date.parse(card.updatedAt)))} ago`;
		result = card.result === null || card.result.trim() === '' ? null : card.result;
	}
	// `waiting` has several causes (the claim guards' order): dependencies, open children, a waiting
	// parent, files held. Each says its own words; files held is the scope's sentence below.
	const deps = m.waiting ? state.waitingOn(card).map(d => d.id) : [];
	const treeNote =
		(card.openChildren ?? 0) > 0
			? `waits on ${card.openChildren} open children`
			: card.treeWaits === true
				? 'waits with its parent'
				: undefined;
	const waitNoted = m.waiting && (card.unmetDeps > 0 || deps.length > 0 || treeNote !== undefined);
	if (waitNoted) {
		note =
			card.unmetDeps > 0 || deps.length > 0
				? `waits on ${deps.length > 0 ? deps.join(', ') : `${card.unmetDeps} dependencies`}`
				: (treeNote ?? '');
		addFlag(p.flags, 'waiting', 'waiting', note);
		labels.push(note);
	}
	const scopeWait = waitNoted ? undefined : waitingOnScope(state, card);
	if (scopeWait !== undefined) {
		note = scopeWait.text;
		addFlag(p.flags, 'waiting', 'files held', `${scopeWait.text}: ${scopeWait.wait.theirs}`);
		labels.push(note);
	}
	const badge = checksBadge(card);
	if (badge !== undefined) {
		addFlag(p.flags, badge.name, badge.label, badge.title);
		labels.push(badge.title);
	}
	const chip = scopeChip(card);
	if (chip !== undefined) {
		addFlag(p.flags, 'scope', chip.label, chip.title);
		labels.push(chip.title);
	}
	if (m.deferred && card.deferUntil !== null) {
		addFlag(p.flags, 'deferred', 'deferred', `Not claimable before ${new Date(card.deferUntil).toLocaleString()}`);
	}
	if (m.stalled) {
		addFlag(p.flags, 'stalled', 'stalled', 'The holder is alive but has reported no progress for a while');
		labels.push('stalled');
	}
	if (m.expired) {
		addFlag(
			p.flags,
			'expired',
			'expired',
			card.status === 'review'
				? 'The review lease ran out; the card waits for another reviewer'
				: 'The lease ran out; the hub returns the card to Ready',
		);
		labels.push('lease expired');
	}
	if (state.isPending(card.id)) {
		addFlag(p.flags, 'pending', 'saving…', 'Waiting for the hub to confirm this change');
	}
	p.owner.textContent = shown(owner);
	p.ownerWrap.hidden = owner === '';
	p.ownerDot.className = owner === '' ? 'health-dot' : `health-dot health-${health}`;
	p.ownerDot.title = owner === '' ? '' : `Agent health: ${health}`;
	p.lease.textContent = lease;
	p.note.textContent = shown(note);
	p.note.title = shown(note);
	const resultText = fillResult(p.result, result);
	if (resultText !== '') {
		labels.push(`result: ${resultText}`);
	}
	const tagLine = tagLines.get(node) ?? el('div', '');
	const tags = fillTags(tagLine, card, state, ctx.rollups);
	labels.push(...tags.words);
	// A running agent's output line takes the tag line's place (the row height is fixed); the words stay
	// in the aria-label and the tooltip.
	if (!p.output.hidden) {
		tagLine.hidden = true;
	}
	const progress = card.status === 'claimed' ? card.progress : card.status === 'done' ? 100 : (tags.percent ?? null);
	p.progress.hidden = progress === null;
	// A tag line beside a meta line leaves the title one line (board.css): the row height is fixed.
	node.classList.toggle(
		'card--tight',
		!tagLine.hidden && tags.words.length > 0 && (owner + note !== '' || result !== null),
	);
	p.bar.style.width = `${progress ?? 0}%`;
	if (progress !== null && card.status === 'claimed') {
		labels.push(`${progress}% done`);
	}
	node.setAttribute('aria-label', shown(labels.filter(s => s !== '').join(', ')));
}

/** The markdown each result element shows, so the clock's refreshes do not render it again. */
const shownResult = new WeakMap<HTMLElement, string | null>();

/** Fills (or empties) a card's result line; returns its plain text for the aria-label. */
function fillResult(node: HTMLElement, source: string | null): string {
	if (shownResult.get(node) !== source) {
		shownResult.set(node, source);
		node.replaceChildren(source === null ? '' : renderMarkdownSummary(source));
		node.hidden = source === null;
		node.title = node.textContent.replace(/\s+/g, ' ').trim();
	}
	return node.hidden ? '' : node.title;
}

/**
 * A card in review: who completed it, who must review it (a flag), and the reviewing agent with its
 * health and lease when one holds the review.
 */
function reviewParts(
	card: Card,
	ctx: RenderContext,
	flags: HTMLElement,
	labels: string[],
): { owner: string; health: string; lease: string; note: string } {
	const mode = card.review === 'agent' ? 'agent' : 'human';
	// Approved and in its base's landing queue: it waits to land, no longer for a review.
	const landing = ctx.state.landing.get(card.id);
	if (landing !== undefined) {
		addFlag(flags, 'landing', landingText(landing), landingLine(landing));
		const note = `approved by ${landing.actor === ctx.state.actor ? 'you' : landing.actor}`;
		labels.push('in review', landingText(landing), note);
		return { owner: '', health: '', lease: '', note };
	}
	addFlag(
		flags,
		'review',
		`review: ${mode}`,
		mode === 'agent' ? 'Waits for a reviewing agent (or a human)' : 'Waits for a human to approve or request changes',
	);
	// Another card landed meanwhile and this branch no longer merges: approving would send it back.
	const ws = card.workspace;
	if (ws?.conflicts !== undefined) {
		const words = `conflicts with ${ws.base}`;
		addFlag(
			flags,
			'conflicts',
			words,
			`No longer merges into ${ws.base} (${ws.conflicts.files.join(', ')}): approving would send it back; request changes to send it back now`,
		);
		labels.push(words);
	}
	const by = card.completedBy ?? undefined;
	const note = by === undefined ? 'waiting for review' : `completed by ${by === ctx.state.actor ? 'you' : by}`;
	labels.push('in review', note, mode === 'agent' ? 'an agent reviews it' : 'a human reviews it');
	if (card.claimOwner === null) {
		return { owner: '', health: '', lease: '', note };
	}
	const a = agentLabel(ctx.state, card.claimOwner, ctx.nowMs);
	const lease = card.leaseExpiresAt === null ? '' : formatRemaining(Date.parse(card.leaseExpiresAt) - ctx.nowMs);
	labels.push(`reviewed by ${a.name}`, lease);
	return { owner: `${a.name} reviewing`, health: a.health, lease, note };
}
