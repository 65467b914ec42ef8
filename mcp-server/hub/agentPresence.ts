/**
 * Which agents are connected: a connection is attached to its hello's agent and
 * detached when it closes; the last connection of an MCP agent releases that agent's claims at once
 * (not after the TTL), the last connection of one of its sessions that session's claims, and the
 * last connection of any agent ends it, so it leaves the agents list and the health counts unless it
 * still holds cards. Every change is told to the clients that show agents in a
 * `{notice: 'agents'}`, at most 4 a second; MCP sessions never get it (with 64 agents
 * pinging, every `baton mcp` parsed the 64-agent list 4 times a second for nothing). It registers
 * no agent (the hello does, in connections.ts) and reads no frame.
 */
import type { Backlog } from '../../core/backlog';
import { createLogger, errorText } from '../../core/log';
import type { Connection } from './connections';
import type { StoreGuard } from './storeGuard';

const log = createLogger('hub').child('agents');

export interface AgentPresenceOptions {
	backlog: Backlog;
	guard: StoreGuard;
	stopping: () => boolean;
	/** Sends a frame to every connection that said hello and shows agents (not `mcp` sessions). */
	broadcast: (frame: object) => void;
	/** Whether any such connection is open: without one, no notice is built at all. */
	hasWatchers: () => boolean;
	/**
	 * Runs before an ended session's claims are released (wipKeeper.ts: snapshots their worktrees, as
	 * release and fail do), so a claim that follows the release at once (a dispatched seat refilling)
	 * restores the agent's work instead of racing the snapshot. Never throws.
	 */
	beforeRelease?: (agentId: string) => Promise<void>;
}

const noticeMinMs = 250;
const noConnections: ReadonlySet<Connection> = new Set();

export class AgentPresence {
	private readonly byAgent = new Map<string, Set<Connection>>();
	private noticeTimer: NodeJS.Timeout | undefined;
	private lastNotice = 0;

	constructor(private readonly options: AgentPresenceOptions) {}

	/** Agents with at least one open connection. */
	ids(): Set<string> {
		return new Set(this.byAgent.keys());
	}

	/** The open connections of one agent (none when it is not connected to this hub). */
	connectionsOf(agentId: string): ReadonlySet<Connection> {
		return this.byAgent.get(agentId) ?? noConnections;
	}

	attach(conn: Connection, agentId: string): void {
		conn.agentId = agentId;
		let set = this.byAgent.get(agentId);
		if (!set) {
			set = new Set();
			this.byAgent.set(agentId, set);
		}
		set.add(conn);
	}

	/**
	 * Forgets a closed connection's agent; the last connection of an MCP agent releases its claims, and
	 * the last connection of one of its sessions those of that session (nobody else may act on them).
	 */
	detach(conn: Connection): void {
		const agentId = conn.agentId;
		if (agentId === undefined) {
			return;
		}
		conn.agentId = undefined;
		const set = this.byAgent.get(agentId);
		set?.delete(conn);
		const session = conn.hello?.session;
		if (
			set !== undefined &&
			set.size > 0 &&
			conn.client === 'mcp' &&
			session !== undefined &&
			![...set].some(c => c.hello?.session === session) &&
			!this.options.stopping() &&
			this.options.guard.smallWritesOk
		) {
			(this.options.beforeRelease?.(agentId) ?? Promise.resolve())
				.then(() =>
					this.options.backlog.releaseAgent({ actor: agentId }, agentId, 'agent session disconnected', session),
				)
				.catch((e: unknown) => log.error(`releasing ${agentId}'s session's claims failed: ${errorText(e)}`));
		}
		if (set?.size === 0) {
			this.byAgent.delete(agentId);
			// A stopping hub leaves its agents as they are: they reconnect to the next one (a restart).
			if (!this.options.stopping() && this.options.guard.smallWritesOk) {
				void this.end(agentId, conn.client === 'mcp');
			}
		}
		this.scheduleNotice();
	}

	/** The agent's last connection closed: an MCP agent's claims are released, then it is ended. */
	private async end(agentId: string, release: boolean): Promise<void> {
		try {
			// An MCP session that ends releases its claims at once, not after the TTL: its agent is gone.
			if (release) {
				await this.options.beforeRelease?.(agentId);
				await this.options.backlog.releaseAgent({ actor: agentId }, agentId, 'agent disconnected');
			}
			// It may have come back meanwhile (a reconnect): then it has not ended.
			if (!this.byAgent.has(agentId)) {
				await this.options.backlog.endAgent(agentId);
			}
		} catch (e) {
			log.error(`ending agent ${agentId} failed: ${errorText(e)}`);
		}
		this.scheduleNotice();
	}

	/** Tells the clients that show agents their state, at most 4 times a second however many agents ping. */
	scheduleNotice(): void {
		if (this.noticeTimer !== undefined || this.options.stopping() || !this.options.hasWatchers()) {
			return;
		}
		const wait = Math.max(0, this.lastNotice + noticeMinMs - Date.now());
		this.noticeTimer = setTimeout(() => {
			this.noticeTimer = undefined;
			this.lastNotice = Date.now();
			this.options.backlog.listAgents(this.ids()).then(
				({ agents }) => this.options.broadcast({ notice: 'agents', agents }),
				(e: unknown) => log.error(`listing agents failed: ${errorText(e)}`),
			);
		}, wait);
	}

	/** No more notices (the hub is stopping). */
	stop(): void {
		clearTimeout(this.noticeTimer);
	}
}
