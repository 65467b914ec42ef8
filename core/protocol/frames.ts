/**
 * The frames on a connection: hello and its answers, request, response, event and notice
 * frames, and the extension <-> webview host-only messages. Part of `core/protocol/index.ts`; platform-free,
 * imports only zod and the other protocol parts.
 */
import { z } from 'zod';
import { CardId, ErrorCode, Seq } from './scalars';
import { Agent, AgentInfo, BacklogEvent, EventType, HealthThresholds, Message } from './domain';
import { StoreHealth } from './methods';
import { LandingEntry } from './workspaces';

export const protocolVersion = 1;

// ---------------------------------------------------------------------------------------------------
// Frames

export const ClientKind = z.enum(['mcp', 'cli', 'extension', 'board', 'hub', 'test']);
export type ClientKind = z.infer<typeof ClientKind>;

/**
 * First frame from a client. `token` may be omitted only when the connection was already
 * authenticated at upgrade (Authorization header or board session cookie).
 */
export const Hello = z
	.object({
		hello: z.literal('baton'),
		protocol: z.number().int(),
		client: ClientKind,
		token: z.string().max(200).optional(),
		/** The agent this connection acts for; actions are recorded under its id. */
		agent: AgentInfo.optional(),
		/**
		 * A random id the client process made once and sends at every (re)connect, so it survives a hub
		 * restart: a lease claimed by a connection with a session belongs to that session,
		 * and no other may heartbeat, complete, release or fail it. `baton mcp` sends one; without it a
		 * lease is the agent id's (the CLI, VS Code, the board). Never shown to other clients.
		 */
		session: z
			.string()
			.min(16)
			.max(100)
			.regex(/^[\w.:-]+$/)
			.optional(),
		/**
		 * The client runs inside a coding agent's process (what gave it away, e.g. "CLAUDECODE is set"):
		 * the hub refuses it every human verb (the hub's humanVerbs.ts: approve, force, settings, pauses,
		 * assign, hooks, gc --force, …).
		 */
		insideAgent: z.string().min(1).max(200).optional(),
		/**
		 * A seat credential (`dispatch/seat`) instead of `token`: the connection is the agent of that one
		 * dispatched card, its agent id and session the credential's, and it may act only on that card.
		 */
		seat: z.string().min(1).max(1000).optional(),
	})
	.strict();
export type Hello = z.infer<typeof Hello>;

export const HelloOk = z.object({
	hello: z.literal('ok'),
	protocol: z.number().int(),
	hubPid: z.number().int(),
	/** Highest event seq at the time of the hello. */
	seq: Seq,
	/** The actor id the hub will record for this connection. */
	actor: z.string(),
	thresholds: HealthThresholds,
	/** The store's state at the hello; changes arrive as `{notice: 'store'}` frames. */
	store: StoreHealth.optional(),
});
export type HelloOk = z.infer<typeof HelloOk>;

export const ErrorBody = z.object({ code: ErrorCode, message: z.string(), data: z.unknown().optional() });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Refusal of a hello (wrong token, protocol mismatch); the hub closes the socket after sending it. */
export const HelloError = z.object({ hello: z.literal('error'), error: ErrorBody });

export const RequestFrame = z
	.object({
		id: z.number().int().nonnegative(),
		method: z.string().max(64),
		params: z.unknown().optional(),
		/**
		 * Stable key for a mutating request: if the hub already applied a request with this key it
		 * returns the same result instead of applying it again (re-sends after a failover).
		 */
		key: z.string().max(200).optional(),
	})
	.strict();
export type RequestFrame = z.infer<typeof RequestFrame>;

export const ResponseFrame = z.union([
	z.object({ id: z.number().int(), result: z.unknown() }),
	z.object({ id: z.number().int(), error: ErrorBody }),
]);
export type ResponseFrame = z.infer<typeof ResponseFrame>;

/** A logged event pushed to subscribers, in seq order with no gaps. */
export const EventFrame = z.object({ event: EventType, seq: Seq, data: BacklogEvent });
export type EventFrame = z.infer<typeof EventFrame>;

/** Ephemeral agent state (not logged): sent on register, ping, disconnect. */
export const AgentsFrame = z.object({ notice: z.literal('agents'), agents: z.array(Agent) });
export type AgentsFrame = z.infer<typeof AgentsFrame>;

/**
 * Messages for a card this connection's agent holds (posted by someone else, not delivered yet):
 * sent when one is posted, when the agent claims a card that has some, and at its hello. The MCP
 * server hands them to the agent in its next tool result and acknowledges them (`inbox/ack`).
 */
export const InboxFrame = z.object({ notice: z.literal('inbox'), messages: z.array(Message) });
export type InboxFrame = z.infer<typeof InboxFrame>;

/** The store's state changed (disk full, space back, PostgreSQL gone or back); not logged. */
export const StoreFrame = z.object({ notice: z.literal('store'), store: StoreHealth });
export type StoreFrame = z.infer<typeof StoreFrame>;

/**
 * A resubscribe after a reconnect came back with `resync` (SubscribeResult): events were compacted away
 * while this client was offline. Live from `seq` on; reload. The VS Code relay sends it to the board
 * when its own connection's resume was refused that way, and the hub sends it to a subscriber that
 * fell behind (it left too much unread) once that one caught up.
 */
export const ResyncFrame = z.object({ notice: z.literal('resync'), seq: Seq });
export type ResyncFrame = z.infer<typeof ResyncFrame>;

/**
 * The landing queue changed (a landing joined its base's line, took its turn or left it; on PostgreSQL
 * also another hub's): every live entry as `landing/queue` lists them. Not logged; sent to the faces that
 * show the backlog (not MCP sessions), at most 4 a second. They load the queue with `landing/queue`.
 */
export const LandingFrame = z.object({ notice: z.literal('landing'), entries: z.array(LandingEntry) });
export type LandingFrame = z.infer<typeof LandingFrame>;

export const ServerFrame = z.union([
	HelloOk,
	HelloError,
	ResponseFrame,
	EventFrame,
	AgentsFrame,
	StoreFrame,
	InboxFrame,
	ResyncFrame,
	LandingFrame,
]);
export type ServerFrame = z.infer<typeof ServerFrame>;

// ---------------------------------------------------------------------------------------------------
// Extension <-> webview host-only messages (the hub frames above are relayed unchanged).

export const ViewMessage = z.discriminatedUnion('type', [
	/** webview -> host: the board is ready to receive frames. */
	z.object({ type: z.literal('view/ready') }),
	/** webview -> host: open the card in the tree / an editor. */
	z.object({ type: z.literal('view/revealInTree'), cardId: CardId }),
	/** host -> webview: connection state to show in the banner. */
	z.object({ type: z.literal('view/connection'), state: z.enum(['connected', 'connecting', 'offline']) }),
	/** host -> webview: select and open a card's detail pane. */
	z.object({ type: z.literal('view/openCard'), cardId: CardId }),
	/** host -> webview: the workspace's projects and whether the user chose All projects. */
	z.object({ type: z.literal('view/projects'), workspace: z.array(z.string()), showAll: z.boolean() }),
]);
export type ViewMessage = z.infer<typeof ViewMessage>;
