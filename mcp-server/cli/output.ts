/**
 * CLI output: aligned plain-text tables for people, one JSON document for `--json`, and the error
 * shapes (exit 1: refused, exit 2: usage). Writes through injected streams so tests and `baton up`
 * share it; no colour codes, so logs and CI stay readable.
 */
import { checksSummary } from '../../core/rules/checks';
import { cardHold } from '../../core/rules/claimGuards';
import { type StateWord, refStateWord, stateWord, unmetDependencies } from '../../core/rules/claimable';
import { jsonVisible, visibleText } from '../../core/visibleText';
import type { Agent, BacklogEvent, Card, CardRef, CardWorkspace, Message } from '../../core/protocol';

export interface Output {
	out(text: string): void;
	err(text: string): void;
}

/**
 * The terminal's output: whatever a command prints passes visibleText (core/visibleText.ts), so text an
 * agent wrote (a title, a result, a comment, a reason) can move no cursor and forge no line.
 */
export const processOutput: Output = {
	out: text => process.stdout.write(terminalLine(text)),
	err: text => process.stderr.write(terminalLine(text)),
};

function terminalLine(text: string): string {
	const safe = visibleText(text, { multiline: true });
	return safe.endsWith('\n') ? safe : `${safe}\n`;
}

let hungUp = false;
let onTerminalGone: (() => void) | undefined;

/**
 * `baton run` on SIGHUP: its terminal is gone (and a pipe's reader may have gone with it), but it
 * drains rather than ending, so from now on a failed write to stdout or stderr (EIO, EPIPE) is dropped.
 */
export function outputHungUp(): void {
	hungUp = true;
}

/**
 * While `baton run` runs, a write that fails with EIO (its terminal hung up) calls `handler` as SIGHUP
 * would: the kernel signals only the terminal's session leader, so such a write can come first.
 */
export function whenTerminalGone(handler: (() => void) | undefined): void {
	onTerminalGone = handler;
}

/**
 * Output to a pipe whose reader has gone (`baton agents --json | head -c 300`) ends the CLI quietly
 * with the exit code it has so far (0 unless a command set another), as SIGPIPE ends other Unix
 * tools; Node ignores SIGPIPE and would otherwise die of an unhandled `write EPIPE` with a stack.
 * After `outputHungUp()` such a write is dropped instead.
 */
export function endQuietlyOnClosedPipe(): void {
	for (const stream of [process.stdout, process.stderr]) {
		stream.on('error', (e: NodeJS.ErrnoException) => {
			if (e.code === 'EIO' && onTerminalGone !== undefined) {
				onTerminalGone();
				return;
			}
			if (hungUp && (e.code === 'EIO' || e.code === 'EPIPE')) {
				return;
			}
			if (e.code !== 'EPIPE') {
				throw e;
			}
			process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
		});
	}
}

/** A usage mistake (unknown flag, missing argument, not a number): exit 2 with the command's help. */
export class UsageError extends Error {
	override readonly name = 'UsageError';
}

/** `--json`: the raw values, with the characters a terminal acts on spelled as JSON's \u escapes. */
export function printJson(output: Output, value: unknown): void {
	output.out(jsonVisible(JSON.stringify(value, null, 2)));
}

/**
 * Cuts to `max` characters with an ellipsis; newlines become spaces so rows stay one line, and control
 * characters visible escapes (counted in the width, so columns stay aligned).
 */
