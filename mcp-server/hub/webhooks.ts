/**
 * Outgoing webhooks, delivered in the hub's background (docs/architecture.md, "Outgoing
 * webhooks"): one worker per hook POSTs the events after the hook's cursor, one at a time in seq
 * order (hence in order per card), signed (core/formats/webhook.ts), each with a request timeout, and retries
 * a failed one with core/backoff.ts's `webhookBackoff` until the receiver takes it. The cursor, the
 * retry state and the delivery log are in the store (core/backlog/hookStore.ts), under this hub's
 * lease on the hook, so one hub at a time delivers a hook and a restarted hub resumes where it was.
 * Must never be awaited by a request handler or the event path: the pump only wakes workers, and a
 * slow or dead receiver stalls nothing but its own hook.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

import type { Backlog } from '../../core/backlog';
import type { LeasedHook } from '../../core/backlog/hookStore';
import { type BackoffPolicy, backoffDelay, reconnectBackoff, webhookBackoff } from '../../core/backoff';
import { createLogger, errorText } from '../../core/log';
import type { BacklogEvent } from '../../core/protocol';
import { planHookSteps, webhookRequest } from '../../core/formats/webhook';

const log = createLogger('hub').child('webhooks');

export interface WebhooksOptions {
	backlog: Backlog;
	/** The highest seq the event pump delivered: holes below it are settled (committed or rolled back). */
	seq: () => number;
	userAgent: string;
	/** Per request, headers and body; default 10 s. */
	timeoutMs?: number | undefined;
	/** Retries of a failed delivery; default webhookBackoff (1 s → 5 min). */
	backoff?: BackoffPolicy | undefined;
	/** How long a hub's lease on a hook runs without renewal; default 30 s (above the request timeout). */
	leaseSeconds?: number | undefined;
	/** How often hooks added or freed on another hub are looked for; default 5 s. */
	pollMs?: number | undefined;
	/** PGlite: this hub is the store's only one, so leases left by a previous process are freed at start. */
	soleHub: boolean;
	/** The store takes small writes (not on a full disk). */
	mayWrite: () => boolean;
}

const pageSize = 100;

export class Webhooks {
	private readonly workers = new Map<string, HookWorker>();
	private pollTimer: NodeJS.Timeout | undefined;
	private stopped = false;
	private refreshing: Promise<void> | undefined;
	/** This hub's name on the leases it holds. */
	readonly owner = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

	constructor(readonly options: WebhooksOptions) {}

	async start(): Promise<void> {
		if (this.options.soleHub) {
			await this.options.backlog.hooks.releaseLeases();
		}
		await this.refresh();
		if (this.isStopped()) {
			return;
		}
		this.pollTimer = setInterval(() => void this.refresh(), this.options.pollMs ?? 5_000);
		this.pollTimer.unref();
	}

	/** New events were delivered by the pump: idle workers look at the log again. */
	onEvents(): void {
		for (const worker of this.workers.values()) {
			worker.wake();
		}
	}

	/** A hook was added or removed through this hub: start or end its worker now, not at the next poll. */
	changed(): void {
		void this.refresh();
	}

	/** Ends every worker (an attempt in flight is aborted and retried by the next hub) and frees the leases. */
	async stop(freeLeases = true): Promise<void> {
		this.stopped = true;
		clearInterval(this.pollTimer);
		await this.refreshing;
		const workers = [...this.workers.values()];
		this.workers.clear();
		// A worker waits for its store statement to finish; a store that never answers must not hold
		// the hub's stop (the leases then run out by themselves).
		const ended = await Promise.race([
			Promise.all(workers.map(w => w.stop())).then(() => true),
			new Promise<boolean>(resolve => setTimeout(() => resolve(false), 5_000).unref()),
		]);
		if (!freeLeases || !ended) {
			return;
		}
		try {
			await this.options.backlog.hooks.releaseLeases(this.owner);
		} catch (e) {
			log.warn(`freeing the hooks' leases failed: ${errorText(e)}; they run out by themselves`);
		}
	}

	/** Set by stop() while an await was pending (a method, so the compiler does not narrow it). */
	private isStopped(): boolean {
		return this.stopped;
	}

	private refresh(): Promise<void> {
		this.refreshing ??= this.readHooks().finally(() => {
			this.refreshing = undefined;
		});
		return this.refreshing;
	}

