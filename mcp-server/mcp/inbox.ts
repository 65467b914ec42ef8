/**
 * One MCP session's inbox: keeps the messages the hub pushes for cards this agent
 * holds (`{notice: 'inbox'}`, deduplicated by card and message id), hands them to the agent in the
 * result of its next successful tool call, of any tool, as `inbox: [{cardId, from, text, at,
 * question?}]`, and then acknowledges them (`inbox/ack`), so each message reaches the agent once.
 * `heartbeat {waitSeconds}` waits here for a push. A failed ack is logged and left to the hub, which
 * pushes what was not acknowledged again at the next hello; such a repeat is acknowledged again and
 * never shown twice. It talks to the hub only through the ack function it is given and decides
 * nothing about cards.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { createLogger } from '../../core/log';
import type { InboxItem, Message } from '../../core/protocol';
import { toolSuccess } from './toolResult';

const log = createLogger('mcp').child('inbox');

export type InboxKey = { cardId: string; id: number };
export type AckSender = (messages: InboxKey[]) => Promise<unknown>;

/** The protocol's limit on one `inbox/ack`. */
const ackBatch = 100;
/** How many handed-out keys are remembered to drop repeats; a session sees far fewer messages. */
const handedMemory = 10_000;

function keyOf(m: InboxKey): string {
	return `${m.cardId}#${m.id}`;
}

/** A message as the agent reads it: `question` only when it is one. */
export function inboxItem(m: Message): InboxItem {
	const item: InboxItem = { cardId: m.cardId, from: m.from, text: m.text, at: m.at };
	return m.question ? { ...item, question: true } : item;
}

export class Inbox {
	private readonly pending = new Map<string, Message>();
	/** Keys already handed to the agent, oldest first: a repeat push is acknowledged, not shown. */
	private readonly handed = new Set<string>();
	private readonly waiters = new Set<() => void>();

	constructor(private readonly sendAck: AckSender) {}

	/** Messages waiting for the agent's next tool result. */
	get size(): number {
		return this.pending.size;
	}

	/** A push from the hub. */
	receive(messages: readonly Message[]): void {
		const again: Message[] = [];
		for (const m of messages) {
			const key = keyOf(m);
			if (this.handed.has(key)) {
				again.push(m);
			} else if (!this.pending.has(key)) {
				this.pending.set(key, m);
			}
		}
		if (again.length > 0) {
			this.acknowledge(again);
		}
		if (this.pending.size > 0) {
			for (const wake of this.waiters) {
				wake();
			}
		}
	}

	/**
	 * The result the agent reads: a successful one gains `inbox` with every waiting message (oldest
	 * first), which is then acknowledged; a refusal is returned as it is and the messages wait for the
	 * next success, so they are never lost in an error text.
	 */
	deliver(result: CallToolResult): CallToolResult {
		const structured = result.structuredContent;
		if (this.pending.size === 0 || result.isError === true || structured === undefined) {
			return result;
		}
		const messages = [...this.pending.values()].sort(
			(a, b) => a.at.localeCompare(b.at) || a.cardId.localeCompare(b.cardId) || a.id - b.id,
		);
		this.pending.clear();
		for (const m of messages) {
			this.handed.add(keyOf(m));
		}
		for (const key of this.handed) {
			if (this.handed.size <= handedMemory) {
				break;
			}
			this.handed.delete(key);
		}
		const withInbox = toolSuccess({ ...structured, inbox: messages.map(inboxItem) });
		// After the SDK has written this result to stdout: the ack says the agent has it.
		setImmediate(() => this.acknowledge(messages));
		return withInbox;
	}

	/** Resolves when a push arrives, after `ms`, or on abort, whichever comes first. */
	wait(ms: number, signal?: AbortSignal): Promise<void> {
		if (this.pending.size > 0 || ms <= 0 || signal?.aborted === true) {
			return Promise.resolve();
		}
		return new Promise(resolve => {
			const done = (): void => {
				clearTimeout(timer);
				this.waiters.delete(done);
				signal?.removeEventListener('abort', done);
				resolve();
			};
			const timer = setTimeout(done, ms);
			this.waiters.add(done);
			signal?.addEventListener('abort', done);
		});
	}

	private acknowledge(messages: readonly Message[]): void {
		for (let i = 0; i < messages.length; i += ackBatch) {
			const keys = messages.slice(i, i + ackBatch).map(m => ({ cardId: m.cardId, id: m.id }));
			this.sendAck(keys).catch((error: unknown) => {
				log.warn(
					`acknowledging ${keys.length} inbox message(s) failed (the hub pushes them again at the next hello): ${
						error instanceof Error ? error.message : String(error)
					}`,
				);
			});
		}
	}
}
