/**
 * Checks before review, the hub's part: the project's check command for a completion (complete starts
 * the check in its own write, core/rules/review.ts), then the run in the card's worktree on this machine
 * with the project's time limit — in the background, so `complete` answers at once and the card waits
 * in review with `checks.state = 'running'` — and its outcome recorded through the rules
 * (backlog.checks.finish: passed stays in review; failed or timed out goes back to an agent). The
 * command runs through the setup command's runner (workspaces/worktreeSetup.ts, its process group
 * killed at the time limit). A starting hub reruns the checks of its host's cards still marked running:
 * their process died with the hub that started them. And the same check on the commit a landing would
 * move the base to (`mergedTreeCheck`), so the base only moves to a tree that passed. Must not: decide a card's state (core does), run a
 * check for a workspace of another machine, or hold up a request for a check's duration.
 */
import { hostname } from 'node:os';

import type { Backlog } from '../../core/backlog';
import { BatonError } from '../../core/errors';
import { createLogger, errorText } from '../../core/log';
import { type Card, type CardWorkspace, type ProjectSettings, checksLimits } from '../../core/protocol';
import { type ChecksOutcome, checksEndWords } from '../../core/rules/checks';
import { visibleText } from '../../core/visibleText';
import { checkCommit } from '../workspaces/checkCommit';
import { gitText } from '../workspaces/git';
import type { VerifyOutcome } from '../workspaces/land';
import { type SetupOutcome, runWorktreeCommand } from '../workspaces/worktreeSetup';
import { isHere } from './wipKeeper';

const log = createLogger('hub').child('checks');

export interface HubChecksOptions {
	backlog: Backlog;
	/** A project's settings (the claim path's cache: this hub's own updates are seen at once). */
	settingsOf: (project: string) => Promise<ProjectSettings>;
	/** This machine's name (default os.hostname()). */
	host?: string;
}

/** The last `bytes` bytes of `text` as text, never starting inside a character. */
export function lastBytes(text: string, bytes: number): string {
	const buf = Buffer.from(text, 'utf8');
	if (buf.length <= bytes) {
		return text;
	}
	let start = buf.length - bytes;
	// Skip UTF-8 continuation bytes (10xxxxxx): the tail starts at a whole character.
	while (start < buf.length && ((buf[start] ?? 0) & 0xc0) === 0x80) {
		start++;
	}
	return buf.subarray(start).toString('utf8');
}

/**
 * The landing's verification of a card whose project has a check: the check on the commit the landing
 * would move the base to (the branch merged onto the base as it is now), in a detached checkout of it;
 * undefined when the project has none. A failure says how and quotes the output's tail, for the hand-over.
 */
export async function mergedTreeCheck(
	backlog: Backlog,
	card: Card,
	ws: CardWorkspace,
): Promise<((commit: string) => Promise<VerifyOutcome>) | undefined> {
	if (card.project === undefined || card.project === null) {
		return undefined;
	}
	const settings = await backlog.projectSettings(card.project);
	const command = settings.check;
	if (command === undefined) {
		return undefined;
	}
	const timeoutSeconds = settings.checkTimeoutSeconds;
	return async commit => {
		// The tree that passed already (the branch as its check ran, the base not moved since): not again.
		if (card.checks?.state === 'passed' && (await sameTree(ws.root, commit, ws.branch))) {
			return { ok: true };
		}
		log.info(`${card.id}: running \`${command}\` on ${ws.base} with ${ws.branch} merged (${commit.slice(0, 12)})`);
		const outcome = checksOutcome(await checkCommit(ws.root, commit, command, timeoutSeconds * 1000), timeoutSeconds);
		if (outcome.state === 'passed') {
			return { ok: true };
		}
		const tail = outcome.tail.trimEnd();
		return {
			ok: false,
			message: `The check \`${command}\` ${checksEndWords(outcome)} on ${ws.base} with ${ws.branch} merged, so ${ws.base} did not move. Make it pass on the current ${ws.base} (rebase ${ws.branch} on it).${tail === '' ? '' : ` Its output ended:\n${tail}`}`,
		};
	};
}

/** What a check's run came to, for the rules and the hand-over: its state, exit, time and output's tail. */
function checksOutcome(ran: { outcome: SetupOutcome; output: string }, timeoutSeconds: number): ChecksOutcome {
	const { outcome } = ran;
	return {
		state: outcome.timedOut ? 'timed_out' : outcome.exitCode === 0 ? 'passed' : 'failed',
		exitCode: outcome.exitCode,
		// Made safe first, then cut: the escapes count against the 4 KB too.
		tail: lastBytes(visibleText(ran.output, { multiline: true }), checksLimits.tailBytes),
		durationMs: outcome.durationMs,
		timeoutSeconds,
	};
}