	private async readHooks(): Promise<void> {
		if (this.stopped) {
			return;
		}
		let ids: string[];
		try {
			ids = await this.options.backlog.hooks.ids();
		} catch (e) {
			log.warn(`reading the hooks failed: ${errorText(e)}`);
			return;
		}
		for (const id of ids) {
			if (!this.workers.has(id) && !this.isStopped()) {
				const worker = new HookWorker(id, this);
				this.workers.set(id, worker);
				void worker.run().finally(() => {
					if (this.workers.get(id) === worker) {
						this.workers.delete(id);
					}
				});
			}
		}
		for (const [id, worker] of this.workers) {
			if (!ids.includes(id)) {
				this.workers.delete(id);
				void worker.stop();
			} else {
				worker.wake(); // a lease another hub held may have run out
			}
		}
	}
}

type Outcome = 'idle' | 'progress' | 'lost' | { retryInMs: number };

/** One hook's delivery loop: lease, read a page after the cursor, deliver or pass each event, repeat. */
class HookWorker {
	private stopped = false;
	private woken = true;
	private wakeSleep: (() => void) | undefined;
	private inflight: AbortController | undefined;
	private done: Promise<void> = Promise.resolve();
	private leasedAt = 0;
	private readonly readRetry = { failures: 0 };

	constructor(
		private readonly id: string,
		private readonly hub: Webhooks,
	) {}

	wake(): void {
		this.woken = true;
		this.wakeSleep?.();
	}

	async stop(): Promise<void> {
		this.stopped = true;
		this.inflight?.abort(new Error('the hub is stopping'));
		this.wakeSleep?.();
		await this.done;
	}

	run(): Promise<void> {
		this.done = this.loop();
		return this.done;
	}

	/** Set by stop() while an await was pending (a method, so the compiler does not narrow it). */
	private isStopped(): boolean {
		return this.stopped;
	}

	private get options(): WebhooksOptions {
		return this.hub.options;
	}

	private async loop(): Promise<void> {
		const leaseSeconds = this.options.leaseSeconds ?? 30;
		const pollMs = this.options.pollMs ?? 5_000;
		while (!this.stopped) {
			let outcome: Outcome;
			try {
				if (!this.options.mayWrite()) {
					outcome = 'lost';
				} else {
					const hook = await this.options.backlog.hooks.takeLease(this.id, this.hub.owner, leaseSeconds);
					if (hook === null) {
						outcome = 'lost';
					} else {
						this.leasedAt = Date.now();
						this.woken = false;
						outcome = await this.deliverPage(hook, leaseSeconds);
					}
				}
				this.readRetry.failures = 0;
			} catch (e) {
				// The store did not answer (PostgreSQL restarting, a full disk): nothing was delivered
				// without being recorded, so the next pass starts from the stored cursor again.
				this.readRetry.failures++;
				if (this.readRetry.failures === 1) {
					log.warn(`hook ${this.id}: the store failed: ${errorText(e)}; retrying`);
				}
				outcome = { retryInMs: backoffDelay(reconnectBackoff, this.readRetry.failures) };
			}
			if (outcome === 'progress') {
				continue;
			}
			if (outcome === 'idle') {
				await this.sleep(pollMs * 6, true);
			} else if (outcome === 'lost') {
				// Gone (removed: readHooks ends this worker) or leased by another hub: look again later.
				await this.sleep(pollMs, true);
			} else {
				await this.sleep(outcome.retryInMs, false);
			}
		}
	}

