/**
 * Who may claim a card, pure: the refusal that says why a card cannot be claimed now (held, done, in
 * review, blocked, waiting on dependencies, deferred, missing capabilities), the common refusal of an
 * action a card's status does not allow, the sentence an agent reads when nothing is claimable, and
 * the two pieces every transition shares: the patch that ends a claim and the clip of a composed reason.
 * No I/O and no clock reads; core/rules/stateMachine.ts decides transitions with them.
 */
import { guardNamed, missingCapabilities } from './claimGuards';
import { isDeferred } from './claimable';
import { BatonError } from '../errors';
import type { CardState } from './cardState';

/** Clears the active claim (status is set by the caller). */
export const noClaim = {
	claimOwner: null,
	claimSession: null,
	claimedAt: null,
	leaseExpiresAt: null,
	leaseTtlSeconds: null,
} as const;

/** core/protocol/index.ts `limits.reasonLength`, repeated so this module stays free of zod. */
const reasonLength = 1000;

/** A composed reason stays within the length any wire reason may have. */
export function clip(text: string): string {
	return text.length <= reasonLength ? text : `${text.slice(0, reasonLength - 1)}…`;
}

/** The refusal of an action the card's status does not allow, with what to do instead. */
export function refuse(card: CardState, verb: string, next: string): never {
	throw new BatonError(
		'invalid_transition',
		`Card ${card.id} is ${card.status}${card.status === 'blocked' && card.blockedReason !== null ? ` (${card.blockedReason})` : ''}; it cannot be ${verb}. ${next}`,
		{ cardId: card.id, status: card.status },
	);
}

/**
 * Throws a BatonError explaining why `actor` cannot claim `card` now, or returns when it can.
 * `capabilities` null skips the capability check (the caller already filtered on it).
 */
export function checkClaimable(
	card: CardState,
	actor: string,
	capabilities: readonly string[] | null,
	now: Date,
	unmetIds: readonly string[] = [],
): void {
	if (card.status === 'claimed') {
		if (card.claimOwner === actor) {
			throw new BatonError(
				'conflict',
				`You already hold card ${card.id} (epoch ${card.claimEpoch}); heartbeat, complete or release it.`,
				{ cardId: card.id, holder: actor, epoch: card.claimEpoch },
			);
		}
		throw new BatonError(
			'conflict',
			`Card ${card.id} is claimed by agent ${card.claimOwner ?? '?'} (epoch ${card.claimEpoch}, lease until ${card.leaseExpiresAt?.toISOString() ?? '?'}). Claim another card, or ask a human to reclaim it.`,
			{ cardId: card.id, holder: card.claimOwner, epoch: card.claimEpoch },
		);
	}
	if (card.status === 'done') {
		refuse(card, 'claimed', 'Reopen it first if it needs more work.');
	}
	if (card.status === 'review') {
		refuse(
			card,
			'claimed',
			'It waits for a review: approve it or request changes; a reviewing agent claims it with review: true.',
		);
	}
	if (card.status === 'blocked') {
		refuse(card, 'claimed', 'Unblock it first.');
	}
	if (card.unmetDeps > 0) {
		const names = unmetIds.length > 0 ? ` (${unmetIds.join(', ')})` : '';
		throw new BatonError(
			'invalid_transition',
			`Card ${card.id} waits on ${card.unmetDeps} unfinished ${card.unmetDeps === 1 ? 'dependency' : 'dependencies'}${names}. Claim one of those, or claim without a card id.`,
			{ cardId: card.id, unmetDeps: card.unmetDeps, waitsOn: unmetIds },
		);
	}
	// The claim guards' refusals (claimGuards.ts): the same words every face uses for these holds.
	if (card.deferUntil !== null && isDeferred(card, now)) {
		throw new BatonError('invalid_transition', guardNamed('defer').refusal(card, { id: actor }), {
			cardId: card.id,
			deferUntil: card.deferUntil.toISOString(),
		});
	}
	if (capabilities !== null) {
		const missing = missingCapabilities(card, capabilities);
		if (missing.length > 0) {
			throw new BatonError(
				'invalid_transition',
				guardNamed('capabilities').refusal(card, { id: actor, capabilities }),
				{
					cardId: card.id,
					missing,
				},
			);
		}
	}
}

