/**
 * One dispatched card's agent, from its start (or its adoption after a restart) to the end of its
 * claim: starts the program in the card's workspace (its MCP config, prompt and sandbox:
 * agentLaunch.ts), records its pid and log, follows its output (its rate-limit signal, rateLimit.ts; its
 * BATON_USAGE reports, attemptUsage.ts; the last lines), keeps the seat's lease alive, enforces
 * --max-seconds and --max-cost-usd, stops an agent that hangs (no output and no call
 * reported on its card for --idle-seconds), and when the process exits ends a claim the agent left
 * held: failed with the exit code and the last lines, or released without using an attempt (rate
 * limit, stop), after sweeping what the agent left running outside its process group (sweep.ts).
 * Speaks only on its seat's connection, i.e. as the card's holder (agent A, session S).
 * Must not: complete a card, act on a claim that is no longer this agent's epoch, or throw at the
 * supervisor (failures of the hub are logged and the lease left to run out).
 */
import { createLogger, errorText } from '../../core/log';
import type { BacklogEvent, Card, ClaimResult } from '../../core/protocol';
import type { AgentExitReason } from '../../core/protocol/dispatch';
import type { RpcClient } from '../../core/protocol/rpc';
import { prepareLaunch } from './agentLaunch';
import { cut, LogTail, logPath, withLines } from './outputLog';
import { removeSeatFiles, type SeatRecord } from './seatFile';
import type { SeatIdentity } from './seat';
import { type AgentExit, type AgentProcess, spawnAgent } from './spawnAgent';
import { Silence } from './silence';
import { commandRateLimit, exitRateLimit } from './rateLimit';
import type { SandboxChoice } from './sandbox';
import { AttemptUsage } from './attemptUsage';
import { sweepCard } from './sweep';

const log = createLogger('run').child('job');

/**
 * How often the output is read (and the silence checked), the lease kept alive, and the card's output
 * lines published.
 */
const tailMs = 500;
const pingMs = 10_000;
const publishMs = 5_000;
/** An agent still running this long after its card's claim ended (it completed) is stopped. */
const lingerMs = 30_000;

/** Why the supervisor ends an agent itself. */
export type StopCause = 'rate_limited' | 'timeout' | 'hung' | 'stopped' | 'budget';
/** How a dispatched agent ended (dispatch/exited's reasons). */
export type ExitReason = AgentExitReason;

export interface JobEnd {
	reason: ExitReason;
	code: number | null;
	/** The reason the supervisor failed or released the card with, when it did. */
	cardReason?: string;
}

/** What a job needs from its run. */
export interface JobContext {
	dataDir: string;
	run: string;
	kind: string;
	agent: string | undefined;
	command: string | undefined;
	/** `baton mcp` as this program starts it (process.execPath + dist/baton.js + mcp). */
	batonMcp: { command: string; args: string[] };
	/** The environment agents inherit (before the BATON_* of their seat). */
	baseEnv: Record<string, string>;
	maxSeconds: number | undefined;
	/** Stop an agent whose reported cost passes this many dollars (--max-cost-usd) and fail its card. */
	maxCostUsd: number | undefined;
	/** The attempt `key` (card:epoch) has now reported spending `costUsd` in all (the run's budget adds them). */
	onSpend?(key: string, costUsd: number): void;
	/** Stop an agent after this long without output or a life sign on its card; 0: never. */
	idleSeconds: number;
	/** A card's log file is cut back to its tail past this size (outputLog.ts); 0: never. */
	logMaxBytes: number;
	stopGraceMs: number;
	/** Something the table and --json show. */
	emit(event: Record<string, unknown>): void;
	/** Whether agents run in a sandbox (sandbox.ts). */
	sandbox: SandboxChoice;
	/** The hub's socket: a seat's agent connects through it with its seat credential. */
	hubSocket: string;
	/** The repository's main checkout, when the run serves one (shown read-only in the sandbox). */
	repoRoot: string | undefined;
}

export interface JobStart {
	seat: number;
	identity: SeatIdentity;
	conn: RpcClient;
	card: Card;
	epoch: number;
	claim: ClaimResult;
	/** The repository root when the card has no workspace. */
	root: string;
}

