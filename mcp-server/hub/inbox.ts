/**
 * The inbox push: messages on a card reach the MCP session of the agent that holds it
 * as `{notice: 'inbox', messages}` frames, sent (a) on each pumped `commented` event on a card the
 * agent holds, posted by someone else; (b) on each pumped `claimed` event, with what waited on that
 * card while nobody (or another agent) held it; (c) right after an MCP agent's hello, with everything
 * not acknowledged yet, so a restarted or reconnected MCP server gets it again. It works from pumped
 * events, never from the request path: with several hubs on PostgreSQL the hub that holds the
 * agent's connection pushes, whichever hub took the post. It writes nothing (the MCP server
 * acknowledges with `inbox/ack` once the agent has the messages) and does not deduplicate: a message
 * seen both in an event and in a query may be pushed twice, and the MCP server drops the second.
 */
import type { Backlog } from '../../core/backlog';
import { createLogger, errorText } from '../../core/log';
import type { BacklogEvent, InboxFrame, Message } from '../../core/protocol';
import { type Connection, send } from './connections';

const log = createLogger('hub').child('inbox');

export interface InboxPushOptions {
	backlog: Backlog;
	/** The open connections of an agent on this hub. */
	connectionsOf: (agentId: string) => Iterable<Connection>;
}

export class InboxPush {
	/**
	 * Cards that may have messages no holder was handed yet: read at start, grown by every pumped
	 * `commented` event, so the claim of any other card (nearly every claim) costs no query. It only
	 * grows (a card leaves it when deleted): a card in it costs one indexed query per claim, never a
	 * missed message. Undefined until read, or when the read failed: then every claim asks.
	 */
	private mayHaveMessages: Set<string> | undefined;

	constructor(private readonly options: InboxPushOptions) {}

	/**
	 * Call after the event pump started and before any agent connects: a post committed meanwhile is
	 * then in the read or in a pumped event (both, at worst), never in neither.
	 */
	async start(): Promise<void> {
		try {
			this.mayHaveMessages = new Set(await this.options.backlog.cardsWithUndelivered());
		} catch (e) {
			log.warn(`reading cards with undelivered messages failed (every claim will ask): ${errorText(e)}`);
		}
	}

	/** A pumped batch: pushes new posts to their holders and asks for the waiting ones on each claim. */
	onEvents(events: readonly BacklogEvent[]): void {
		const posted = new Map<string, Message[]>();
		for (const event of events) {
			const owner = event.data.card?.claimOwner ?? undefined;
			if (event.type === 'commented') {
				this.mayHaveMessages?.add(event.cardId);
				const message = event.data.message;
				if (owner !== undefined && message !== undefined && message.from !== owner && this.hasMcp(owner)) {
					const list = posted.get(owner) ?? [];
					list.push(message);
					posted.set(owner, list);
				}
			} else if (event.type === 'claimed') {
				if (owner !== undefined && this.mayHave(event.cardId) && this.hasMcp(owner)) {
					this.pushPending(owner, event.cardId, this.options.connectionsOf(owner));
				}
			} else if (event.type === 'deleted') {
				this.mayHaveMessages?.delete(event.cardId);
			}
		}
		for (const [agent, messages] of posted) {
			push(this.options.connectionsOf(agent), messages);
		}
	}

	/** An MCP agent said hello on `conn`: everything not acknowledged on the cards it holds. */
	onHello(conn: Connection): void {
		if (conn.client === 'mcp' && conn.agentId !== undefined) {
			this.pushPending(conn.agentId, undefined, [conn]);
		}
	}

	private mayHave(cardId: string): boolean {
		return this.mayHaveMessages === undefined || this.mayHaveMessages.has(cardId);
	}

	private hasMcp(agentId: string): boolean {
		for (const conn of this.options.connectionsOf(agentId)) {
			if (conn.client === 'mcp') {
				return true;
			}
		}
		return false;
	}

	private pushPending(agentId: string, cardId: string | undefined, to: Iterable<Connection>): void {
		this.options.backlog.pendingInbox(agentId, cardId).then(
			messages => push(to, messages),
			(e: unknown) => log.warn(`reading ${agentId}'s inbox failed (pushed again at its next hello): ${errorText(e)}`),
		);
	}
}

function push(to: Iterable<Connection>, messages: Message[]): void {
	if (messages.length === 0) {
		return;
	}
	const frame: InboxFrame = { notice: 'inbox', messages };
	for (const conn of to) {
		if (conn.client === 'mcp' && !conn.closed) {
			send(conn, frame);
		}
	}
}
