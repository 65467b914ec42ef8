/**
 * A card's messages as the detail pane keeps them: merged from `card/get`, from our own
 * posts and from live `commented` / `delivered` events, oldest first, each once. A message never
 * changes except that its deliveredAt is set once, so a merge keeps every message it has seen and any
 * deliveredAt it learnt: an older answer can never hide a newer message or undo a delivery. Also what
 * the composer shows (who the reply goes to, the size against the 4 KiB limit). Pure: no DOM.
 */
import { type BacklogEvent, type Card, type Message, limits } from '../core/protocol';

/** Union by id, oldest first; a deliveredAt known on either side is kept. */
export function mergeMessages(known: readonly Message[], incoming: readonly Message[]): Message[] {
	const byId = new Map<number, Message>();
	for (const m of [...known, ...incoming]) {
		const seen = byId.get(m.id);
		byId.set(m.id, seen === undefined ? m : { ...m, deliveredAt: m.deliveredAt ?? seen.deliveredAt ?? null });
	}
	return [...byId.values()].sort((a, b) => a.id - b.id);
}

/** The messages an event carries for its card: the one posted, or the ones delivered. */
export function messagesOf(event: BacklogEvent): Message[] {
	if (event.type === 'commented' && event.data.message !== undefined) {
		return [event.data.message];
	}
	if (event.type === 'delivered') {
		return event.data.messages ?? [];
	}
	return [];
}

const encoder = new TextEncoder();

/** The size the hub measures a message by (UTF-8 bytes). */
export function messageBytes(text: string): number {
	return encoder.encode(text).length;
}

export interface ComposerState {
	/** What the box is labelled with. */
	label: string;
	/** The send button's text. */
	send: string;
	/** "120 / 4,096 bytes". */
	count: string;
	/** Over the limit, or nothing but spaces: the button is disabled. */
	canSend: boolean;
	over: boolean;
}

/**
 * The composer for `card` with `text` typed: a reply to the agent that asked when the card needs
 * input, else a message to its holder (which reaches it with its next tool call), else a note on it.
 */
export function composerState(card: Card, messages: readonly Message[], text: string, actor?: string): ComposerState {
	const bytes = messageBytes(text);
	const over = bytes > limits.messageBytes;
	const asker = [...messages].reverse().find(m => m.question)?.from;
	let label = 'Post a message on this card';
	let send = 'Send';
	if (card.needsInput === true) {
		label = `Reply to ${asker ?? 'the agent'}'s question`;
		send = 'Reply';
	} else if (card.status === 'claimed' && card.claimOwner !== null && card.claimOwner !== actor) {
		label = `Message ${card.claimOwner} (it gets it with its next tool call)`;
	}
	return {
		label,
		send,
		count: `${bytes.toLocaleString('en-US')} / ${limits.messageBytes.toLocaleString('en-US')} bytes`,
		canSend: !over && text.trim() !== '',
		over,
	};
}