export class AgentJob {
	readonly startedAt: number;
	progress: string | undefined;
	lastLine: string | undefined;
	private cause: StopCause | undefined;
	private causeLine: string | undefined;
	private readonly timers: NodeJS.Timeout[] = [];
	private lingerTimer: NodeJS.Timeout | undefined;
	/** The agent exited and its claim is being ended: the events that follow arm no timer. */
	private ending = false;
	private readonly silence: Silence;
	private published = '';
	/** What the agent reported it used (BATON_USAGE lines of a --command agent). */
	readonly usage: AttemptUsage;
	private lastPublish = 0;
	readonly done: Promise<JobEnd>;

	private constructor(
		private readonly ctx: JobContext,
		readonly seat: number,
		readonly identity: SeatIdentity,
		private readonly conn: RpcClient,
		public card: Card,
		readonly epoch: number,
		readonly proc: AgentProcess,
		private readonly tail: LogTail,
		startedAt: number,
		readonly adopted: boolean,
		/** The card's own worktree, if it has one (not the main checkout): where the sweep looks. */
		private readonly worktree: string | undefined,
	) {
		this.startedAt = startedAt;
		// An adopted agent gets a whole idle period from its adoption: its past is not known.
		this.silence = new Silence(ctx.idleSeconds, adopted ? Date.now() : startedAt);
		this.progress = card.progressNote ?? undefined;
		this.usage = new AttemptUsage(card.id, epoch, ctx.maxCostUsd);
		this.timers.push(
			setInterval(() => {
				this.follow();
				this.checkIdle();
			}, tailMs),
		);
		this.timers.push(setInterval(() => this.ping(), pingMs));
		if (ctx.maxSeconds !== undefined) {
			const left = Math.max(0, startedAt + ctx.maxSeconds * 1000 - Date.now());
			this.timers.push(setTimeout(() => this.stop('timeout'), left));
		}
		this.done = proc.exited.then(exit => this.end(exit));
	}

	/** Starts the agent for a card its seat just claimed; throws when the program cannot start. */
	static async start(ctx: JobContext, s: JobStart): Promise<AgentJob> {
		const { card, epoch, identity, seat } = s;
		const { launch, fd, offset, path, startedAt, workspace } = await prepareLaunch(ctx, s);
		const proc = await spawnAgent({ ...launch, logFd: fd });
		const job = new AgentJob(
			ctx,
			seat,
			identity,
			s.conn,
			card,
			epoch,
			proc,
			new LogTail(path, offset, ctx.logMaxBytes),
			startedAt,
			false,
			s.claim.workspace?.path,
		);
		job.update({ pid: proc.pid, log: path });
		ctx.emit({ event: 'started', seat, cardId: card.id, agent: identity.agent, pid: proc.pid, workspace, log: path });
		return job;
	}

	/** Takes over an agent a previous run of this supervisor started, alive at pid `proc.pid`. */
	static adopt(ctx: JobContext, record: SeatRecord, conn: RpcClient, card: Card, proc: AgentProcess): AgentJob {
		const path = logPath(ctx.dataDir, ctx.run, card.id);
		const tail = new LogTail(path, record.logOffset, ctx.logMaxBytes);
		const started = Date.parse(card.dispatch?.startedAt ?? record.startedAt);
		const identity = { agent: record.agent, session: record.session };
		const worktree = card.workspace?.path;
		const job = new AgentJob(ctx, record.seat, identity, conn, card, record.epoch, proc, tail, started, true, worktree);
		ctx.emit({ event: 'adopted', seat: record.seat, cardId: card.id, agent: record.agent, pid: proc.pid });
		return job;
	}

	/** Ends the agent (TERM, then KILL after the grace); its exit then ends the claim for `cause`. */
	stop(cause: StopCause, line?: string): void {
		if (this.cause !== undefined) {
			return;
		}
		this.cause = cause;
		this.causeLine = line;
		this.ctx.emit({
			event: 'stopping',
			seat: this.seat,
			cardId: this.card.id,
			cause,
			...(line === undefined ? {} : { line }),
		});
		void this.proc.stop(this.ctx.stopGraceMs);
	}

