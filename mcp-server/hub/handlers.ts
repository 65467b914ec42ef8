/**
 * The hub's handler table: one entry per protocol method, typed so that a missing or an extra
 * method fails to compile and each entry returns its own method's Result. Most entries call the
 * backlog; the others ask the hub's parts (waiting claims, subscriptions, status, stop, backups,
 * board tickets). Parsing, the human verbs' gate (humanVerbs.ts), the disk gate of mutating methods,
 * the answer and error mapping are requests.ts's; a handler may add its own gate (agent/ping, hub/backup
 * write without `mutating`).
 */
import type { Backlog, OpContext } from '../../core/backlog';
import type { Method, ParsedParams, Result } from '../../core/protocol';
import type { Backups } from './backups';
import type { HubChecks } from './checks';
import type { ClaimWorkspaces } from './claimWorkspace';
import { cardDiff } from './cardDiff';
import type { Connection, Connections } from './connections';
import { actsAsAgent } from './humanVerbs';
import type { Landing } from './landing';
import type { WorkspaceGc } from './workspaceGc';
import type { Reaper } from './reaper';
import type { StoreGuard } from './storeGuard';
import type { Subscriptions } from './subscriptions';
import type { WaitingClaims } from './waitingClaims';
import type { WipKeeper } from './wipKeeper';

export interface HandlerRequest<M extends Method> {
	conn: Connection;
	ctx: OpContext;
	params: ParsedParams<M>;
	/** The request frame's length (the disk gate reserves room for it). */
	bytes: number;
}

export type Handler<M extends Method> = (request: HandlerRequest<M>) => Promise<Result<M>>;

export type Handlers = { [M in Method]: Handler<M> };

/** What the handlers reach besides the backlog. */
export interface HubParts {
	backlog: Backlog;
	guard: StoreGuard;
	reaper: Reaper;
	backups: Backups;
	connections: Connections;
	subscriptions: Subscriptions;
	waitingClaims: WaitingClaims;
	/** Commits, snapshots and pushes the work in cards' worktrees. */
	wip: WipKeeper;
	landing: Landing;
	workspaceGc: WorkspaceGc;
	/** A claimed card's branch and worktree, when its project has worktrees on. */
	workspaces: ClaimWorkspaces;
	/** The project's check on completed work, run in the background (checks.ts). */
	checks: HubChecks;
	/** The last seq the event pump delivered. */
	seq: () => number;
	status: () => Result<'hub/status'>;
	stop: (reason: string) => void;
	/** A hook was added or removed: the webhook workers look now. */
	hooksChanged: () => void;
}

