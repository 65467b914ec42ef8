/**
 * What the card state machine (core/rules/stateMachine.ts) works on, pure: the card as the rules see it, the actions,
 * the patch and event a decision returns, and the retry backoff of a failed attempt. Types and one
 * formula only: deciding is core/rules/stateMachine.ts's (core/rules/claim.ts, core/rules/review.ts for their parts).
 */
import type { CardChecks, CardStatus, EventType, ReviewMode } from '../protocol';
import type { ChecksFinishedAction } from './checks';
import type { LeaseView } from './lease';
import type { ReviewAction } from './review';

/** The part of a card the rules need. Dates are Dates here; the wire uses ISO strings. */
export interface CardState extends LeaseView {
	attempts: number;
	maxAttempts: number;
	unmetDeps: number;
	deferUntil: Date | null;
	requires: readonly string[];
	progress: number | null;
	progressNote: string | null;
	blockedReason: string | null;
	failed: boolean;
	version: number;
	/** Who approves a completion: none = complete means done. */
	review: ReviewMode;
	/** In review: the agent whose work it is. */
	completedBy: string | null;
	/** The project's check on its completed work (absent or null: none ran). */
	checks?: CardChecks | null;
}

/** How long a failed attempt keeps a card out of the queue (resolved from the card and the settings). */
export interface BackoffPolicy {
	/** Delay after the first failed attempt; 0 = none. */
	baseSeconds: number;
	/** The delay doubles per failed attempt up to this (or to the base, if that is larger). */
	maxSeconds: number;
}

/** Retry delay after failed attempt number `attempt` (1-based): base · 2^(attempt−1), capped. */
export function backoffDelaySeconds(policy: BackoffPolicy, attempt: number): number {
	if (policy.baseSeconds <= 0) {
		return 0;
	}
	const cap = Math.max(policy.maxSeconds, policy.baseSeconds);
	return Math.min(cap, policy.baseSeconds * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
}

/** Column values to set, in camelCase; Backlog maps them to snake_case columns. */
export interface CardPatch {
	status?: CardStatus;
	claimOwner?: string | null;
	/** The claiming connection's session; null: the agent id's lease. */
	claimSession?: string | null;
	claimedAt?: Date | null;
	leaseExpiresAt?: Date | null;
	leaseTtlSeconds?: number | null;
	claimEpoch?: number;
	attempts?: number;
	deferUntil?: Date | null;
	progress?: number | null;
	progressNote?: string | null;
	progressAt?: Date | null;
	result?: string | null;
	blockedReason?: string | null;
	failed?: boolean;
	completedBy?: string | null;
	handoff?: string | null;
	checks?: CardChecks | null;
}

export interface Decision {
	patch: CardPatch;
	/** The event to log, or null when nothing worth logging changed (a heartbeat without progress). */
	event: EventType | null;
	/** Type-specific event data besides the card (reason, previousOwner, …). */
	data: Record<string, unknown>;
}

export type Action =
	| { type: 'claim'; actor: string; ttlSeconds: number; session?: string | undefined }
	| {
			type: 'heartbeat';
			actor: string;
			session?: string | undefined;
			epoch?: number | undefined;
			progress?: number | undefined;
			note?: string | undefined;
			ttlSeconds: number;
	  }
	| {
			type: 'complete';
			actor: string;
			session?: string | undefined;
			epoch?: number | undefined;
			result?: string | undefined;
			force?: boolean | undefined;
			/** The project's check, run on the completed work by the hub: a completion to review starts it. */
			check?: string | undefined;
	  }
	| {
			type: 'release';
			actor: string;
			session?: string | undefined;
			epoch?: number | undefined;
			reason?: string | undefined;
			force?: boolean | undefined;
	  }
	| {
			type: 'fail';
			actor: string;
			session?: string | undefined;
			epoch?: number | undefined;
			reason: string;
			retry?: boolean | undefined;
			/** An explicit delay from the agent; otherwise `backoff` decides. */
			backoffSeconds?: number | undefined;
			backoff: BackoffPolicy;
			/** Reasons of this card's earlier failed attempts, newest first (for the parked card's reason). */
			earlierReasons?: readonly string[] | undefined;
	  }
	| { type: 'reclaim'; reason: string }
	/** The holder went away (its session closed): release what it held and fence it out. */
	| { type: 'disconnect'; reason: string }
	| { type: 'block'; reason: string }
	| { type: 'unblock' }
	| { type: 'reopen'; reason?: string | undefined }
	/**
	 * A claimed card loses its claim through no fault of its holder (a dependency was reopened): back to
	 * the queue, epoch bumped so the holder is fenced out, and the attempt not counted.
	 */
	| { type: 'requeue'; reason: string }
	/** The review gate: approve, request changes, a reviewing agent's claim (core/rules/review.ts). */
	| ReviewAction
	/** A check on completed work ended (core/rules/checks.ts). */
	| ChecksFinishedAction;