	/**
	 * The card changed (an event): a claim that is no longer this agent's lets a lingering agent go; a
	 * call of the agent's own (heartbeat, reserve, comment, an inbox read) shows that it is alive.
	 */
	cardChanged(card: Card, event?: Pick<BacklogEvent, 'type' | 'actor'>): void {
		this.card = card;
		if (event !== undefined) {
			this.silence.event(event, this.identity.agent);
		}
		if (card.progressNote !== null && card.progressNote !== '') {
			this.progress = card.progressNote;
		}
		// Not once ending: the supervisor's own fail or release of the card comes back as an event, and a
		// timer armed then kept an idle `baton run` alive for 30 s after Ctrl-C.
		if (!this.ending && !this.holds(card) && this.lingerTimer === undefined) {
			this.lingerTimer = setTimeout(() => this.stop('stopped'), lingerMs);
		}
	}

	private holds(card: Card): boolean {
		return card.status === 'claimed' && card.claimOwner === this.identity.agent && card.claimEpoch === this.epoch;
	}

	/** The built-in CLI whose rate-limit signal applies (rateLimit.ts), or undefined for a --command agent. */
	private signalKind(): string | undefined {
		return this.ctx.command === undefined ? (this.ctx.agent ?? 'claude') : undefined;
	}

	/**
	 * New output: remember the last line. A --command agent's BATON_RATE_LIMITED line ends the attempt
	 * without using it up; a built-in CLI's rate-limit report is read when it exits (end()).
	 */
	private follow(): string[] {
		const fresh = this.tail.poll();
		if (fresh.length > 0) {
			this.silence.output();
			this.lastLine = fresh.at(-1);
			if (this.signalKind() === undefined) {
				for (const line of fresh) {
					const reason = commandRateLimit(line);
					if (reason !== undefined) {
						this.stop('rate_limited', reason);
						break;
					}
				}
				this.readUsage(fresh);
			}
			const output = this.tail.last(5);
			const text = output.join('\n');
			if (text !== this.published && Date.now() - this.lastPublish >= publishMs) {
				this.published = text;
				this.lastPublish = Date.now();
				this.update({ output });
			}
		}
		return fresh;
	}

	/** BATON_USAGE lines: recorded on the attempt, added to the run's spend, and checked against --max-cost-usd. */
	private readUsage(fresh: readonly string[]): void {
		if (!this.usage.read(fresh)) {
			return;
		}
		const cost = this.usage.latest?.costUsd;
		if (cost !== undefined && cost !== null) {
			this.ctx.onSpend?.(`${this.card.id}:${this.epoch}`, cost);
		}
		const over = this.usage.overBudget();
		if (over !== undefined) {
			this.stop('budget', over);
		}
		void this.usage.flush(this.conn);
	}

	/** An agent silent for --idle-seconds (silence.ts) is taken for hung. */
	private checkIdle(): void {
		if (this.cause !== undefined) {
			return;
		}
		this.silence.check(
			async () => (await this.conn.request('card/get', { cardId: this.card.id })).card,
			card => this.holds(card),
			() => this.stop('hung'),
			e => log.warn(`seat ${this.seat}: reading ${this.card.id} for its silence failed: ${errorText(e)}`),
		);
	}

	private ping(): void {
		this.conn
			.request('agent/ping', {})
			.catch((e: unknown) => log.warn(`seat ${this.seat}: ping failed: ${errorText(e)}`));
	}

	private update(fields: { pid?: number; log?: string; output?: string[] }): void {
		this.conn
			.request('dispatch/update', { cardId: this.card.id, epoch: this.epoch, ...fields })
			.catch((e: unknown) => log.warn(`seat ${this.seat}: dispatch/update of ${this.card.id} failed: ${errorText(e)}`));
	}