export function createHandlers(hub: HubParts): Handlers {
	const b = hub.backlog;
	return {
		'card/create': ({ ctx, params }) => b.create(ctx, params),
		'card/update': ({ ctx, params }) => b.update(ctx, params),
		'card/get': ({ ctx, params }) => b.get(ctx, params),
		'card/list': ({ ctx, params }) => b.list(ctx, params),
		'card/listRows': ({ ctx, params }) => b.listRows(ctx, params),
		'card/stats': ({ ctx, params }) => b.stats(ctx, params),
		'card/claim': async ({ conn, ctx, params }) =>
			hub.workspaces.afterClaim(ctx, params, await hub.waitingClaims.claim(conn, ctx, params)),
		'card/heartbeat': async ({ ctx, params }) => {
			const result = await b.heartbeat(ctx, params);
			// A renewal without progress logs no event, yet may shorten the lease (a smaller ttl).
			hub.reaper.consider(result.lease.expiresAt);
			return result;
		},
		// Force, reclaiming another's card, settings, pauses, hooks, gc --force…: requests.ts refuses
		// these to agents before the handler runs (humanVerbs.ts declares them).
		'card/complete': async ({ ctx, params }) => {
			// Commit the agent's work before the card moves on (wipKeeper), starting the project's check on
			// it in the same write; the check runs in the background (checks.ts). A card that is done once
			// complete lands first (landing.ts: done means landed). Then the next card's workspace.
			const run = async (work?: { project: string | undefined }): Promise<Result<'card/complete'>> =>
				b.complete(ctx, params, await hub.checks.commandFor(work?.project));
			const result = await hub.wip.complete(ctx, params, run, work =>
				hub.landing.complete(ctx, params, () => run(work)),
			);
			hub.checks.started(result.card);
			return params.next === undefined || result.next === undefined
				? result
				: { ...result, next: await hub.workspaces.afterNextClaim(ctx, params.next, result.next) };
		},
		'card/release': async ({ ctx, params }) => {
			await hub.wip.beforeEnd(params.cardId, 'release');
			return b.release(ctx, params);
		},
		'card/fail': async ({ ctx, params }) => {
			await hub.wip.beforeEnd(params.cardId, 'fail');
			return b.fail(ctx, params);
		},
		'card/reclaim': ({ ctx, params }) => b.reclaim(ctx, params),
		'card/block': ({ ctx, params }) => b.block(ctx, params),
		'card/unblock': ({ ctx, params }) => b.unblock(ctx, params),
		'card/reopen': ({ ctx, params }) => b.reopen(ctx, params),
		'card/link': ({ ctx, params }) => b.link(ctx, params),
		'card/unlink': ({ ctx, params }) => b.unlink(ctx, params),
		'card/delete': ({ ctx, params }) => b.delete(ctx, params),
		'card/comment': ({ ctx, params }) => b.comment(ctx, params),
		// Who reviews decides what they may do: an agent (actsAsAgent) only as the reviewer of a card whose
		// review mode asks for an agent (core/rules/review.ts); every other face is a human.
		// An approval of a card with a workspace lands its branch first (landing.ts).
		'card/review': ({ conn, ctx, params }) => hub.landing.review(ctx, params, actsAsAgent(conn) ? 'agent' : 'human'),
		'card/reserve': ({ ctx, params }) => b.reserve(ctx, params),
		'card/diff': ({ ctx, params }) => cardDiff(b, ctx, params),
		'inbox/ack': ({ ctx, params }) => b.inboxAck(ctx, params),
		'agent/list': ({ params }) => b.listAgents(hub.connections.agents.ids(), params.all === true),
		'agent/ping': async ({ ctx }) => {
			// A ping renews leases: a small write, allowed down to the small-write reserve.
			hub.guard.beforeSmallWrite();
			const result = await b.ping(ctx);
			hub.connections.agents.scheduleNotice();
			return result;
		},
		'agent/reclaim': ({ ctx, params }) => b.reclaimAgent(ctx, params),
		'events/list': ({ params }) => b.listEvents(params),
		'events/subscribe': ({ conn, params }) => hub.subscriptions.subscribe(conn, params.afterSeq ?? hub.seq()),
		'hub/status': () => Promise.resolve(hub.status()),
		'hub/stop': ({ conn }) => {
			// Answer first, then stop: the caller learns the stop was accepted.
			setImmediate(() => hub.stop(`hub/stop from ${conn.actor}`));
			return Promise.resolve({ ok: true as const });
		},
		'hub/backup': ({ bytes }) => {
			// Not mutating (nothing to re-send), but it writes a file next to the store.
			hub.guard.beforeWrite(bytes);
			return hub.backups.run();
		},
		'hub/boardTicket': () => Promise.resolve({ url: hub.connections.boardTicketUrl() }),
		'data/export': ({ params }) => b.exportCards(params),
		'data/import': ({ ctx, params }) => b.importCards(ctx, params),
		'hooks/list': ({ params }) => b.listHooks(params),
		'hooks/add': async ({ ctx, params }) => {
			const result = await b.addHook(ctx, params);
			hub.hooksChanged();
			return result;
		},
		'hooks/remove': async ({ ctx, params }) => {
			const result = await b.removeHook(ctx, params);
			hub.hooksChanged();
			return result;
		},
		'hooks/resume': async ({ ctx, params }) => {
			const result = await b.resumeHook(ctx, params);
			hub.hooksChanged();
			return result;
		},
		'workspace/gc': async ({ ctx, params }) => {
			const result = await hub.workspaceGc.run(params);
			if (ctx.origin !== undefined) {
				await b.recordGcForced(ctx, result); // a person's gc --force: who deleted unlanded work
			}
			return result;
		},
		'settings/get': () => b.settings(),
		'settings/update': async ({ ctx, params }) => {
			const settings = await b.updateSettings(ctx, params);
			hub.reaper.rearm(); // the stall policy may now be due sooner (or never)
			return settings;
		},
		'project/settings': ({ params }) => b.projectSettings(params.project),
		'project/settings/update': async ({ ctx, params }) => {
			const settings = await b.updateProjectSettings(ctx, params);
			hub.workspaces.changed(settings);
			return settings;
		},
		// Dispatch: pauses of the line, assignments, the supervisor's seats and runs.
		'pause/set': ({ ctx, params }) => b.pauses.set(ctx, params),
		'pause/clear': ({ ctx, params }) => b.pauses.clear(ctx, params),
		'pause/list': () => b.pauses.list(),
		'landing/queue': async ({ params }) => ({
			entries: await b.landingQueue.list(params.project),
			returned: await b.landingQueue.returned(params.project),
		}),
		'card/assign': ({ ctx, params }) => b.dispatch.assign(ctx, params),
		'dispatch/update': ({ ctx, params }) => b.dispatch.update(ctx, params),
		'dispatch/usage': ({ ctx, params }) => b.dispatch.usage(ctx, params),
		'dispatch/exited': ({ ctx, params }) => b.dispatch.exited(ctx, params),
		'dispatch/seat': ({ conn, params }) => hub.connections.seats.mint(conn, params),
		'run/register': ({ ctx, params }) => b.dispatch.register(ctx, params, pidAlive),
		'run/list': () => b.dispatch.list(),
		'run/stop': ({ ctx, params }) => b.dispatch.stop(ctx, params),
		'run/end': ({ ctx, params }) => b.dispatch.end(ctx, params),
	};
}

/** Whether process `pid` on this host is alive (EPERM: someone else's, alive). */
function pidAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (e) {
		return (e as NodeJS.ErrnoException).code === 'EPERM';
	}
}