async function sameTree(root: string, a: string, b: string): Promise<boolean> {
	const [ta, tb] = (await gitText(root, ['rev-parse', `${a}^{tree}`, `${b}^{tree}`])).split('\n');
	return ta !== undefined && ta === tb;
}

export class HubChecks {
	private readonly host: string;
	/** Runs under way, by card id: the run's start (its identity) and how to stop it. */
	private readonly runs = new Map<string, { startedAt: string; stop: AbortController; task: Promise<void> }>();
	/** Runs already ended here (card/startedAt): a replayed complete's answer does not start one again. */
	private readonly ended = new Set<string>();
	private stopped = false;

	constructor(private readonly options: HubChecksOptions) {
		this.host = options.host ?? hostname();
	}

	/** The check command a completion of a card of `project` starts, when that project has one. */
	async commandFor(project: string | undefined): Promise<string | undefined> {
		if (project === undefined) {
			return undefined;
		}
		try {
			return (await this.options.settingsOf(project)).check;
		} catch (e) {
			// No check rather than no completion: the agent's work is committed and waits for review.
			log.error(`reading project ${project}'s check failed: ${errorText(e)}`);
			return undefined;
		}
	}

	/** After complete: runs the card's check in the background when the completion started one here. */
	started(card: Card): void {
		const checks = card.checks;
		if (this.stopped || card.status !== 'review' || checks?.state !== 'running' || !isHere(card.workspace, this.host)) {
			return;
		}
		const key = `${card.id}/${checks.startedAt}`;
		const had = this.runs.get(card.id);
		if (this.ended.has(key) || had?.startedAt === checks.startedAt) {
			return;
		}
		// A newer completion replaced the run under way: its outcome would be refused anyway.
		had?.stop.abort();
		const stop = new AbortController();
		const task = this.run(card, card.workspace.path, checks.command, checks.startedAt, stop.signal)
			.catch((e: unknown) => log.error(`${card.id}: the check failed to run: ${errorText(e)}`))
			.finally(() => {
				if (this.runs.get(card.id)?.task === task) {
					this.runs.delete(card.id);
				}
				this.ended.add(key);
				if (this.ended.size > 4096) {
					this.ended.clear(); // a replay that old is long answered
				}
			});
		this.runs.set(card.id, { startedAt: checks.startedAt, stop, task });
	}

	/**
	 * At hub start: the checks of this host's cards that are still `running` lost their process with the
	 * hub that ran them, so each is run again (the same run: its startedAt kept). Rerun, not failed: the
	 * agent's work is not at fault, and the card must not stay in `running` forever.
	 */
	async resume(): Promise<number> {
		const cards = await this.options.backlog.checks.running();
		let rerun = 0;
		for (const card of cards) {
			if (isHere(card.workspace, this.host)) {
				log.info(
					`${card.id}: the check \`${card.checks?.command ?? ''}\` was running when the hub stopped; running it again`,
				);
				this.started(card);
				rerun++;
			}
		}
		return rerun;
	}

	/** Resolves when every run started so far has ended (tests). */
	async idle(): Promise<void> {
		while (this.runs.size > 0) {
			await Promise.allSettled([...this.runs.values()].map(r => r.task));
		}
	}

	/** The hub stops: runs under way are killed and not recorded (the next start runs them again). */
	async stop(): Promise<void> {
		this.stopped = true;
		for (const r of this.runs.values()) {
			r.stop.abort();
		}
		await this.idle();
	}

	private async run(card: Card, cwd: string, command: string, startedAt: string, signal: AbortSignal): Promise<void> {
		const project = card.project ?? undefined;
		const timeoutSeconds =
			project === undefined
				? checksLimits.defaultTimeoutSeconds
				: await this.options
						.settingsOf(project)
						.then(s => s.checkTimeoutSeconds)
						.catch(() => checksLimits.defaultTimeoutSeconds);
		const ran = await runWorktreeCommand(command, cwd, timeoutSeconds * 1000, signal);
		if (ran.stopped) {
			return;
		}
		const result = checksOutcome(ran, timeoutSeconds);
		log.info(
			`${card.id}: the check \`${command}\` ${result.state} (exit ${result.exitCode ?? 'none'}, ${result.durationMs} ms)`,
		);
		try {
			await this.options.backlog.checks.finish({ actor: 'baton' }, card.id, startedAt, result);
		} catch (e) {
			if (BatonError.is(e, 'conflict') || BatonError.is(e, 'not_found')) {
				// Approved without it is impossible; sent back, deleted or completed again meanwhile is not.
				log.info(`${card.id}: ${e.message}`);
				return;
			}
			throw e;
		}
	}
}