	private async end(exit: AgentExit): Promise<JobEnd> {
		this.ending = true;
		// Its group is gone (spawnAgent.ts); a child that left the group in a session of its own goes now.
		const swept = sweepCard({
			cardId: this.card.id,
			session: this.identity.session,
			worktree: this.worktree,
			dataDir: this.ctx.dataDir,
		});
		for (const t of this.timers) {
			clearInterval(t);
		}
		clearTimeout(this.lingerTimer);
		// Its last words may be its CLI's rate-limit report (or a --command agent's signal line).
		this.follow();
		this.tail.close();
		// Its last report first: it often comes with the completion, and a budget's failure cites it.
		await this.usage.flush(this.conn);
		const lines = this.tail.last();
		const limited = this.cause === undefined ? exitRateLimit(this.signalKind(), exit.code, lines) : undefined;
		if (limited !== undefined) {
			this.cause = 'rate_limited';
			this.causeLine = limited;
		}
		let outcome: JobEnd;
		try {
			outcome = await this.endClaim(exit, lines);
		} catch (e) {
			// The hub refused or is gone: the lease runs out by itself; nothing is started twice.
			log.error(`seat ${this.seat}: ending the claim of ${this.card.id} failed: ${errorText(e)}`);
			outcome = { reason: this.cause ?? 'exited', code: exit.code };
		}
		await this.conn
			.request('dispatch/exited', {
				cardId: this.card.id,
				run: this.ctx.run,
				seat: this.seat,
				kind: this.ctx.kind,
				reason: outcome.reason,
				code: outcome.code,
			})
			.catch((e: unknown) => log.warn(`dispatch/exited of ${this.card.id} failed: ${errorText(e)}`));
		this.conn.close();
		removeSeatFiles(this.ctx.dataDir, this.ctx.run, this.card.id);
		this.ctx.emit({
			event: 'exited',
			seat: this.seat,
			cardId: this.card.id,
			reason: outcome.reason,
			code: outcome.code,
			...(outcome.cardReason === undefined ? {} : { cardReason: outcome.cardReason }),
			...(swept === 0 ? {} : { swept }),
		});
		return outcome;
	}

	private async endClaim(exit: AgentExit, lines: string[]): Promise<JobEnd> {
		const { card, attempts } = await this.conn.request('card/get', { cardId: this.card.id });
		this.card = card;
		const code = exit.code;
		if (!this.holds(card)) {
			// The agent ended its claim itself (complete, fail, release), or someone reclaimed it.
			const outcome = attempts.find(a => a.epoch === this.epoch)?.outcome;
			const reason: ExitReason =
				outcome === 'completed' || card.status === 'done' || card.status === 'review'
					? 'completed'
					: outcome === 'failed' || outcome === 'landing conflicted'
						? 'failed' // the card came back for a reason it names: not the kind's streak
						: outcome === 'released' && this.cause === undefined
							? 'released' // the agent handed it back itself: a release, not a failure
							: (this.cause ?? 'exited');
			return { reason, code };
		}
		const id = card.id;
		const epoch = this.epoch;
		switch (this.cause) {
			case 'rate_limited':
			case 'stopped': {
				const cardReason =
					this.cause === 'stopped'
						? 'agent stopped by its supervisor (pause --stop, or baton run stopping)'
						: `the provider refused for rate or quota: ${this.causeLine ?? ''}`;
				await this.conn.request('card/release', { cardId: id, epoch, reason: cut(cardReason), refundAttempt: true });
				return { reason: this.cause, code, cardReason };
			}
			case 'hung': {
				const cardReason = withLines(
					`agent stopped as hung: no output and no heartbeat for ${this.ctx.idleSeconds} s (the --idle-seconds limit)`,
					lines,
				);
				await this.conn.request('card/fail', { cardId: id, epoch, reason: cardReason });
				return { reason: 'hung', code, cardReason };
			}
			case 'budget': {
				const cardReason = withLines(`agent stopped: ${this.causeLine ?? 'its cost passed --max-cost-usd'}`, lines);
				await this.conn.request('card/fail', { cardId: id, epoch, reason: cardReason });
				return { reason: 'budget', code, cardReason };
			}
			case 'timeout': {
				const cardReason = withLines(
					`agent stopped after ${Math.round((Date.now() - this.startedAt) / 1000)} s: the --max-seconds ${this.ctx.maxSeconds ?? 0} budget`,
					lines,
				);
				await this.conn.request('card/fail', { cardId: id, epoch, reason: cardReason });
				return { reason: 'timeout', code, cardReason };
			}
			case undefined: {
				const how = this.adopted
					? 'agent exited (exit code unknown: adopted after a supervisor restart) before completing'
					: exit.code === null
						? `agent was killed by ${exit.signal ?? 'a signal'} before completing`
						: `agent exited with code ${exit.code} before completing`;
				const cardReason = withLines(how, lines);
				await this.conn.request('card/fail', { cardId: id, epoch, reason: cardReason });
				return { reason: 'exited', code, cardReason };
			}
		}
	}
}
