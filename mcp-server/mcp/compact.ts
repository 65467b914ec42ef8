/**
 * Compact card and history shapes for MCP results: agents pay per token, so fields that are null or
 * empty are dropped, and a card's history omits the card snapshot each event carries on the wire.
 * Pure functions, no I/O.
 */
import { type HeldWord, heldWords } from '../../core/rules/claimGuards';
import { type StateWord, refStateWord, stateWord } from '../../core/rules/claimable';
import type { Attempt, BacklogEvent, Card, CardRef, CardRow, CardWorkspace, Message } from '../../core/protocol';

export type CompactCard = Partial<Card> & Pick<Card, 'id' | 'title' | 'status'>;

function isEmpty(value: unknown): boolean {
	return value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}

/** Drops undefined, null, empty strings and empty arrays. */
export function dropEmpty<T extends object>(value: T): Partial<T> {
	const out: Record<string, unknown> = {};
	for (const [key, v] of Object.entries(value)) {
		if (!isEmpty(v)) {
			out[key] = v;
		}
	}
	return out as Partial<T>;
}

/**
 * A card or a dependency's `state`, only when it is not its status: `waiting`, `deferred` or `paused`
 * for a ready card held back (core/rules/claimable.ts `stateWord`, the word of list's STATUS column and
 * the board); the hold fields beside it (openChildren, treeWaits, paused, filesHeldBy) say why.
 */
function heldState(word: StateWord): { state?: HeldWord } {
	return isHeldWord(word) ? { state: word } : {};
}

const isHeldWord = (w: StateWord): w is HeldWord => (heldWords as readonly string[]).includes(w);

/** Whether a card's or a row's field is dropped: empty, a false failed or needsInput, review none. */
function dropped(key: string, value: unknown): boolean {
	return (
		isEmpty(value) ||
		(value === false && (key === 'failed' || key === 'needsInput')) || // only a failed card, or one with an open question, says so
		(value === 'none' && key === 'review') // only a card that needs a review says so
	);
}

/**
 * What a card and a row drop alike, plus its held state; `leave` drops one more field. One pass over
 * the fields: `list` compacts 50 rows a page, and building each through spreads and Object.entries
 * cost 0.3–0.5 ms of `baton mcp`'s CPU per page in V8's interpreter (bin.ts runs it in lite mode).
 */
function compactFields<T extends CardRow>(card: T, now: number, leave?: keyof T): Partial<T> & { state?: HeldWord } {
	const out: Record<string, unknown> = {};
	for (const key in card) {
		const value = card[key];
		if (key !== leave && !dropped(key, value)) {
			out[key] = value;
		}
	}
	const word = stateWord(card, now);
	if (isHeldWord(word)) {
		out.state = word;
	}
	return out as Partial<T> & { state?: HeldWord };
}

export function compactCard(card: Card, now: number = Date.now()): CompactCard & { state?: HeldWord } {
	const out = compactFields(card, now) as CompactCard;
	if (card.workspace !== undefined) {
		Object.assign(out, { workspace: compactWorkspace(card.workspace) });
	}
	return out;
}

/**
 * A list row as `list` returns it (the hub's CardRow, not the whole card; `show` has the rest):
 * dropped as a card is, and without unmetDeps, which `state: "waiting"` and the page's waitsOn say.
 */
export function compactRow(row: CardRow, now: number = Date.now()): Partial<CardRow> & { state?: HeldWord } {
	return compactFields(row, now, 'unmetDeps');
}

/**
 * A card's workspace for an agent: where to work, its branch and base, and after complete the branch's
 * head and diff counts; the repository root and host name are the hub's business.
 */
export function compactWorkspace(ws: CardWorkspace): Omit<CardWorkspace, 'root' | 'host'> {
	const { root: _root, host: _host, ...rest } = ws;
	return rest;
}

/** A dependency or dependent in `show`: id, title, status and, when held back, its state. */
export function compactRef(ref: CardRef, now: number = Date.now()): Record<string, unknown> {
	return { id: ref.id, title: ref.title, status: ref.status, ...heldState(refStateWord(ref, now)) };
}

/**
 * A card as create returns it: without the body and acceptance criteria the caller just sent, which
 * for a plan of long cards would send megabytes back, twice (text and structuredContent).
 */
export function createdCard(card: Card): CompactCard {
	const { body: _body, acceptance: _acceptance, ...rest } = compactCard(card);
	return rest;
}

/** One history line: who did what when, plus the event's own details, without the card snapshot. */
export function compactEvent(event: BacklogEvent): Record<string, unknown> {
	const { card: _card, readiness: _readiness, message, messages, ...details } = event.data;
	// A `commented` / `delivered` event names its messages; the texts are in show's `messages`.
	const about = {
		...(message === undefined ? {} : { message: message.id }),
		...(messages === undefined ? {} : { messages: messages.map(m => m.id) }),
	};
	return dropEmpty({ seq: event.seq, at: event.at, actor: event.actor, type: event.type, ...details, ...about });
}

/** A message in `show`: the card is known, and `question` only when it is one. */
export function compactMessage(message: Message): Record<string, unknown> {
	const { cardId: _cardId, question, ...rest } = message;
	return question ? { ...rest, question } : rest;
}

export function compactAttempt(attempt: Attempt): Partial<Attempt> {
	return dropEmpty(attempt);
}
