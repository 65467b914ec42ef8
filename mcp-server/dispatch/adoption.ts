/**
 * A supervisor that starts again (after a stop, a crash or kill -9) finds its running agents' cards by
 * their claims: every claimed card whose `dispatch` names this run and this host. An agent
 * still alive (its pid's environment names the card) is adopted and watched; one that died while the
 * supervisor was down has what it left running swept (sweep.ts) and its card failed with that
 * reason; a card whose agent never started (the supervisor died between claim and start) is released;
 * one it cannot act for (no seat record) is left to its lease, its seat taken until then
 * (supervisor.ts). It never starts an agent, so none of these cards gets a second one. Must not: act
 * on a card of another run or host, or on a claim whose epoch is not the one its seat record names.
 */
import { readFileSync, readdirSync } from 'node:fs';

import { createLogger, errorText } from '../../core/log';
import type { Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { AgentJob, type JobContext } from './agentJob';
import { LogTail, logPath, withLines } from './outputLog';
import type { SeatConnector } from './seat';
import { readSeatRecord, removeSeatFiles, seatFilePath } from './seatFile';
import { isAgentOf, watchAdopted } from './spawnAgent';
import { sweepCard } from './sweep';

const log = createLogger('run').child('adopt');

export interface Adoption {
	adopted: AgentJob[];
	/** Cards failed because their agent died while the supervisor was down. */
	failed: string[];
	/** Cards released because no agent was ever started for them (the supervisor died in between). */
	released: string[];
	/** Cards left to their lease (no seat record to act with): their seats stay taken until they end. */
	leftToLease: { cardId: string; seat: number; epoch: number }[];
}

/** This run's claimed cards on this host, every page. */
export async function runCards(main: RpcClient, run: string, host: string): Promise<Card[]> {
	const found: Card[] = [];
	let cursor: string | undefined;
	for (;;) {
		const page = await main.request('card/list', {
			status: 'claimed',
			limit: 500,
			...(cursor === undefined ? {} : { cursor }),
		});
		found.push(...page.cards.filter(c => c.dispatch?.run === run && c.dispatch.host === host));
		if (page.nextCursor === undefined) {
			return found;
		}
		cursor = page.nextCursor;
	}
}

export async function adoptRunning(
	ctx: JobContext,
	main: RpcClient,
	connect: SeatConnector,
	host: string,
): Promise<Adoption> {
	const result: Adoption = { adopted: [], failed: [], released: [], leftToLease: [] };
	const leave = (card: Card): void => {
		result.leftToLease.push({ cardId: card.id, seat: card.dispatch?.seat ?? 0, epoch: card.claimEpoch });
	};
	for (const card of await runCards(main, ctx.run, host)) {
		const record = readSeatRecord(seatFilePath(ctx.dataDir, ctx.run, card.id));
		if (record?.epoch !== card.claimEpoch || record.agent !== card.claimOwner) {
			ctx.emit({ event: 'left', cardId: card.id, why: 'no seat record for this claim: left to its lease' });
			leave(card);
			continue;
		}
		const pid = card.dispatch?.pid ?? findAgentPid(card.id, record.session);
		const info = {
			id: record.agent,
			name: record.agent,
			client: 'baton run',
			kind: record.kind,
			host,
			pid: process.pid,
		};
		let conn: RpcClient;
		try {
			conn = await connect(info, record.session);
		} catch (e) {
			log.error(`cannot act for ${card.id}: ${errorText(e)}`);
			leave(card);
			continue;
		}
		if (pid === undefined) {
			// The supervisor died between the claim and the start: no agent ever ran, so the card goes back
			// to the pool now (no attempt used) instead of holding a seat until its lease runs out.
			try {
				await conn.request('card/release', {
					cardId: card.id,
					epoch: record.epoch,
					reason: 'its supervisor stopped before starting its agent',
					refundAttempt: true,
				});
				removeSeatFiles(ctx.dataDir, ctx.run, card.id);
				result.released.push(card.id);
				ctx.emit({ event: 'left', cardId: card.id, why: 'no agent was started: released' });
			} catch (e) {
				log.error(`releasing ${card.id} failed: ${errorText(e)}`);
				leave(card);
			} finally {
				conn.close();
			}
			continue;
		}
		if (isAgentOf(pid, card.id)) {
			result.adopted.push(AgentJob.adopt(ctx, record, conn, card, watchAdopted(pid, card.id)));
			continue;
		}
		const swept = sweepCard({
			cardId: card.id,
			session: record.session,
			worktree: card.workspace?.path,
			dataDir: ctx.dataDir,
		});
		const tail = new LogTail(logPath(ctx.dataDir, ctx.run, card.id), record.logOffset);
		tail.poll();
		tail.close();
		const reason = withLines(`agent exited while its supervisor was down (pid ${pid}); exit code unknown`, tail.last());
		try {
			await conn.request('card/fail', { cardId: card.id, epoch: record.epoch, reason });
			await conn.request('dispatch/exited', {
				cardId: card.id,
				run: ctx.run,
				seat: record.seat,
				kind: record.kind,
				reason: 'exited',
				code: null,
			});
			removeSeatFiles(ctx.dataDir, ctx.run, card.id);
			result.failed.push(card.id);
			ctx.emit({
				event: 'exited',
				seat: record.seat,
				cardId: card.id,
				reason: 'exited',
				code: null,
				cardReason: reason,
				...(swept === 0 ? {} : { swept }),
			});
		} catch (e) {
			log.error(`failing ${card.id} after its agent died failed: ${errorText(e)}`);
			leave(card);
		} finally {
			conn.close();
		}
	}
	return result;
}

/**
 * The agent of a card whose pid was never recorded (the supervisor died right after starting it):
 * the process group leader whose environment names the card and the seat's session. Linux only.
 */
export function findAgentPid(cardId: string, session: string): number | undefined {
	let entries: string[];
	try {
		entries = readdirSync('/proc');
	} catch {
		return undefined;
	}
	const wanted = [`BATON_CARD_ID=${cardId}`, `BATON_SESSION=${session}`];
	for (const entry of entries) {
		if (!/^\d+$/.test(entry)) {
			continue;
		}
		try {
			const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
			if (!wanted.every(w => env.includes(w))) {
				continue;
			}
			// Field 5 of stat is the process group: the agent leads its own (spawnAgent's detached).
			const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
			const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
			if (fields[2] === entry) {
				return Number(entry);
			}
		} catch {
			// Gone, or another user's.
		}
	}
	return undefined;
}