/** Counts behind an empty claim, turned into the `reason` an agent reads. */
export interface UnclaimableCounts {
	readyTotal: number;
	waiting: number;
	/** Ready cards whose children are not all done. */
	openParents?: number;
	/** Ready cards whose parent (or an ancestor) waits on a dependency. */
	heldByParents?: number;
	deferred: number;
	claimed: number;
	blocked: number;
	needCapabilities: number;
	missingCapabilities: readonly string[];
	otherPhase: number;
	/** "2 ready cards wait on files held by AUTH-3 (claude-code-1)", when scopes keep cards back. */
	scopeWaits?: string | undefined;
	/** The claimer's project: an id (its cards and those with none), null (only those), undefined (any). */
	project?: string | null | undefined;
	/** Cards of other projects the claimer would take with project '*' (or that project), most first. */
	otherProjects?: readonly { project: string; count: number }[];
}

/**
 * "4 claimable cards are in other projects (web 3, api 1): claim with project '*' or project web".
 * The words are the MCP parameter's; the CLI says them as its flags (`--project`).
 */
export function describeOtherProjects(others: readonly { project: string; count: number }[]): string | undefined {
	const first = others[0];
	if (first === undefined) {
		return undefined;
	}
	const total = others.reduce((n, o) => n + o.count, 0);
	const shown = others.slice(0, 3).map(o => `${o.project} ${o.count}`);
	const list = others.length > 3 ? `${shown.join(', ')}, …` : shown.join(', ');
	return `${total} claimable ${total === 1 ? 'card is' : 'cards are'} in other projects (${list}): claim with project '*' or project ${first.project}`;
}

export function describeNothingClaimable(c: UnclaimableCounts): string {
	const parts: string[] = [];
	const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;
	if (c.waiting > 0) {
		parts.push(`${plural(c.waiting, 'ready card waits', 'ready cards wait')} on dependencies`);
	}
	if ((c.heldByParents ?? 0) > 0) {
		parts.push(`${plural(c.heldByParents ?? 0, 'waits', 'wait')} while a parent waits on dependencies`);
	}
	if ((c.openParents ?? 0) > 0) {
		parts.push(`${plural(c.openParents ?? 0, 'has', 'have')} open children`);
	}
	if (c.scopeWaits !== undefined) {
		parts.push(c.scopeWaits);
	}
	if (c.deferred > 0) {
		parts.push(`${plural(c.deferred, 'is', 'are')} deferred by retry backoff`);
	}
	if (c.needCapabilities > 0) {
		const caps = c.missingCapabilities.slice(0, 5).join(', ');
		parts.push(`${plural(c.needCapabilities, 'needs', 'need')} capabilities you lack [${caps}]`);
	}
	if (c.otherPhase > 0) {
		parts.push(`${plural(c.otherPhase, 'is', 'are')} in other phases`);
	}
	if (c.claimed > 0) {
		parts.push(`${plural(c.claimed, 'is', 'are')} claimed`);
	}
	if (c.blocked > 0) {
		parts.push(`${plural(c.blocked, 'is', 'are')} blocked`);
	}
	const elsewhere = describeOtherProjects(c.otherProjects ?? []);
	if (parts.length === 0) {
		return elsewhere === undefined
			? 'No cards are ready: the backlog has nothing left to do.'
			: `No cards ${c.project === null ? 'without a project' : `of ${c.project ?? '?'} or without a project`} are ready; ${elsewhere}.`;
	}
	return `Nothing claimable: ${parts.join(', ')}${elsewhere === undefined ? '' : `; ${elsewhere}`}.`;
}
