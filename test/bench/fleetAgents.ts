/**
 * The parts of the fleet bench (fleet.ts): one agent's work loop through `baton mcp` (real MCP SDK
 * client), the call timings and errors it records, CPU of many processes from /proc, and the proof of
 * no double hold read back from the event log. It records and checks; it judges no target.
 */
import type { RpcClient } from '../../core/protocol/rpc';
import { cpuMsOf } from './hubProcess';
import type { Session } from './mcpSession';

/** What every agent of one run adds to. */
export class FleetRecord {
	/**
	 * Call kind ("claim", "heartbeat", "complete {next}", "complete") → ms of each call that started
	 * inside the measured window: the first calls of 64 freshly started processes (zod and V8 compile
	 * each path on first use, all at once on 2 cores) are start-up, not the steady state.
	 */
	readonly samples = new Map<string, number[]>();
	readonly errors: string[] = [];
	/** `cardId@epoch` of every lease an agent was given; a repeat is a double hold seen by clients. */
	readonly leases = new Map<string, string>();
	readonly clientDoubleHolds: string[] = [];
	/** Tool calls that finished inside the measured window. */
	callsInWindow = 0;
	windowStart = Number.POSITIVE_INFINITY;
	windowEnd = Number.POSITIVE_INFINITY;
	/** Tool calls that finished inside the steady part of the window (from steadyStart on). */
	callsSteady = 0;
	steadyStart = Number.POSITIVE_INFINITY;

	add(kind: string, ms: number, endedAt: number): void {
		if (endedAt - ms >= this.windowStart) {
			const list = this.samples.get(kind) ?? [];
			list.push(ms);
			this.samples.set(kind, list);
		}
		if (endedAt >= this.windowStart && endedAt <= this.windowEnd) {
			this.callsInWindow++;
		}
		if (endedAt >= this.steadyStart && endedAt <= this.windowEnd) {
			this.callsSteady++;
		}
	}

	lease(agent: string, lease: { cardId: string; epoch: number }): void {
		const key = `${lease.cardId}@${String(lease.epoch)}`;
		const earlier = this.leases.get(key);
		if (earlier !== undefined) {
			this.clientDoubleHolds.push(`${key} given to ${earlier} and ${agent}`);
		}
		this.leases.set(key, agent);
	}
}

type Lease = { cardId: string; epoch: number } | null;

const sleep = (ms: number): Promise<void> => new Promise(r => setTimeout(r, ms));

/**
 * One agent until `until` (performance.now() ms): claim → 3 heartbeats → complete {next: true} →
 * 3 heartbeats on the card it got → plain complete, again and again, `pauseMs` of "work" before every
 * call. A refused call is counted as an error and the agent starts over with a claim. `phase` narrows
 * its claims (team mode keeps the wake cards apart).
 */
export async function runAgent(
	session: Session,
	agent: string,
	record: FleetRecord,
	options: { until: number; pauseMs: number; phase?: string },
): Promise<void> {
	const { until, pauseMs, phase } = options;
	const phaseArg = phase === undefined ? {} : { phase };
	const call = async (kind: string, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
		const t = performance.now();
		const result = await session.client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
		const end = performance.now();
		record.add(kind, end - t, end);
		if (result.isError === true) {
			throw new Error(`${name}: ${JSON.stringify(result.content)}`);
		}
		return (result.structuredContent ?? {}) as Record<string, unknown>;
	};
	// Spread the agents over the second, as independent agents would be.
	await sleep(Math.random() * pauseMs);
	const work = async (lease: { cardId: string }): Promise<boolean> => {
		for (let beat = 1; beat <= 3; beat++) {
			await sleep(pauseMs);
			if (performance.now() >= until) {
				return false;
			}
			await call('heartbeat', 'heartbeat', { cardId: lease.cardId, progress: beat * 25 });
		}
		await sleep(pauseMs);
		return performance.now() < until;
	};
	while (performance.now() < until) {
		try {
			const claimed = await call('claim', 'claim', phaseArg);
			const first = claimed.lease as Lease;
			if (first === null) {
				await sleep(pauseMs);
				continue;
			}
			record.lease(agent, first);
			if (!(await work(first))) {
				break;
			}
			const done = await call('complete {next}', 'complete', { cardId: first.cardId, next: true, ...phaseArg });
			const second = (done.next as { lease: Lease } | undefined)?.lease ?? null;
			if (second === null) {
				await sleep(pauseMs);
				continue;
			}
			record.lease(agent, second);
			if (!(await work(second))) {
				break;
			}
			await call('complete', 'complete', { cardId: second.cardId });
			await sleep(pauseMs);
		} catch (error) {
			record.errors.push(`${agent}: ${error instanceof Error ? error.message : String(error)}`);
			await sleep(pauseMs);
		}
	}
}

/** Sum of the CPU (user + system, ms) of live processes; a process that has gone counts 0. */
export function cpuMsOfAll(pids: readonly number[]): number {
	let total = 0;
	for (const pid of pids) {
		try {
			total += cpuMsOf(pid);
		} catch {
			// exited: its CPU is lost to the sum, which only under-counts
		}
	}
	return total;
}

export interface HoldCheck {
	events: number;
	claims: number;
	/** A `claimed` event on a card whose previous event left it claimed. */
	doubleHolds: string[];
	/** A `claimed` event whose epoch is not above every earlier epoch of that card. */
	epochRepeats: string[];
	/**
	 * Seqs missing from the log (PostgreSQL: sequence values of transactions that rolled back). A hub's
	 * pump holds later events back for up to 1 s on each before it skips it (eventPump.ts).
	 */
	seqHoles: number;
}

/**
 * Reads the event log after `afterSeq` through the hub and checks every claim: the card's previous
 * event (in this window) must have left it not claimed, and the epoch must be new for that card. The
 * window starts on a backlog where nothing is claimed, so the first claim of a card has no predecessor.
 */
export async function checkHolds(rpc: RpcClient, afterSeq: number): Promise<HoldCheck> {
	const status = new Map<string, string>();
	const epochs = new Map<string, number>();
	const check: HoldCheck = { events: 0, claims: 0, doubleHolds: [], epochRepeats: [], seqHoles: 0 };
	let seq = afterSeq;
	for (;;) {
		const page = await rpc.request('events/list', { afterSeq: seq, limit: 1000 }, { timeoutMs: 60_000 });
		for (const event of page.events) {
			check.events++;
			if (check.events > 1) {
				check.seqHoles += event.seq - seq - 1;
			}
			seq = event.seq;
			const card = event.data.card;
			if (event.type === 'claimed') {
				check.claims++;
				if (status.get(event.cardId) === 'claimed') {
					check.doubleHolds.push(`${event.cardId} claimed again at seq ${String(event.seq)} by ${event.actor}`);
				}
				const epoch = card?.claimEpoch ?? -1;
				const last = epochs.get(event.cardId);
				if (last !== undefined && epoch <= last) {
					check.epochRepeats.push(`${event.cardId} epoch ${String(epoch)} after ${String(last)}`);
				}
			}
			if (card !== null) {
				status.set(event.cardId, card.status);
				epochs.set(event.cardId, Math.max(card.claimEpoch, epochs.get(event.cardId) ?? -1));
			}
		}
		if (page.events.length < 1000) {
			return check;
		}
	}
}
