/**
 * The supervisor's requests to the hub: a seat's `card/claim` on the seat's own connection,
 * with the run's project, phase, capabilities, checkout and `dispatch` (so pause, assignment and seat
 * limits are checked in the claim's transaction); giving back a card whose agent could not start; the
 * run's `run/register` and `run/end`; a kind's pause after a failure streak. Each but the claim logs its
 * own failure instead of throwing. Must not: decide when to send them, pick the seat, start, watch or
 * stop an agent, or count failures (supervisor.ts does).
 */
import { createLogger, errorText } from '../../core/log';
import type { Card, Result } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { workspaceAllowanceMs } from '../cli/hubClient';
import type { RunConfig, RunLike } from './runConfig';
import { removeSeatFiles } from './seatFile';

const log = createLogger('run');

/** Claims the next card for seat `seat` on its connection `conn`. */
export function claimForSeat(config: RunConfig, conn: RpcClient, seat: number): Promise<Result<'card/claim'>> {
	return conn.request(
		'card/claim',
		{
			project: config.project,
			...(config.phase === undefined ? {} : { phase: config.phase }),
			...(config.capabilities.length === 0 ? {} : { capabilities: config.capabilities }),
			...(config.root === undefined ? {} : { root: config.root }),
			dispatch: { run: config.name, seat, kind: config.kind },
		},
		{ timeoutMs: 15_000 + (config.root === undefined ? 0 : workspaceAllowanceMs) },
	);
}

/**
 * The program could not start: releases the card without using an attempt, says so (`dispatch/exited`),
 * closes the seat's connection and removes the seat files. Returns the card's reason.
 */
export async function releaseUnstarted(
	config: RunConfig,
	conn: RpcClient,
	seat: number,
	card: Card,
	epoch: number,
	why: string,
): Promise<string> {
	const reason = `the agent could not start: ${why}`.slice(0, 1000);
	try {
		await conn.request('card/release', { cardId: card.id, epoch, reason, refundAttempt: true });
		await conn.request('dispatch/exited', {
			cardId: card.id,
			run: config.name,
			seat,
			kind: config.kind,
			reason: 'start_failed',
			code: null,
		});
	} catch (e) {
		log.error(`releasing ${card.id} after a failed start failed: ${errorText(e)}`);
	} finally {
		conn.close();
	}
	removeSeatFiles(config.dataDir, config.name, card.id);
	return reason;
}

/**
 * Registers the run (every 10 s) and hands the hub's view of it to `seen` (a failure there is logged
 * too). The first registration (`first`) throws instead: a live supervisor of the same name refuses it.
 */
export async function registerRun(
	main: RpcClient,
	config: RunConfig,
	host: string,
	seen: (run: RunLike) => void,
	first = false,
): Promise<void> {
	try {
		const { run } = await main.request('run/register', {
			name: config.name,
			host,
			pid: process.pid,
			seats: config.seats,
			kinds: [config.kind],
			project: config.project === '*' ? null : config.project,
		});
		seen(run);
	} catch (e) {
		if (first) {
			throw e;
		}
		log.warn(`run/register failed: ${errorText(e)}`);
	}
}

/** Pauses `kind` for `reason`; false when the request failed. */
export async function pauseKind(main: RpcClient, kind: string, reason: string): Promise<boolean> {
	try {
		await main.request('pause/set', { scope: 'kind', target: kind, reason });
		return true;
	} catch (e) {
		log.error(`pausing kind ${kind} failed: ${errorText(e)}`);
		return false;
	}
}

/** Tells the hub the run ended. */
export async function endRun(main: RpcClient, name: string): Promise<void> {
	try {
		await main.request('run/end', { name });
	} catch (e) {
		log.warn(`run/end failed: ${errorText(e)}`);
	}
}
