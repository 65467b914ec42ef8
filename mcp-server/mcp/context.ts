/**
 * What the MCP tools share within one stdio session: the hub connection (opened lazily, once the
 * agent's identity is known), the capabilities this agent advertises, the lease epochs it got from
 * claim, so heartbeat/complete/release/fail/reserve fence exactly without the agent repeating the
 * epoch, the agent's project (sent on every claim, given to the cards it creates) and its git
 * checkout (sent on every claim, for the card's worktree), and the
 * inbox of messages the hub pushed for the agent's next tool result (inbox.ts).
 */
import type { Method, Params, Result } from '../../core/protocol';
import { type ProjectChoice, anyProject } from '../cli/project';
import type { RequestOptions, RpcClient } from '../../core/protocol/rpc';
import { Inbox } from './inbox';

export class ToolContext {
	/** cardId -> epoch of the lease this session holds (from claim / heartbeat). */
	private readonly epochs = new Map<string, number>();
	/** Messages for the agent's next tool result; acknowledged through this session's hub connection. */
	readonly inbox = new Inbox(messages => this.request('inbox/ack', { messages }));

	constructor(
		private readonly hub: () => Promise<RpcClient>,
		/** Advertised by default on claim when the agent passes none (--capabilities / BATON_CAPABILITIES). */
		readonly capabilities: readonly string[] = [],
		/**
		 * --project / BATON_PROJECT, else the git repository of the working directory: an id (claims get
		 * its cards and cards with none), null outside a repository (only cards with none), or '*' (any).
		 */
		readonly project: ProjectChoice = anyProject,
		/**
		 * The git checkout the session started in (its root), sent with every claim as `root`: where a
		 * project with workspaces on gets the claimed card's worktree. Undefined outside one.
		 */
		readonly root?: string,
		/**
		 * BATON_CARD_ID: the card Baton's supervisor claimed for this agent's session; a claim
		 * without a card id claims it (the session holds it already: the claim returns it as it is).
		 */
		readonly dispatchedCard?: string,
	) {}

	/**
	 * The labels of this session's last claim: complete {next: true} claims the next card as
	 * that claim did, so an agent that only takes some kinds of work keeps to them across a hand-over.
	 */
	claimLabels: readonly string[] | undefined;

	/** What a claim sends as `root`: the agent's own (not listed, but taken), else the session's. */
	claimRoot(given: string | undefined): { root?: string } {
		const root = given ?? this.root;
		return root === undefined ? {} : { root };
	}

	/** What a claim sends as `project`: the agent's own choice when it made one, else the session's. */
	claimProject(given: string | null | undefined): ProjectChoice {
		return given === undefined ? this.project : given;
	}

	/** The project of a card this agent creates without naming one: the session's, if it has one. */
	get createProject(): string | undefined {
		return this.project === null || this.project === anyProject ? undefined : this.project;
	}

	async request<M extends Method>(method: M, params: Params<M>, options?: RequestOptions): Promise<Result<M>> {
		const hub = await this.hub();
		return hub.request(method, params, options);
	}

	/** Call once the hub connection is open (before any await): its inbox pushes land here. */
	listen(hub: RpcClient): void {
		hub.onInbox(messages => this.inbox.receive(messages));
	}

	rememberLease(cardId: string, epoch: number): void {
		this.epochs.set(cardId, epoch);
	}

	forgetLease(cardId: string): void {
		this.epochs.delete(cardId);
	}

	/** The epoch to send: the caller's, else the one this session got from claim, else none (hub decides). */
	epochFor(cardId: string, given: number | undefined): number | undefined {
		return given ?? this.epochs.get(cardId);
	}

	/** Number of leases this session believes it holds. */
	get heldLeases(): number {
		return this.epochs.size;
	}
}
