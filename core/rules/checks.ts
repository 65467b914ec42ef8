/**
 * The check before review, pure like core/rules/stateMachine.ts, which delegates to it: what a check's
 * outcome does to a card in review (passed: it stays there, now approvable; failed or timed out: back to
 * an agent by the rules of a failed attempt — `ready` with the command, exit code and output's tail as
 * the hand-over, or parked `blocked`/failed once its attempts are spent), and the refusals that keep a
 * person from approving work whose check is running or failed. No I/O and no clock reads; running the
 * command is the hub's (mcp-server/hub/checks.ts), and complete's start of it is review.ts's.
 */
import { BatonError } from '../errors';
import { formatDuration } from '../duration';
import type { CardChecks } from '../protocol';
import type { BackoffPolicy, CardState, Decision } from './cardState';
import { backoffDelaySeconds } from './cardState';
import { clip, noClaim } from './claim';

/** A hand-over quotes at most the check's tail (≤ 4 KB) and its few lines of context. */
const handoffLength = 6000;

/** How a check ended, as the hub reports it. */
export interface ChecksOutcome {
	state: 'passed' | 'failed' | 'timed_out';
	/** null: killed (its time limit) or ended by a signal. */
	exitCode: number | null;
	/** The last ≤ 4 KB of its combined output, visible-safe. */
	tail: string;
	durationMs: number;
	/** Its time limit, for a timed-out check's words. */
	timeoutSeconds: number;
}

export interface ChecksFinishedAction {
	type: 'checksFinished';
	/** The run this outcome is of (CardChecks.startedAt): a stale run's outcome is refused. */
	startedAt: string;
	outcome: ChecksOutcome;
	/** The retry delay of a failed attempt (the card's backoffSeconds, else the backlog's). */
	backoff: BackoffPolicy;
}

/**
 * A card's checks in a few words, the same on every face: "checks passed (npm test, 12 s)", "checks
 * running (npm test)", "checks failed (npm test, exit 1, 3 s)", "checks timed out (npm test, 600 s)".
 */
export function checksSummary(checks: CardChecks): string {
	const took = checks.durationMs === undefined ? '' : `, ${Math.round(checks.durationMs / 1000)} s`;
	switch (checks.state) {
		case 'running':
			return `checks running (${checks.command})`;
		case 'passed':
			return `checks passed (${checks.command}${took})`;
		case 'timed_out':
			return `checks timed out (${checks.command}${took})`;
		case 'failed':
			return `checks failed (${checks.command}, ${checks.exitCode == null ? 'killed' : `exit ${checks.exitCode}`}${took})`;
	}
}

/** The `checks` a completion under review starts: running since `now`. */
export function checksStarted(command: string, now: Date): CardChecks {
	return { command, state: 'running', startedAt: now.toISOString() };
}

/** "exited 1", "timed out after 600 s", "was killed by a signal", with "not found or not executable" for 127/126. */
export function checksEndWords(outcome: Pick<ChecksOutcome, 'state' | 'exitCode' | 'timeoutSeconds'>): string {
	if (outcome.state === 'timed_out') {
		return `timed out after ${outcome.timeoutSeconds} s`;
	}
	if (outcome.exitCode === null) {
		return 'was killed by a signal';
	}
	const why =
		outcome.exitCode === 127
			? ' (the command was not found)'
			: outcome.exitCode === 126
				? ' (the command is not executable)'
				: '';
	return `exited ${outcome.exitCode}${why}`;
}

/** The next agent's hand-over: the command, how it ended and the output's tail. */
export function checksHandoff(command: string, outcome: ChecksOutcome): string {
	const head = `The check \`${command}\` ${checksEndWords(outcome)} on your completed work (${formatDuration(outcome.durationMs)}). Fix what it reports and complete again.`;
	const tail = outcome.tail.trim() === '' ? '(it printed nothing)' : outcome.tail;
	const text = `${head}\nIts last output:\n${tail}`;
	// Cut from the front: the end of the output is what names the failure.
	return text.length <= handoffLength
		? text
		: `${head}\nIts last output:\n…${tail.slice(-(handoffLength - head.length - 40))}`;
}

/** A check's outcome on `card`: the card stays in review (passed) or goes back like a failed attempt. */
export function checksFinished(card: CardState, action: ChecksFinishedAction, now: Date): Decision {
	const had = card.checks ?? null;
	if (card.status !== 'review' || had?.state !== 'running' || had.startedAt !== action.startedAt) {
		throw new BatonError(
			'conflict',
			`Card ${card.id} no longer waits for the check that started at ${action.startedAt} (it is ${card.status}${had === null ? '' : `, its checks ${had.state}`}); its outcome is not recorded.`,
			{ cardId: card.id, status: card.status },
		);
	}
	const { outcome } = action;
	const checks: CardChecks = {
		...had,
		state: outcome.state,
		exitCode: outcome.exitCode,
		tail: outcome.tail,
		endedAt: now.toISOString(),
		durationMs: outcome.durationMs,
	};
	const data = { state: outcome.state, exitCode: outcome.exitCode, durationMs: outcome.durationMs };
	if (outcome.state === 'passed') {
		return { patch: { checks }, event: 'checks_finished', data };
	}
	// A failed attempt: the claim that did the work already counted it; past maxAttempts the card parks.
	const handoff = checksHandoff(had.command, outcome);
	const parked = card.attempts >= card.maxAttempts;
	const held = card.claimOwner !== null;
	const backoff = parked ? 0 : backoffDelaySeconds(action.backoff, card.attempts);
	return {
		patch: {
			status: parked ? 'blocked' : 'ready',
			...noClaim,
			checks,
			result: null,
			completedBy: null,
			handoff,
			deferUntil: backoff > 0 ? new Date(now.getTime() + backoff * 1000) : null,
			// A reviewing agent's lease ends with the review: fenced out like any ended claim.
			...(held ? { claimEpoch: card.claimEpoch + 1 } : {}),
			...(parked
				? {
						blockedReason: clip(
							`checks failed after ${card.attempts} of ${card.maxAttempts} attempts: \`${had.command}\` ${checksEndWords(outcome)}`,
						),
						failed: true,
					}
				: {}),
		},
		event: 'checks_finished',
		data: {
			...data,
			reason: handoff,
			retry: !parked,
			...(backoff > 0 ? { backoffSeconds: backoff } : {}),
			...(card.completedBy !== null ? { previousOwner: card.completedBy } : {}),
			...(held ? { previousEpoch: card.claimEpoch } : {}),
		},
	};
}

/**
 * Throws unless `card`'s checks let it be approved (or its review be taken): none ran, or they passed.
 * A card with no check configured never has `checks`, so it behaves as before.
 */
export function checkChecksPassed(card: CardState, verb: 'approved' | 'reviewed'): void {
	const checks = card.checks ?? null;
	if (checks === null || checks.state === 'passed') {
		return;
	}
	if (checks.state === 'running') {
		throw new BatonError(
			'invalid_transition',
			`Card ${card.id} cannot be ${verb} yet: checks still running for ${card.id} (\`${checks.command}\`, started ${checks.startedAt}). It can be once they pass; a failure sends it back to an agent.`,
			{ cardId: card.id, checks: checks.state },
		);
	}
	throw new BatonError(
		'invalid_transition',
		`Card ${card.id} cannot be ${verb}: checks failed for ${card.id} (\`${checks.command}\` ${checks.state === 'timed_out' ? 'timed out' : `exited ${checks.exitCode ?? 'by a signal'}`}). An agent fixes it and completes again.`,
		{ cardId: card.id, checks: checks.state },
	);
}
