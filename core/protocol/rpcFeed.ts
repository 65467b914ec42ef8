/**
 * What an RpcClient hands to its listeners (core/protocol/rpc.ts extends it): the connection state, the store's
 * health, the event feed (each seq once, in order, a resync when the hub cannot replay) and the hub's
 * notices (agents, inbox, store, landing). It keeps the listeners and the last delivered seq; it never sends,
 * connects or times anything: the client does. Platform-free: no node, no DOM.
 */
import {
	type Agent,
	type BacklogEvent,
	type HelloOk,
	type LandingEntry,
	type Message,
	type Result,
	type ServerFrame,
	type StoreHealth,
} from '.';

export type ConnectionState = 'connecting' | 'connected' | 'offline' | 'closed';

export type Listener<T> = (value: T) => void;

/** Inbox notices kept for a first listener; a client that never listens (CLI, board) keeps no more. */
const maxUnheardInbox = 16;

export class RpcFeed {
	protected state: ConnectionState = 'offline';
	/** Highest event seq delivered to listeners; a resubscribe asks for everything after it. */
	protected lastSeq = 0;
	private readonly eventListeners = new Set<Listener<BacklogEvent>>();
	private readonly agentListeners = new Set<Listener<Agent[]>>();
	private readonly inboxListeners = new Set<Listener<Message[]>>();
	private readonly landingListeners = new Set<Listener<LandingEntry[]>>();
	/** Inbox notices that came before any listener (the hub pushes one right after the hello). */
	private readonly unheardInbox: Message[][] = [];
	private readonly stateListeners = new Set<Listener<ConnectionState>>();
	protected readonly helloListeners = new Set<Listener<HelloOk>>();
	private readonly storeListeners = new Set<Listener<StoreHealth>>();
	private readonly resyncListeners = new Set<Listener<number>>();
	private storeHealth: StoreHealth = { state: 'ok' };

	get connectionState(): ConnectionState {
		return this.state;
	}

	/** Whether the hub's store takes writes (from the hello, then its store notices). */
	get store(): StoreHealth {
		return this.storeHealth;
	}

	/** Highest event seq delivered so far. */
	get seq(): number {
		return this.lastSeq;
	}

	/**
	 * The hub could not replay what this client missed (the log was compacted past its seq;
	 * docs/decisions/0017-bounded-log.md): the feed is live from the new seq, and the listener must reload what it shows.
	 */
	onResync(listener: Listener<number>): () => void {
		this.resyncListeners.add(listener);
		return () => this.resyncListeners.delete(listener);
	}

	onEvent(listener: Listener<BacklogEvent>): () => void {
		this.eventListeners.add(listener);
		return () => this.eventListeners.delete(listener);
	}

	/** Messages for cards this connection's agent holds (`{notice: 'inbox'}`), as the hub pushes them. */
	onInbox(listener: Listener<Message[]>): () => void {
		this.inboxListeners.add(listener);
		// The hub may push right after the hello, in the same read as the hello's answer: before the
		// caller's `await start()` could register anything. The first listener gets those.
		for (const messages of this.unheardInbox.splice(0)) {
			listener(messages);
		}
		return () => this.inboxListeners.delete(listener);
	}

	onAgents(listener: Listener<Agent[]>): () => void {
		this.agentListeners.add(listener);
		return () => this.agentListeners.delete(listener);
	}

	/** The landing queue's entries, whenever the hub tells it changed (`{notice: 'landing'}`). */
	onLanding(listener: Listener<LandingEntry[]>): () => void {
		this.landingListeners.add(listener);
		return () => this.landingListeners.delete(listener);
	}

	onState(listener: Listener<ConnectionState>): () => void {
		this.stateListeners.add(listener);
		return () => this.stateListeners.delete(listener);
	}

	/** Called when the store's state changes (disk full, space back, PostgreSQL gone or back). */
	onStore(listener: Listener<StoreHealth>): () => void {
		this.storeListeners.add(listener);
		return () => this.storeListeners.delete(listener);
	}

	/** Called after every successful hello, including after reconnects. */
	onHello(listener: Listener<HelloOk>): () => void {
		this.helloListeners.add(listener);
		return () => this.helloListeners.delete(listener);
	}

	/** A subscribe's answer: after a resync, events before its seq will never come. */
	protected subscribedAt(answer: Result<'events/subscribe'>): void {
		if (answer.resync === true) {
			this.resynced(answer.seq);
		}
	}

	private resynced(seq: number): void {
		this.lastSeq = Math.max(this.lastSeq, seq);
		for (const l of this.resyncListeners) {
			l(seq);
		}
	}

	protected setStore(store: StoreHealth): void {
		if (store.state === this.storeHealth.state && store.message === this.storeHealth.message) {
			return;
		}
		this.storeHealth = store;
		for (const l of this.storeListeners) {
			l(store);
		}
	}

	protected setState(state: ConnectionState): void {
		if (this.state === state || this.state === 'closed') {
			return;
		}
		this.state = state;
		for (const l of this.stateListeners) {
			l(state);
		}
	}

	/** An event or a notice frame: each seq once, in order; notices to their listeners. */
	protected deliver(frame: Extract<ServerFrame, { event: unknown } | { notice: unknown }>): void {
		if ('event' in frame) {
			// Resume replays can overlap live pushes around a reconnect: deliver each seq once, in order.
			if (frame.seq <= this.lastSeq) {
				return;
			}
			this.lastSeq = frame.seq;
			for (const l of this.eventListeners) {
				l(frame.data);
			}
			return;
		}
		if (frame.notice === 'resync') {
			this.resynced(frame.seq);
			return;
		}
		if (frame.notice === 'store') {
			this.setStore(frame.store);
			return;
		}
		if (frame.notice === 'inbox') {
			if (this.inboxListeners.size === 0 && this.unheardInbox.length < maxUnheardInbox) {
				this.unheardInbox.push(frame.messages);
			}
			for (const l of this.inboxListeners) {
				l(frame.messages);
			}
			return;
		}
		if (frame.notice === 'landing') {
			for (const l of this.landingListeners) {
				l(frame.entries);
			}
			return;
		}
		for (const l of this.agentListeners) {
			l(frame.agents);
		}
	}
}