	/** Works through one page of the log after the hook's cursor. */
	private async deliverPage(hook: LeasedHook, leaseSeconds: number): Promise<Outcome> {
		const { backlog } = this.options;
		const end = this.options.seq();
		if (hook.cursor >= end) {
			return 'idle';
		}
		const page = await backlog.eventsAfter(hook.cursor, pageSize);
		const settled = page.filter(e => e.seq <= end);
		const last = page.length < pageSize || settled.length < page.length;
		const horizon = await backlog.logHorizon();
		const steps = planHookSteps(settled, hook.cursor, horizon, hook.events, last ? end : undefined);
		let passed: number | undefined;
		let failures = hook.failures;
		for (const step of steps) {
			if (this.stopped) {
				return 'lost';
			}
			if (step.kind === 'pass') {
				passed = step.seq;
				continue;
			}
			if (Date.now() - this.leasedAt > (leaseSeconds * 1000) / 3) {
				if ((await backlog.hooks.takeLease(hook.id, this.hub.owner, leaseSeconds)) === null) {
					return 'lost';
				}
				this.leasedAt = Date.now();
			}
			if (step.kind === 'skip') {
				const what = step.from === step.to ? `seq ${step.from}` : `seqs ${step.from}–${step.to}`;
				const error = `${what}: progress events compacted away before delivery (or never committed)`;
				log.warn(`hook ${hook.id}: skipped ${what}, compacted away before it could be delivered`);
				if (
					!(await backlog.hooks.record(hook.id, this.hub.owner, {
						seq: step.to,
						attempt: 0,
						outcome: 'skipped',
						error,
					}))
				) {
					return 'lost';
				}
				continue;
			}
			const result = await this.post(hook, step.event);
			const attempt = failures + 1;
			if (result.ok) {
				if (failures > 0) {
					log.info(`hook ${hook.id}: ${hook.url} answered again after ${failures} failed attempts`);
				}
				failures = 0;
				const held = await backlog.hooks.record(hook.id, this.hub.owner, {
					seq: step.event.seq,
					attempt,
					outcome: 'delivered',
					status: result.status,
					ms: result.ms,
				});
				if (!held) {
					return 'lost';
				}
				continue;
			}
			if (this.isStopped()) {
				return 'lost'; // aborted by stop(): not the receiver's failure
			}
			const retryInMs = backoffDelay(this.options.backoff ?? webhookBackoff, attempt);
			if (attempt === 1) {
				log.warn(`hook ${hook.id}: delivering seq ${step.event.seq} to ${hook.url} failed: ${result.error}; retrying`);
			}
			await backlog.hooks.record(hook.id, this.hub.owner, {
				seq: step.event.seq,
				attempt,
				outcome: 'failed',
				status: result.status,
				error: result.error,
				ms: result.ms,
				nextAttemptAt: new Date(Date.now() + retryInMs),
			});
			if (passed !== undefined) {
				await backlog.hooks.advance(hook.id, this.hub.owner, passed);
			}
			return { retryInMs };
		}
		if (passed !== undefined) {
			await backlog.hooks.advance(hook.id, this.hub.owner, passed);
		}
		return steps.length === 0 ? 'idle' : 'progress';
	}

	/** One POST with the request timeout; 2xx is delivered, anything else (or no answer) a failure. */
	private async post(
		hook: LeasedHook,
		event: BacklogEvent,
	): Promise<{ ok: boolean; status: number | null; error: string | null; ms: number }> {
		const timeoutMs = this.options.timeoutMs ?? 10_000;
		const request = webhookRequest(hook, event, Math.floor(Date.now() / 1000), this.options.userAgent);
		const controller = new AbortController();
		this.inflight = controller;
		const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
		const started = Date.now();
		try {
			const response = await fetch(hook.url, {
				method: 'POST',
				headers: request.headers,
				body: request.body,
				signal: controller.signal,
				redirect: 'manual',
			});
			// The answer's body means nothing to Baton; a receiver that streams one forever must not hold us.
			await response.body?.cancel().catch(() => undefined);
			const ms = Date.now() - started;
			return response.ok
				? { ok: true, status: response.status, error: null, ms }
				: { ok: false, status: response.status, error: `HTTP ${response.status} ${response.statusText}`.trim(), ms };
		} catch (e) {
			const reason: unknown = controller.signal.aborted ? controller.signal.reason : e;
			return { ok: false, status: null, error: failureText(reason), ms: Date.now() - started };
		} finally {
			clearTimeout(timer);
			this.inflight = undefined;
		}
	}

	/** Waits `ms`; `wakeable`: new events or a poll end the wait early. */
	private sleep(ms: number, wakeable: boolean): Promise<void> {
		if (this.stopped || (wakeable && this.woken)) {
			return Promise.resolve();
		}
		return new Promise(resolve => {
			const timer = setTimeout(done, ms);
			function done(): void {
				clearTimeout(timer);
				resolve();
			}
			this.wakeSleep = () => {
				if (wakeable || this.stopped) {
					this.wakeSleep = undefined;
					done();
				}
			};
		});
	}
}

/** fetch's "fetch failed" hides the reason in `cause` (ECONNREFUSED, a DNS miss). */
function failureText(e: unknown): string {
	const cause = e instanceof Error && e.cause instanceof Error ? e.cause : undefined;
	return cause === undefined ? errorText(e) : `${errorText(e)}: ${errorText(cause)}`;
}