export function truncate(text: string, max: number): string {
	const flat = visibleText(text.replace(/\s+/g, ' ').trim());
	return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

/** Left-aligned columns separated by two spaces; the last column is not padded. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
	const widths = headers.map((h, i) => Math.max(h.length, ...rows.map(r => (r[i] ?? '').length)));
	const line = (cells: readonly string[]): string =>
		cells
			.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
			.join('  ')
			.trimEnd();
	return [line(headers), ...rows.map(line)].join('\n');
}

/** "3m ago", "2h ago": ages for people; absolute times stay in --json. */
export function ago(iso: string | null, now: number = Date.now()): string {
	if (iso === null) {
		return '-';
	}
	const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
	if (seconds < 60) {
		return `${seconds}s ago`;
	}
	if (seconds < 3600) {
		return `${Math.floor(seconds / 60)}m ago`;
	}
	if (seconds < 86_400) {
		return `${Math.floor(seconds / 3600)}h ago`;
	}
	return `${Math.floor(seconds / 86_400)}d ago`;
}

/** A card's scope with what its holder reserved on top: "src/auth/**, lock:db (+ package.json)". */
export function scopeText(card: Card): string | null {
	const scope = card.scope ?? [];
	const reserved = card.reserved ?? [];
	if (scope.length === 0 && reserved.length === 0) {
		return null;
	}
	const extra = reserved.length === 0 ? '' : `${scope.length === 0 ? '' : ' '}(+ ${reserved.join(', ')})`;
	return `${scope.join(', ')}${extra}`;
}

/**
 * What holds a card back, after its word (core/rules/claimable.ts `stateWord`): " on B, C" for a waiting
 * card (its unfinished dependencies when known, else how many), " on 2 open children", " while its
 * parent waits", " on files held by X", " until T" for a deferred one, nothing more for a paused one.
 */
export function heldBack(card: Card, now: number, unmet?: readonly string[]): string {
	const word = stateWord(card, now);
	const hold = cardHold(card, now)?.name;
	if (hold === 'children') {
		const n = card.openChildren ?? 0;
		return ` on ${n} open ${n === 1 ? 'child' : 'children'}`;
	}
	if (hold === 'ancestors') {
		return ' while its parent waits on dependencies';
	}
	if (hold === 'files') {
		return ` on files held by ${card.filesHeldBy ?? '?'}`;
	}
	if (word === 'waiting') {
		const n = card.unmetDeps;
		return unmet !== undefined && unmet.length > 0
			? ` on ${unmet.join(', ')}`
			: ` on ${n} unfinished ${n === 1 ? 'dependency' : 'dependencies'}`;
	}
	return word === 'deferred' ? ` until ${card.deferUntil ?? '?'} (retry backoff)` : '';
}

/**
 * The cards as a table. STATUS is the card's word (ready = claimable now, waiting, deferred, …) and
 * WAITS the dependencies it still waits on (`waitsOn` of card/list; without it, all of dependsOn
 * while it waits), never one that is done.
 */
export function cardTable(
	cards: readonly Card[],
	waitsOn: Readonly<Record<string, readonly string[]>> = {},
	now: number = Date.now(),
): string {
	if (cards.length === 0) {
		return 'No cards.';
	}
	// PROJECT and SCOPE only when some card has one, so a backlog without projects reads as before.
	const projects = cards.some(c => c.project != null);
	const scopes = cards.some(c => scopeText(c) !== null);
	return formatTable(
		[
			'ID',
			'STATUS',
			'PRI',
			'PHASE',
			...(projects ? ['PROJECT'] : []),
			'OWNER',
			'WAITS',
			...(scopes ? ['SCOPE'] : []),
			'TITLE',
		],
		cards.map(c => [
			c.id,
			stateWord(c, now),
			String(c.priority),
			c.phase ?? '-',
			...(projects ? [truncate(c.project ?? '-', 30)] : []),
			c.claimOwner ?? '-',
			c.unmetDeps === 0 ? '-' : truncate((waitsOn[c.id] ?? c.dependsOn).join(','), 24),
			...(scopes ? [truncate(scopeText(c) ?? '-', 30)] : []),
			truncate(c.title, 60),
		]),
	);
}

/** A dependency or dependent's word in `show` (the same as list's STATUS for that card). */
export function refWord(ref: CardRef, now: number = Date.now()): StateWord {
	return refStateWord(ref, now);
}

/** A workspace's diff against its base in a few words: "3 files, +10 −2 at 1a2b3c4d"; null before complete. */
export function workspaceChanges(ws: CardWorkspace): string | null {
	if (ws.head === undefined || ws.filesChanged === undefined) {
		return null;
	}
	const files = `${ws.filesChanged} ${ws.filesChanged === 1 ? 'file' : 'files'}`;
	// A landed branch's tip is gone with the branch: the landed commit (the workspace row) is what to read.
	return `${files}, +${ws.insertions ?? 0} −${ws.deletions ?? 0}${ws.landed === undefined ? ` at ${ws.head.slice(0, 8)}` : ''}`;
}

/**
 * Where a card's work is: its branch and worktree, or once landed the commit on its base (the
 * worktree and branch are gone then, so neither is named).
 */
export function workspaceWhere(ws: CardWorkspace): string {
	if (ws.landed !== undefined) {
		return `landed as ${ws.landed.commit.slice(0, 12)} on ${ws.base} (${ws.landed.mode}, ${ws.landed.at})`;
	}
	return `${ws.branch} (from ${ws.base}) in ${ws.path}`;
}

/** A review card whose branch stopped merging into its base: where, and what approving would do. */
function conflictWords(card: Card): string | null {
	const ws = card.workspace;
	const c = ws?.conflicts;
	return ws === undefined || c === undefined
		? null
		: `no longer merges into ${ws.base} (at ${c.base.slice(0, 12)}) in ${c.files.join(', ')}: approving would send it back; \`baton reject ${card.id} --note TEXT\` sends it back now, and its next claim starts from the markers`;
}

/** A failed check's output tail, unless the hand-over already quotes it. */
function checksOutput(card: Card): string | null {
	const tail = card.checks?.state === 'passed' ? undefined : card.checks?.tail;
	return tail === undefined || tail === '' || card.handoff?.includes(tail) === true ? null : tail;
}

/** A card for `show`; `dependencies` (card/get's) name what a waiting card waits on. */
export function describeCard(
	card: Card,
	dependencies?: readonly CardRef[],
	now: number = Date.now(),
	/** card/get's effectivePriority (aging on, the card ready). */
	effectivePriority?: number,
): string {
	const unmet = dependencies === undefined ? undefined : unmetDependencies(dependencies).map(d => d.id);
	const rows: [string, string][] = [
		['id', card.id],
		['title', card.title],
		['status', card.status === 'review' ? 'in review' : `${stateWord(card, now)}${heldBack(card, now, unmet)}`],
		[
			'priority',
			effectivePriority === undefined || effectivePriority === card.priority
				? String(card.priority)
				: `${card.priority} (effective ${effectivePriority} after waiting: aging)`,
		],
	];
	const optional: [string, string | null][] = [
		['phase', card.phase],
		['project', card.project ?? null],
		['scope', card.scope !== undefined && card.scope.length > 0 ? card.scope.join(', ') : null],
		['reserved', card.reserved !== undefined && card.reserved.length > 0 ? card.reserved.join(', ') : null],
		['labels', card.labels !== undefined && card.labels.length > 0 ? card.labels.join(', ') : null],
		['parent', card.parent ?? null],
		['auto-close', card.autoClose === true ? 'completes by itself when its last child is done' : null],
		['related', card.related !== undefined && card.related.length > 0 ? card.related.join(', ') : null],
		['duplicates', card.duplicates !== undefined && card.duplicates.length > 0 ? card.duplicates.join(', ') : null],
		['discovered from', card.discoveredFrom ?? null],
		['dependsOn', card.dependsOn.length > 0 ? card.dependsOn.join(', ') : null],
		['requires', card.requires.length > 0 ? card.requires.join(', ') : null],
		['assigned to', card.assignee ?? null],
		['owner', card.claimOwner],
		[
			'dispatched',
			card.dispatch == null
				? null
				: `seat ${card.dispatch.seat} of run ${card.dispatch.run} on ${card.dispatch.host} (${card.dispatch.kind}${card.dispatch.pid === undefined ? '' : `, pid ${card.dispatch.pid}`}) since ${card.dispatch.startedAt}`,
		],
		['epoch', card.claimOwner === null ? null : String(card.claimEpoch)],
		['lease until', card.leaseExpiresAt],
		[
			'progress',
			card.progress === null ? null : `${card.progress}%${card.progressNote ? ` ${card.progressNote}` : ''}`,
		],
		['attempts', card.attempts > 0 ? `${card.attempts} of ${card.maxAttempts}` : null],
		['deferred until', card.deferUntil],
		[card.failed === true ? 'failed' : 'blocked', card.blockedReason],
		['retry backoff', card.backoffSeconds == null ? null : `${card.backoffSeconds} s (this card)`],
		[
			'stall release',
			card.stallReleaseSeconds == null
				? null
				: card.stallReleaseSeconds === 0
					? 'never (this card)'
					: `after ${card.stallReleaseSeconds} s without progress (this card)`,
		],
		['review', card.review === undefined || card.review === 'none' ? null : `${card.review} approves its completion`],
		['completed by', card.status === 'review' ? (card.completedBy ?? null) : null],
		['handoff', card.handoff ?? null],
		['base', card.base == null ? null : `${card.base} (this card's; its worktree starts from it and lands into it)`],
		['workspace', card.workspace === undefined ? null : workspaceWhere(card.workspace)],
		['changes', card.workspace === undefined ? null : workspaceChanges(card.workspace)],
		['conflicts', card.workspace?.conflicts === undefined ? null : conflictWords(card)],
		// "checks  passed (npm test, 12 s)": the label says the word the summary starts with.
		['checks', card.checks === undefined ? null : checksSummary(card.checks).replace(/^checks /, '')],
		['checks output', checksOutput(card)],
		['needs input', card.needsInput === true ? 'an agent asked a question (baton comment ID TEXT answers it)' : null],
		['result', card.result],
	];
	for (const [k, v] of optional) {
		if (v !== null) {
			rows.push([k, v]);
		}
	}
	const width = Math.max(...rows.map(([k]) => k.length));
	// A value's own lines are indented under the values (a result cannot pose as another field), the
	// one-line fields show their newlines as \n, and every control character as a visible escape.
	const multiline = new Set(['result', 'blocked', 'failed', 'handoff', 'checks output']);
	const lines = rows.map(
		([k, v]) =>
			`${k.padEnd(width)}  ${visibleText(v, { multiline: multiline.has(k) }).replace(/\n/g, `\n${' '.repeat(width + 2)}`)}`,
	);
	if (card.acceptance.length > 0) {
		lines.push('acceptance', ...card.acceptance.map(a => `  - ${visibleText(a)}`));
	}
	if (card.body !== '') {
		lines.push('', card.body);
	}
	return lines.join('\n');
}

/** One-line summary of what an event did, for `events` and `up`. */
export function eventDetail(event: BacklogEvent): string {
	const d = event.data;
	const parts: string[] = [];
	if (event.type === 'created' && d.card) {
		parts.push(truncate(d.card.title, 50));
	}
	if (event.type === 'claimed' && d.card) {
		parts.push(`epoch ${d.card.claimEpoch}`);
	}
	if (event.type === 'heartbeat' && d.card?.progress != null) {
		parts.push(`${d.card.progress}%${d.card.progressNote ? ` ${truncate(d.card.progressNote, 40)}` : ''}`);
	}
	if (d.previousOwner !== undefined) {
		parts.push(`from ${d.previousOwner}`);
	}
	if (d.message !== undefined) {
		parts.push(`${d.message.question ? 'question' : 'message'} #${d.message.id}: ${truncate(d.message.text, 50)}`);
	}
	if (d.reason !== undefined) {
		parts.push(truncate(d.reason, 50));
	}
	if (d.result !== undefined) {
		parts.push(truncate(d.result, 50));
	}
	if (d.dependsOn !== undefined) {
		parts.push(`on ${d.dependsOn.join(',')}`);
	}
	if (d.granted !== undefined) {
		parts.push(`reserved ${truncate(d.granted.join(', '), 40)}`);
	}
	if (d.settings !== undefined) {
		parts.push(`${d.settings.project ?? 'backlog'}: ${truncate(d.settings.keys.join(', '), 40)}`);
	}
	if (d.hook !== undefined) {
		parts.push(`${d.hook.change} ${d.hook.id} (${truncate(d.hook.receiver, 40)})`);
	}
	if (d.origin?.agent === true) {
		parts.push(`by an agent (${d.origin.client})`);
	}
	if (d.readiness !== undefined) {
		const freed = d.readiness.filter(r => r.unmetDeps === 0).map(r => r.id);
		if (freed.length > 0) {
			parts.push(`unblocks ${truncate(freed.join(','), 40)}`);
		}
	}
	return parts.join('; ');
}

export function eventTable(events: readonly BacklogEvent[]): string {
	if (events.length === 0) {
		return 'No events.';
	}
	return formatTable(
		['SEQ', 'AT', 'ACTOR', 'TYPE', 'CARD', 'DETAIL'],
		events.map(e => [String(e.seq), e.at.replace('T', ' ').slice(0, 19), e.actor, e.type, e.cardId, eventDetail(e)]),
	);
}

/** A card's messages, oldest first: a header line each (number, time, who, question) and the text indented. */
export function messageList(messages: readonly Message[]): string {
	return messages
		.map(m => {
			const head = `  #${m.id}  ${m.at.replace('T', ' ').slice(0, 19)}  ${m.from}${m.question ? '  (question)' : ''}`;
			return [head, ...m.text.split('\n').map(line => `      ${line}`)].join('\n');
		})
		.join('\n');
}

export function eventLine(event: BacklogEvent): string {
	const time = event.at.slice(11, 19);
	const detail = eventDetail(event);
	return `${time}  #${event.seq}  ${event.actor} ${event.type} ${event.cardId}${detail === '' ? '' : `  (${detail})`}`;
}

export function agentTable(agents: readonly Agent[], now: number = Date.now()): string {
	if (agents.length === 0) {
		return 'No agents.';
	}
	return formatTable(
		['AGENT', 'CLIENT', 'HEALTH', 'STATUS', 'CONNECTED', 'CARDS', 'LAST SEEN'],
		agents.map(a => [
			a.id,
			truncate(a.client, 24),
			// The hub's flag is core/rules/health.ts's rule: only an alive agent is ever stalled.
			a.stalled ? `${a.health} (stalled)` : a.health,
			a.status,
			a.connected ? 'yes' : a.endedAt === null || a.endedAt === undefined ? 'no' : `ended ${ago(a.endedAt, now)}`,
			a.cards.length === 0 ? '-' : truncate(a.cards.join(','), 30),
			ago(a.lastSeenAt, now),
		]),
	);
}
