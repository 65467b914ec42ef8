/**
 * `baton run`'s loop: at most `seats` dispatched agents hold cards at once. For a free seat
 * it claims the next card on that seat's own connection (the claim carries `dispatch`, so pause,
 * assignment and seat limits are checked in the claim's transaction) and starts the agent; it reacts
 * to the hub's events (a card becoming claimable, a pause with --stop, `run/stop`) rather than
 * polling, with a slow timer only for cards that become claimable by time. It cools a rate-limited
 * kind down, pauses a kind after three failures in a row within ten minutes, claims nothing while its
 * dollar budget is spent or its review line is full (runLimits.ts, said on the run's line), registers
 * the run every 10 s, adopts its agents after a restart, and drains (or stops) on request.
 * Must not: claim under its own identity, complete a card, start a second agent for a card, or hold
 * more cards than seats (a seat is taken from the claim's send until its job has ended).
 */
import { hostname } from 'node:os';

import { createLogger, errorText } from '../../core/log';
import type { BacklogEvent, Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { hubPaths } from '../../core/paths';
import { adoptRunning } from './adoption';
import { AgentJob, type JobContext, type JobEnd } from './agentJob';
import type { Display, RunStatus } from './liveTable';
import type { Seat, SeatConnector } from './seat';
import { claimForSeat, endRun, pauseKind, registerRun, releaseUnstarted } from './runRequests';
import { advisoryText } from './sandbox';
import { SeatPool } from './seatPool';
import { type PauseLike, type RunConfig, type RunLike, covers } from './runConfig';
import { KindHealth, streakReason } from './streaks';
import { RunLimits } from './runLimits';

const log = createLogger('run');

/** Card changes that never make a card claimable: no claim attempt for them. */
const quietEvents = new Set(['heartbeat', 'delivered', 'commented', 'reserved', 'dispatch_updated', 'agent_exited']);
const registerMs = 10_000;
/** Cards become claimable by time too (a retry's backoff, deferUntil): try a free seat this often. */
const retryFillMs = 5_000;
const tableMs = 1_000;

export type RunMode = 'running' | 'draining' | 'stopping';

export class Supervisor {
	private readonly pool: SeatPool;
	private readonly health: KindHealth;
	private readonly host = hostname();
	private mode: RunMode = 'running';
	private filling = false;
	/** Set once start() has registered and adopted: claims may be made. */
	private accepting = false;
	private refill = false;
	private idle: string | undefined;
	private readonly timers: NodeJS.Timeout[] = [];
	private coolTimer: NodeJS.Timeout | undefined;
	private finished!: () => void;
	readonly ended = new Promise<void>(resolve => {
		this.finished = resolve;
	});
	private readonly ctx: JobContext;
	private readonly limits: RunLimits;
	/** What the run's line last said holds it back (budget, review line): said again only when it changes. */
	private heldSaid: string | undefined;

	constructor(
		private readonly config: RunConfig,
		private readonly main: RpcClient,
		private readonly connect: SeatConnector,
		private readonly display: Display,
	) {
		this.health = new KindHealth(config.cooldownSeconds * 1000);
		this.pool = new SeatPool(config.seats, config.kind, config.name, connect);
		this.limits = new RunLimits(config.runBudgetUsd, config.maxInReview, config.project);
		this.ctx = {
			dataDir: config.dataDir,
			run: config.name,
			kind: config.kind,
			agent: config.agent,
			command: config.command,
			batonMcp: config.batonMcp,
			baseEnv: config.baseEnv,
			maxSeconds: config.maxSeconds,
			maxCostUsd: config.maxCostUsd,
			onSpend: (key, cost) => this.limits.spend(key, cost),
			idleSeconds: config.idleSeconds,
			stopGraceMs: config.stopGraceMs,
			logMaxBytes: config.logMaxBytes,
			emit: e => this.display.event(e),
			sandbox: config.sandbox,
			hubSocket: hubPaths(config.dataDir).socket,
			repoRoot: config.root,
		};
	}

	/** Registers, adopts what a previous run left running, then fills the free seats. */
	async start(): Promise<void> {
		if (this.config.sandbox.kind === 'none') {
			// Said before anything starts: without a sandbox an agent has the user's rights.
			this.display.event({
				event: 'advisory',
				sandbox: false,
				why: this.config.sandbox.why,
				message: advisoryText(this.config.sandbox.why),
			});
		}
		this.main.onEvent(e => this.onEvent(e));
		// From now, not from the log's start: a replay would bring back every earlier run's stop request
		// under this name (a new run drained before it claimed anything) and cost a read of the whole log.
		await this.main.subscribe((await this.main.start()).seq);
		// Refused while a live supervisor holds this name: nothing of its agents is adopted or ended.
		await registerRun(this.main, this.config, this.host, run => this.onRunUpdate(run), true);
		this.registered = true;
		const adoption = await adoptRunning(this.ctx, this.main, this.connect, this.host);
		for (const job of adoption.adopted) {
			const seat = this.pool.place(job);
			void job.done.then(end => this.jobEnded(seat, job, end));
		}
		for (const left of adoption.leftToLease) {
			this.pool.linger(left);
		}
		await this.stopPausedAdoptees();
		this.display.event({
			event: 'running',
			run: this.config.name,
			seats: this.config.seats,
			kind: this.config.kind,
			adopted: adoption.adopted.length,
			failed: adoption.failed.length,
			released: adoption.released.length,
			leftToLease: adoption.leftToLease.length,
		});
		if (this.closed) {
			// Ctrl-C during the start: the run already ended; arm nothing that would keep it alive.
			return;
		}
		this.pool.warmFree();
		// Only now: a claim before the adoption could start a second agent for an adopted card's seat.
		this.accepting = true;
		this.timers.push(setInterval(() => void this.register(), registerMs));
		this.timers.push(setInterval(() => void this.fill(), retryFillMs));
		if (this.display.mode === 'table') {
			this.timers.push(setInterval(() => this.draw(), tableMs));
		}
		void this.fill();
	}

	/** Ctrl-C: no new agents; the running ones finish their cards. */
	drain(): void {
		if (this.mode === 'running') {
			this.mode = 'draining';
			this.display.event({ event: 'draining', running: this.jobs().length });
			this.maybeFinish();
		}
	}

	/** Second Ctrl-C or `run/stop --stop`: stop every agent, releasing their cards (no attempt used). */
	stop(): void {
		if (this.mode !== 'stopping') {
			this.mode = 'stopping';
			this.display.event({ event: 'stopping', running: this.jobs().length });
			for (const job of this.jobs()) {
				job.stop('stopped');
			}
			this.maybeFinish();
		}
	}

	inUse(): number {
		return this.pool.inUse();
	}

	private jobs(): AgentJob[] {
		return this.pool.jobs();
	}

	private onEvent(e: BacklogEvent): void {
		const card = e.data.card;
		if (card !== null) {
			this.pool.cardChanged(card, e);
		}
		const data = e.data as Record<string, unknown>;
		if (e.type === 'paused') {
			this.onPause(data.pause as PauseLike | undefined, data.cards as string[] | undefined);
		} else if (e.type === 'run_updated') {
			this.onRunUpdate(data.run as RunLike | undefined);
		}
		if (!quietEvents.has(e.type) && this.mode === 'running' && this.inUse() < this.config.seats) {
			void this.fill();
		}
	}

	/** A pause with --stop set while this supervisor was down covers the agents it just adopted too. */
	private async stopPausedAdoptees(): Promise<void> {
		if (this.jobs().length === 0) {
			return;
		}
		try {
			const { pauses } = await this.main.request('pause/list', {});
			for (const pause of pauses) {
				this.onPause(pause, undefined);
			}
		} catch (e) {
			log.warn(`pause/list failed: ${errorText(e)}; a pause --stop set meanwhile stops no adopted agent`);
		}
	}

	/** A pause with --stop stops the agents of the cards it covers (released, no attempt used). */
	private onPause(pause: PauseLike | undefined, cards: readonly string[] | undefined): void {
		if (pause?.stop !== true) {
			return;
		}
		for (const job of this.jobs()) {
			if (cards?.includes(job.card.id) === true || covers(pause, job.card, this.config.kind)) {
				job.stop('stopped');
			}
		}
	}

	private onRunUpdate(run: RunLike | undefined): void {
		// A stop request belongs to one run instance: this process's (a run of the same name before it,
		// on this host or another, is another instance).
		if (
			run?.name !== this.config.name ||
			(run.host !== undefined && run.host !== this.host) ||
			(run.pid !== undefined && run.pid !== process.pid)
		) {
			return;
		}
		if (run.stopping === 'stop') {
			this.stop();
		} else if (run.stopping === 'drain') {
			this.drain();
		}
	}

	private async register(): Promise<void> {
		await registerRun(this.main, this.config, this.host, run => this.onRunUpdate(run));
	}

	/** Claims for free seats until none is free or nothing is claimable. One pass at a time. */
	async fill(): Promise<void> {
		if (!this.accepting || this.closed) {
			return;
		}
		if (this.filling) {
			this.refill = true;
			return;
		}
		this.filling = true;
		try {
			for (;;) {
				this.refill = false;
				await this.limits.refresh(this.main, text => log.warn(text));
				this.sayHeld();
				while (this.mayClaim()) {
					const seat = this.pool.firstFree();
					if (seat === undefined || !(await this.claimInto(seat))) {
						break;
					}
				}
				// Events that came during the pass asked for another one.
				if (!this.refillWanted()) {
					break;
				}
			}
		} finally {
			this.filling = false;
		}
	}

	private refillWanted(): boolean {
		return this.refill && this.mayClaim();
	}

	/** Running, a seat free, the kind not cooling down, no budget or review line holding (read afresh: it changes across awaits). */
	private mayClaim(): boolean {
		const free = this.mode === 'running' && !this.closed && this.inUse() < this.config.seats;
		return free && !this.cooling() && this.limits.held() === undefined;
	}

	/** The run's line says what holds it back (an event when that changes). */
	private sayHeld(): void {
		const held = this.limits.held();
		if (held !== this.heldSaid) {
			this.heldSaid = held;
			this.display.event(held === undefined ? { event: 'claiming' } : { event: 'held', reason: held });
		}
	}

	private cooling(): boolean {
		const until = this.health.coolingUntil(this.config.kind, Date.now());
		if (until !== undefined && this.coolTimer === undefined) {
			this.coolTimer = setTimeout(() => {
				this.coolTimer = undefined;
				void this.fill();
			}, until - Date.now());
		}
		return until !== undefined;
	}

	/** One claim on the seat's connection; true when a card was claimed (and its agent started or ended). */
	private async claimInto(seat: Seat): Promise<boolean> {
		seat.claiming = true;
		try {
			const { identity, conn } = await seat.connection();
			const result = await claimForSeat(this.config, conn, seat.n);
			if (result.card === null || result.lease === null) {
				this.idle = result.reason;
				return false;
			}
			this.idle = undefined;
			seat.handOver();
			const card = result.card;
			const epoch = result.lease.epoch;
			try {
				const job = await AgentJob.start(this.ctx, {
					seat: seat.n,
					identity,
					conn,
					card,
					epoch,
					claim: result,
					root: this.config.root ?? this.config.cwd,
				});
				seat.job = job;
				void job.done.then(end => this.jobEnded(seat, job, end));
				if (this.mode === 'stopping') {
					// Stopped while this claim was in flight: the card goes back at once.
					job.stop('stopped');
				}
			} catch (e) {
				await this.startFailed(seat, conn, card, epoch, errorText(e));
			}
			return true;
		} catch (e) {
			this.idle = errorText(e);
			log.warn(`seat ${seat.n}: claim failed: ${this.idle}`);
			return false;
		} finally {
			seat.claiming = false;
			// A drain or stop that came while this claim was in flight waits for it.
			this.maybeFinish();
		}
	}

	/** The program could not start: the card goes back without using an attempt; it counts for the streak. */
	private async startFailed(seat: Seat, conn: RpcClient, card: Card, epoch: number, why: string): Promise<void> {
		const reason = await releaseUnstarted(this.config, conn, seat.n, card, epoch, why);
		this.display.event({ event: 'exited', seat: seat.n, cardId: card.id, reason: 'start_failed', cardReason: reason });
		await this.countFailure(card.id, reason);
		seat.warm();
	}

	private async jobEnded(seat: Seat, job: AgentJob, end: JobEnd): Promise<void> {
		// The kind's health first, while the seat is still taken: a streak's pause must be set before
		// this seat may claim again.
		if (end.reason === 'completed') {
			this.health.succeeded(this.config.kind);
		} else if (['exited', 'timeout', 'budget', 'hung'].includes(end.reason)) {
			await this.countFailure(job.card.id, end.cardReason ?? end.reason);
		} else if (end.reason === 'rate_limited') {
			const until = this.health.coolDown(this.config.kind, Date.now());
			this.display.event({ event: 'cooldown', kind: this.config.kind, until: new Date(until).toISOString() });
		}
		if (seat.job === job) {
			seat.job = undefined;
		}
		const extra = this.pool.dropExtra(seat);
		if (this.mode === 'running' && !extra) {
			seat.warm();
			void this.fill();
		}
		this.maybeFinish();
	}

	private async countFailure(cardId: string, reason: string): Promise<void> {
		const streak = this.health.failed(this.config.kind, { at: Date.now(), cardId, reason });
		if (streak === undefined) {
			return;
		}
		const why = streakReason(this.config.kind, streak);
		if (await pauseKind(this.main, this.config.kind, why)) {
			this.display.event({ event: 'paused', scope: 'kind', target: this.config.kind, reason: why });
		}
	}

	private maybeFinish(): void {
		if (this.mode !== 'running' && this.inUse() === 0) {
			void this.close();
		}
	}

	private closed = false;
	/** The first run/register went through: the run is ours to end. */
	private registered = false;

	/** Ends the run: timers off, seats closed, `run/end`. Resolves `ended`. */
	async close(): Promise<void> {
		if (this.closed) {
			return;
		}
		this.closed = true;
		for (const t of this.timers) {
			clearInterval(t);
		}
		clearTimeout(this.coolTimer);
		this.pool.close();
		if (this.registered) {
			await endRun(this.main, this.config.name);
		}
		this.draw();
		this.display.event({ event: 'ended', run: this.config.name });
		this.finished();
	}

	private draw(): void {
		const rows = this.pool.rows();
		const status: RunStatus = {
			name: this.config.name,
			seats: this.config.seats,
			inUse: this.inUse(),
			mode: this.mode,
			idle: this.limits.held() ?? this.idle,
			coolingUntil: this.health.coolingUntil(this.config.kind, Date.now()),
		};
		this.display.draw(rows, status);
	}
}
